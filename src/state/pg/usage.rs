//! [`PgStore`]'s connection pool as `/metrics` shows it.

use super::PgStore;
use crate::state::usage::{PoolUsage, StoreUsage};

impl StoreUsage for PgStore {
    fn pool_usage(&self) -> Option<PoolUsage> {
        let (work, lock, idle, size) = self.pool.usage();
        Some(PoolUsage { work, lock, idle, size })
    }
}
