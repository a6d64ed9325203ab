//! rnt: a content-addressed relational store whose derived relations are maintained
//! incrementally. This facade re-exports the public API of the workspace crates.
//!
//! ```
//! use rnt::db::{Database, Value};
//! use rnt::store::MemoryStore;
//! use std::sync::Arc;
//!
//! let db = Database::new(Arc::new(MemoryStore::new()));
//! db.define("relation edge(src: int, dst: int).
//!            view reach(x: int, y: int).
//!            reach(x, y) :- edge(x, y).
//!            reach(x, z) :- reach(x, y), edge(y, z).", "graph.rnt", "define")?;
//! let edges = rnt::db::change::parse_changes("+edge(1, 2)\n+edge(2, 3)", None).unwrap();
//! db.commit(edges, "two edges", None)?;
//! let reach = db.tuples(&db.head()?, "reach")?;
//! assert!(reach.contains(&vec![Value::Int(1), Value::Int(3)]));
//! # Ok::<(), rnt::db::DbError>(())
//! ```

#![warn(missing_docs)]

pub use rnt_db as db;
pub use rnt_engine as engine;
pub use rnt_lang as lang;
pub use rnt_merkle as merkle;
pub use rnt_store as store;
