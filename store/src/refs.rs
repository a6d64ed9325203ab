//! Moving a ref durably: the last step of every commit.

use crate::backend::check_ref_name;
use crate::{Address, ChunkStore, StoreError, StoreResult};

/// Moves ref `name` from `expected` to `new` in the durable order a commit needs:
///
/// 1. [`ChunkStore::flush`]: the chunks written so far (the commit's objects) become durable;
/// 2. [`ChunkStore::compare_and_swap_ref`]: the ref moves, or the call fails with
///    [`StoreError::RefConflict`] and nothing changes;
/// 3. `flush` again: the move becomes durable.
///
/// A crash at any point leaves the ref at `expected` or at `new`, and either one points at
/// chunks that were durable before the ref could name them.
///
/// Before flushing, it checks the name ([`StoreError::InvalidRefName`]) and that the store
/// holds `new` ([`StoreError::NotFound`]): a ref naming a missing chunk would publish a
/// head that cannot be read.
pub fn commit_ref<S: ChunkStore + ?Sized>(
    store: &S,
    name: &str,
    expected: Option<Address>,
    new: Option<Address>,
) -> StoreResult<()> {
    check_ref_name(name)?;
    if let Some(address) = new {
        if !store.contains(&address)? {
            return Err(StoreError::NotFound(address));
        }
    }
    store.compare_and_swap_ref_durably(name, expected, new)
}
