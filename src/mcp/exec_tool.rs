//! `think_exec {workflow, params?, run_id?}`: the server runs a workflow to
//! the end with `exec` (`crate::agent::exec`), when the project allows it
//! (`[mcp] exec = true` in `savant-think.toml`; otherwise the tool is not
//! listed and a call is refused with `UNKNOWN_TOOL` saying how to allow
//! it). It calls the project's configured tools through the multiplexer
//! (`[servers.*]`, `local_read`, `local_exec` only within `[local]
//! exec_allow`: never `--allow-exec`), and on HTTP it is behind the same
//! bearer token as every call.
//!
//! The call never outlives a client's timeout: it starts (or resumes) the
//! run — `plan`, so a bad workflow or params is refused at once, as is a
//! workflow with a step only a model can answer — records the task mark
//! `started` and answers; a driver task on this server then runs exec to
//! the end. A client that declared the tasks extension gets a task
//! (`resultType: "task"`, its id the run's `run://` URI, see `tasks.rs`);
//! any other gets the run id, the task id and how to follow the run.
//!
//! One driver per run per server ([`Drivers`]); `tasks/cancel` sets its stop
//! flag, and a driver also reads the run's task mark from the store at most
//! once a second, so a cancel recorded by another replica stops it too.
//! When exec stops on a failure (a tool that failed, an engine error other
//! than a busy or changed run) the driver records the `stopped` mark: the
//! task is `failed`, the run resumable with `think_exec` and its run id.

use super::SavantServer;
use super::tasks::{self, Mark, TaskRef};
use crate::agent::exec::{self, ExecOptions, ExecStatus, StopCheck, UsageError};
use crate::agent::mux::{EnvLookup, Multiplexer, MuxOptions};
use crate::runtime::{Engine, EngineError, ErrorCode};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CreateTaskResult, JsonObject, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The tool's name.
pub const NAME: &str = "think_exec";

/// How often a driver reads the run's task mark from the store.
const MARK_READ_EVERY: Duration = Duration::from_secs(1);

/// Whether the project allows `think_exec` (`[mcp] exec = true`).
pub fn enabled(engine: &Engine) -> bool {
    engine.config().mcp.exec
}

/// The drivers running on this server, by run; and where the multiplexer
/// looks up a server's `token_env`.
#[derive(Default)]
pub struct Drivers {
    running: Mutex<HashMap<TaskRef, Driving>>,
    env: EnvLookup,
}

/// One run's driver: its stop flag, and whether it was asked to go on
/// (think_exec again, an answer) while it ran: then it runs exec again
/// when exec ends, instead of leaving.
struct Driving {
    stop: Arc<AtomicBool>,
    again: bool,
}

impl Drivers {
    pub fn new(env: EnvLookup) -> Drivers {
        Drivers { running: Mutex::new(HashMap::new()), env }
    }

    /// Asks the driver of `task` on this server, if any, to stop.
    pub fn stop(&self, task: &TaskRef) {
        if let Some(driving) = self.running.lock().unwrap_or_else(|p| p.into_inner()).get_mut(task) {
            driving.stop.store(true, Ordering::SeqCst);
            driving.again = false;
        }
    }

    /// Whether the driver of `task` leaves (`false`: it was asked to go on;
    /// its stop flag is cleared). Under the same lock as [`spawn`]'s look.
    fn leave(&self, task: &TaskRef) -> bool {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        match running.get_mut(task) {
            Some(driving) if driving.again => {
                driving.again = false;
                driving.stop.store(false, Ordering::SeqCst);
                false
            }
            _ => {
                running.remove(task);
                true
            }
        }
    }
}

