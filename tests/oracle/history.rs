//! Merge, revert and reset against the oracle: random programs (views with joins,
//! aggregates, recursion, negation, denials) over random histories that fork into two
//! branches, each committing random change sets (and sometimes defining another program),
//! then merge.
//!
//! - A merge whose current branch is in the other's history fast-forwards to it, and one
//!   whose other branch is in the current one's history changes nothing: neither writes a
//!   state.
//! - Both sides changing the program differently is refused (exit 1), head unchanged.
//! - Otherwise the merged base contents are O + (T − B) − (B − T), computed here on sets. The
//!   merge is refused with exit 2 exactly when the oracle finds a denial violated by them
//!   (head unchanged); admitted, every relation equals the oracle's evaluation, `verify`
//!   passes, the commit has two parents (ours first), and its state hash equals that of a
//!   fresh store given the merged program and base contents in one commit.
//! - Reverting a random commit of the history and then reverting the revert returns to the
//!   state hash before both; a reset to a random commit followed by a reset to the reflog's
//!   previous entry returns to the state hash before both.

use crate::*;

#[test]
fn merges_revert_and_reset_agree_with_the_oracle() {
    let config = Config {
        cases: cases(48),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        source_file: Some(file!()),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let seen = std::cell::RefCell::new(BTreeMap::<&'static str, usize>::new());
    let strategy = (
        proptest::collection::vec(any::<u32>(), 192..320),
        proptest::collection::vec(any::<u32>(), 384..640),
    );
    let result = runner.run(&strategy, |(program, data)| {
        let program = random_program(&mut Choices::new(&program));
        let mut transcript = Transcript {
            text: String::new(),
        };
        transcript.step("program", &program.text(false));
        let kind = history_case(&program, &data, &mut transcript)
            .map_err(|message| TestCaseError::fail(transcript.fail(message)))?;
        *seen.borrow_mut().entry(kind).or_default() += 1;
        Ok(())
    });
    if std::env::var("RNT_ORACLE_STATS").is_ok() {
        eprintln!("merge outcomes: {:?}", seen.borrow());
    }
    if let Err(error) = result {
        panic!("{error}");
    }
}

/// One side's history after the fork: its program and base contents.
struct Side {
    program: Program,
    base: Db,
}

/// Runs one case; returns which kind of merge it was.
fn history_case(
    program: &Program,
    data: &[u32],
    transcript: &mut Transcript,
) -> Result<&'static str, String> {
    let ch = &mut Choices::new(data);
    let stats = &mut Stats::default();
    let db = Database::new(Arc::new(MemoryStore::new()));
    let empty: Db = vec![BTreeSet::new(); BASE.len()];
    if !define_step(&db, program, &empty, None, stats)? {
        return Err("a define on an empty store was refused".into());
    }
    let initial = initial_data(ch, program);
    transcript.step("commit (initial data)", &initial.text(program));
    let base = commit_step(&db, program, &empty, &initial, None, stats)?;
    db.create_branch("side", None).map_err(|e| e.to_string())?;
    transcript.step("branch side", "");
    let ours = grow(&db, ch, program, &base, "main", stats, transcript)?;
    db.switch("side").map_err(|e| e.to_string())?;
    let theirs = grow(&db, ch, program, &base, "side", stats, transcript)?;
    db.switch("main").map_err(|e| e.to_string())?;
    let (ours_commit, theirs_commit) = (head(&db)?, db.branch("side").map_err(|e| e.to_string())?);
    let kind = check_merge(
        &db,
        program,
        &base,
        (&ours, ours_commit),
        (&theirs, theirs_commit),
    )?;
    check_revert_and_reset(&db, ch, transcript)?;
    Ok(kind)
}

/// Commits 0 to 3 random change sets on the current branch (`name`), the first sometimes
/// after defining a mutated program.
fn grow(
    db: &Database,
    ch: &mut Choices,
    program: &Program,
    base: &Db,
    name: &str,
    stats: &mut Stats,
    transcript: &mut Transcript,
) -> Result<Side, String> {
    let mut side = Side {
        program: program.clone(),
        base: base.clone(),
    };
    if ch.percent(20) {
        let next = mutate_program(ch, &side.program);
        transcript.step(&format!("define on {name}"), &next.text(false));
        if define_step(db, &next, &side.base, None, stats)? {
            side.program = next;
        }
    }
    for i in 0..ch.below(4) {
        let set = random_changes(ch, &side.program, &side.base);
        transcript.step(&format!("commit {i} on {name}"), &set.text(&side.program));
        side.base = commit_step(db, &side.program, &side.base, &set, None, stats)?;
    }
    Ok(side)
}

fn head(db: &Database) -> Result<Option<rnt_store::Address>, String> {
    db.head_commit().map_err(|e| e.to_string())
}

fn check_merge(
    db: &Database,
    program: &Program,
    base: &Db,
    (ours, ours_commit): (&Side, Option<rnt_store::Address>),
    (theirs, theirs_commit): (&Side, Option<rnt_store::Address>),
) -> Result<&'static str, String> {
    let result = db.merge("side", None);
    // (A side's commit can equal the other's: same parent, state, message and second.)
    if in_history(db, theirs_commit, ours_commit)? {
        // Their branch is in our history.
        if !matches!(result, Ok(MergeOutcome::UpToDate)) {
            return Err(format!("merging an ancestor: {result:?}"));
        }
        return expect_head(db, ours_commit, "an up-to-date merge").map(|()| "up to date");
    }
    if in_history(db, ours_commit, theirs_commit)? {
        let expected = theirs_commit.ok_or("their branch has no commit")?;
        if !matches!(result, Ok(MergeOutcome::FastForward { to, .. }) if to == expected) {
            return Err(format!(
                "a merge into an ancestor did not fast-forward: {result:?}"
            ));
        }
        return expect_head(db, theirs_commit, "a fast-forward").map(|()| "fast-forward");
    }
    let (b, o, t) = (
        canonical(program)?,
        canonical(&ours.program)?,
        canonical(&theirs.program)?,
    );
    if o != t && o != b && t != b {
        match &result {
            Err(error) if error.exit_code() == 1 && error.to_string().contains("program") => {}
            other => return Err(format!("both sides changed the program: {other:?}")),
        }
        return expect_head(db, ours_commit, "a refused merge").map(|()| "programs differ");
    }
    let merged_program = if o == t || t == b {
        &ours.program
    } else {
        &theirs.program
    };
    let merged: Db = (0..BASE.len())
        .map(|rel| {
            let (b, o, t) = (&base[rel], &ours.base[rel], &theirs.base[rel]);
            let added: BTreeSet<Tuple> = t.difference(b).cloned().collect();
            let removed: BTreeSet<Tuple> = b.difference(t).cloned().collect();
            o.union(&added)
                .filter(|x| !removed.contains(*x))
                .cloned()
                .collect()
        })
        .collect();
    let expected = oracle(merged_program, &merged, None);
    let violated = violations(merged_program, &expected);
    if !violated.is_empty() {
        let as_commit = result.map(|_| CommitOutcome::NothingToCommit);
        return check_refusal(db, as_commit, &violated, ours_commit, "merge").map(|()| "refused");
    }
    let outcome =
        result.map_err(|e| format!("merge refused with `{e}`, yet the oracle admits it"))?;
    let MergeOutcome::Merged {
        outcome: CommitOutcome::Committed { commit, .. },
        ..
    } = outcome
    else {
        return Err(format!(
            "a diverged merge made no merge commit: {outcome:?}"
        ));
    };
    expect_head(db, Some(commit), "a merge")?;
    let record =
        rnt_merkle::Commit::read(db.chunks().as_ref(), &commit).map_err(|e| e.to_string())?;
    let parents: Vec<Option<rnt_store::Address>> =
        record.parent_addresses().into_iter().map(Some).collect();
    if parents != [ours_commit, theirs_commit] {
        return Err(format!("the merge's parents are {parents:?}"));
    }
    compare(db, merged_program, &expected)?;
    // The same program and base contents, built from scratch, have the same address.
    let fresh = Database::new(Arc::new(MemoryStore::new()));
    define(&fresh, merged_program, None).map_err(|e| format!("fresh define: {e}"))?;
    let mut all = ChangeSet::new();
    for (rel, tuples) in merged.iter().enumerate() {
        for tuple in tuples {
            all.name(true, rel, tuple.clone());
        }
    }
    let changes = parse_changes(&all.text(merged_program), None).map_err(|e| e.to_string())?;
    fresh
        .commit(changes, "all", None)
        .map_err(|e| format!("fresh commit: {e}"))?;
    let (merged_state, fresh_state) = (
        db.head().map_err(|e| e.to_string())?.state_address,
        fresh.head().map_err(|e| e.to_string())?.state_address,
    );
    if merged_state != fresh_state {
        return Err("the merged state differs from a fresh store's with the same contents".into());
    }
    Ok(if std::ptr::eq(merged_program, &ours.program) {
        "merged"
    } else {
        "merged (their program)"
    })
}

