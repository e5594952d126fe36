//! The errors of runs over time (an existing run, an unknown run or
//! archived copy), each built by one constructor with typed details and,
//! where a name was mistyped, a did-you-mean.

use crate::runtime::error::typed;
use crate::runtime::reply::{EntryStatus, RunEntry};
use crate::runtime::{EngineError, ErrorCode};
use crate::state::RunKey;
use serde::Serialize;

/// `RUN_EXISTS`: plan was given the id of a run that exists.
#[derive(Clone, Debug, Serialize)]
pub struct RunExists {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// The existing run's status (running, done, failed or unreadable).
    pub status: Option<String>,
    /// Its state version.
    pub version: Option<u64>,
    /// When it last changed (RFC 3339).
    pub updated_at: Option<String>,
    /// What happened.
    pub message: String,
    /// How to go on.
    pub help: String,
}

/// `UNKNOWN_RUN`: no such run (or no such archived copy).
#[derive(Clone, Debug, Serialize)]
pub struct UnknownRun {
    /// The workflow id.
    pub workflow: String,
    /// The run id asked for.
    pub run_id: String,
    /// The archived copy asked for, if one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_id: Option<String>,
    /// What happened.
    pub message: String,
    /// A did-you-mean among the ids there are, if one is close.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// `RUN_BUSY`, `BUSY` and a `STATE_UNAVAILABLE` met mid-call: retryable.
#[derive(Clone, Debug, Serialize)]
pub struct Retryable {
    /// The run whose lock was busy (`workflow/run_id`), for `RUN_BUSY`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// What happened.
    pub message: String,
    /// Always true: the same call may succeed later.
    pub retryable: bool,
    /// How long to wait before trying again, in milliseconds.
    pub retry_after_ms: u64,
}

/// The wait a busy answer suggests before a retry.
pub const RETRY_AFTER_MS: u64 = 1000;

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
        typed(ErrorCode::RunBusy, &details)
    }

    /// `BUSY`: the server is at its limit of calls in flight.
    pub fn busy(message: &str) -> EngineError {
        let details = Retryable {
            run: None,
            message: message.to_owned(),
            retryable: true,
            retry_after_ms: RETRY_AFTER_MS,
        };
        typed(ErrorCode::Busy, &details)
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
        typed(ErrorCode::StateUnavailable, &details)
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
        typed(
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
        typed(
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
        typed(
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

/// `WORKFLOW_CHANGED`: the workflow version (or schema) a run is pinned to
/// is missing from the state store, or no longer has its bytes.
#[derive(Clone, Debug, Serialize)]
pub struct PinnedMissing {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// What happened.
    pub message: String,
    /// How to go on.
    pub help: String,
    /// The object the run is pinned to.
    pub run_hash: String,
    /// The workflow file's hash now, when it can be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_hash: Option<String>,
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
        typed(
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

/// `INCOMPATIBLE_UPGRADE`: what the upgrade would do, and why it cannot.
#[derive(Clone, Debug, Serialize)]
pub struct IncompatibleUpgrade<'a> {
    /// The workflow id.
    pub workflow: &'a str,
    /// What happened.
    pub message: String,
    /// Each run checked: its plan and diagnostics.
    pub runs: &'a [crate::runtime::reply::RunUpgrade],
    /// How to go on.
    pub help: &'static str,
}

impl EngineError {
    /// `INCOMPATIBLE_UPGRADE` for the runs checked (nothing was changed).
    pub(crate) fn incompatible_upgrade(
        workflow: &str,
        message: String,
        runs: &[crate::runtime::reply::RunUpgrade],
    ) -> EngineError {
        let help = "fix the new file where the diagnostics point, rename moved steps with --rename OLD=NEW, or fork the run";
        typed(ErrorCode::IncompatibleUpgrade, IncompatibleUpgrade { workflow, message, runs, help })
    }
}
