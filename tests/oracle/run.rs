//! Driving the engine: define, commit, compare with the oracle, verify.

use crate::*;

// Driving the engine.

#[derive(Default, Debug)]
pub(crate) struct Stats {
    pub(crate) cases: usize,
    pub(crate) commits: usize,
    pub(crate) refused: usize,
    pub(crate) nothing: usize,
    pub(crate) defines_refused: usize,
    pub(crate) views: usize,
    pub(crate) ephemeral: usize,
    pub(crate) denials: usize,
    pub(crate) recursive_rules: usize,
    pub(crate) aggregates: usize,
    /// Aggregating rules with a `count_distinct` in the head.
    pub(crate) count_distinct: usize,
    /// Aggregating rules with a `concat` in the head.
    pub(crate) concat: usize,
    /// Rules with a window literal.
    pub(crate) windows: usize,
    pub(crate) negations: usize,
    pub(crate) derived_tuples: usize,
    /// Derived relations compared after a commit, and how many of them held tuples.
    pub(crate) derived_checked: usize,
    pub(crate) derived_nonempty: usize,
    /// Cases run with recursion by the cost rule, forced to DRed, forced to recompute
    /// (in turn; the fresh store of each case's last check runs the other mode).
    pub(crate) modes: [usize; 3],
    /// Recursive strata of views maintained at commits by DRed and by recomputing.
    pub(crate) dred_strata: usize,
    pub(crate) recompute_strata: usize,
    /// Rules that compare with the clock `now`, and commits that moved the clock.
    pub(crate) clock_rules: usize,
    pub(crate) clock_steps: usize,
    /// Commits whose state keeps a count index (`count C…`, for reads that only count
    /// matches), which the commit edited or built.
    pub(crate) count_index_commits: usize,
    /// Cases with nulls (nullable columns, nulls in the data, `optional`, `is null`).
    pub(crate) null_cases: usize,
    /// Rules with an `optional` atom, atoms written with named arguments, `is null` tests,
    /// and rules over the decimals and dates of `m`.
    pub(crate) optional_rules: usize,
    pub(crate) named_atoms: usize,
    pub(crate) is_null_tests: usize,
    pub(crate) typed_rules: usize,
}

/// The recursion modes cases take in turn, and the mode of each one's fresh store.
pub(crate) const RECURSION_MODES: [(RecursionMode, RecursionMode); 3] = [
    (RecursionMode::ByCost, RecursionMode::Dred),
    (RecursionMode::Dred, RecursionMode::Recompute),
    (RecursionMode::Recompute, RecursionMode::Dred),
];

/// Counts the recursive strata of views a commit maintained, by mode.
fn count_modes(program: &Program, stats: &[rnt::merkle::OperatorStat], counts: &mut Stats) {
    for stat in stats {
        let views = stat.relation.split(',').all(|name| {
            program
                .rels
                .iter()
                .any(|r| r.name == name && r.kind == Kind::View)
        });
        match stat.operator.as_str() {
            "dred" => counts.dred_strata += 1,
            "recompute" if views => counts.recompute_strata += 1,
            _ => {}
        }
    }
}

/// The history of a case so far, printed when it fails.
pub(crate) struct Transcript {
    pub(crate) text: String,
}

impl Transcript {
    pub(crate) fn step(&mut self, what: &str, detail: &str) {
        let _ = writeln!(self.text, "--- {what}");
        self.text.push_str(detail);
    }

    pub(crate) fn fail(&self, message: String) -> String {
        format!("{message}\n\n=== transcript\n{}", self.text)
    }
}

