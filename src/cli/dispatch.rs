//! The engine commands (`plan`, `next`, `state`, `upgrade`, `call`, …):
//! each becomes one engine tool call with JSON arguments, printed as the
//! tool's reply (the same as over MCP), plus `root` and the few commands
//! that print something other than a reply.

use crate::cli::env::{engine_at, start_dir};
use crate::cli::output::print_result;
use crate::cli::{self, typed};
use crate::{Command, WorkflowsCommand, fail};
use savant_think::runtime::args::{
    AnswerArgs, DriverPromptArgs, ExplainArgs, ForkArgs, GraphArgs, GraphFormat, IfExists, ListArgs,
    NextArgs, PlanArgs, ResetArgs, SignalArgs, UpgradeArgs, ValidateArgs, WorkflowArgs,
};
use savant_think::runtime::tools;
use savant_think::workspace;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;

/// `savant-think root`: `{root, absolute, found_by}`.
pub(crate) fn run_root(explicit: Option<&std::path::Path>, path: Option<&std::path::Path>) -> ExitCode {
    let start = path.map(start_dir);
    match cli::env::root_from(explicit, start.as_deref()) {
        Ok(found) => {
            let absolute = savant_think::fsx::canonical(&found.path).unwrap_or_else(|_| found.path.clone());
            print_result(Ok(json!({
                "root": found.path.display().to_string(),
                "absolute": absolute.display().to_string(),
                "found_by": found.source.describe(),
            })))
        }
        Err(m) => fail(m),
    }
}

