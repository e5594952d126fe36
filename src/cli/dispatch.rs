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
use savant_think::tools;
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

/// An engine tool call: the root, the tool's name and its JSON arguments.
type Call = (Option<PathBuf>, &'static str, Value);

pub(crate) fn run_engine(command: Command) -> ExitCode {
    let (root, tool, args) = match engine_call(command) {
        Ok(call) => call,
        Err(code) => return code,
    };
    let engine = match engine_at(root.as_deref()) {
        Ok(e) => e,
        Err(code) => return code,
    };
    print_result(tools::call(&engine, tool, args))
}

/// The tool call an engine command comes to; `Err` is the exit code of a
/// usage error or of a command that printed something other than a reply.
fn engine_call(command: Command) -> Result<Call, ExitCode> {
    Ok(match command {
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
        Command::Compile { wf, params } => return Err(compile(wf, params)),
        Command::Graph { wf, format, run_id } => {
            return Err(cli::inspect::graph(wf.root.as_deref(), &wf.workflow, run_id.as_deref(), format));
        }
        c @ (Command::Plan { .. } | Command::Next { .. } | Command::Fork { .. }) => run_call(c)?,
        c @ (Command::Answer { .. } | Command::Signal { .. }) => wait_call(c)?,
        Command::Explain { wf, run_id, step } => {
            (wf.root, "think_explain", typed(ExplainArgs { workflow: wf.workflow, run_id, step_id: step }))
        }
        Command::Reset { wf, run_id, checkpoint, force } => (
            wf.root,
            "think_reset",
            typed(ResetArgs { workflow: wf.workflow, run_id, checkpoint, force: Some(force) }),
        ),
        Command::State { command: cli::state::StateCommand::Migrate(args) } => {
            return Err(cli::state_migrate::run(args));
        }
        Command::State { command } => match cli::inspect::state(command) {
            Ok(code) => return Err(code),
            Err(command) => cli::state::call(command),
        },
        c @ Command::Upgrade { .. } => upgrade_call(c)?,
        Command::Validate { schema, response, workflow, root } => {
            validate_call(schema, response, workflow, root)?
        }
        Command::Prompt { list: true, root, .. } => return Err(prompt_list(root.as_deref())),
        Command::Prompt { version, root, list: false } => {
            (root, "think_driver_prompt", typed(DriverPromptArgs { version }))
        }
        Command::Root { path, root } => return Err(run_root(root.as_deref(), path.as_deref())),
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
        Command::Call { tool, input, root } => return Err(call_tool(&tool, &input, root.as_deref())),
    })
}

/// `--params JSON|@FILE`: unreadable JSON is a usage error (exit 2).
fn params_arg(params: Option<String>) -> Result<Option<Value>, ExitCode> {
    params.as_deref().map(|p| workspace::json_arg(p, "--params")).transpose().map_err(fail)
}

/// `savant-think compile`: the workflow's plan, its params checked when given.
fn compile(wf: cli::WorkflowArg, params: Option<String>) -> ExitCode {
    let engine = match engine_at(wf.root.as_deref()) {
        Ok(e) => e,
        Err(code) => return code,
    };
    // Unreadable JSON is a usage error (exit 2), as for `plan`.
    let params = match params_arg(params) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let result = engine.workflow(&wf.workflow).and_then(|cw| {
        if let Some(params) = params {
            engine.check_params(&cw, params)?;
        }
        Ok(cw.plan.to_json(cw.wf.version.as_deref()))
    });
    print_result(result)
}

/// `savant-think prompt --list`: the driver prompts of the root.
fn prompt_list(root: Option<&std::path::Path>) -> ExitCode {
    let engine = match engine_at(root) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let list = engine.project().prompt_list();
    print_result(list.map(|l| serde_json::to_value(l).unwrap_or_default()))
}

/// The tool call of `plan`, `next` and `fork` (a usage error is the exit code).
fn run_call(command: Command) -> Result<Call, ExitCode> {
    match command {
        Command::Plan { wf, params, run_id, resume, replace } => {
            let params = params_arg(params)?;
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
            Ok((wf.root, "think_plan", typed(args)))
        }
        Command::Next { wf, run_id, step, result, expected_version } => {
            let result = workspace::json_arg(&result, "--result").map_err(fail)?;
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
            Ok((wf.root, "think_next", args))
        }
        Command::Fork { wf, run_id, from, new_run_id, params, expected_version } => {
            let params = params_arg(params)?;
            let args = ForkArgs { workflow: wf.workflow, run_id, from, new_run_id, params, expected_version };
            Ok((wf.root, "think_fork", typed(args)))
        }
        _ => unreachable!("only plan, next and fork"),
    }
}

/// The tool call of `upgrade --format json`; in the other formats the
/// upgrade is done and printed here and `Err` is its exit code.
fn upgrade_call(command: Command) -> Result<Call, ExitCode> {
    let Command::Upgrade { wf, run_id, all, rename, dry_run, force, expected_version, format } = command
    else {
        unreachable!("only upgrade")
    };
    if format.0 != savant_think::report::Format::Json {
        let engine = engine_at(wf.root.as_deref())?;
        let req = savant_think::runtime::args::UpgradeRequest {
            run_id: if all { None } else { run_id },
            renames: rename,
            dry_run,
            force,
            expected_version,
        };
        return Err(cli::upgrade::run(&engine, &wf.workflow, &req, format.0, cli::output::auto_color()));
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
    Ok((wf.root, "think_upgrade", typed(args)))
}

/// The tool call of `validate`: a response against a schema, or a workflow.
fn validate_call(
    schema: Option<String>,
    response: Option<String>,
    workflow: Option<String>,
    root: Option<PathBuf>,
) -> Result<Call, ExitCode> {
    let Some(schema) = schema else {
        return Ok((root, "think_validate", typed(ValidateArgs { schema: None, response: None, workflow })));
    };
    let schema = serde_json::from_str::<Value>(&schema).unwrap_or(Value::String(schema));
    let response = response
        .as_deref()
        .map(|r| workspace::json_arg(r, "--response"))
        .transpose()
        .map_err(fail)?
        .unwrap_or(Value::Null);
    // The response is moved in after, not serialized (a copy).
    let mut args = typed(ValidateArgs { schema: Some(schema), response: None, workflow: None });
    args["response"] = response;
    Ok((root, "think_validate", args))
}

/// The tool call of `answer` and `signal` (a usage error is the exit code).
fn wait_call(command: Command) -> Result<Call, ExitCode> {
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
