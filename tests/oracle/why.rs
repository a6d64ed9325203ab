//! `why` against the oracle (issue 26): random programs over random data and commits (as
//! `engine_agrees_with_the_oracle` makes them, without the clock). For tuples of every view
//! and ephemeral relation, `Database::why` names rule instances that hold at that commit —
//! each positive atom's tuple is in the oracle's relation there, each absent pattern
//! matches none of its tuples — and that derive the tuple when evaluated: the oracle's
//! rules of the relation over only the instance's tuples (an aggregate's over all its
//! group's matches, a window's over the row and its deciding rows; the relations a `not`
//! reads in full) derive it. Each base tuple's commit holds it and none of its parents
//! does. Removing the base tuples of a derivation in one commit removes the tuple, unless
//! the oracle still derives it — and then `why` at that commit names another derivation
//! that holds there. The head is then reset and the next tuple tried.

use crate::*;
use rnt::db::{Explained, Fact, Why};

/// Instances `why` may list: more than any generated group or partition holds, so an
/// aggregate's matches and a window's deciding rows are all listed.
const LIMIT: usize = 1000;
/// Tuples explained per relation, and of those, the ones whose derivation is removed.
const EXPLAINED_MAX: usize = 8;
const REMOVED_MAX: usize = 2;

#[test]
fn why_names_instances_that_hold_and_derive_the_tuple() {
    let config = Config {
        cases: cases(24),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        source_file: Some(file!()),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let seen = std::cell::RefCell::new(Seen::default());
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
        why_case(&program, &data, &mut transcript, &mut seen.borrow_mut())
            .map_err(|message| TestCaseError::fail(transcript.fail(message)))?;
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    let seen = seen.into_inner();
    if std::env::var("RNT_ORACLE_STATS").is_ok() {
        eprintln!("{seen:#?}");
    }
    assert!(seen.tuples > 0, "no derived tuple was explained: {seen:?}");
    if seen.cases >= 20 {
        assert!(
            seen.aggregates > 0
                && seen.windows > 0
                && seen.absent > 0
                && seen.recursive > 0
                && seen.removed > 0,
            "a kind of derivation was never explained: {seen:?}"
        );
    }
}

/// What the explanations covered.
#[derive(Debug, Default)]
struct Seen {
    cases: usize,
    tuples: usize,
    /// Tuples of a recursive relation (a shortest derivation).
    recursive: usize,
    instances: usize,
    aggregates: usize,
    windows: usize,
    /// Facts `not …` (a negation, or an optional atom's missing match).
    absent: usize,
    /// Derivations removed in a commit, and of those, tuples another derivation kept.
    removed: usize,
    kept: usize,
}

impl Seen {
    fn count(&mut self, why: &Why, aggregated: bool) {
        for instance in &why.instances {
            self.instances += 1;
            self.aggregates += usize::from(aggregated);
            self.windows += usize::from(instance.window.is_some());
            for fact in &instance.body {
                match fact {
                    Fact::Holds(child) => self.count(child, false),
                    Fact::Absent { .. } => self.absent += 1,
                }
            }
        }
    }
}

/// One case: the program, its data, then `why` of some tuples of each derived relation.
fn why_case(
    program: &Program,
    data: &[u32],
    transcript: &mut Transcript,
    seen: &mut Seen,
) -> Result<(), String> {
    seen.cases += 1;
    let ch = &mut Choices::new(data);
    let stats = &mut Stats::default();
    let db = Database::new(Arc::new(MemoryStore::new()));
    let mut base: Db = vec![BTreeSet::new(); BASE.len()];
    if !define_step(&db, program, &base, None, stats)? {
        return Err("a define on an empty store was refused".into());
    }
    let initial = initial_data(ch, program);
    transcript.step("commit (initial data)", &initial.text(program));
    base = commit_step(&db, program, &base, &initial, None, stats)?;
    for i in 0..1 + ch.below(3) {
        let set = random_changes(ch, program, &base);
        transcript.step(&format!("commit {i}"), &set.text(program));
        base = commit_step(&db, program, &base, &set, None, stats)?;
    }
    let state = oracle(program, &base, None);
    for (index, (rel, tuples)) in program.rels.iter().zip(&state).enumerate() {
        if !matches!(rel.kind, Kind::View | Kind::Ephemeral) {
            continue;
        }
        for (i, tuple) in tuples.iter().take(EXPLAINED_MAX).enumerate() {
            let text = tuple_text(rel, tuple);
            let head = db.head().map_err(|e| e.to_string())?;
            let explained = db
                .why(&head, &text, LIMIT)
                .map_err(|e| format!("why {text}: {e}"))?;
            check_why(program, &state, &explained.why).map_err(|e| format!("why {text}: {e}"))?;
            check_writers(&db, &explained).map_err(|e| format!("why {text}: {e}"))?;
            let aggregated = program
                .rules
                .iter()
                .any(|r| r.head == index && r.terms.iter().any(|t| matches!(t, HeadTerm::Agg(..))));
            seen.tuples += 1;
            seen.recursive += usize::from(program.reads()[index][index]);
            seen.count(&explained.why, aggregated);
            if i < REMOVED_MAX {
                check_removal(&db, program, &base, &explained.why, &text, seen)?;
            }
        }
    }
    Ok(())
}

/// `r(1, 2)`: a model tuple of `rel` as `why` reads it.
fn tuple_text(rel: &Rel, tuple: &Tuple) -> String {
    let values: Vec<Value> = tuple
        .iter()
        .zip(&rel.types)
        .map(|(&v, &ty)| engine_value(ty, v))
        .collect();
    format_tuple(&rel.name, &values)
}

fn rel_index(program: &Program, name: &str) -> Result<usize, String> {
    program
        .rels
        .iter()
        .position(|r| r.name == name)
        .ok_or_else(|| format!("`{name}` is not a relation of the program"))
}

/// Checks `why` against the oracle's relations `state` (see the module documentation).
fn check_why(program: &Program, state: &Db, why: &Why) -> Result<(), String> {
    let rel = rel_index(program, &why.relation)?;
    let tuple = model(&why.tuple, &program.rels[rel].types);
    if !state[rel].contains(&tuple) {
        return Err(format!(
            "names {} {:?}, which is not there",
            why.relation, why.tuple
        ));
    }
    if !why.derived {
        return Ok(());
    }
    if why.instances.is_empty() {
        return Err(format!(
            "no instance derives {} {:?}",
            why.relation, why.tuple
        ));
    }
    let rules: Vec<&Rule> = program.rules.iter().filter(|r| r.head == rel).collect();
    let aggregated = rules
        .iter()
        .any(|r| r.terms.iter().any(|t| matches!(t, HeadTerm::Agg(..))));
    let derives = |instances: &[&rnt::db::Instance]| -> Result<bool, String> {
        let mini = instance_db(program, state, instances)?;
        Ok(rules
            .iter()
            .any(|rule| derive_rule(rule, &mini).contains(&tuple)))
    };
    if aggregated {
        if why.more {
            return Err("an aggregate's matches were cut at the limit".into());
        }
        let all: Vec<&rnt::db::Instance> = why.instances.iter().collect();
        if !derives(&all)? {
            return Err(format!(
                "the matches listed do not give {} {:?}",
                why.relation, why.tuple
            ));
        }
    }
    for instance in &why.instances {
        if !aggregated && !derives(&[instance])? {
            return Err(format!(
                "`{}` over its facts does not derive {:?}",
                instance.rule, why.tuple
            ));
        }
        for fact in &instance.body {
            match fact {
                Fact::Holds(child) => check_why(program, state, child)?,
                Fact::Absent { relation, pattern } => {
                    let r = rel_index(program, relation)?;
                    let types = &program.rels[r].types;
                    let matching = state[r].iter().find(|t| {
                        pattern
                            .iter()
                            .zip(t.iter())
                            .zip(types)
                            .all(|((p, &v), &ty)| {
                                p.as_ref().is_none_or(|p| {
                                    !p.is_null() && v != NULL && engine_value(ty, v) == *p
                                })
                            })
                    });
                    if let Some(found) = matching {
                        return Err(format!(
                            "`not {relation}{pattern:?}` is said to hold, but {found:?} matches"
                        ));
                    }
                }
            }
        }
        if let Some(window) = &instance.window {
            if window.more {
                return Err("a window's deciding rows were cut at the limit".into());
            }
            let r = rel_index(program, &window.relation)?;
            for row in &window.rows {
                if !state[r].contains(&model(row, &program.rels[r].types)) {
                    return Err(format!("deciding row {row:?} is not there"));
                }
            }
        }
    }
    Ok(())
}

/// The database an instance's rules are evaluated over: each relation holds the instances'
/// tuples of it (positive atoms, window rows), except that a relation a `not` reads holds
/// all of its tuples in `state`.
fn instance_db(
    program: &Program,
    state: &Db,
    instances: &[&rnt::db::Instance],
) -> Result<Db, String> {
    let mut mini: Db = vec![BTreeSet::new(); program.rels.len()];
    let mut full = BTreeSet::new();
    for instance in instances {
        for fact in &instance.body {
            match fact {
                Fact::Holds(child) => {
                    let r = rel_index(program, &child.relation)?;
                    mini[r].insert(model(&child.tuple, &program.rels[r].types));
                }
                Fact::Absent { relation, .. } => {
                    full.insert(rel_index(program, relation)?);
                }
            }
        }
        if let Some(window) = &instance.window {
            let r = rel_index(program, &window.relation)?;
            for row in &window.rows {
                mini[r].insert(model(row, &program.rels[r].types));
            }
        }
    }
    for r in full {
        mini[r] = state[r].clone();
    }
    Ok(mini)
}

/// Each base tuple's commit holds it, and none of that commit's parents does.
fn check_writers(db: &Database, explained: &Explained) -> Result<(), String> {
    let holds = |commit: rnt_store::Address, relation: &str, tuple: &[Value]| {
        let snapshot = db.snapshot_of_commit(commit).map_err(|e| e.to_string())?;
        if snapshot.entry(relation).is_none() {
            return Ok(false);
        }
        let tuples = db.tuples(&snapshot, relation).map_err(|e| e.to_string())?;
        Ok::<bool, String>(tuples.iter().any(|t| t == tuple))
    };
    for ((relation, tuple), commit) in &explained.writers {
        if !holds(*commit, relation, tuple)? {
            return Err(format!(
                "{relation} {tuple:?} is said to be written by a commit without it"
            ));
        }
        let record =
            rnt::merkle::Commit::read(db.chunks().as_ref(), commit).map_err(|e| e.to_string())?;
        for parent in record.parent_addresses() {
            if holds(parent, relation, tuple)? {
                return Err(format!(
                    "{relation} {tuple:?}: the writer's parent holds it already"
                ));
            }
        }
    }
    Ok(())
}

/// Every base tuple of `why`: its leaves and its windows' base rows.
fn base_leaves(program: &Program, why: &Why, out: &mut BTreeSet<(usize, Tuple)>) {
    let Ok(rel) = rel_index(program, &why.relation) else {
        return;
    };
    if !why.derived {
        out.insert((rel, model(&why.tuple, &program.rels[rel].types)));
    }
    for instance in &why.instances {
        for fact in &instance.body {
            if let Fact::Holds(child) = fact {
                base_leaves(program, child, out);
            }
        }
        if let Some(window) = &instance.window {
            if let Ok(r) = rel_index(program, &window.relation) {
                if program.rels[r].kind == Kind::Base {
                    for row in &window.rows {
                        out.insert((r, model(row, &program.rels[r].types)));
                    }
                }
            }
        }
    }
}

/// Deletes the base tuples of `why` in one commit: the tuple is gone unless the oracle still
/// derives it, and then `why` names a derivation that holds there. Resets the head after.
fn check_removal(
    db: &Database,
    program: &Program,
    base: &Db,
    why: &Why,
    text: &str,
    seen: &mut Seen,
) -> Result<(), String> {
    let mut leaves = BTreeSet::new();
    base_leaves(program, why, &mut leaves);
    let mut set = ChangeSet::new();
    for (rel, tuple) in leaves {
        set.name(false, rel, tuple);
    }
    let before = db.head_commit().map_err(|e| e.to_string())?;
    let changes = parse_changes(&set.text(program), None).map_err(|e| e.to_string())?;
    match db.commit(changes, "remove a derivation", None) {
        Ok(CommitOutcome::Committed { .. }) => {}
        // A denial may refuse the removal (nothing written), and a derivation of only
        // derived facts (a constant rule) removes nothing.
        Err(DbError::DenialViolated { .. }) | Ok(CommitOutcome::NothingToCommit) => return Ok(()),
        Err(other) => return Err(format!("removing the derivation of {text}: {other}")),
    }
    seen.removed += 1;
    let removed = set.apply(base);
    let state = oracle(program, &removed, None);
    let rel = rel_index(program, &why.relation)?;
    let still = state[rel].contains(&model(&why.tuple, &program.rels[rel].types));
    let head = db.head().map_err(|e| e.to_string())?;
    let present = db
        .tuples(&head, &why.relation)
        .map_err(|e| e.to_string())?
        .contains(&why.tuple);
    if present != still {
        return Err(format!(
            "after removing its derivation, {text} is there: {present}, the oracle says {still}"
        ));
    }
    if present {
        seen.kept += 1;
        let again = db
            .why(&head, text, LIMIT)
            .map_err(|e| format!("why {text} after the removal: {e}"))?;
        check_why(program, &state, &again.why)
            .map_err(|e| format!("why {text} after the removal: {e}"))?;
    }
    let before = before.ok_or("no head before the removal")?;
    db.reset(&before.to_hex()).map_err(|e| e.to_string())?;
    Ok(())
}
