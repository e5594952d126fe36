//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663) over
//! runs: a task is a run, its id the run's URI (`run://<workflow>/<run_id>`),
//! and everything `tasks/get` says is read from the state store, so any
//! replica answers it, after any restart (file store and PostgreSQL alike).
//! rmcp 3.9 brings the types, the routing of `tasks/get|update|cancel` and
//! the `-32021` refusal of a client that did not declare the extension;
//! this file maps a run to a task:
//!
//! - status: a done run is `completed` (its captures as the result), a
//!   failed one `failed` (its failure as the error); a running one is
//!   `cancelled` or `failed` when its last task mark says so (below),
//!   `input_required` when a step waits for a person's answer whose schema
//!   is a flat form (the question as an `elicitation/create` input request,
//!   keyed by the step id), else `working` (with what it waits for, if it
//!   waits).
//! - Task marks are thoughts in the run's history, written under the run's
//!   lock ([`Engine::think_once`]): `mcp task: started` when `think_exec`
//!   starts or resumes the run, `mcp task: cancelled` on `tasks/cancel`
//!   (two cancels at once record one), `mcp task: stopped: CODE message`
//!   when exec stopped on a failure it cannot pass (a tool failure).
//! - `tasks/update` answers the waiting steps as `think_answer` does (each
//!   answer checked against the wait's schema before any is recorded); a
//!   `decline` or `cancel` leaves the step waiting.
//! - `notifications/tasks`: a `subscriptions/listen` stream whose
//!   `resourceSubscriptions` name a task id (it is a `run://` URI) gets the
//!   task's status each time it changes ([`watch`]), from a client that
//!   declared the extension. rmcp's `SubscriptionSink` refuses
//!   `notifications/tasks` (its filter has no `taskIds` yet), so these are
//!   sent on the listen request's peer with the subscription id set as the
//!   sink sets it.
//!
//! Errors are JSON-RPC errors carrying the engine's `{error, details}`:
//! `UNKNOWN_TASK` (-32602) for an id that names no run of this project,
//! `STEP_NOT_WAITING` (-32602) for an update of a task that is not
//! `input_required`, `INVALID_INPUT` / `VALIDATION_FAILED` (-32602) for a
//! malformed update; nothing is recorded then.

use super::SavantServer;
use crate::runtime::args::AnswerArgs;
use crate::runtime::engine::RunSnapshot;
use crate::runtime::error_details::{FieldError, TaskRefused};
use crate::runtime::record::{Event, EventKind, RunStatus};
use crate::runtime::reply::{Validation, WaitView};
use crate::runtime::{Engine, EngineError, ErrorCode};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    DetailedTask, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, JsonObject, Notification, ServerNotification, Task, TaskPayload, TaskStatus,
    TaskStatusNotificationParams,
};
use serde_json::{Value, json};

/// What every task mark starts with.
pub const MARK: &str = "mcp task: ";
/// The mark `think_exec` records when it starts or resumes a run.
pub const STARTED: &str = "mcp task: started (think_exec)";
/// The mark `tasks/cancel` records.
pub const CANCELLED: &str = "mcp task: cancelled (tasks/cancel): the run stops after the step in flight; think_exec with its run_id resumes it";
/// The prefix of the mark of a run exec stopped on (`stopped: CODE message`).
pub const STOPPED: &str = "mcp task: stopped: ";

/// How often clients are told to poll `tasks/get`.
const POLL_MS: u64 = 1000;

/// The run a task id names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TaskRef {
    pub workflow: String,
    pub run_id: String,
}

impl TaskRef {
    /// The task id of a run: its `run://` URI.
    pub fn id(&self) -> String {
        format!("run://{}/{}", self.workflow, self.run_id)
    }

    /// The run a task id names, if it is of the form a task id has.
    pub fn parse(task_id: &str) -> Result<TaskRef, EngineError> {
        let named = task_id
            .strip_prefix("run://")
            .and_then(|r| r.split_once('/'))
            .filter(|(w, id)| crate::workspace::valid_workflow_id(w) && crate::state::is_valid_id(id));
        match named {
            Some((w, id)) => Ok(TaskRef { workflow: w.to_owned(), run_id: id.to_owned() }),
            None => Err(unknown_task(task_id, "not a task id of this server")),
        }
    }
}

/// A refused `tasks/*` request.
fn refused(
    code: ErrorCode,
    task_id: &str,
    status: Option<TaskStatus>,
    message: String,
    help: &str,
) -> EngineError {
    let status =
        status.and_then(|s| serde_json::to_value(s).ok()).and_then(|s| s.as_str().map(str::to_owned));
    EngineError::with(
        code,
        TaskRefused { task_id: task_id.to_owned(), status, message, help: help.to_owned() },
    )
}

