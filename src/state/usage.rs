//! What a store's connection pool is doing (`/metrics`): PostgreSQL's, in
//! `pg/usage.rs`; the file and memory stores have none.

use super::{FileStore, MemStore};

/// A connection pool's use at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// Connections lent for reads and writes.
    pub work: usize,
    /// Connections lent to hold (or try) run locks.
    pub lock: usize,
    /// Open connections waiting to be lent.
    pub idle: usize,
    /// The most each of the two budgets lends at once (`[state] pool_size`).
    pub size: usize,
}

/// The pool half of a [`super::StateStore`].
pub trait StoreUsage {
    /// The pool's use now; `None` for a store without one.
    fn pool_usage(&self) -> Option<PoolUsage> {
        None
    }
}

impl StoreUsage for FileStore {}

impl StoreUsage for MemStore {}