/// The tool as MCP lists it.
pub fn tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "workflow": {"type": "string", "description": "A workflow id from think_workflows_list (or a path inside the project)."},
            "params": {"description": "The run's params (an object); ignored when run_id names a run that exists."},
            "run_id": {"type": "string", "description": "Resume this run if it exists, else start it under this id. Default: a new id."},
        },
        "required": ["workflow"],
        "additionalProperties": false,
    });
    let text = |d: &str| json!({"type": "string", "description": d});
    let output = json!({
        "type": "object",
        "properties": {
            "workflow": text("The workflow's id."),
            "run_id": text("The run's id."),
            "task_id": text("The run's task id (run://<workflow>/<run_id>), for tasks/get."),
            "status": text("The task's status: working, input_required, completed, failed or cancelled."),
            "message": text("What the run is doing or waits for."),
            "follow": text("How to follow the run."),
            "error": text("An error's code (isError results)."),
            "details": {"description": "An error's details (isError results)."},
        },
    });
    let object = |v: Value| Arc::new(v.as_object().cloned().unwrap_or_default());
    Tool::new(
        NAME,
        "Run a workflow to the end on the server (exec: the project's configured tools, no LLM client in the loop). \
         Answers at once: with a task (tasks/get, tasks/update, tasks/cancel) when the client declared the tasks \
         extension, else with the run id; follow the run with tasks/get or think_state_get.",
        object(input),
    )
    .with_title("Run a workflow on the server")
    .with_raw_output_schema(object(output))
    .with_annotations(
        rmcp::model::ToolAnnotations::with_title("Run a workflow on the server")
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(true),
    )
}

/// `UNKNOWN_TOOL` for `think_exec` on a project that does not allow it.
pub fn refusal() -> McpError {
    let e = EngineError::message_help(
        ErrorCode::UnknownTool,
        "think_exec is not enabled on this project",
        Some("allow it in savant-think.toml with `[mcp]` `exec = true` (docs/config.md), then restart the server".into()),
    );
    McpError::invalid_params(format!("Unknown tool: {NAME}"), Some(e.to_json()))
}

/// The arguments, checked.
fn arguments(args: &JsonObject) -> Result<(String, Value, Option<String>), EngineError> {
    let unknown: Vec<&String> =
        args.keys().filter(|k| !["workflow", "params", "run_id"].contains(&k.as_str())).collect();
    if !unknown.is_empty() {
        return Err(EngineError::message_help(
            ErrorCode::InvalidParams,
            format!("think_exec does not take {unknown:?}"),
            Some("think_exec takes workflow, params and run_id".into()),
        ));
    }
    let text = |k: &str| match args.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(EngineError::message(ErrorCode::InvalidInput, format!("`{k}` must be a string"))),
    };
    let workflow = text("workflow")?.ok_or_else(|| {
        EngineError::message(ErrorCode::InvalidInput, "`workflow` is required (a workflow id)")
    })?;
    Ok((workflow, args.get("params").cloned().unwrap_or(Value::Null), text("run_id")?))
}

/// Starts (or resumes) the run and records the `started` mark: the run's
/// task. Blocking (engine calls).
fn start(engine: &Engine, root: &std::path::Path, args: &JsonObject) -> Result<TaskRef, EngineError> {
    let (workflow, params, run_id) = arguments(args)?;
    super::calls::check_workflow_arg(root, &Value::Object(args.clone()))?;
    let needing = exec::steps_needing_a_model(engine, &workflow);
    if !needing.is_empty() {
        return Err(EngineError::message_help(
            ErrorCode::ModelNotConfigured,
            format!("these steps need a model to answer, and the server has none: {}", needing.join(", ")),
            Some("drive this workflow with think_plan / think_next from the client instead".into()),
        ));
    }
    let run_id = run_id.unwrap_or_else(crate::runtime::engine::new_run_id);
    let progress = engine.plan(&workflow, params, Some(&run_id), false)?;
    let task = TaskRef { workflow: progress.workflow.clone(), run_id };
    engine.think_once(&task.workflow, &task.run_id, tasks::STARTED, |h| {
        tasks::last_mark(h) == Some(Mark::Started)
    })?;
    Ok(task)
}