fn unknown_task(task_id: &str, why: &str) -> EngineError {
    refused(
        ErrorCode::UnknownTask,
        task_id,
        None,
        format!("no task `{task_id}`: {why}"),
        "a task id is the taskId think_exec answered (run://<workflow>/<run_id>), of a run of the project this server serves; think_state_list lists the runs",
    )
}

/// The last task mark in a run's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mark {
    Started,
    Cancelled,
    Stopped(String),
}

/// The last task mark of `history`, if any.
pub fn last_mark(history: &[Event]) -> Option<Mark> {
    history.iter().rev().find_map(|e| match &e.kind {
        EventKind::Thought { thought } if thought.starts_with(MARK) => Some(if thought == STARTED {
            Mark::Started
        } else if thought == CANCELLED {
            Mark::Cancelled
        } else {
            Mark::Stopped(thought.strip_prefix(STOPPED).unwrap_or(thought).to_owned())
        }),
        _ => None,
    })
}

/// The run of `task` as the store has it; `UNKNOWN_TASK` when there is none.
fn snapshot(engine: &Engine, task: &TaskRef) -> Result<RunSnapshot, EngineError> {
    engine.run_snapshot(&task.workflow, &task.run_id).map_err(|e| match e.code {
        ErrorCode::UnknownRun | ErrorCode::UnknownWorkflow | ErrorCode::InvalidId => {
            unknown_task(&task.id(), "this project has no such run")
        }
        _ => e,
    })
}

/// The task `task_id` names, as `tasks/get` answers it.
pub fn get(engine: &Engine, task_id: &str) -> Result<DetailedTask, EngineError> {
    let task = TaskRef::parse(task_id)?;
    Ok(detailed(engine, &task, &snapshot(engine, &task)?))
}

/// A run as a task.
pub fn detailed(engine: &Engine, task: &TaskRef, snap: &RunSnapshot) -> DetailedTask {
    let state = &snap.state;
    let base = Task::new(task.id(), TaskStatus::Working, state.created_at.clone(), state.updated_at.clone())
        .with_poll_interval_ms(POLL_MS);
    let object = |v: Value| match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    };
    let (payload, message) = match state.status {
        RunStatus::Done => {
            let done = json!({"workflow": task.workflow, "run_id": task.run_id, "status": "done",
                              "version": state.version, "captures": state.captures});
            let result = rmcp::model::CallToolResult::structured(done);
            let result = serde_json::to_value(result).map(object).unwrap_or_default();
            (TaskPayload::Completed { result }, "the run is done".to_owned())
        }
        RunStatus::Failed => {
            let failure = state.failure.as_ref().map(|f| f.to_json()).unwrap_or(Value::Null);
            let message = failure["message"].as_str().unwrap_or("the run failed").to_owned();
            let code = failure["error"].as_str().unwrap_or("RUN_FAILED").to_owned();
            let error = json!({"code": -32000, "message": message,
                               "data": {"error": code, "details": failure, "run_id": task.run_id}});
            (TaskPayload::Failed { error: object(error) }, format!("the run failed: {message}"))
        }
        RunStatus::Running => running(engine, state, &snap.waiting, &object),
    };
    DetailedTask::new(base.with_status_message(message), payload)
}

/// A running run as a task: cancelled, stopped, waiting for a person, or working.
fn running(
    engine: &Engine,
    state: &crate::runtime::reply::FullState,
    waiting: &[WaitView],
    object: &dyn Fn(Value) -> JsonObject,
) -> (TaskPayload, String) {
    match last_mark(&state.history) {
        Some(Mark::Cancelled) => {
            return (TaskPayload::Cancelled, "cancelled: think_exec with its run_id resumes the run".into());
        }
        Some(Mark::Stopped(why)) => {
            let code = why.split_whitespace().next().unwrap_or("STOPPED").to_owned();
            let error = json!({"code": -32000, "message": format!("exec stopped: {why}"),
                               "data": {"error": code, "run_id": state.run_id,
                                        "help": "fix the cause, then think_exec with the same run_id resumes the run"}});
            return (TaskPayload::Failed { error: object(error) }, format!("exec stopped: {why}"));
        }
        _ => {}
    }
    let input_requests = questions(engine, waiting);
    if !input_requests.is_empty() {
        let asks: Vec<&str> = waiting.iter().filter_map(|w| w.ask.as_deref()).collect();
        return (
            TaskPayload::InputRequired { input_requests },
            format!("waiting for an answer: {}", asks.join("; ")),
        );
    }
    let done = state.steps.iter().filter(|s| s.status == crate::runtime::run::StepStatus::Done).count();
    let mut message = format!("{done} of {} steps done", state.steps.len());
    if !waiting.is_empty() {
        let how: Vec<&str> = waiting.iter().map(|w| w.how.as_str()).collect();
        message.push_str(&format!("; waiting: {}", how.join("; ")));
    }
    (TaskPayload::Working, message)
}

