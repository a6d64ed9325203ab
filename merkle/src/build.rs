//! Building levels upward from a sorted stream of entries: the bulk load, and the last step
//! of an edit that grew the tree taller.

use crate::chunker::{Chunker, ClosedNode};
use crate::codec::{ChildRef, NodeBuilder};
use crate::node_store::NodeWriter;
use crate::MerkleResult;
use rnt_store::Address;

/// One chunker per level above `base_level`, fed bottom-up as nodes close.
pub(crate) struct LevelStack {
    chunkers: Vec<Chunker>,
    /// Nodes closed so far at each level (index 0 = `base_level`).
    closed: Vec<u64>,
    /// The last node closed at each level, to become the root when it was the only one.
    last_closed: Vec<Option<Address>>,
}

impl LevelStack {
    /// Starts building at `base_level` (0 for a bulk load of leaf entries).
    pub(crate) fn new(base_level: u8) -> LevelStack {
        LevelStack {
            chunkers: vec![Chunker::new(base_level)],
            closed: vec![0],
            last_closed: vec![None],
        }
    }

    /// Adds the next entry at the base level.
    pub(crate) fn push(
        &mut self,
        key: &[u8],
        value: &[u8],
        writer: &mut NodeWriter<'_>,
    ) -> MerkleResult<()> {
        self.chunkers[0].push(key, value);
        if !self.chunkers[0].ready.is_empty() {
            self.drain(0, writer)?;
        }
        Ok(())
    }

    /// Writes the closed nodes of level index `i` and feeds them to the level above.
    fn drain(&mut self, i: usize, writer: &mut NodeWriter<'_>) -> MerkleResult<()> {
        let ready = std::mem::take(&mut self.chunkers[i].ready);
        for node in ready {
            let ClosedNode {
                last_key, count, ..
            } = &node;
            let (last_key, count) = (last_key.clone(), *count);
            let address = writer.write(node)?;
            self.closed[i] += 1;
            self.last_closed[i] = Some(address);
            if self.chunkers.len() == i + 1 {
                let level = self.chunkers[i].level() + 1;
                debug_assert!(level <= crate::TREE_LEVEL_MAX, "tree too tall");
                self.chunkers.push(Chunker::new(level));
                self.closed.push(0);
                self.last_closed.push(None);
            }
            let child = ChildRef { address, count };
            self.chunkers[i + 1].push(&last_key, &child.encode());
            if !self.chunkers[i + 1].ready.is_empty() {
                self.drain(i + 1, writer)?;
            }
        }
        Ok(())
    }

    /// Closes every level and returns the root: the single node of the lowest level that
    /// closed exactly one. `None` when nothing was pushed.
    pub(crate) fn finish(mut self, writer: &mut NodeWriter<'_>) -> MerkleResult<Option<Address>> {
        let mut i = 0;
        loop {
            self.chunkers[i].finish();
            self.drain(i, writer)?;
            match self.closed[i] {
                0 => {
                    debug_assert_eq!(i, 0);
                    return Ok(None);
                }
                1 => return Ok(self.last_closed[i]),
                _ => i += 1,
            }
        }
    }
}

/// Writes the empty tree's root: a leaf with no entries.
pub(crate) fn write_empty_leaf(writer: &mut NodeWriter<'_>) -> MerkleResult<Address> {
    let bytes = NodeBuilder::default().encode(0);
    writer.write(ClosedNode {
        level: 0,
        bytes,
        last_key: Vec::new(),
        count: 0,
    })
}
