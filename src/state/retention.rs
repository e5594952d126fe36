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

/// Why a [`Keep`] cannot be applied: a sentence, and a did-you-mean or a
/// way to write it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeepError {
    pub message: String,
    pub help: Option<String>,
}

impl Keep {
    /// The statuses this policy may remove (the default ones when none are
    /// named; `status` entries may also be comma-separated lists).
    pub fn statuses(&self) -> Result<std::collections::HashSet<&'static str>, KeepError> {
        if self.status.is_empty() {
            return Ok(DEFAULT_PRUNE_STATUSES.iter().copied().collect());
        }
        self.status
            .iter()
            .flat_map(|s| s.split(','))
            .map(|s| {
                let s = s.trim();
                PRUNE_STATUSES.iter().copied().find(|&known| known == s).ok_or_else(|| KeepError {
                    message: format!("unknown status `{s}`: give done, failed, archived or running"),
                    help: crate::diagnostic::suggest(s, PRUNE_STATUSES.iter().copied()),
                })
            })
            .collect()
    }

    /// `older_than` as a duration (`30d`, `12h`, `90m`; humantime), if set.
    pub fn age(&self) -> Result<Option<std::time::Duration>, KeepError> {
        let Some(text) = &self.older_than else { return Ok(None) };
        humantime::parse_duration(text.trim()).map(Some).map_err(|e| KeepError {
            message: format!("older_than `{text}` is not a duration ({e})"),
            help: Some("write it like 30d, 12h or 90m".into()),
        })
    }

    /// Whether the policy can be applied, checked once where it is read
    /// (`savant-think.toml` at start; `state prune`'s flags).
    pub fn check(&self) -> Result<(), KeepError> {
        self.statuses()?;
        self.age()?;
        Ok(())
    }
}
