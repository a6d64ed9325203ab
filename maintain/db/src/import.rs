//! `import`: bulk insertion into one base relation, sorted and applied in bounded batches,
//! then committed through the ordinary pipeline (`commit`). When views read the relation,
//! each batch is a step maintained like a commit of its own and only the last state is
//! committed, so memory stays bounded whatever the file's size.
//!
//! Into a keyed relation each row is an upsert: it replaces the tuple its key held before
//! the import. Two rows with one key must be equal; within a batch the sort finds them, and
//! across batches a scratch tree of the keys applied so far (`ImportRun::seen`), so the
//! check stays bounded in memory too.
//!
//! `import --replace` ([`Database::import_replace`]) builds the relation's new tree from the
//! rows alone, in the same bounded batches, then carries the diff of the old and new trees
//! into the state — in steps of deletions then insertions when views read the relation —
//! so maintenance costs what changed, not the file's size.
//!
//! *Invariant: an import is one commit or none; steps never write a ref.*

use crate::commit::MaintainedChange;
use crate::keys::KeyReader;
use crate::snapshot::Snapshot;
use crate::{CommitOutcome, CommitTimings, Database};
use crate::{DbError, DbResult};
use rnt_engine::delta::base::BaseEdit;
use rnt_engine::eval::plans::plan_program;
use rnt_lang::change::key_text;
use rnt_lang::schema::RelationSchema;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::{decode_tuple, encode_tuple, Tuple};
use rnt_lang::value::{ColumnType, Value};
use rnt_merkle::{ChangeCount, Counters, DiffEntry, Edit, OperatorStat, State, Tree};
use std::collections::BTreeMap;

/// Rows an import sorts and applies per batch: bounds its memory on huge files.
pub const IMPORT_BATCH_ROWS: usize = 1 << 20;

/// Rows an import applies *and maintains* per step when its relation feeds views: each step
/// is maintained like a commit of its own (measured: ~0.65 KiB of memory per row in a
/// step), and only the last state is committed, so the import stays one atomic commit and
/// its memory stays bounded whatever the file's size (10M rows with two views: under
/// 1 GiB, where maintaining the whole delta at once took 5.8 GiB).
pub const IMPORT_STEP_ROWS: usize = 1 << 18;

impl Database {
    /// Inserts every tuple of `rows` into base relation `relation` in one commit, sorting
    /// and applying them in batches of [`IMPORT_BATCH_ROWS`]. Duplicate rows and rows
    /// already present are no-ops (a relation is a set). Into a keyed relation a row is an
    /// upsert (it replaces the tuple with its key), and two rows with one key and different
    /// values are an error naming the key and both rows. `progress` is called with the
    /// number of rows read so far.
    pub fn import<I>(
        &self,
        relation: &str,
        rows: I,
        message: &str,
        progress: &mut dyn FnMut(u64),
    ) -> DbResult<CommitOutcome>
    where
        I: IntoIterator<Item = DbResult<Tuple>>,
    {
        let imported = self.import_rows(relation, rows, message, progress, ImportMode::Insert)?;
        Ok(imported.outcome)
    }

    /// Makes base relation `relation` hold exactly the tuples of `rows` (keyed or not), in
    /// one commit whose delta is the diff of the old and new trees: the new tree is built
    /// from the rows in sorted batches (memory bounded like [`Database::import`]), then
    /// diffed with the old one, so maintaining the views costs what changed, not the rows'
    /// number. A replace that changes nothing makes no commit. Into a keyed relation, two
    /// rows with one key and different values are an error naming the key and both rows.
    pub fn import_replace<I>(
        &self,
        relation: &str,
        rows: I,
        message: &str,
        progress: &mut dyn FnMut(u64),
    ) -> DbResult<CommitOutcome>
    where
        I: IntoIterator<Item = DbResult<Tuple>>,
    {
        let imported = self.import_rows(relation, rows, message, progress, ImportMode::Replace)?;
        Ok(imported.outcome)
    }

