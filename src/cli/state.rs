//! `state get|list|delete|restore|prune|repair`: run state from the command line,
//! each a call of its engine tool.

use super::WorkflowArg;
use clap::Subcommand;
use savant_think::runtime::args::{
    DeleteArgs, PruneArgs, RepairArgs, RestoreArgs, StateGetArgs, StateListArgs,
};
use serde_json::Value;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum StateCommand {
    /// Print a run's full state (or an archived copy's).
    Get {
        #[command(flatten)]
        wf: WorkflowArg,
        /// The run to read.
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(super::complete::runs))]
        run_id: String,
        /// Read the run's archived copy (the latest, or --archive-id).
        #[arg(long)]
        archived: bool,
        /// Which archived copy (from `state list --archived`).
        #[arg(long, value_name = "ID", requires = "archived")]
        archive_id: Option<String>,
        /// json (default), or human: a summary with one line per step.
        #[arg(long, value_enum)]
        format: Option<OutputFormat>,
    },
    /// List runs (of one workflow, or all).
    List {
        /// Only runs of this workflow id.
        workflow: Option<String>,
        /// List the archived runs (replaced or deleted) instead.
        #[arg(long)]
        archived: bool,
        /// Only runs with a step waiting for an answer, a time or an event (and what each waits for).
        #[arg(long, conflicts_with = "archived")]
        waiting: bool,
        /// human (a table; the default on a terminal) or json (the default when piped).
        #[arg(long, value_enum)]
        format: Option<OutputFormat>,
        /// Project root (default: discovered, see `savant-think root`).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Delete a run: it is archived (see `state restore`) unless --purge.
    Delete {
        #[command(flatten)]
        wf: WorkflowArg,
        /// The run to delete.
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(super::complete::runs))]
        run_id: String,
        /// Remove it at once, without archiving (cannot be undone).
        #[arg(long)]
        purge: bool,
    },
    /// Remove finished runs and archived copies, and the workflow versions no run uses.
    ///
    /// Unfinished runs are never removed unless --status names `running`.
    Prune {
        /// Only those last changed longer ago than this (30d, 12h, 90m).
        #[arg(long, value_name = "DURATION")]
        older_than: Option<String>,
        /// Statuses to remove, comma-separated: done, failed, archived, running. Default: done,failed,archived.
        #[arg(long, value_delimiter = ',')]
        status: Vec<String>,
        /// Keep the N newest of each workflow's candidates.
        #[arg(long, value_name = "N")]
        keep_last: Option<usize>,
        /// Say what would be removed; remove nothing.
        #[arg(long)]
        dry_run: bool,
        /// Project root (default: discovered, see `savant-think root`).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Check a run's stored state; with --apply, cut a damaged journal back to its last good event.
    ///
    /// Without --apply nothing changes: the answer says which journal line is
    /// damaged (a checksum that does not match, a missing or reordered line)
    /// and which lines a repair would cut. With --apply the whole journal is
    /// first copied to `<run>.journal.bak` (never overwritten: `.bak.2`, …)
    /// beside it. A damaged snapshot is reported, never changed.
    Repair {
        #[command(flatten)]
        wf: WorkflowArg,
        /// The run to check.
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(super::complete::runs))]
        run_id: String,
        /// Cut the journal (after a backup); without it, only say what would be cut.
        #[arg(long)]
        apply: bool,
    },
    /// Apply the PostgreSQL schema migrations the state database lacks (idempotent; as its owner, so replicas may run with DML grants only).
    Migrate(super::state_migrate::MigrateArgs),
    /// Make an archived run the live run again.
    Restore {
        #[command(flatten)]
        wf: WorkflowArg,
        /// The archived run.
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(super::complete::runs))]
        run_id: String,
        /// Which archived copy (default: the latest).
        #[arg(long, value_name = "ID")]
        archive_id: Option<String>,
    },
}

/// How `state get` and `state list` print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// For a person: a table or a summary (colour on a terminal).
    Human,
    /// The tool's JSON reply.
    Json,
}

/// The tool a `state` command calls: (the root given, the tool, its arguments).
pub fn call(command: StateCommand) -> (Option<PathBuf>, &'static str, Value) {
    use super::typed;
    match command {
        StateCommand::Get { wf, run_id, archived, archive_id, .. } => {
            let args = StateGetArgs { workflow: wf.workflow, run_id, archived: Some(archived), archive_id };
            (wf.root, "think_state_get", typed(args))
        }
        StateCommand::List { workflow, archived, waiting, root, .. } => {
            let args = StateListArgs { workflow, archived: Some(archived), waiting: waiting.then_some(true) };
            (root, "think_state_list", typed(args))
        }
        StateCommand::Delete { wf, run_id, purge } => (
            wf.root,
            "think_state_delete",
            typed(DeleteArgs { workflow: wf.workflow, run_id, purge: Some(purge) }),
        ),
        StateCommand::Prune { older_than, status, keep_last, dry_run, root } => {
            let status = (!status.is_empty()).then_some(status);
            let args = PruneArgs { older_than, status, keep_last, dry_run: Some(dry_run) };
            (root, "think_state_prune", typed(args))
        }
        StateCommand::Repair { wf, run_id, apply } => (
            wf.root,
            "think_state_repair",
            typed(RepairArgs { workflow: wf.workflow, run_id, apply: Some(apply) }),
        ),
        // Not a tool: `dispatch` runs `state migrate` itself, before this.
        StateCommand::Migrate(_) => unreachable!("state migrate is dispatched to cli::state_migrate"),
        StateCommand::Restore { wf, run_id, archive_id } => {
            (wf.root, "think_state_restore", typed(RestoreArgs { workflow: wf.workflow, run_id, archive_id }))
        }
    }
}
