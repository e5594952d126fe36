//! MCP elicitation (issue 43): when the client declared the `elicitation`
//! capability in `initialize`, a `think_plan` / `think_next` /
//! `think_answer` call whose run now waits for a person's answer (no
//! instruction, an `answer` wait) asks the person itself. It sends
//! `elicitation/create` with the wait's `ask` as the message and its
//! schema as `requestedSchema` — only a schema inside elicitation's form
//! subset (a flat object of primitives and enums); any other is left to
//! the client, as without the capability. `accept` records the content as
//! `think_answer` would (a wrong one is its `VALIDATION_FAILED` result) and
//! returns the progress after it, asking again if the run reaches another
//! question; `decline` or `cancel` (or a client that cannot answer) leave
//! the step waiting and return the progress as it was; so does no reply
//! within ten minutes. 2026-07-28 requests, which have no server-to-client
//! requests, ask through an input-required result instead
//! (src/mcp/input_required.rs).

use super::SavantServer;
use rmcp::model::{
    CallToolResult, ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    ServerRequest,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

/// How long a person may take to answer; then the step keeps waiting.
const ANSWER_TIME: std::time::Duration = std::time::Duration::from_secs(600);

/// The most questions one tool call asks in a row.
const MAX_QUESTIONS: usize = 8;

/// The tools whose answer may leave the run waiting for a person.
pub(super) const ASKING_TOOLS: [&str; 3] = ["think_plan", "think_next", "think_answer"];

/// `result` of `tool` called with `args`, after asking the person through
/// the client when it can (see the module).
pub(super) async fn ask_person(
    server: &SavantServer,
    tool: &str,
    args: &Value,
    mut result: CallToolResult,
    peer: &Peer<RoleServer>,
) -> CallToolResult {
    if !ASKING_TOOLS.contains(&tool) || peer.peer_info().is_none_or(|i| i.capabilities.elicitation.is_none())
    {
        return result;
    }
    for _ in 0..MAX_QUESTIONS {
        if result.is_error == Some(true) {
            return result;
        }
        let Some((answer_args, request)) = result.structured_content.as_ref().and_then(|p| question(p, args))
        else {
            return result;
        };
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(request));
        let reply = match tokio::time::timeout(ANSWER_TIME, peer.send_request(request)).await {
            Ok(Ok(ClientResult::ElicitResult(reply))) => reply,
            _ => {
                tracing::warn!(tool, "the client did not answer elicitation/create; the step keeps waiting");
                return result;
            }
        };
        if reply.action != ElicitationAction::Accept {
            tracing::info!(tool, action = ?reply.action, "the person did not answer; the step keeps waiting");
            return result;
        }
        let mut answer_args = answer_args;
        answer_args["value"] = reply.content.unwrap_or_else(|| json!({}));
        result = server.call("think_answer", answer_args).await;
    }
    result
}

/// The first question of a progress with no instruction: `think_answer`'s
/// arguments (without `value`) and the elicitation to send, when its
/// schema is in the form subset.
pub(super) fn question(progress: &Value, args: &Value) -> Option<(Value, ElicitRequestParams)> {
    if progress.get("instruction").is_some_and(|i| !i.is_null()) {
        return None;
    }
    let field = |k: &str| progress.get(k).or_else(|| args.get(k)).and_then(Value::as_str).map(str::to_owned);
    let (workflow, run_id) = (field("workflow")?, field("run_id")?);
    let waits = progress.get("waiting")?.as_array()?;
    waits.iter().filter(|w| w.get("wait").and_then(Value::as_str) == Some("answer")).find_map(|w| {
        let schema: ElicitationSchema = serde_json::from_value(w.get("schema")?.clone()).ok()?;
        let step_id = w.get("step_id")?.as_str()?;
        let message = w.get("ask").and_then(Value::as_str).unwrap_or(step_id).to_owned();
        let params =
            ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: schema };
        Some((json!({"workflow": workflow, "run_id": run_id, "step_id": step_id}), params))
    })
}
