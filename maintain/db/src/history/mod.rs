//! Version control over states: refs and their layout (`refs`), what a user's reference
//! names (`reference`), the commit graph `log --graph` walks (`graph`), branches, tags,
//! the reflog, reset and revert (`branches`), three-way merge (`merge`) and the resolution
//! of its key conflicts (`resolve`), the commit that last wrote each tuple (`blame`),
//! remotes (`remote`), and cutting a reflog at damage (`reflog_cut`, for `rnt fsck
//! --repair`).
//!
//! *Invariant: refs are the only mutable names, moved only by compare-and-swap; a branch
//! ref names its newest branch record, so a move and its reflog entry are one CAS.*

pub mod blame;
pub mod branches;
pub(crate) mod carry;
pub mod graph;
pub mod merge;
pub mod reference;
pub mod reflog_cut;
pub mod refs;
pub mod remote;
pub mod resolve;
pub mod schema;