    /// [`Database::import`] (`mode` Insert) or [`Database::import_replace`] (Replace), with
    /// what the rows were: how many, how many repeated another row of the input, how many
    /// were in the relation already.
    pub fn import_rows<I>(
        &self,
        relation: &str,
        rows: I,
        message: &str,
        progress: &mut dyn FnMut(u64),
        mode: ImportMode,
    ) -> DbResult<Imported>
    where
        I: IntoIterator<Item = DbResult<Tuple>>,
    {
        let head = self.head()?;
        let clock = self.next_clock(&head, &head.program, None)?;
        let started = self.nodes.counters();
        let entry = head.require(relation)?;
        let kind = head.kind_of(entry)?;
        if kind != RelationKind::Relation {
            return Err(DbError::user(format!(
                "`{relation}` is a {kind}: import fills base relations only"
            )));
        }
        let schema = head
            .schema(relation)
            .ok_or_else(|| DbError::corrupted(format!("relation `{relation}` has no schema")))?;
        let old_tree = entry
            .tree()
            .ok_or_else(|| DbError::corrupted(format!("relation `{relation}` has no tree")))?;
        // Maintaining in steps gives the same views (maintenance is exact from any state)
        // and never misses a denial witness; it could refuse an import whose witness a
        // later step removes only when a denial is non-monotone in the relation, so such
        // programs maintain the whole import at once. A relation that keeps an index (a
        // keyed one whose key does not lead its tuples) goes in steps too, so that its index
        // follows each step's delta in bounded memory.
        let indexed = plan_program(&head.program).keeps_indexes(relation);
        let stepwise = (head.program.reads(relation) || indexed)
            && head.program.denials_are_monotone_in(relation);
        let original = match schema.key_columns() {
            Some(_) if mode == ImportMode::Insert && old_tree.count(&self.nodes)? > 0 => {
                Some(KeyReader::new(entry, &schema)?)
            }
            _ => None,
        };
        let batch_rows = if stepwise && mode == ImportMode::Insert {
            self.import_step_rows
        } else {
            self.import_batch_rows
        };
        let tree = match mode {
            ImportMode::Insert => old_tree,
            ImportMode::Replace => Tree::empty(&self.nodes)?,
        };
        let mut run = ImportRun {
            db: self,
            relation,
            schema: &schema,
            types: schema.types(),
            mode,
            stepwise,
            batch_rows,
            batch: Vec::new(),
            keyed: Vec::new(),
            read: 0,
            tree,
            original,
            seen: None,
            counts: RowCounts::default(),
            start_tree: tree,
            current: head.clone(),
            steps: StepTotals::default(),
            clock,
        };
        let mut rows = rows.into_iter();
        if mode == ImportMode::Replace && schema.key_columns().is_none() {
            run.build_sorted_prefix(&mut rows, progress)?;
        }
        for row in rows {
            run.push(row?, progress)?;
        }
        run.apply_batch(true)?;
        progress(run.read);
        let (rows, counts) = (run.read, run.counts);
        let outcome = run.finish(&head, old_tree, started, message)?;
        Ok(Imported {
            outcome,
            rows,
            duplicates: counts.duplicates,
            already_present: counts.already_present,
        })
    }
}

/// What an import did, and what its rows were.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The commit, or nothing to commit.
    pub outcome: CommitOutcome,
    /// Rows read.
    pub rows: u64,
    /// Rows equal to an earlier row of the input, merged with it (a relation is a set).
    pub duplicates: u64,
    /// Rows the relation held already before the import (an insert; 0 for a replace).
    pub already_present: u64,
}

/// The repeated rows an import has found so far.
#[derive(Clone, Copy, Debug, Default)]
struct RowCounts {
    duplicates: u64,
    already_present: u64,
    /// Batches applied so far.
    batches: u64,
}

/// What an import does with the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportMode {
    /// Insert them (upsert into a keyed relation).
    Insert,
    /// Make the relation hold exactly them.
    Replace,
}

/// A row of a keyed relation waiting in a batch: its key's encoding (the key's values in
/// key order, so byte order is key order), its tuple's encoding, and its row number.
struct KeyedRow {
    key: Vec<u8>,
    tuple: Vec<u8>,
    row: u64,
}