pub(crate) fn run_engine(command: Command) -> ExitCode {
    let (root, tool, args): (Option<PathBuf>, &str, Value) = match command {
        Command::Check(_)
        | Command::Init(_)
        | Command::Rule(_)
        | Command::Completions { .. }
        | Command::Man
        | Command::Migrate(_)
        | Command::Test(_)
        | Command::Schema { .. }
        | Command::Lsp => {
            unreachable!("dispatched in main")
        }
        #[cfg(feature = "mcp")]
        Command::Serve(_) | Command::Ui(_) => unreachable!("dispatched in main"),
        #[cfg(feature = "agent")]
        Command::Exec(_) | Command::Run(_) | Command::Tools(_) => unreachable!("dispatched in main"),
        Command::Compile { wf, params } => {
            let engine = match engine_at(wf.root.as_deref()) {
                Ok(e) => e,
                Err(code) => return code,
            };
            // Unreadable JSON is a usage error (exit 2), as for `plan`.
            let params = match params.as_deref().map(|p| workspace::json_arg(p, "--params")).transpose() {
                Ok(p) => p,
                Err(m) => return fail(m),
            };
            let result = engine.workflow(&wf.workflow).and_then(|cw| {
                if let Some(params) = params {
                    engine.check_params(&cw, params)?;
                }
                Ok(cw.plan.to_json(cw.wf.version.as_deref()))
            });
            return print_result(result);
        }
        Command::Graph { wf, format, run_id } => {
            return cli::inspect::graph(wf.root.as_deref(), &wf.workflow, run_id.as_deref(), format);
        }
        Command::Plan { wf, params, run_id, resume, replace } => {
            let params = match params.as_deref().map(|p| workspace::json_arg(p, "--params")).transpose() {
                Ok(p) => p,
                Err(m) => return fail(m),
            };
            let if_exists = match (resume, replace) {
                (true, _) => IfExists::Resume,
                (_, true) => IfExists::Replace,
                _ => IfExists::Error,
            };
            let args = PlanArgs {
                workflow: wf.workflow,
                params,
                run_id,
                if_exists: Some(if_exists),
                start_fresh: None,
            };
            (wf.root, "think_plan", typed(args))
        }
        Command::Next { wf, run_id, step, result, expected_version } => {
            let result = match workspace::json_arg(&result, "--result") {
                Ok(r) => r,
                Err(m) => return fail(m),
            };
            let args = NextArgs {
                workflow: wf.workflow,
                run_id,
                step_id: step,
                expected_version,
                ..Default::default()
            };
            // The result is moved in after, not serialized (a copy): it can be megabytes.
            let mut args = typed(args);
            args["result_snapshot"] = result;
            (wf.root, "think_next", args)
        }
        c @ (Command::Answer { .. } | Command::Signal { .. }) => match wait_call(c) {
            Ok(call) => call,
            Err(code) => return code,
        },
        Command::Explain { wf, run_id, step } => {
            (wf.root, "think_explain", typed(ExplainArgs { workflow: wf.workflow, run_id, step_id: step }))
        }
        Command::Fork { wf, run_id, from, new_run_id, params, expected_version } => {
            let params = match params.as_deref().map(|p| workspace::json_arg(p, "--params")).transpose() {
                Ok(p) => p,
                Err(m) => return fail(m),
            };
            let args = ForkArgs { workflow: wf.workflow, run_id, from, new_run_id, params, expected_version };
            (wf.root, "think_fork", typed(args))
        }
        Command::Reset { wf, run_id, checkpoint, force } => (
            wf.root,
            "think_reset",
            typed(ResetArgs { workflow: wf.workflow, run_id, checkpoint, force: Some(force) }),
        ),
        Command::State { command: cli::state::StateCommand::Migrate(args) } => {
            return cli::state_migrate::run(args);
        }
        Command::State { command } => match cli::inspect::state(command) {
            Ok(code) => return code,
            Err(command) => cli::state::call(command),
        },
        Command::Upgrade { wf, run_id, all, rename, dry_run, force, expected_version, format } => {
            if format.0 != savant_think::report::Format::Json {
                let engine = match engine_at(wf.root.as_deref()) {
                    Ok(e) => e,
                    Err(code) => return code,
                };
                let req = savant_think::runtime::engine::UpgradeRequest {
                    run_id: if all { None } else { run_id },
                    renames: rename,
                    dry_run,
                    force,
                    expected_version,
                };
                return cli::upgrade::run(&engine, &wf.workflow, &req, format.0, cli::output::auto_color());
            }
            let args = UpgradeArgs {
                workflow: wf.workflow,
                run_id,
                all: Some(all),
                rename: Some(rename),
                dry_run: Some(dry_run),
                force: Some(force),
                expected_version,
            };
            (wf.root, "think_upgrade", typed(args))
        }
        Command::Validate { schema, response, workflow, root } => match (schema, workflow) {
            (Some(schema), _) => {
                let schema = serde_json::from_str::<Value>(&schema).unwrap_or(Value::String(schema));
                let response =
                    match response.as_deref().map(|r| workspace::json_arg(r, "--response")).transpose() {
                        Ok(r) => r.unwrap_or(Value::Null),
                        Err(m) => return fail(m),
                    };
                // The response is moved in after, not serialized (a copy).
                let mut args = typed(ValidateArgs { schema: Some(schema), response: None, workflow: None });
                args["response"] = response;
                (root, "think_validate", args)
            }
            (None, workflow) => {
                (root, "think_validate", typed(ValidateArgs { schema: None, response: None, workflow }))
            }
        },
        Command::Prompt { list: true, root, .. } => {
            let engine = match engine_at(root.as_deref()) {
                Ok(e) => e,
                Err(code) => return code,
            };
            let list = engine.project().prompt_list();
            return print_result(list.map(|l| serde_json::to_value(l).unwrap_or_default()));
        }
        Command::Prompt { version, root, list: false } => {
            (root, "think_driver_prompt", typed(DriverPromptArgs { version }))
        }
        Command::Root { path, root } => return run_root(root.as_deref(), path.as_deref()),
        Command::Workflows { command } => match command {
            WorkflowsCommand::List { filter, root } => {
                (root, "think_workflows_list", typed(ListArgs { filter }))
            }
            WorkflowsCommand::Read { wf } => {
                (wf.root, "think_workflows_read", typed(WorkflowArgs { workflow: wf.workflow }))
            }
            WorkflowsCommand::Graph { wf } => {
                let args = GraphArgs { workflow: wf.workflow, format: Some(GraphFormat::Json) };
                (wf.root, "think_workflows_graph", typed(args))
            }
        },
        Command::Call { tool, input, root } => return call_tool(&tool, &input, root.as_deref()),
    };
    let engine = match engine_at(root.as_deref()) {
        Ok(e) => e,
        Err(code) => return code,
    };
    print_result(tools::call(&engine, tool, args))
}

/// The tool call of `answer` and `signal` (a usage error is the exit code).
fn wait_call(command: Command) -> Result<(Option<PathBuf>, &'static str, Value), ExitCode> {
    match command {
        Command::Answer { wf, run_id, step, value, expected_version } => {
            let value = match workspace::json_arg(&value, "--value") {
                Ok(v) => v,
                Err(m) => return Err(fail(m)),
            };
            let args = AnswerArgs { workflow: wf.workflow, run_id, step_id: step, value, expected_version };
            Ok((wf.root, "think_answer", typed(args)))
        }
        Command::Signal { event, key, payload, id, workflow, run_id, root } => {
            let payload = match payload.as_deref().map(|p| workspace::json_arg(p, "--payload")).transpose() {
                Ok(p) => p,
                Err(m) => return Err(fail(m)),
            };
            Ok((root, "think_signal", typed(SignalArgs { event, key, payload, id, workflow, run_id })))
        }
        _ => unreachable!("only answer and signal"),
    }
}

/// `savant-think call TOOL --input JSON`: any engine tool by name.
fn call_tool(tool: &str, input: &str, root: Option<&std::path::Path>) -> ExitCode {
    let input = match workspace::json_arg(input, "--input") {
        Ok(v) => v,
        Err(m) => return fail(m),
    };
    let engine = match engine_at(root) {
        Ok(e) => e,
        Err(code) => return code,
    };
    print_result(tools::call(&engine, tool, input))
}