/// The model of a tuple the engine holds, in a relation whose columns have `types`: a
/// decimal is its units at its column's scale, a date its day number, null [`NULL`].
pub(crate) fn model(tuple: &[Value], types: &[Ty]) -> Tuple {
    tuple
        .iter()
        .zip(types)
        .map(|(v, ty)| match (v, ty.base) {
            (Value::Null, _) => NULL,
            (Value::Int(i), _) => *i,
            (Value::Str(s), _) => str_id(s),
            (Value::Decimal(d), Base::Dec(_, scale)) => {
                assert_eq!(d.scale(), scale, "{d} in a column of scale {scale}");
                i64::try_from(d.units()).expect("a small decimal")
            }
            (Value::Date(days), _) => i64::from(*days),
            (other, ty) => panic!("{other} in a column of type {ty:?}"),
        })
        .collect()
}

/// The engine's value of a model value in a column of type `ty`.
pub(crate) fn engine_value(ty: Ty, value: i64) -> Value {
    if value == NULL {
        return Value::Null;
    }
    match ty.base {
        Base::Int => Value::Int(value),
        Base::Str => Value::Str(str_of(value)),
        Base::Dec(_, scale) => Value::Decimal(
            rnt::lang::Decimal::new(i128::from(value), scale).expect("a small decimal"),
        ),
        Base::Date => Value::Date(i32::try_from(value).expect("a near date")),
    }
}