/// An import under way: the batch being filled, the relation's tree so far and, when it
/// is maintained in steps, the state after the last step and the steps' totals.
struct ImportRun<'d> {
    db: &'d Database,
    relation: &'d str,
    schema: &'d RelationSchema,
    types: Vec<ColumnType>,
    mode: ImportMode,
    /// Whether each batch (or, for a replace, each part of the diff) is maintained as a
    /// step.
    stepwise: bool,
    batch_rows: usize,
    /// Encoded tuples not yet applied (a relation without a key).
    batch: Vec<Vec<u8>>,
    /// Rows not yet applied (a keyed relation).
    keyed: Vec<KeyedRow>,
    /// Rows read so far.
    read: u64,
    /// The relation's tree so far: the old tree plus the batches applied (an import), or
    /// the batches applied alone (a replace).
    tree: Tree,
    /// The keyed relation as it was before the import, read by key to find what an upsert
    /// replaces; `None` for a replace, a relation without a key, or an empty relation.
    original: Option<KeyReader<'d>>,
    /// Once a batch of a keyed relation was applied with more rows to come: a tree from
    /// each key applied so far to the row (8 bytes, big-endian) that gave it, so a later
    /// batch finds a key given twice in bounded memory. Its nodes are scratch: no state
    /// reaches them, and `gc` drops them.
    seen: Option<Tree>,
    /// The rows found repeated, so far.
    counts: RowCounts,
    /// The relation's tree before the first batch (the old tree, or empty for a replace).
    start_tree: Tree,
    current: Snapshot,
    steps: StepTotals,
    /// The new state's clock (`None` for a program that does not mention `now`): the
    /// first step moves it, the others keep it.
    clock: Option<i64>,
}

