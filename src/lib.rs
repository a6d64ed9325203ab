//! rnt: a content-addressed relational store whose derived relations are maintained
//! incrementally. This facade re-exports the public API of the workspace crates.

#![warn(missing_docs)]

pub use rnt_maintain as maintain;
pub use rnt_merkle as merkle;
pub use rnt_store as store;
