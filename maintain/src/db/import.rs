//! `import`: bulk insertion into one base relation, sorted and applied in bounded batches,
//! then committed through the ordinary pipeline (`commit`).

use crate::db::{CommitOutcome, Database};
use crate::lang::tuple::{encode_tuple, Tuple};
use crate::{DbError, DbResult};
use rnt_merkle::{RelationKind, Tree};

/// Rows an import sorts and applies per batch: bounds its memory on huge files.
pub const IMPORT_BATCH_ROWS: usize = 1 << 20;

impl Database {
    /// Inserts every tuple of `rows` into base relation `relation` in one commit, sorting
    /// and applying them in batches of [`IMPORT_BATCH_ROWS`]. Duplicate rows and rows
    /// already present are no-ops (a relation is a set). `progress` is called with the
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
        let head = self.head()?;
        let started = self.nodes.counters();
        let entry = head.require(relation)?;
        if entry.kind != RelationKind::Relation {
            return Err(DbError::user(format!(
                "`{relation}` is a {}: import fills base relations only",
                entry.kind.keyword()
            )));
        }
        let types = head.schema(relation).map(|s| s.types()).unwrap_or_default();
        let old_tree = entry
            .tree()
            .ok_or_else(|| DbError::corrupted(format!("relation `{relation}` has no tree")))?;
        let mut tree = old_tree;
        let mut batch: Vec<Vec<u8>> = Vec::new();
        let mut read = 0u64;
        let mut rows = rows.into_iter();
        loop {
            let row = rows.next();
            let done = row.is_none();
            if let Some(row) = row {
                let tuple = row?;
                batch.push(
                    encode_tuple(&tuple, &types)
                        .map_err(|e| DbError::user(format!("{relation}: {e}")))?,
                );
                read += 1;
                if read % 65_536 == 0 {
                    progress(read);
                }
            }
            if batch.len() >= IMPORT_BATCH_ROWS || (done && !batch.is_empty()) {
                batch.sort_unstable();
                batch.dedup();
                tree = if tree.count(&self.nodes)? == 0 {
                    Tree::build(&self.nodes, batch.iter().map(|k| (k.as_slice(), &[][..])))?
                } else {
                    tree.edit(&self.nodes, batch.drain(..).map(|k| (k, Some(Vec::new()))))?
                };
                batch.clear();
            }
            if done {
                break;
            }
        }
        progress(read);
        self.finish_base_commit(
            &head,
            vec![(relation.to_string(), old_tree, tree)],
            started,
            message,
        )
    }
}