/// The person's questions of a run's waits whose schema is a flat form, as
/// `elicitation/create` requests keyed by step id.
fn questions(engine: &Engine, waiting: &[WaitView]) -> InputRequests {
    let mut out = InputRequests::new();
    for w in waiting.iter().filter(|w| w.wait == "answer" && w.sub_run.is_none()) {
        let Ok(schema) = serde_json::from_value::<ElicitationSchema>(engine.answer_schema_of(w)) else {
            continue;
        };
        let message = w.ask.clone().unwrap_or_else(|| w.step_id.clone());
        let params =
            ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: schema };
        out.insert(w.step_id.clone(), InputRequest::Elicitation(ElicitRequest::new(params)));
    }
    out
}

/// `tasks/update`: the answers to a task's input requests. Every response
/// is parsed and checked against its wait's schema before any is recorded.
/// The answered steps (what `accept` answered), and whether think_exec
/// runs the run (its last mark is `started`; not a run a client drives).
pub fn update(
    engine: &Engine,
    task_id: &str,
    responses: &std::collections::BTreeMap<String, Value>,
) -> Result<(Vec<String>, bool), EngineError> {
    let task = TaskRef::parse(task_id)?;
    let snap = snapshot(engine, &task)?;
    let now = detailed(engine, &task, &snap);
    let TaskPayload::InputRequired { input_requests } = &now.payload else {
        return Err(refused(
            ErrorCode::StepNotWaiting,
            task_id,
            Some(now.status()),
            "the task is not input_required: there is nothing to answer".into(),
            "tasks/get says what the task waits for",
        ));
    };
    if responses.is_empty() {
        return Err(invalid(task_id, "inputResponses is empty: answer at least one input request".into()));
    }
    let mut answers = Vec::new();
    for (key, response) in responses {
        let Some(view) = snap.waiting.iter().find(|w| &w.step_id == key && input_requests.contains_key(key))
        else {
            let known: Vec<&String> = input_requests.keys().collect();
            return Err(invalid(task_id, format!("no input request `{key}` (the task asks: {known:?})")));
        };
        let reply: ElicitResult = serde_json::from_value(response.clone()).map_err(|e| {
            invalid(
                task_id,
                format!("the response to `{key}` is not an elicitation result ({{action, content}}): {e}"),
            )
        })?;
        if reply.action != ElicitationAction::Accept {
            continue;
        }
        let value = reply.content.unwrap_or_else(|| json!({}));
        if let Validation::Response { valid: false, errors } =
            engine.validate(&engine.answer_schema_of(view), &value)?
        {
            let errors: Vec<FieldError> = errors
                .iter()
                .map(|e| FieldError {
                    path: format!("/{key}{}", e["path"].as_str().unwrap_or("")),
                    message: e["message"].as_str().unwrap_or("does not match the schema").to_owned(),
                    help: Some(
                        "answer with content valid against the input request's requestedSchema".into(),
                    ),
                })
                .collect();
            return Err(EngineError::fields(ErrorCode::ValidationFailed, &errors));
        }
        answers.push((key.clone(), value));
    }
    let mut answered = Vec::new();
    for (step_id, value) in answers {
        engine.answer(AnswerArgs {
            workflow: task.workflow.as_str().into(),
            run_id: task.run_id.clone(),
            step_id: step_id.clone(),
            value,
            expected_version: None,
        })?;
        answered.push(step_id);
    }
    Ok((answered, last_mark(&snap.state.history) == Some(Mark::Started)))
}

fn invalid(task_id: &str, message: String) -> EngineError {
    refused(
        ErrorCode::InvalidInput,
        task_id,
        Some(TaskStatus::InputRequired),
        message,
        "inputResponses maps each key of the task's inputRequests to {action: \"accept\", content: {...}}",
    )
}

