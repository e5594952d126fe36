//! The inspector in the terminal: `state list` as a table (on a TTY, or
//! `--format human`), `state get --format human`, and `graph WORKFLOW
//! --run-id ID` in Unicode boxes. The drawing is the library's
//! (`savant_think::inspect::term`); whether stdout is a terminal, colour
//! and width are `output.rs`'s, as for every command.

use super::env::engine_at as engine;
use super::output::{self, print};
use super::state::{OutputFormat, StateCommand};
use savant_think::inspect::{term, view};
use savant_think::runtime::EngineError;
use std::path::Path;
use std::process::ExitCode;

/// How to draw on this stdout: colour and width as every human format
/// ([`output::auto_color`], [`output::width`]).
pub fn style() -> term::Style {
    term::Style { color: output::auto_color(), width: output::width(), now: std::time::SystemTime::now() }
}

/// An engine error as `state` prints it in JSON: on stdout, exit 1.
fn error(e: EngineError) -> ExitCode {
    output::print_result(Err(e))
}

/// A `state` command for a person, or the command back when JSON is
/// wanted (`--format json`, `state list` piped, the other subcommands).
pub fn state(command: StateCommand) -> Result<ExitCode, StateCommand> {
    match command {
        StateCommand::List { workflow, archived, waiting, format, root }
            if format == Some(OutputFormat::Human) || (format.is_none() && output::stdout_is_terminal()) =>
        {
            let engine = match engine(root.as_deref()) {
                Ok(e) => e,
                Err(code) => return Ok(code),
            };
            let status = waiting.then(|| "waiting".to_owned());
            let query =
                view::RunsQuery { workflow, archived, status, per_page: usize::MAX, ..Default::default() };
            Ok(match view::runs_page(&engine, &query) {
                Ok(page) => print(&term::runs_table(&page, &style())),
                Err(e) => error(e),
            })
        }
        StateCommand::Get { wf, run_id, archived, archive_id, format: Some(OutputFormat::Human) } => {
            let engine = match engine(wf.root.as_deref()) {
                Ok(e) => e,
                Err(code) => return Ok(code),
            };
            let summary = if archived {
                engine
                    .state_get_archived(&wf.workflow, &run_id, archive_id.as_deref())
                    .map(|st| term::run_summary(&st, &[], &[], &style()))
            } else {
                engine
                    .run_snapshot(&wf.workflow, &run_id)
                    .map(|s| term::run_summary(&s.state, &s.ready, &s.waiting, &style()))
            };
            Ok(match summary {
                Ok(text) => print(&text),
                Err(e) => error(e),
            })
        }
        other => Err(other),
    }
}

/// `graph --format`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// A Mermaid flowchart (the default without --run-id).
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// The plan as JSON; with --run-id, the laid-out graph with statuses.
    Json,
    /// Unicode boxes, one row per layer (the default with --run-id; colour on a terminal).
    Text,
}

/// `graph WORKFLOW`: Mermaid, DOT or the plan; with `--run-id ID` (or
/// `--format text`) the DAG in boxes with the run's statuses, or as JSON
/// the laid-out graph.
pub fn graph(
    root: Option<&Path>,
    workflow: &str,
    run_id: Option<&str>,
    format: Option<GraphFormat>,
) -> ExitCode {
    let engine = match engine(root) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let drawn = run_id.is_some() || format == Some(GraphFormat::Text);
    let (graph, title) = match (run_id, format) {
        (Some(_), Some(GraphFormat::Mermaid | GraphFormat::Dot)) => {
            return crate::fail("--run-id draws --format text (the default) or json");
        }
        (Some(run_id), _) => match engine.run_snapshot(workflow, run_id) {
            Ok(s) => {
                let st = &s.state;
                let title = format!(
                    "{} · run {} · {} · version {}",
                    st.workflow,
                    st.run_id,
                    st.status.as_str(),
                    st.version
                );
                (view::graph_view(&s.workflow, Some(st)), title)
            }
            Err(e) => return error(e),
        },
        (None, _) => match engine.workflow(workflow) {
            Ok(cw) if !drawn => {
                return print(&match format.unwrap_or(GraphFormat::Mermaid) {
                    GraphFormat::Dot => cw.plan.to_dot(),
                    GraphFormat::Json => {
                        let plan = cw.plan.to_json(cw.wf.version.as_deref());
                        format!("{}\n", serde_json::to_string_pretty(&plan).unwrap_or_default())
                    }
                    _ => cw.plan.to_mermaid(),
                });
            }
            Ok(cw) => (view::graph_view(&cw, None), cw.wf.id.clone()),
            Err(e) => return error(e),
        },
    };
    if format == Some(GraphFormat::Json) {
        let text = serde_json::to_string_pretty(&graph).unwrap_or_default();
        return print(&format!("{text}\n"));
    }
    print(&term::graph_boxes(&graph, &title, &style()))
}
