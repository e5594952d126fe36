//! The handler of each engine tool: typed arguments in, the engine call,
//! the typed reply out (one line each; the tools whose arguments need
//! reading first have a function below). The rows they serve are in
//! `runtime::catalog`.

use super::Handler;
use crate::runtime::args::*;
use crate::runtime::reply::*;
use crate::runtime::{Engine, EngineError, EngineResult, ErrorCode};
use serde_json::Value;

/// Every tool's handler, by the name of its row.
pub(super) fn all() -> Vec<Handler> {
    vec![
        Handler::new("think_plan", plan),
        Handler::new("think_next", |e, a: NextArgs| e.next(a)),
        Handler::new("think_answer", |e, a: AnswerArgs| e.answer(a)),
        Handler::new("think_signal", |e, a: SignalArgs| e.signal(a)),
        Handler::new("think_explain", |e, a: ExplainArgs| {
            e.explain(&a.workflow, a.run_id.as_deref(), a.step_id.as_deref())
        }),
        Handler::new("think_reset", |e, a: ResetArgs| {
            e.reset(&a.workflow, &a.run_id, a.checkpoint.as_deref(), a.force.unwrap_or(false))
        }),
        Handler::new("think_driver_prompt", |e, a: DriverPromptArgs| e.driver_prompt(a.version.as_deref())),
        Handler::new("think_workflows_list", |e, a: ListArgs| e.workflows_list(a.filter.as_deref())),
        Handler::new("think_workflows_read", |e, a: WorkflowArgs| e.workflows_read(&a.workflow)),
        Handler::new("think_workflows_graph", |e, a: GraphArgs| {
            e.workflows_graph(&a.workflow, a.format.unwrap_or_default())
        }),
        Handler::new("think_state_get", state_get),
        Handler::new("think_state_list", |e, a: StateListArgs| match a.archived.unwrap_or(false) {
            false => e.state_list_where(a.workflow.as_deref(), a.waiting.unwrap_or(false)),
            true => e.state_list_archived(a.workflow.as_deref()),
        }),
        Handler::new("think_state_delete", |e, a: DeleteArgs| {
            e.state_delete(&a.workflow, &a.run_id, a.purge.unwrap_or(false))
        }),
        Handler::new("think_state_repair", |e, a: RepairArgs| {
            e.state_repair(&a.workflow, &a.run_id, a.apply.unwrap_or(false))
        }),
        Handler::new("think_state_prune", prune),
        Handler::new("think_upgrade", upgrade),
        Handler::new("think_fork", |e, a: ForkArgs| {
            e.fork(&a.workflow, &a.run_id, &a.from, a.new_run_id.as_deref(), a.params, a.expected_version)
        }),
        Handler::new("think_state_restore", |e, a: RestoreArgs| {
            e.state_restore(&a.workflow, &a.run_id, a.archive_id.as_deref())
        }),
        Handler::new("think_validate", validate),
        Handler::new("think_debug", |e, a: RunArgs| e.debug(&a.workflow, &a.run_id)),
        Handler::new("think", think),
        Handler::new("prompt_say", say),
        Handler::new("think_test", crate::testing::tool::think_test),
    ]
}

fn bad(message: &str) -> EngineError {
    EngineError::message(ErrorCode::InvalidInput, message)
}

fn plan(e: &Engine, a: PlanArgs) -> EngineResult<Progress> {
    let if_exists = a.if_exists().map_err(|m| bad(&m))?;
    e.plan(&a.workflow, a.params.unwrap_or(Value::Null), a.run_id.as_deref(), if_exists)
}

fn state_get(e: &Engine, a: StateGetArgs) -> EngineResult<FullState> {
    match (a.archived.unwrap_or(false), a.archive_id.as_deref()) {
        (false, None) => e.state_get(&a.workflow, &a.run_id),
        (_, archive_id) => e.state_get_archived(&a.workflow, &a.run_id, archive_id),
    }
}

fn prune(e: &Engine, a: PruneArgs) -> EngineResult<Pruned> {
    let keep = crate::state::Keep {
        older_than: a.older_than,
        status: a.status.unwrap_or_default(),
        keep_last: a.keep_last,
    };
    e.prune(&keep, a.dry_run.unwrap_or(false))
}

fn upgrade(e: &Engine, a: UpgradeArgs) -> EngineResult<UpgradeReply> {
    if a.run_id.is_some() == a.all.unwrap_or(false) {
        return Err(bad("give run_id or all: true (one of the two)"));
    }
    let req = UpgradeRequest {
        run_id: a.run_id,
        renames: a.rename.unwrap_or_default(),
        dry_run: a.dry_run.unwrap_or(false),
        force: a.force.unwrap_or(false),
        expected_version: a.expected_version,
    };
    e.upgrade(&a.workflow, &req)
}

fn validate(e: &Engine, a: ValidateArgs) -> EngineResult<Validation> {
    match (a.schema, a.workflow) {
        (Some(schema), _) => e.validate(&schema, a.response.as_ref().unwrap_or(&Value::Null)),
        (None, Some(workflow)) => e.validate_workflow(&workflow),
        (None, None) => Err(bad("give `schema` and `response`, or `workflow`")),
    }
}

fn think(e: &Engine, a: ThinkArgs) -> EngineResult<Thought> {
    let thought = a.thought.or(a.thoughts).ok_or_else(|| bad("missing required argument `thought`"))?;
    let run = match (a.workflow.as_deref(), a.run_id.as_deref()) {
        (Some(w), Some(r)) => Some((w, r)),
        _ => None,
    };
    e.think(&thought, run)
}

fn say(e: &Engine, a: SayArgs) -> EngineResult<Said> {
    let message = a.message.or(a.text).ok_or_else(|| bad("missing required argument `message`"))?;
    e.say(&message)
}