/// `tasks/cancel`: records the cancel mark once (`true` when this call did).
/// A task that has ended otherwise (completed, failed) cannot be cancelled.
pub fn cancel(engine: &Engine, task_id: &str) -> Result<(TaskRef, bool), EngineError> {
    let task = TaskRef::parse(task_id)?;
    let snap = snapshot(engine, &task)?;
    let status = detailed(engine, &task, &snap).status();
    if matches!(status, TaskStatus::Completed | TaskStatus::Failed) {
        return Err(refused(
            ErrorCode::InvalidInput,
            task_id,
            Some(status),
            "the task has ended: there is nothing to cancel".into(),
            "tasks/get has its result or error",
        ));
    }
    let recorded = engine.think_once(&task.workflow, &task.run_id, CANCELLED, |history| {
        last_mark(history) == Some(Mark::Cancelled)
    })?;
    Ok((task, recorded))
}

/// An engine error as the JSON-RPC error of a `tasks/*` request.
pub fn rpc_error(e: &EngineError) -> McpError {
    let message = e.message_text().map_or_else(|| e.describe(), str::to_owned);
    match e.code {
        ErrorCode::Internal | ErrorCode::StateIo | ErrorCode::StateUnavailable | ErrorCode::StateCorrupt => {
            McpError::internal_error(message, Some(e.to_json()))
        }
        _ => McpError::invalid_params(message, Some(e.to_json())),
    }
}

/// Sends `notifications/tasks` for the task ids among `uris` each time
/// their status changes, on a `subscriptions/listen` stream, until `done`.
pub fn watch(
    server: &SavantServer,
    peer: rmcp::Peer<rmcp::RoleServer>,
    subscription: rmcp::model::RequestId,
    uris: Vec<String>,
    done: tokio_util::sync::CancellationToken,
) {
    let tasks: Vec<TaskRef> = uris.iter().filter_map(|u| TaskRef::parse(u).ok()).collect();
    if tasks.is_empty() {
        return;
    }
    let engine = server.shared_engine();
    tokio::spawn(async move {
        let mut last: Vec<Option<Value>> = vec![None; tasks.len()];
        loop {
            let (engine2, tasks2) = (engine.clone(), tasks.clone());
            let now = tokio::task::spawn_blocking(move || {
                tasks2
                    .iter()
                    .map(|t| snapshot(&engine2, t).ok().map(|s| detailed(&engine2, t, &s)))
                    .collect::<Vec<_>>()
            })
            .await
            .unwrap_or_default();
            for (i, task) in now.into_iter().enumerate() {
                let Some(task) = task else { continue };
                let seen = json!([task.status(), task.task.status_message]);
                if last.get(i).is_some_and(|l| l.as_ref() == Some(&seen)) {
                    continue;
                }
                last[i] = Some(seen);
                let mut note = ServerNotification::TaskStatusNotification(Notification::new(
                    TaskStatusNotificationParams::new(task),
                ));
                use rmcp::model::GetMeta;
                note.get_meta_mut().set_subscription_id(subscription.clone());
                if peer.send_notification(note).await.is_err() {
                    return;
                }
            }
            tokio::select! {
                () = done.cancelled() => return,
                () = tokio::time::sleep(super::notify::WATCH_INTERVAL) => {}
            }
        }
    });
}

/// `tasks/get`.
pub async fn handle_get(
    server: &SavantServer,
    task_id: String,
) -> Result<rmcp::model::GetTaskResult, McpError> {
    let engine = server.shared_engine();
    let task = super::calls::blocking(move || get(&engine, &task_id)).await.map_err(|e| rpc_error(&e))?;
    Ok(rmcp::model::GetTaskResult::new(task))
}

/// `tasks/cancel`: the cancel mark (once). The run's task, for the caller
/// to stop this server's driver of it, if any.
pub async fn handle_cancel(server: &SavantServer, task_id: String) -> Result<TaskRef, McpError> {
    let engine = server.shared_engine();
    let (task, recorded) =
        super::calls::blocking(move || cancel(&engine, &task_id)).await.map_err(|e| rpc_error(&e))?;
    tracing::info!(task = task.id(), recorded, "task cancelled");
    Ok(task)
}

/// `tasks/update`: the answers recorded. The run's task when a step was
/// answered in a run think_exec runs (the caller then has a driver
/// continue it).
pub async fn handle_update(
    server: &SavantServer,
    task_id: String,
    responses: std::collections::BTreeMap<String, Value>,
) -> Result<Option<TaskRef>, McpError> {
    let engine = server.shared_engine();
    let id = task_id.clone();
    let (answered, by_exec) =
        super::calls::blocking(move || update(&engine, &id, &responses)).await.map_err(|e| rpc_error(&e))?;
    tracing::info!(task = task_id, ?answered, "task updated");
    Ok(TaskRef::parse(&task_id).ok().filter(|_| by_exec && !answered.is_empty()))
}
