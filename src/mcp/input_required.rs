//! Asking a person on MCP 2026-07-28 requests (issue 45 point 4): that
//! revision has no server-to-client requests, so where a 2025-11-25 session
//! gets `elicitation/create` (src/mcp/elicit.rs), a `think_plan` /
//! `think_next` / `think_answer` call whose run now waits for a person's
//! answer — from a client that declared the `elicitation` capability, with
//! the wait's schema inside elicitation's form subset — answers with an
//! input-required result: the wait's question and schema as the elicitation
//! input request `answer`, and a `requestState`. The client retries the
//! same call with its input responses and that state; an accepted answer is
//! recorded exactly as `think_answer` records it (a wrong one is its
//! `VALIDATION_FAILED` result, nothing recorded) and the call returns the
//! progress after it, asking again if the run reaches another question;
//! decline or cancel leave the step waiting and return the progress as it
//! was.
//!
//! The state is sealed with HMAC-SHA256 under a key kept in
//! `.savant/mcp-request-state.key` (made once, mode 0600, so every replica
//! sharing the project's `.savant` accepts it), bound to the tool and its
//! arguments, valid for ten minutes, and single-use: a marker named by its
//! nonce is created in `.savant/mcp-request-state/` when it is redeemed. A
//! forged, tampered, expired, replayed or misplaced state is refused with
//! `REQUEST_STATE_REFUSED` and nothing is recorded.

use super::SavantServer;
use crate::runtime::{EngineError, ErrorCode};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequest, ElicitResult, ElicitationAction,
    InputRequest, InputRequests, InputRequiredResult, ProtocolVersion, RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a state may wait for its retry.
const STATE_TTL: Duration = Duration::from_secs(600);

/// The key of the one input request.
const INPUT_KEY: &str = "answer";

/// The key file and the markers of redeemed states, in `.savant`.
const KEY_FILE: &str = "mcp-request-state.key";
const USED_DIR: &str = "mcp-request-state";

/// Whether this request asks through input-required results: a 2026-07-28
/// (or newer) request from a client that declared elicitation.
pub(super) fn applies(context: &RequestContext<RoleServer>) -> bool {
    context.protocol_version().is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
        && context.client_capabilities().is_some_and(|c| c.elicitation.is_some())
}

/// Whether a call of `tool` in `context` may ask a person afterwards (here
/// or as an input-required result), which reads its arguments again.
pub(super) fn may_ask(tool: &str, context: &RequestContext<RoleServer>) -> bool {
    super::elicit::ASKING_TOOLS.contains(&tool)
        && (applies(context)
            || context.peer.peer_info().is_some_and(|i| i.capabilities.elicitation.is_some()))
}

/// `result` of `tool` called with `args`, or an input-required result
/// asking the run's first question (see the module).
pub(super) fn ask(
    server: &SavantServer,
    tool: &str,
    args: &Value,
    result: CallToolResult,
) -> Result<CallToolResponse, McpError> {
    if !super::elicit::ASKING_TOOLS.contains(&tool) || result.is_error == Some(true) {
        return Ok(result.into());
    }
    let Some((answer_args, params)) =
        result.structured_content.as_ref().and_then(|p| super::elicit::question(p, args))
    else {
        return Ok(result.into());
    };
    let dir = state_dir(server.engine().root()).map_err(|e| internal(&e))?;
    let codec = codec(&dir).map_err(|e| internal(&e))?;
    prune(&dir.join(USED_DIR));
    let payload = json!({"nonce": random_hex(16).map_err(|e| internal(&e.to_string()))?, "answer": answer_args, "progress": result.structured_content});
    let context = binding(tool, args);
    let options = SealOptions::new().associated_data(context.as_bytes()).ttl(STATE_TTL);
    let state = codec.seal_json_with(&payload, &options).map_err(|e| internal(&e.to_string()))?;
    let mut requests = InputRequests::new();
    requests.insert(INPUT_KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
    Ok(CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), Some(state))))
}

