//! The inspector's handlers: the page and its assets, and the JSON API at
//! `/ui/api/…` (runs, a run, a step, a source, a workflow, actions, an
//! answer to a waiting step). Each
//! reads through the engine on a blocking thread and answers a view of
//! `view.rs` / `step.rs`, or the engine's error with what helps: a
//! did-you-mean, the workflow's runs, and for a run that cannot be replayed
//! the history as stored (or the store's own error).

use super::guard::{Auth, Host, Ui, may_act, percent_decode, refuse};
use super::{step, view};
use crate::runtime::{Engine, EngineError, ErrorCode};
use axum::extract::{Extension, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// An embedded file: its bytes, type and ETag (computed once).
struct Asset {
    name: &'static str,
    kind: &'static str,
    body: &'static [u8],
}

const ASSETS: &[Asset] = &[
    Asset { name: "app.js", kind: "text/javascript; charset=utf-8", body: include_bytes!("assets/app.js") },
    Asset { name: "app.css", kind: "text/css; charset=utf-8", body: include_bytes!("assets/app.css") },
    Asset { name: "icon.svg", kind: "image/svg+xml", body: include_bytes!("assets/icon.svg") },
];

const INDEX: &str = include_str!("assets/index.html");

fn etags() -> &'static Vec<String> {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    ETAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| {
                format!("\"{}\"", &crate::runtime::workflow::sha256_hex(a.body)["sha256:".len()..][..20])
            })
            .collect()
    })
}

/// `/ui/`, `/ui/runs/{workflow}/{run}`, `/ui/workflows/{workflow}`: the
/// one page, which reads its path and asks the API.
pub(crate) async fn page() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], INDEX)
        .into_response()
}

/// `/ui/assets/{name}`, revalidated by ETag.
pub(crate) async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    let Some(k) = ASSETS.iter().position(|a| a.name == name) else {
        return refuse(StatusCode::NOT_FOUND, "NOT_FOUND", "no such asset", false);
    };
    let etag = &etags()[k];
    let matches = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str());
    let mut r = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, ASSETS[k].kind)], ASSETS[k].body).into_response()
    };
    if let Ok(v) = HeaderValue::from_str(etag) {
        r.headers_mut().insert(header::ETAG, v);
    }
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// Anything else under `/ui`: 404 with a message.
pub(crate) async fn not_found(uri: Uri) -> Response {
    let api = uri.path().starts_with("/ui/api/");
    refuse(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        &format!("Not Found: {} (the runs are at /ui/)", uri.path()),
        api,
    )
}

/// A value as a JSON response, never cached.
pub(crate) fn json_response<T: Serialize>(status: StatusCode, value: &T) -> Response {
    let body = serde_json::to_string(value).unwrap_or_else(|e| {
        json!({"error": "INTERNAL", "details": {"message": format!("cannot write the answer: {e}")}})
            .to_string()
    });
    (status, [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], body)
        .into_response()
}

/// Runs `f` with the engine on a blocking thread (engine calls lock and read files).
pub(crate) async fn blocking<T: Send + 'static>(
    ui: &Arc<Ui>,
    f: impl FnOnce(&Engine) -> T + Send + 'static,
) -> Result<T, Response> {
    let engine = ui.engine.clone();
    tokio::task::spawn_blocking(move || f(&engine)).await.map_err(|e| {
        refuse(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", &format!("the request failed: {e}"), true)
    })
}

fn status_for(code: ErrorCode) -> StatusCode {
    let name = code.as_str();
    match code {
        ErrorCode::StateConflict => StatusCode::CONFLICT,
        _ if name.starts_with("UNKNOWN_") => StatusCode::NOT_FOUND,
        _ if name.starts_with("INVALID_") => StatusCode::BAD_REQUEST,
        _ if name.starts_with("STATE_") => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

/// An engine error as the page shows it: `{error, details, message,
/// did_you_mean, runs, stored}`.
fn error_response(
    engine: &Engine,
    e: &EngineError,
    workflow: Option<&str>,
    run_id: Option<&str>,
) -> Response {
    let mut body = e.to_json();
    body["message"] = json!(e.describe());
    let help = e.help_text();
    let field = match e.code {
        ErrorCode::UnknownWorkflow => Some("workflow"),
        ErrorCode::UnknownRun => Some("run_id"),
        ErrorCode::UnknownStep => Some("step"),
        _ => None,
    };
    if let (Some(field), Some(name)) = (field, help.and_then(crate::diagnostic::suggestion)) {
        body["did_you_mean"] = json!({ field: name });
    }
    if let Some(w) = workflow {
        let runs: Vec<String> =
            engine.run_keys(Some(w)).unwrap_or_default().into_iter().take(20).map(|k| k.run_id).collect();
        body["runs"] = json!(runs);
    }
    // A run the engine cannot replay: its history as stored, or the store's error.
    if let (Some(w), Some(r)) = (workflow, run_id)
        && !matches!(e.code, ErrorCode::UnknownRun | ErrorCode::InvalidId)
    {
        body["stored"] = match engine.run_stored(w, r) {
            Ok(Some(l)) => {
                let mut history: Vec<Value> =
                    l.snapshot.get("history").and_then(Value::as_array).cloned().unwrap_or_default();
                history.extend(l.journal.iter().cloned());
                json!({
                    "status": l.snapshot.get("status"),
                    "version": l.snapshot.get("version"),
                    "updated_at": l.snapshot.get("updated_at"),
                    "history": history,
                })
            }
            Ok(None) => Value::Null,
            Err(stored) => json!({"error": stored.code.as_str(), "message": stored.message_text()}),
        };
    }
    json_response(status_for(e.code), &body)
}

fn answer<T: Serialize>(
    engine: &Engine,
    result: Result<T, EngineError>,
    workflow: Option<&str>,
    run_id: Option<&str>,
) -> Response {
    match result {
        Ok(v) => json_response(StatusCode::OK, &v),
        Err(e) => error_response(engine, &e, workflow, run_id),
    }
}

fn param(uri: &Uri, name: &str) -> Option<String> {
    uri.query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == name).then(|| percent_decode(v))
    })
}