/// `tools/call` of `think_exec`.
pub async fn call(
    server: &SavantServer,
    request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let args = request.arguments.unwrap_or_default();
    let (engine, root) = (server.shared_engine(), server.root().to_path_buf());
    let started = super::calls::blocking(move || {
        let task = start(&engine, &root, &args)?;
        let now = tasks::get(&engine, &task.id())?;
        Ok((task, now))
    })
    .await;
    let (task, now) = match started {
        Ok(t) => t,
        Err(e) => return Ok(CallToolResult::structured_error(e.to_json()).into()),
    };
    if !now.status().is_terminal() {
        spawn(server, task.clone());
    }
    if context.client_capabilities().is_some_and(|c| c.supports_tasks()) {
        return Ok(CreateTaskResult::new(now.task).into());
    }
    let status = serde_json::to_value(now.status()).unwrap_or_default();
    Ok(CallToolResult::structured(json!({
        "workflow": task.workflow,
        "run_id": task.run_id,
        "task_id": task.id(),
        "status": status,
        "message": now.task.status_message,
        "follow": "the server runs the workflow to the end: read its state with think_state_get {workflow, run_id} \
                   (or the run:// resource, or tasks/get with task_id from a client with the tasks extension); \
                   answer a question with think_answer; call think_exec again with the run_id to resume it after a stop",
    }))
    .into())
}

/// Starts a driver for `task` on this server; when one runs already, it
/// is asked to go on (it runs exec again when exec ends, not stopped).
pub fn spawn(server: &SavantServer, task: TaskRef) {
    let drivers = server.drivers();
    let flag = Arc::new(AtomicBool::new(false));
    {
        let mut running = drivers.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(driving) = running.get_mut(&task) {
            driving.again = true;
            driving.stop.store(false, Ordering::SeqCst);
            return;
        }
        running.insert(task.clone(), Driving { stop: flag.clone(), again: false });
    }
    let engine = server.shared_engine();
    tokio::spawn(async move {
        let env = drivers.env.clone();
        let mux = Arc::new(Multiplexer::new(engine.clone(), MuxOptions { allow_exec: false, env }));
        let options = ExecOptions {
            workflow: task.workflow.clone(),
            run_id: Some(task.run_id.clone()),
            stop: Some(stop_check(engine.clone(), task.clone(), flag)),
            ..ExecOptions::default()
        };
        loop {
            let reason = match exec::exec(mux.clone(), &options, &mut |_| {}).await {
                Ok(r) if r.status == ExecStatus::Stopped => r.reason,
                Ok(_) => None,
                Err(UsageError(e)) => Some(e.to_json()),
            };
            if !drivers.leave(&task) {
                continue;
            }
            if let Some(reason) = reason {
                stopped(&engine, &task, &reason);
            }
            break;
        }
        mux.shutdown().await;
    });
}

/// Records the `stopped` mark for a stop the task should report (not a
/// cancel, not a run another driver holds or changed).
fn stopped(engine: &Engine, task: &TaskRef, reason: &Value) {
    let code = reason["error"].as_str().unwrap_or("STOPPED");
    if [ErrorCode::TaskCancelled, ErrorCode::RunBusy, ErrorCode::StateConflict]
        .iter()
        .any(|c| c.as_str() == code)
    {
        return;
    }
    let message = reason["details"]["message"].as_str().or(reason["message"].as_str()).unwrap_or("");
    let step = reason["step_id"].as_str().map(|s| format!(" (step `{s}`)")).unwrap_or_default();
    let mark = format!("{}{code} {message}{step}", tasks::STOPPED);
    if let Err(e) = engine.think_once(&task.workflow, &task.run_id, mark.trim(), |_| false) {
        tracing::warn!(run_id = task.run_id, "cannot record why exec stopped: {e}");
    }
}

/// Stop when this server's flag is set, or when the run's last task mark
/// (read at most once a second) is `cancelled`.
fn stop_check(engine: Arc<Engine>, task: TaskRef, flag: Arc<AtomicBool>) -> StopCheck {
    let read_at = Mutex::new(Instant::now());
    StopCheck(Arc::new(move || {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        let mut at = read_at.lock().unwrap_or_else(|p| p.into_inner());
        if at.elapsed() < MARK_READ_EVERY {
            return false;
        }
        *at = Instant::now();
        let state = engine.state_get(&task.workflow, &task.run_id);
        state.is_ok_and(|s| tasks::last_mark(&s.history) == Some(Mark::Cancelled))
    }))
}