/// A retry carrying `requestState`: the answer recorded (or the step left
/// waiting) and the progress after it, asking again when the run reaches
/// another question. `None` when the request carries no state.
pub(super) async fn retry(
    server: &SavantServer,
    request: &CallToolRequestParams,
    args: &Value,
) -> Option<Result<CallToolResponse, McpError>> {
    let state = request.request_state.as_deref()?;
    let payload = match redeem(server.engine().root(), &request.name, args, state) {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    let progress = || CallToolResult::structured(payload["progress"].clone());
    let reply = request.input_responses.as_ref().and_then(|r| r.get(INPUT_KEY)).cloned();
    let reply = reply.and_then(|r| serde_json::from_value::<ElicitResult>(r).ok());
    let Some(reply) = reply.filter(|r| r.action == ElicitationAction::Accept) else {
        tracing::info!(tool = %request.name, "the person did not answer; the step keeps waiting");
        return Some(Ok(progress().into()));
    };
    let mut answer_args = payload["answer"].clone();
    answer_args["value"] = reply.content.unwrap_or_else(|| json!({}));
    let result = server.call("think_answer", answer_args).await;
    Some(ask(server, "think_answer", &payload["answer"], result))
}

/// The payload of a sealed `state` for `tool` called with `args`, marked
/// as used; refused when it does not open or was used before.
fn redeem(root: &Path, tool: &str, args: &Value, state: &str) -> Result<Value, McpError> {
    let dir = state_dir(root).map_err(|e| internal(&e))?;
    let codec = codec(&dir).map_err(|e| internal(&e))?;
    let context = binding(tool, args);
    let payload: Value =
        codec.open_json_with(state, context.as_bytes()).map_err(|e| refused(&e.to_string()))?;
    let nonce =
        payload["nonce"].as_str().filter(|n| n.bytes().all(|b| b.is_ascii_hexdigit()) && n.len() == 32);
    let nonce = nonce.ok_or_else(|| refused("the request state carries no nonce"))?;
    let dir = dir.join(USED_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| internal(&e.to_string()))?;
    match std::fs::OpenOptions::new().write(true).create_new(true).open(dir.join(nonce)) {
        Ok(_) => Ok(payload),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(refused("the request state was already used; call the tool again for a fresh one"))
        }
        Err(e) => Err(internal(&e.to_string())),
    }
}

/// What a state is bound to: the tool and its arguments.
fn binding(tool: &str, args: &Value) -> String {
    format!("savant-think/input-required\n{tool}\n{args}")
}

/// The project's `.savant`, made when missing; one that leads out of the
/// root is refused.
fn state_dir(root: &Path) -> Result<PathBuf, String> {
    let dir = root.join(".savant");
    match crate::fsx::confine(root, Path::new(".savant")) {
        Ok(_) => Ok(dir),
        Err(e) if e.is_not_found() => std::fs::create_dir_all(&dir).map(|()| dir).map_err(|e| e.to_string()),
        Err(e) => Err(e.reason()),
    }
}

/// The codec under the project's key (in `dir`), making the key file once.
fn codec(dir: &Path) -> Result<RequestStateCodec, String> {
    let key = dir.join(KEY_FILE);
    if !key.exists() {
        make_key(&key)?;
    }
    let text = std::fs::read_to_string(&key).map_err(|e| format!("{}: {e}", key.display()))?;
    RequestStateCodec::try_new(text.trim().as_bytes().to_vec()).map_err(|e| format!("{}: {e}", key.display()))
}

/// Writes a fresh key beside `key` and links it in place, so concurrent
/// makers agree on the first one.
fn make_key(key: &Path) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = key.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tmp: PathBuf = dir.join(format!(".mcp-request-state.key.{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(random_hex(32)?.as_bytes()).and_then(|()| f.sync_all()));
    let linked = written.and_then(|()| match std::fs::hard_link(&tmp, key) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    });
    let _ = std::fs::remove_file(&tmp);
    linked.map_err(|e| format!("{}: {e}", key.display()))
}

/// `n` random bytes as hex, from the system's random source.
fn random_hex(n: usize) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Drops the markers of states that have expired anyway.
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let old = entry.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
        if old.is_some_and(|age| age > STATE_TTL * 2) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn refused(why: &str) -> McpError {
    let e = EngineError::message(ErrorCode::RequestStateRefused, format!("requestState refused: {why}"));
    McpError::invalid_params(format!("requestState refused: {why}"), Some(e.to_json()))
}

fn internal(why: &str) -> McpError {
    tracing::warn!(why, "cannot make or check an MCP request state");
    let e = EngineError::message(ErrorCode::Internal, format!("request state: {why}"));
    McpError::internal_error(format!("request state: {why}"), Some(e.to_json()))
}