fn flag(uri: &Uri, name: &str) -> bool {
    param(uri, name).is_some_and(|v| matches!(v.as_str(), "" | "1" | "true" | "on"))
}

/// `GET /ui/api/session`: what this page may do, and the CSRF token for it.
pub(crate) async fn session(State(ui): State<Arc<Ui>>, Extension(auth): Extension<Auth>) -> Response {
    let can_act = auth != Auth::Open && !ui.options.read_only;
    json_response(
        StatusCode::OK,
        &json!({
            "can_act": can_act,
            "read_only": ui.options.read_only,
            "authenticated": auth != Auth::Open,
            "csrf": if can_act { ui.csrf.clone() } else { None },
            "root": ui.engine.root().display().to_string(),
            "version": env!("CARGO_PKG_VERSION"),
        }),
    )
}

/// `GET /ui/api/runs?workflow=&status=&q=&page=&per_page=&archived=1`.
pub(crate) async fn runs(State(ui): State<Arc<Ui>>, uri: Uri) -> Response {
    let query = view::RunsQuery {
        workflow: param(&uri, "workflow"),
        status: param(&uri, "status"),
        search: param(&uri, "q"),
        page: param(&uri, "page").and_then(|p| p.parse().ok()).unwrap_or(1),
        per_page: param(&uri, "per_page").and_then(|p| p.parse().ok()).unwrap_or(0).min(view::MAX_PER_PAGE),
        archived: flag(&uri, "archived"),
    };
    blocking(&ui, move |engine| {
        let workflow = query.workflow.clone();
        answer(engine, view::runs_page(engine, &query), workflow.as_deref().filter(|w| !w.is_empty()), None)
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `GET /ui/api/runs/{workflow}/{run_id}[?archived=1&archive_id=…]`: the run's page.
pub(crate) async fn run(
    State(ui): State<Arc<Ui>>,
    Path((workflow, run_id)): Path<(String, String)>,
    uri: Uri,
) -> Response {
    let archived = flag(&uri, "archived") || param(&uri, "archive_id").is_some();
    let archive_id = param(&uri, "archive_id").filter(|a| !a.is_empty());
    blocking(&ui, move |engine| {
        let result = if archived {
            engine.state_get_archived(&workflow, &run_id, archive_id.as_deref()).map(|st| {
                let cw = engine.workflow(&workflow).ok();
                let mut v =
                    serde_json::to_value(view::run_view_of(&st, cw.as_deref(), &[])).unwrap_or_default();
                v["archived"] = json!(true);
                v["archive_id"] = json!(archive_id);
                v
            })
        } else {
            engine
                .run_snapshot(&workflow, &run_id)
                .map(|s| serde_json::to_value(view::run_view(&s)).unwrap_or_default())
        };
        answer(engine, result, Some(&workflow), Some(&run_id))
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `GET /ui/api/runs/{workflow}/{run_id}/steps/{step}`: the step panel.
pub(crate) async fn step(
    State(ui): State<Arc<Ui>>,
    Path((workflow, run_id, step_id)): Path<(String, String, String)>,
) -> Response {
    blocking(&ui, move |engine| {
        let panel =
            engine.run_snapshot(&workflow, &run_id).and_then(|s| step::step_panel(engine, &s, &step_id));
        answer(engine, panel, Some(&workflow), Some(&run_id))
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `GET /ui/api/runs/{workflow}/{run_id}/source`: the pinned version with
/// its diagnostics, and the diff to the file on disk.
pub(crate) async fn run_source(
    State(ui): State<Arc<Ui>>,
    Path((workflow, run_id)): Path<(String, String)>,
) -> Response {
    blocking(&ui, move |engine| {
        let source = engine
            .run_snapshot(&workflow, &run_id)
            .and_then(|s| step::source_view(engine, &workflow, Some(&s.workflow)));
        answer(engine, source, Some(&workflow), Some(&run_id))
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `GET /ui/api/workflows/{workflow}`: the file with its diagnostics, and
/// its DAG when it compiles.
pub(crate) async fn workflow(State(ui): State<Arc<Ui>>, Path(workflow): Path<String>) -> Response {
    blocking(&ui, move |engine| {
        let result = step::source_view(engine, &workflow, None).map(|source| {
            let compiled = engine.workflow(&workflow);
            json!({
                "workflow": workflow,
                "source": source,
                "graph": compiled.as_ref().ok().map(|cw| view::graph_view(cw, None)),
                "error": compiled.as_ref().err().map(EngineError::to_json),
            })
        });
        answer(engine, result, None, None)
    })
    .await
    .unwrap_or_else(|r| r)
}

/// The tool call of an action with its JSON body (`UNKNOWN_ACTION`, 404,
/// for another name).
fn tool_call(
    action: &str,
    workflow: &str,
    run_id: &str,
    input: &Value,
) -> Result<(&'static str, Value), Box<Response>> {
    let get = |k: &str| input.get(k).cloned().unwrap_or(Value::Null);
    let (tool, args) = match action {
        "reset" => (
            "think_reset",
            json!({"workflow": workflow, "run_id": run_id, "checkpoint": get("checkpoint"), "force": get("force").as_bool().unwrap_or(false)}),
        ),
        "fork" => (
            "think_fork",
            json!({"workflow": workflow, "run_id": run_id, "from": get("from"), "new_run_id": get("new_run_id")}),
        ),
        "upgrade" => (
            "think_upgrade",
            json!({"workflow": workflow, "run_id": run_id, "dry_run": get("dry_run").as_bool().unwrap_or(true),
                   "force": get("force").as_bool().unwrap_or(false)}),
        ),
        "archive" => ("think_state_delete", json!({"workflow": workflow, "run_id": run_id, "purge": false})),
        "delete" => ("think_state_delete", json!({"workflow": workflow, "run_id": run_id, "purge": true})),
        "restore" => (
            "think_state_restore",
            json!({"workflow": workflow, "run_id": run_id, "archive_id": get("archive_id")}),
        ),
        "answer" => (
            "think_answer",
            json!({"workflow": workflow, "run_id": run_id, "step_id": get("step_id"), "value": get("value"),
                   "expected_version": get("expected_version")}),
        ),
        other => {
            const ACTIONS: [&str; 7] = ["reset", "fork", "upgrade", "archive", "delete", "restore", "answer"];
            let help = crate::diagnostic::suggest(other, ACTIONS);
            let message = format!(
                "no action `{other}`{}; the actions are {}",
                help.map(|h| format!("; {h}")).unwrap_or_default(),
                ACTIONS.join(", ")
            );
            return Err(Box::new(refuse(StatusCode::NOT_FOUND, "UNKNOWN_ACTION", &message, true)));
        }
    };
    Ok((tool, args))
}

/// The most an action's body may hold.
const MAX_ACTION_BODY: usize = 64 * 1024;

/// `POST /ui/api/runs/{workflow}/{run_id}/actions/{action}` with a JSON
/// body: reset, fork, upgrade, archive, delete, restore or answer (a
/// waiting `await:` step's answer: `{step_id, value}`) — each the tool
/// call the CLI makes (`tools::call`).
pub(crate) async fn action(
    State(ui): State<Arc<Ui>>,
    Path((workflow, run_id, action)): Path<(String, String, String)>,
    Extension(auth): Extension<Auth>,
    Extension(host): Extension<Host>,
    req: Request,
) -> Response {
    if let Err(refused) = may_act(&ui, auth, &host, req.headers()) {
        return *refused;
    }
    let json_type = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json_type {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "INVALID_INPUT",
            "send the action as application/json",
            true,
        );
    }
    let body = match axum::body::to_bytes(req.into_body(), MAX_ACTION_BODY).await {
        Ok(b) => b,
        Err(_) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "INVALID_INPUT",
                "the action's body is too large",
                true,
            );
        }
    };
    let input: Value = match serde_json::from_slice(&body) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "INVALID_INPUT",
                "the action's body must be a JSON object",
                true,
            );
        }
    };
    let (tool, args) = match tool_call(&action, &workflow, &run_id, &input) {
        Ok(call) => call,
        Err(refused) => return *refused,
    };
    tracing::info!(action = %action, workflow = %workflow, run_id = %run_id, "inspector action");
    blocking(&ui, move |engine| match crate::tools::call(engine, tool, args) {
        Ok(result) => json_response(StatusCode::OK, &json!({"action": action, "result": result})),
        Err(e) => error_response(engine, &e, Some(&workflow), None),
    })
    .await
    .unwrap_or_else(|r| r)
}
