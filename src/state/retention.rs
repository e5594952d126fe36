//! What `state prune` and `[state] keep` keep: the retention policy as
//! data (the engine applies it, `runtime::engine::prune`).

use serde::Deserialize;

/// `[state] keep` in `savant-think.toml`, and the flags of `state prune`:
/// which runs may be removed. Unfinished runs (`running`) are removed only
/// when `status` names them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Keep {
    /// Remove only runs (and archived copies) last changed longer ago than
    /// this (`"30d"`, `"12h"`; humantime syntax). Unset: any age.
    pub older_than: Option<String>,
    /// The statuses that may be removed: `done`, `failed`, `archived`
    /// (archived copies), `running`. Empty: `done`, `failed`, `archived`.
    pub status: Vec<String>,
    /// Keep the N most recent of each workflow's candidates (live runs and
    /// archived copies counted apart).
    pub keep_last: Option<usize>,
}

/// The statuses `state prune` knows.
pub const PRUNE_STATUSES: &[&str] = &["done", "failed", "archived", "running"];

/// The statuses pruned when none are given.
pub const DEFAULT_PRUNE_STATUSES: &[&str] = &["done", "failed", "archived"];