impl ImportRun<'_> {
    /// Adds one row to the batch, reporting progress and checking the memory budget every
    /// 65,536 rows, and applies the batch when it is full.
    fn push(&mut self, tuple: Tuple, progress: &mut dyn FnMut(u64)) -> DbResult<()> {
        let relation = self.relation;
        let encoded = encode_tuple(&tuple, &self.types)
            .map_err(|e| DbError::user(format!("{relation}: {e}")))?;
        self.read += 1;
        if let Some(columns) = self.schema.key_columns() {
            let key_values: Vec<Value> = columns.iter().map(|&c| tuple[c].clone()).collect();
            let key_types: Vec<ColumnType> = columns.iter().map(|&c| self.types[c]).collect();
            let key = encode_tuple(&key_values, &key_types)
                .map_err(|e| DbError::user(format!("{relation}: {e}")))?;
            self.keyed.push(KeyedRow {
                key,
                tuple: encoded,
                row: self.read,
            });
        } else {
            self.batch.push(encoded);
        }
        let read = self.read;
        if read.is_multiple_of(65_536) {
            progress(read);
            rnt_engine::budget::check(|| {
                format!("importing into `{relation}` ({read} rows read)")
            })?;
        }
        if self.batch.len() + self.keyed.len() >= self.batch_rows {
            self.apply_batch(false)?;
        }
        Ok(())
    }

    /// Streams a replace's rows straight into the new tree while they arrive in order
    /// (files exported in key order: the common case), with no batch to hold or sort; a
    /// repeated row is skipped, as a set holds it once. The first row out of order is left
    /// in the batch, and it and the rows after it go through the batches, applied to the
    /// prefix's tree as edits: the same tree either way (history independence).
    fn build_sorted_prefix(
        &mut self,
        rows: &mut impl Iterator<Item = DbResult<Tuple>>,
        progress: &mut dyn FnMut(u64),
    ) -> DbResult<()> {
        debug_assert!(self.batch.is_empty() && self.schema.key_columns().is_none());
        let (relation, types) = (self.relation, &self.types);
        let read = &mut self.read;
        let mut duplicates = 0u64;
        let mut failure: Option<DbError> = None;
        let mut unsorted: Option<Vec<u8>> = None;
        let mut previous: Option<Vec<u8>> = None;
        let sorted = std::iter::from_fn(|| loop {
            let tuple = match rows.next()? {
                Ok(tuple) => tuple,
                Err(error) => {
                    failure = Some(error);
                    return None;
                }
            };
            let encoded = match encode_tuple(&tuple, types) {
                Ok(encoded) => encoded,
                Err(error) => {
                    failure = Some(DbError::user(format!("{relation}: {error}")));
                    return None;
                }
            };
            *read += 1;
            let rows_read = *read;
            if rows_read.is_multiple_of(65_536) {
                progress(rows_read);
                if let Err(error) = rnt_engine::budget::check(|| {
                    format!("importing into `{relation}` ({rows_read} rows read)")
                }) {
                    failure = Some(error.into());
                    return None;
                }
            }
            match previous.as_deref().map(|last| last.cmp(&encoded)) {
                Some(std::cmp::Ordering::Equal) => duplicates += 1,
                Some(std::cmp::Ordering::Greater) => {
                    unsorted = Some(encoded);
                    return None;
                }
                _ => {
                    let last = previous.get_or_insert_with(Vec::new);
                    last.clear();
                    last.extend_from_slice(&encoded);
                    return Some(encoded);
                }
            }
        });
        let tree = Tree::build(&self.db.nodes, sorted.map(|key| (key, [])))?;
        if let Some(error) = failure {
            return Err(error);
        }
        self.counts.duplicates += duplicates;
        self.tree = tree;
        self.batch.extend(unsorted);
        Ok(())
    }

    /// Sorts the batch and applies it to the tree (a bulk build while the tree is empty),
    /// then maintains it as a step when the import goes in steps. An empty batch is a no-op.
    /// `last` says no row follows.
    fn apply_batch(&mut self, last: bool) -> DbResult<()> {
        if self.batch.is_empty() && self.keyed.is_empty() {
            return Ok(());
        }
        let nodes = &self.db.nodes;
        let before = self.tree;
        let edits: Vec<Edit> = if self.schema.key_columns().is_some() {
            self.keyed_batch_edits(last)?
        } else {
            let rows = self.batch.len();
            self.batch.sort_unstable();
            self.batch.dedup();
            self.counts.duplicates += (rows - self.batch.len()) as u64;
            self.batch
                .drain(..)
                .map(|k| (k, Some(Vec::new())))
                .collect()
        };
        let only_puts = edits.iter().all(|(_, value)| value.is_some());
        let count_before = self.tree.count(nodes)?;
        let puts = edits.len() as u64;
        // Only a later batch into a relation that held tuples needs its rows again, to
        // tell rows held before the import from rows an earlier batch gave.
        let start_held = self.start_tree.count(nodes)? > 0;
        let unkeyed = self.schema.key_columns().is_none();
        let kept = (unkeyed && start_held && self.counts.batches > 0).then(|| edits.clone());
        self.tree = if only_puts && count_before == 0 {
            Tree::build(nodes, edits.iter().map(|(k, _)| (k.as_slice(), &[][..])))?
        } else {
            self.tree.edit(nodes, edits)?
        };
        if unkeyed {
            let no_ops = puts - (self.tree.count(nodes)? - count_before);
            self.count_present(kept.as_deref(), start_held, no_ops)?;
        }
        self.counts.batches += 1;
        if self.stepwise && self.mode == ImportMode::Insert {
            self.maintain_step(before)?;
        }
        Ok(())
    }

    /// The sorted edits of a batch of a keyed relation. Rows with one key must be equal
    /// (then all but one are no-ops), within the batch and with earlier batches (`seen`);
    /// an import's row replaces the tuple its key held before the import, if another.
    /// Records the batch's keys in `seen` unless it is the `last`.
    fn keyed_batch_edits(&mut self, last: bool) -> DbResult<Vec<Edit>> {
        let nodes = &self.db.nodes;
        let mut rows = std::mem::take(&mut self.keyed);
        rows.sort_unstable_by(|a, b| (&a.key, a.row).cmp(&(&b.key, b.row)));
        // One row per key; a second row with other values is an error.
        let mut unique: Vec<KeyedRow> = Vec::with_capacity(rows.len());
        for row in rows {
            match unique.last() {
                Some(first) if first.key == row.key => {
                    if first.tuple != row.tuple {
                        return Err(self.key_given_twice(&row.key, first.row, row.row));
                    }
                    self.counts.duplicates += 1;
                }
                _ => unique.push(row),
            }
        }
        let mut edits: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        let mut new_keys: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for row in unique {
            if let Some(seen) = &self.seen {
                if let Some(first) = seen.get(nodes, &row.key)? {
                    // An earlier batch gave this key; the tree holds that row's tuple.
                    if self.tree.get(nodes, &row.tuple)?.is_none() {
                        let first = row_number(&first)?;
                        return Err(self.key_given_twice(&row.key, first, row.row));
                    }
                    self.counts.duplicates += 1;
                    continue;
                }
            }
            if !last {
                new_keys.push((row.key.clone(), row.row.to_be_bytes().to_vec()));
            }
            if let Some(original) = &self.original {
                let key = self.decode_key(&row.key)?;
                if let Some(old) = original.tuple_with_key(nodes, &key)? {
                    let old = encode_tuple(&old, &self.types).map_err(|e| {
                        DbError::internal(format!("a stored tuple does not re-encode: {e}"))
                    })?;
                    if old == row.tuple {
                        self.counts.already_present += 1;
                        continue;
                    }
                    edits.insert(old, None);
                }
            }
            edits.insert(row.tuple, Some(Vec::new()));
        }
        if !new_keys.is_empty() {
            self.seen = Some(match self.seen {
                None => Tree::build(nodes, new_keys.iter().map(|(k, v)| (k, v)))?,
                Some(seen) => seen.edit(nodes, new_keys.into_iter().map(|(k, v)| (k, Some(v))))?,
            });
        }
        Ok(edits.into_iter().collect())
    }

    /// Sorts the `no_ops` puts of a batch of a relation without a key (rows the tree held
    /// already) into rows of the relation before the import and rows an earlier batch
    /// gave. `kept` holds the batch's edits when both are possible (a later batch, and the
    /// relation held tuples before): then the start tree is read for each.
    fn count_present(
        &mut self,
        kept: Option<&[Edit]>,
        start_held: bool,
        no_ops: u64,
    ) -> DbResult<()> {
        if no_ops == 0 {
            return Ok(());
        }
        match kept {
            _ if !start_held => self.counts.duplicates += no_ops,
            None => self.counts.already_present += no_ops,
            Some(edits) => {
                let mut present = 0u64;
                for (key, _) in edits {
                    present += u64::from(self.start_tree.get(&self.db.nodes, key)?.is_some());
                }
                self.counts.already_present += present;
                self.counts.duplicates += no_ops - present;
            }
        }
        Ok(())
    }

    /// The key values an encoded key stands for.
    fn decode_key(&self, key: &[u8]) -> DbResult<Vec<Value>> {
        let columns = self.schema.key_columns().unwrap_or_default();
        let types: Vec<ColumnType> = columns.iter().map(|&c| self.types[c]).collect();
        decode_tuple(key, &types)
            .map_err(|e| DbError::internal(format!("an import's key does not decode: {e}")))
    }

    /// The error for two rows that give one key different values.
    fn key_given_twice(&self, key: &[u8], first: u64, second: u64) -> DbError {
        let text = match self.decode_key(key) {
            Ok(values) => key_text(self.schema, &values.iter().collect::<Vec<_>>()),
            Err(error) => return error,
        };
        DbError::user(format!(
            "rows {first} and {second} give key {text} of `{}` different values \
             (a keyed relation holds one tuple per key; rows count from 1 after the header)",
            self.relation
        ))
    }

    /// Maintains the change from `before` to the current tree like a commit of its own,
    /// without writing a ref, and adds it to the totals.
    fn maintain_step(&mut self, before: Tree) -> DbResult<()> {
        let started = self.db.nodes.counters();
        debug_assert_eq!(
            self.current.entry(self.relation).and_then(|e| e.tree()),
            Some(before),
            "a step starts from the tree the last step left"
        );
        let edits = vec![(self.relation.to_string(), BaseEdit::Tree(self.tree))];
        if let Some(step) = self
            .db
            .maintain(&self.current, edits, self.clock, started)?
        {
            self.current = self.current.with_state(step.state.clone());
            self.steps.add(step);
        }
        let (relation, read) = (self.relation, self.read);
        rnt_engine::budget::check(|| {
            format!("importing into `{relation}` ({read} rows read and maintained)")
        })?;
        Ok(())
    }

    /// Carries a replace's diff from `old` to `new` (the tree the rows built) into the
    /// state in steps of at most `batch_rows` changes: every deletion first, then every
    /// insertion, so each intermediate state is a subset of the old contents or of the new
    /// ones, and a denial monotone in the relation sees no witness the final state lacks.
    /// A diff that fits in one step is one step.
    fn replace_in_steps(&mut self, old: Tree, new: Tree) -> DbResult<()> {
        let nodes = &self.db.nodes;
        let step_rows = self.db.import_step_rows;
        let mut changes = 0usize;
        for entry in old.diff(nodes, &new)? {
            entry?;
            changes += 1;
            if changes > step_rows {
                break;
            }
        }
        if changes <= step_rows {
            self.tree = new;
            return self.maintain_step(old);
        }
        self.tree = old;
        for deleting in [true, false] {
            let mut edits: Vec<Edit> = Vec::new();
            for entry in old.diff(nodes, &new)? {
                match entry? {
                    DiffEntry::Removed { key, .. } if deleting => edits.push((key, None)),
                    DiffEntry::Added { key, value } if !deleting => edits.push((key, Some(value))),
                    DiffEntry::Changed { .. } => {
                        return Err(DbError::corrupted(format!(
                            "base relation `{}` holds a tuple with a value",
                            self.relation
                        )))
                    }
                    _ => {}
                }
                if edits.len() >= step_rows {
                    self.edit_step(std::mem::take(&mut edits))?;
                }
            }
            if !edits.is_empty() {
                self.edit_step(edits)?;
            }
        }
        if self.tree != new {
            return Err(DbError::internal(format!(
                "replacing `{}` in steps reached another tree than the rows built",
                self.relation
            )));
        }
        Ok(())
    }

    /// Applies `edits` to the tree and maintains them as one step.
    fn edit_step(&mut self, edits: Vec<Edit>) -> DbResult<()> {
        let before = self.tree;
        self.tree = before.edit(&self.db.nodes, edits)?;
        self.maintain_step(before)
    }

    /// Commits the import on top of `head`: the steps' last state and totals, or the whole
    /// change from `old_tree` maintained at once.
    fn finish(
        mut self,
        head: &Snapshot,
        old_tree: Tree,
        started: Counters,
        message: &str,
    ) -> DbResult<CommitOutcome> {
        if self.mode == ImportMode::Replace && self.stepwise {
            let new_tree = self.tree;
            // The diff of a replace opens most leaves when the changes are spread out:
            // read them ahead on a second thread while this one diffs and maintains.
            let nodes = self.db.nodes.clone();
            let done = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                scope.spawn(|| old_tree.read_ahead_diff(&nodes, &new_tree, &done));
                let replaced = self.replace_in_steps(old_tree, new_tree);
                done.store(true, std::sync::atomic::Ordering::Relaxed);
                replaced
            })?;
        }
        if self.stepwise {
            let total = self.steps.finish(self.current.state);
            return self.db.commit_if_changed(head, total, message);
        }
        let edits = vec![(self.relation.to_string(), BaseEdit::Tree(self.tree))];
        let step = self.db.maintain(head, edits, self.clock, started)?;
        self.db.commit_if_changed(head, step, message)
    }
}