/// Whether commit `a` is `b` or one of its ancestors (walked here, from the commits).
fn in_history(
    db: &Database,
    a: Option<rnt_store::Address>,
    b: Option<rnt_store::Address>,
) -> Result<bool, String> {
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(a.is_none());
    };
    let mut stack = vec![b];
    let mut seen = BTreeSet::new();
    while let Some(id) = stack.pop() {
        if id == a {
            return Ok(true);
        }
        if seen.insert(id) {
            let commit =
                rnt_merkle::Commit::read(db.chunks().as_ref(), &id).map_err(|e| e.to_string())?;
            stack.extend(commit.parent_addresses());
        }
    }
    Ok(false)
}

fn expect_head(
    db: &Database,
    expected: Option<rnt_store::Address>,
    what: &str,
) -> Result<(), String> {
    let now = head(db)?;
    if now != expected {
        return Err(format!(
            "after {what} the head is {now:?}, not {expected:?}"
        ));
    }
    Ok(())
}

/// Revert of a random commit, then of the revert: back to the state before. Reset to a
/// random commit, then to the reflog's previous entry: back to the state before.
fn check_revert_and_reset(
    db: &Database,
    ch: &mut Choices,
    transcript: &mut Transcript,
) -> Result<(), String> {
    let history = db.log().map_err(|e| e.to_string())?;
    let state = |db: &Database| {
        db.head()
            .map(|h| h.state_address)
            .map_err(|e| e.to_string())
    };
    let before = state(db)?;
    let (target, _) = &history[ch.below(history.len())];
    transcript.step("revert", &target.to_hex());
    match db.revert(&target.to_hex(), None) {
        Ok(reverted) => {
            if let CommitOutcome::Committed { commit, .. } = reverted.outcome {
                // Reverting a revert restores exactly what the first one changed.
                db.revert(&commit.to_hex(), None)
                    .map_err(|e| format!("reverting the revert: {e}"))?;
                if state(db)? != before {
                    return Err("revert, then revert of the revert, is not the state before".into());
                }
            } else if state(db)? != before {
                return Err("a revert with nothing to commit moved the head".into());
            }
        }
        // The inverse may be refused by a denial (a revert is judged like any commit).
        Err(DbError::DenialViolated { .. }) => {
            if state(db)? != before {
                return Err("a refused revert moved the head".into());
            }
        }
        Err(other) => return Err(format!("revert failed: {other}")),
    }
    let before = state(db)?;
    let history = db.log().map_err(|e| e.to_string())?;
    let (target, _) = &history[ch.below(history.len())];
    transcript.step("reset", &target.to_hex());
    let moved = db.reset(&target.to_hex()).map_err(|e| e.to_string())?;
    let reflog = db.reflog(Some(2)).map_err(|e| e.to_string())?;
    if reflog.first().map(|e| e.commit) != Some(*target) {
        return Err(format!(
            "after a reset to {target} the reflog starts {reflog:?}"
        ));
    }
    // The entry before the reset's (a reset to the head itself logs nothing).
    let previous = match moved {
        ResetOutcome::Moved { from, .. } => {
            if reflog.get(1).map(|e| e.commit) != Some(from) {
                return Err(format!(
                    "the reflog lost the head before the reset: {reflog:?}"
                ));
            }
            from
        }
        ResetOutcome::AlreadyThere(at) => at,
    };
    db.reset(&previous.to_hex()).map_err(|e| e.to_string())?;
    if state(db)? != before {
        return Err(
            "reset, then reset to the reflog's previous entry, is not the state before".into(),
        );
    }
    Ok(())
}