pub(crate) fn show(tuples: &BTreeSet<Tuple>) -> String {
    let items: Vec<String> = tuples
        .iter()
        .map(|t| {
            format!(
                "({})",
                // A `concat` result shows as its string (a name of `w` shows as its index).
                t.iter()
                    .map(|&v| match v {
                        NULL => "null".to_string(),
                        v if v >= STR_IDS => Value::Str(str_of(v)).to_string(),
                        v => v.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })
        .collect();
    format!("{{{}}}", items.join(" "))
}

/// Every relation of `program` at the head equals the oracle's `expected`.
pub(crate) fn compare(db: &Database, program: &Program, expected: &Db) -> Result<(), String> {
    let head = db.head().map_err(|e| format!("head: {e}"))?;
    for (i, rel) in program.rels.iter().enumerate() {
        let got: BTreeSet<Tuple> = db
            .tuples(&head, &rel.name)
            .map_err(|e| format!("reading {}: {e}", rel.name))?
            .iter()
            .map(|t| model(t, &rel.types))
            .collect();
        if got != expected[i] {
            let missing: BTreeSet<Tuple> = expected[i].difference(&got).cloned().collect();
            let extra: BTreeSet<Tuple> = got.difference(&expected[i]).cloned().collect();
            return Err(format!(
                "{} {} differs from the oracle\n  expected {}\n  got      {}\n  missing  {}\n  extra    {}",
                rel.kind.keyword(),
                rel.name,
                show(&expected[i]),
                show(&got),
                show(&missing),
                show(&extra)
            ));
        }
        if matches!(rel.kind, Kind::Base | Kind::View) {
            let count = head.entry(&rel.name).and_then(|e| e.count);
            if count != Some(got.len() as u64) {
                return Err(format!(
                    "{} holds {} tuples but its entry counts {count:?}",
                    rel.name,
                    got.len()
                ));
            }
        }
    }
    // Maintained equals recomputed, derivation counts, accumulators and indexes included.
    let report = db.verify(&head).map_err(|e| format!("verify: {e}"))?;
    if !report.mismatches.is_empty() {
        return Err(format!("verify finds mismatches: {:?}", report.mismatches));
    }
    Ok(())
}

/// The denials the oracle finds violated, with their witnesses in change-file syntax.
pub(crate) fn violations(program: &Program, derived: &Db) -> BTreeMap<String, BTreeSet<String>> {
    program
        .rels
        .iter()
        .enumerate()
        .filter(|(i, rel)| rel.kind == Kind::Denial && !derived[*i].is_empty())
        .map(|(i, rel)| {
            let witnesses = derived[i]
                .iter()
                .map(|t| {
                    let values: Vec<Value> = (t.iter().zip(&rel.types))
                        .map(|(&v, &ty)| engine_value(ty, v))
                        .collect();
                    format_tuple(&rel.name, &values)
                })
                .collect();
            (rel.name.clone(), witnesses)
        })
        .collect()
}

/// A refusal must name a violated denial and one of its witnesses, with exit code 2, and
/// leave the head where it was.
pub(crate) fn check_refusal(
    db: &Database,
    result: Result<CommitOutcome, DbError>,
    violated: &BTreeMap<String, BTreeSet<String>>,
    before: Option<rnt_store::Address>,
    what: &str,
) -> Result<(), String> {
    match result {
        Err(error @ DbError::DenialViolated { .. }) => {
            if error.exit_code() != 2 {
                return Err(format!("{what}: refusal exits {}", error.exit_code()));
            }
            let DbError::DenialViolated {
                denial, witness, ..
            } = &error
            else {
                unreachable!()
            };
            let valid = violated.get(denial).is_some_and(|w| w.contains(witness));
            if !valid {
                return Err(format!(
                    "{what}: refused with `{error}`, but the oracle's violations are {violated:?}"
                ));
            }
        }
        Err(other) => {
            return Err(format!(
                "{what}: expected a denial refusal ({violated:?}), got error `{other}`"
            ))
        }
        Ok(outcome) => {
            return Err(format!(
                "{what}: admitted ({outcome:?}) but the oracle finds denials violated: {violated:?}"
            ))
        }
    }
    let after = db.head_commit().map_err(|e| e.to_string())?;
    if after != before {
        return Err(format!("{what}: refused, yet the head moved"));
    }
    Ok(())
}

/// Commits `set` and checks the outcome against the oracle; returns the new base. A
/// program that mentions `now` commits at `clock` (`--clock`), which may move it with or
/// without changes; the head's clock after is `clock`, or the one before when nothing was
/// committed.
pub(crate) fn commit_step(
    db: &Database,
    program: &Program,
    base: &Db,
    set: &ChangeSet,
    clock: Option<i64>,
    stats: &mut Stats,
) -> Result<Db, String> {
    let next = set.apply(base);
    let expected = oracle(program, &next, clock);
    let violated = violations(program, &expected);
    let head = db.head().map_err(|e| e.to_string())?;
    let (before, before_clock) = (head.commit, head.state.clock);
    let changes = parse_changes(&set.text(program), None).map_err(|e| e.to_string())?;
    let result = db.commit(changes, "step", clock);
    if !violated.is_empty() {
        check_refusal(db, result, &violated, before, "commit")?;
        stats.refused += 1;
        return Ok(base.clone());
    }
    let moved = clock != before_clock;
    let expected = match result {
        Ok(CommitOutcome::Committed {
            commit,
            stats: operators,
            ..
        }) => {
            count_modes(program, &operators, stats);
            if next == *base && !moved {
                return Err("the changes change nothing, yet a commit was made".into());
            }
            // A clock step alone is a commit only when it moves some view's tuples: one
            // that moves only derivation counts or `min`/`max` state makes none.
            if next == *base {
                let stayed = oracle(program, base, before_clock);
                let view_moved = program
                    .rels
                    .iter()
                    .enumerate()
                    .any(|(i, rel)| rel.kind == Kind::View && stayed[i] != expected[i]);
                if !view_moved {
                    return Err(format!(
                        "the clock step {before_clock:?} -> {clock:?} changes no view's \
                         tuples, yet a commit was made"
                    ));
                }
            }
            let after = db.head().map_err(|e| e.to_string())?;
            if after.commit != Some(commit) {
                return Err("committed, yet the head is elsewhere".into());
            }
            if after.state.clock != clock {
                return Err(format!(
                    "committed at clock {clock:?}, yet the state's clock is {:?}",
                    after.state.clock
                ));
            }
            stats.commits += 1;
            stats.clock_steps += usize::from(moved);
            stats.count_index_commits += usize::from(
                after
                    .state
                    .relations
                    .iter()
                    .any(|r| r.aux.iter().any(|a| a.label.starts_with("count "))),
            );
            expected
        }
        Ok(CommitOutcome::NothingToCommit) => {
            if next != *base {
                return Err("the changes change the base, yet nothing was committed".into());
            }
            if db.head_commit().map_err(|e| e.to_string())? != before {
                return Err("nothing to commit, yet the head moved".into());
            }
            // A clock step that changes no stored relation makes no commit: the state, and
            // its clock, stay.
            let stayed = oracle(program, base, before_clock);
            for (i, rel) in program.rels.iter().enumerate() {
                if rel.kind == Kind::View && stayed[i] != expected[i] {
                    return Err(format!(
                        "the clock step {before_clock:?} -> {clock:?} changes view {}, yet \
                         nothing was committed",
                        rel.name
                    ));
                }
            }
            stats.nothing += 1;
            stayed
        }
        Err(error) => {
            return Err(format!(
                "commit refused with `{error}`, but the oracle finds every denial empty"
            ))
        }
    };
    compare(db, program, &expected)?;
    for (tuples, rel) in expected.iter().zip(&program.rels) {
        if rel.kind != Kind::Base {
            stats.derived_tuples += tuples.len();
            stats.derived_checked += 1;
            stats.derived_nonempty += usize::from(!tuples.is_empty());
        }
    }
    Ok(next)
}

/// The canonical text the engine stores for `program`.
pub(crate) fn canonical(program: &Program) -> Result<String, String> {
    rnt_db::check::compile(&program.text(false))
        .map(|p| p.canonical_text())
        .map_err(|e| format!("the generated program does not compile: {e:?}"))
}

/// Defines `program`, at `clock` when it mentions `now`.
pub(crate) fn define(
    db: &Database,
    program: &Program,
    clock: Option<i64>,
) -> Result<CommitOutcome, DbError> {
    let clock = clock.filter(|_| program.mentions_now());
    db.define_with_clock(
        &program.text(false),
        "oracle.rnt",
        "define",
        clock,
        &mut |_| {},
    )
}

pub(crate) fn run_case(
    program_choices: &[u32],
    data_choices: &[u32],
    stats: &mut Stats,
) -> Result<(), String> {
    let program = random_clocked_program(&mut Choices::new(program_choices));
    let mut transcript = Transcript {
        text: String::new(),
    };
    transcript.step("program", &program.text(false));
    if std::env::var("RNT_ORACLE_SHOW").is_ok() {
        eprintln!("{}", program.text(false));
    }
    let result = run_program(&program, data_choices, stats, &mut transcript);
    result.map_err(|message| transcript.fail(message))
}

/// Counts what a program covers.
pub(crate) fn count_program(program: &Program, stats: &mut Stats) {
    for rel in &program.rels {
        match rel.kind {
            Kind::View => stats.views += 1,
            Kind::Ephemeral => stats.ephemeral += 1,
            Kind::Denial => stats.denials += 1,
            Kind::Base => {}
        }
    }
    for rule in &program.rules {
        for lit in &rule.body {
            match lit {
                Lit::Pos(atom) if atom.rel == rule.head => stats.recursive_rules += 1,
                Lit::Not(_) => stats.negations += 1,
                Lit::Win(_) => stats.windows += 1,
                Lit::IsNull(..) => stats.is_null_tests += 1,
                _ => {}
            }
            if let Lit::Pos(atom) | Lit::Not(atom) | Lit::Opt(atom) = lit {
                stats.named_atoms += usize::from(atom.named);
                stats.typed_rules += usize::from(atom.rel == TYPED_REL);
            }
        }
        stats.optional_rules += usize::from(rule.body.iter().any(|l| matches!(l, Lit::Opt(_))));
        if rule.terms.iter().any(|t| matches!(t, HeadTerm::Agg(..))) {
            stats.aggregates += 1;
        }
        stats.clock_rules += usize::from(rule.reads_now());
        let distinct = |t: &HeadTerm| matches!(t, HeadTerm::Agg(AggFn::CountDistinct, _));
        if rule.terms.iter().any(distinct) {
            stats.count_distinct += 1;
        }
        let concat = |t: &HeadTerm| matches!(t, HeadTerm::Agg(AggFn::Concat(_), _));
        if rule.terms.iter().any(concat) {
            stats.concat += 1;
        }
    }
}

/// Defines `program` over the data `base` (at `clock` when it mentions `now`): admitted
/// exactly when the oracle finds its denials empty. Returns whether it was admitted.
pub(crate) fn define_step(
    db: &Database,
    program: &Program,
    base: &Db,
    clock: Option<i64>,
    stats: &mut Stats,
) -> Result<bool, String> {
    let clock = clock.filter(|_| program.mentions_now());
    let expected = oracle(program, base, clock);
    let violated = violations(program, &expected);
    let before = db.head().map_err(|e| e.to_string())?;
    // Only the program in force, written alike, changes nothing.
    let unchanged = before.commit.is_some() && before.state.program == canonical(program)?;
    let result = define(db, program, clock);
    if !violated.is_empty() {
        check_refusal(db, result, &violated, before.commit, "define")?;
        stats.defines_refused += 1;
        return Ok(false);
    }
    match result {
        Ok(CommitOutcome::Committed { .. }) if !unchanged => {}
        Ok(CommitOutcome::NothingToCommit) if unchanged => {}
        other => return Err(format!("define: {other:?}")),
    }
    compare(db, program, &expected)?;
    Ok(true)
}

/// The thread counts a case commits at, and the fresh store's.
const THREADS: [(usize, usize); 3] = [(1, 2), (2, 4), (4, 1)];

pub(crate) fn run_program(
    program: &Program,
    data_choices: &[u32],
    stats: &mut Stats,
    transcript: &mut Transcript,
) -> Result<(), String> {
    stats.cases += 1;
    stats.null_cases += usize::from(program.nulls);
    count_program(program, stats);
    let ch = &mut Choices::new(data_choices);
    // Recursion in each mode in turn: all reach the oracle's tuples and one state.
    let (mode, fresh_mode) = RECURSION_MODES[stats.cases % 3];
    stats.modes[stats.cases % 3] += 1;
    // Commits at 1, 2 or 4 threads (the fresh store below at another count): the oracle's
    // tuples and one state address at any count.
    let (threads, fresh_threads) = THREADS[(stats.cases / 3) % 3];
    let db = Database::new(Arc::new(MemoryStore::new()))
        .with_recursion_mode(mode)
        .with_threads(threads);
    let mut active = program.clone();
    let mut base: Db = vec![BTreeSet::new(); BASE.len()];
    // The clock a program that mentions `now` runs at: small, like the values it meets.
    let mut clock = ch.below(6) as i64;
    let initial = initial_data(ch, program);
    if ch.percent(50) {
        // The program first, then the data.
        transcript.step(&format!("define (empty store, clock {clock})"), "");
        if !define_step(&db, program, &base, Some(clock), stats)? {
            return Err("a define on an empty store was refused".into());
        }
        transcript.step("commit (initial data)", &initial.text(program));
        base = commit_step(&db, program, &base, &initial, at(program, clock), stats)?;
    } else {
        // The data first, then the program: its views backfill, its denials judge the data.
        let plain = Program::base_only(program.nulls);
        db.define(&plain.text(false), "base.rnt", "base")
            .map_err(|e| format!("define of the base relations: {e}"))?;
        transcript.step(
            "commit (initial data, base relations only)",
            &initial.text(program),
        );
        base = commit_step(&db, &plain, &base, &initial, None, stats)?;
        transcript.step(&format!("define (over the data, clock {clock})"), "");
        if !define_step(&db, program, &base, Some(clock), stats)? {
            active = program.without_denials();
            transcript.step("define (refused; again without denials)", "");
            if !define_step(&db, &active, &base, Some(clock), stats)? {
                return Err("a define without denials was refused".into());
            }
        }
    }
    let commits = 2 + ch.below(5);
    // Sometimes the program changes midway: views change kind, arity or rules, or go.
    let redefine_at = if ch.percent(30) {
        Some(ch.below(commits))
    } else {
        None
    };
    for i in 0..commits {
        clock = head_clock(&db)?.unwrap_or(clock);
        if redefine_at == Some(i) {
            let next = if ch.percent(40) {
                random_program_like(ch, &active)
            } else {
                mutate_program(ch, &active)
            };
            count_program(&next, stats);
            transcript.step(
                &format!("define (another program, clock {clock})"),
                &next.text(false),
            );
            if define_step(&db, &next, &base, Some(clock), stats)? {
                active = next;
            }
        }
        // The clock steps, often, by up to a few values (a step of 0 keeps it); a clocked
        // program sometimes commits only the step.
        let step = match ch.weighted(&[35, 45, 20]) {
            0 => 0,
            1 => 1 + ch.below(3) as i64,
            _ => 4 + ch.below(6) as i64,
        };
        let set = if active.mentions_now() && ch.percent(30) {
            ChangeSet::new()
        } else {
            random_changes(ch, &active, &base)
        };
        transcript.step(
            &format!("commit {i} (clock {})", clock + step),
            &set.text(&active),
        );
        base = commit_step(&db, &active, &base, &set, at(&active, clock + step), stats)?;
    }
    let clock = head_clock(&db)?;
    if std::env::var("RNT_ORACLE_SHOW").is_ok() {
        let sizes = oracle(&active, &base, clock);
        for (rel, tuples) in active.rels.iter().zip(&sizes) {
            eprintln!("  {} {}", rel.name, tuples.len());
        }
    }
    // The same program written in another order is the same program.
    let shuffled = db.define(&active.text(true), "shuffled.rnt", "again");
    if !matches!(shuffled, Ok(CommitOutcome::NothingToCommit)) {
        return Err(format!(
            "redefining the program with rules and literals reordered: {shuffled:?}"
        ));
    }
    // Maintained equals recomputed, and history does not matter: a fresh store given the
    // same program, base tuples and clock in one commit reaches the same state hash.
    let fresh = Database::new(Arc::new(MemoryStore::new()))
        .with_recursion_mode(fresh_mode)
        .with_threads(fresh_threads);
    define(&fresh, &active, clock).map_err(|e| format!("fresh define: {e}"))?;
    let mut all = ChangeSet::new();
    for (rel, tuples) in base.iter().enumerate() {
        for tuple in tuples {
            all.name(true, rel, tuple.clone());
        }
    }
    let changes = parse_changes(&all.text(&active), None).map_err(|e| e.to_string())?;
    fresh
        .commit(changes, "all", clock)
        .map_err(|e| format!("fresh commit: {e}"))?;
    let (ours, theirs) = (
        db.head().map_err(|e| e.to_string())?,
        fresh.head().map_err(|e| e.to_string())?,
    );
    if ours.state_address != theirs.state_address {
        let names: Vec<&str> = ours
            .state
            .relations
            .iter()
            .zip(&theirs.state.relations)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.name.as_str())
            .collect();
        return Err(format!(
            "the maintained state differs from a fresh store's over the same data (relations \
             {names:?}, clocks {:?} and {:?})",
            ours.state.clock, theirs.state.clock
        ));
    }
    Ok(())
}

/// The clock a commit of `program` passes: `clock` when it mentions `now`, else none.
fn at(program: &Program, clock: i64) -> Option<i64> {
    program.mentions_now().then_some(clock)
}

/// The head state's clock.
fn head_clock(db: &Database) -> Result<Option<i64>, String> {
    Ok(db.head().map_err(|e| e.to_string())?.state.clock)
}