/// The row number a `seen` tree records.
fn row_number(bytes: &[u8]) -> DbResult<u64> {
    let bytes: [u8; 8] = bytes
        .try_into()
        .map_err(|_| DbError::internal("an import's row number is not 8 bytes"))?;
    Ok(u64::from_be_bytes(bytes))
}

/// The sum of an import's (or a transaction's) steps: change counts per relation and work
/// per operator.
#[derive(Clone, Default)]
pub(crate) struct StepTotals {
    counts: BTreeMap<String, (u64, u64)>,
    stats: Vec<OperatorStat>,
}

impl StepTotals {
    pub(crate) fn add(&mut self, step: MaintainedChange) {
        for count in step.counts {
            let slot = self.counts.entry(count.relation).or_default();
            slot.0 += count.inserted;
            slot.1 += count.deleted;
        }
        for stat in step.stats {
            match self
                .stats
                .iter_mut()
                .find(|s| s.operator == stat.operator && s.relation == stat.relation)
            {
                Some(total) => {
                    total.entries_read += stat.entries_read;
                    total.nodes_read += stat.nodes_read;
                    total.nodes_written += stat.nodes_written;
                }
                None => self.stats.push(stat),
            }
        }
    }

    /// The whole import as one change ending in `state`; `None` when no step changed
    /// anything (not even the clock).
    pub(crate) fn finish(self, state: State) -> Option<MaintainedChange> {
        if self.counts.is_empty() && self.stats.is_empty() {
            return None;
        }
        let counts = self
            .counts
            .into_iter()
            .map(|(relation, (inserted, deleted))| ChangeCount {
                relation,
                inserted,
                deleted,
            })
            .collect();
        Some(MaintainedChange {
            state,
            counts,
            stats: self.stats,
            timings: CommitTimings::default(),
        })
    }
}
