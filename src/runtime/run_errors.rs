//! The errors of runs over time (an existing run, an unknown run or
//! archived copy, a busy lock, a pinned version gone), each built by one
//! constructor with typed details (their shapes are in `error_shapes.rs`)
//! and, where a name was mistyped, a did-you-mean.

use crate::runtime::ErrorCode;
use crate::runtime::error::EngineError;
use crate::runtime::error_details::{
    IncompatibleUpgrade, PinnedMissing, RETRY_AFTER_MS, Retryable, RunExists, UnknownRun,
};
use crate::runtime::reply_runs::{EntryStatus, RunEntry, RunUpgrade};
use crate::state::RunKey;

/// What was being made when the run id was found taken (for the help of
/// `RUN_EXISTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Making {
    /// A new run (`plan`).
    Plan,
    /// A fork's new run.
    Fork,
    /// An archived run made live again.
    Restore,
}

impl EngineError {
    /// `RUN_BUSY`: `run`'s lock was held for the whole lock timeout, or too
    /// many calls already wait for it.
    pub(crate) fn run_busy(run: &str, message: &str) -> EngineError {
        let details = Retryable {
            run: Some(run.to_owned()),
            message: message.to_owned(),
            retryable: true,
            retry_after_ms: RETRY_AFTER_MS,
        };
        EngineError::with(ErrorCode::RunBusy, details)
    }

    /// `BUSY`: the server is at its limit of calls in flight.
    pub fn busy(message: &str) -> EngineError {
        let details = Retryable {
            run: None,
            message: message.to_owned(),
            retryable: true,
            retry_after_ms: RETRY_AFTER_MS,
        };
        EngineError::with(ErrorCode::Busy, details)
    }

    /// `STATE_UNAVAILABLE` in the middle of a call: the database did not
    /// answer in time or the connection broke.
    pub(crate) fn state_unavailable(message: &str) -> EngineError {
        let details = Retryable {
            run: None,
            message: message.to_owned(),
            retryable: true,
            retry_after_ms: RETRY_AFTER_MS,
        };
        EngineError::with(ErrorCode::StateUnavailable, details)
    }

    /// `RUN_EXISTS` for `key`, described by its listing `entry`; `making`
    /// says what the command was making, for a help it can follow (`plan`:
    /// resume or replace; a fork: another new id; a restore: `state delete`).
    pub(crate) fn run_exists(key: &RunKey, entry: &RunEntry, making: Making) -> EngineError {
        let status = entry.status.as_ref().map_or("unreadable", EntryStatus::as_str);
        let help = match making {
            Making::Restore => {
                "finish or delete the live run first (state delete archives it), then restore".to_owned()
            }
            Making::Plan => format!(
                "continue it with --resume (MCP: if_exists: \"resume\"), start it over with --replace \
                 (if_exists: \"replace\"; the old run is archived), or give another --run-id (or none, for a new one); \
                 see `savant-think state get {} --run-id {}`",
                key.workflow, key.run_id
            ),
            Making::Fork => format!(
                "give another --new-run-id (MCP: new_run_id), or none for a new one; see `savant-think state get {} \
                 --run-id {}`",
                key.workflow, key.run_id
            ),
        };
        EngineError::with(
            ErrorCode::RunExists,
            RunExists {
                workflow: key.workflow.clone(),
                run_id: key.run_id.clone(),
                status: entry.status.as_ref().map(|s| s.as_str().to_owned()),
                version: entry.version,
                updated_at: entry.updated_at.clone(),
                message: format!("run `{}` of `{}` exists ({status})", key.run_id, key.workflow),
                help,
            },
        )
    }

    /// `UNKNOWN_RUN` for `key`, with a did-you-mean among `known` run ids.
    pub(crate) fn unknown_run<'a>(key: &RunKey, known: impl IntoIterator<Item = &'a str>) -> EngineError {
        EngineError::with(
            ErrorCode::UnknownRun,
            UnknownRun {
                workflow: key.workflow.clone(),
                run_id: key.run_id.clone(),
                archive_id: None,
                message: format!(
                    "no run `{}` of `{}`; start one with plan (think_plan)",
                    key.run_id, key.workflow
                ),
                help: crate::diagnostic::suggest(&key.run_id, known),
            },
        )
    }

    /// `UNKNOWN_RUN` for an archived copy of `key` (`archive_id`, or any),
    /// with a did-you-mean among the copies there are (`known`).
    pub(crate) fn unknown_archive<'a>(
        key: &RunKey,
        archive_id: Option<&str>,
        known: impl IntoIterator<Item = &'a str>,
    ) -> EngineError {
        let (message, help) = match archive_id {
            Some(id) => (
                format!("no archived copy `{id}` of run `{}` of `{}`", key.run_id, key.workflow),
                crate::diagnostic::suggest(id, known),
            ),
            None => (
                format!("run `{}` of `{}` has no archived copy", key.run_id, key.workflow),
                crate::diagnostic::suggest(&key.run_id, known),
            ),
        };
        EngineError::with(
            ErrorCode::UnknownRun,
            UnknownRun {
                workflow: key.workflow.clone(),
                run_id: key.run_id.clone(),
                archive_id: archive_id.map(str::to_owned),
                message,
                help: help.or_else(|| Some("list them with `state list --archived`".into())),
            },
        )
    }
}

impl EngineError {
    /// `WORKFLOW_CHANGED` for run `key`, whose pinned object `hash` is
    /// missing (`corrupt` is `None`) or damaged (why).
    pub(crate) fn pinned_missing(
        key: &RunKey,
        hash: &str,
        file_hash: Option<&str>,
        corrupt: Option<String>,
    ) -> EngineError {
        let message = match corrupt {
            None => format!("the version this run is pinned to ({hash}) is not in the state store"),
            Some(why) => format!("the version this run is pinned to ({hash}) is damaged: {why}"),
        };
        EngineError::with(
            ErrorCode::WorkflowChanged,
            PinnedMissing {
                workflow: key.workflow.clone(),
                run_id: key.run_id.clone(),
                message,
                help: "put the file with those bytes back (its hash must match), or start the run over: plan --replace (if_exists: \"replace\")".into(),
                run_hash: hash.to_owned(),
                file_hash: file_hash.map(str::to_owned),
            },
        )
    }
}

impl EngineError {
    /// `INCOMPATIBLE_UPGRADE` for the runs checked (nothing was changed).
    pub(crate) fn incompatible_upgrade(
        workflow: &str,
        message: String,
        runs: Vec<RunUpgrade>,
    ) -> EngineError {
        let help = "fix the new file where the diagnostics point, rename moved steps with --rename OLD=NEW, or fork the run";
        let (workflow, help) = (workflow.to_owned(), help.to_owned());
        EngineError::with(
            ErrorCode::IncompatibleUpgrade,
            IncompatibleUpgrade { workflow, message, runs, help },
        )
    }
}
