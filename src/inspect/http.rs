//! The inspector on HTTP: the page at `/ui/` (embedded assets) and the JSON
//! API it reads at `/ui/api/…` (`api.rs`), live updates as server-sent
//! events (`live.rs`). Served beside `/mcp` by `serve --http` (same port,
//! same token, same Host and Origin rules) and alone by `savant-think ui`.
//!
//! Security, in the order a request meets it: an absolute-form target is
//! 400; one well-formed `Host` is required (400) and must be allowed (403,
//! against DNS rebinding); a malformed or foreign `Origin` is 403; with a
//! token, every request needs it (401) as `Authorization: Bearer`, or as
//! the `savant_ui_PORT` cookie the page's first load sets from `?token=` (then
//! redirected without it). Actions (POST) also need: a token at all (no
//! actions without auth), no `--read-only`, and, when the token came from
//! the cookie, the CSRF token of `/ui/api/session` in `X-Savant-Csrf` and an
//! `Origin` equal to the request's own host. Every response says
//! `Content-Security-Policy: default-src 'none'` with only the page's own
//! script and style allowed, and the page inserts user content as text
//! only, never as HTML.

pub use super::guard::UiOptions;
pub(crate) use super::guard::percent_decode;
use super::guard::{Ui, guard, redirect};
use crate::runtime::Engine;
use axum::Router;
use axum::middleware;
use axum::routing::{get, post};
use std::sync::Arc;

/// How long a connection may take to send its request head (as `/mcp`'s).
const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The inspector's routes, under `/ui`.
pub fn router(engine: Arc<Engine>, options: UiOptions) -> Router {
    let csrf = options.token.as_deref().map(|t| {
        let hash = crate::runtime::workflow::sha256_hex(format!("savant-ui-csrf\0{t}").as_bytes());
        hash["sha256:".len().."sha256:".len() + 32].to_owned()
    });
    let ui = Arc::new(Ui { engine, options, csrf });
    let page = get(super::api::page);
    Router::new()
        .route("/ui", get(|| async { redirect("/ui/") }))
        .route("/ui/", page.clone())
        .route("/ui/runs/{workflow}/{run_id}", page.clone())
        .route("/ui/workflows/{workflow}", page)
        .route("/ui/assets/{name}", get(super::api::asset))
        .route("/ui/api/session", get(super::api::session))
        .route("/ui/api/runs", get(super::api::runs))
        .route("/ui/api/runs/{workflow}/{run_id}", get(super::api::run))
        .route("/ui/api/runs/{workflow}/{run_id}/steps/{step}", get(super::api::step))
        .route("/ui/api/runs/{workflow}/{run_id}/source", get(super::api::run_source))
        .route("/ui/api/runs/{workflow}/{run_id}/live", get(super::live::live))
        .route("/ui/api/runs/{workflow}/{run_id}/actions/{action}", post(super::api::action))
        .route("/ui/api/workflows/{workflow}", get(super::api::workflow))
        .fallback(super::api::not_found)
        .layer(middleware::from_fn_with_state(ui.clone(), guard))
        .with_state(ui)
}

/// Serves the inspector alone (`savant-think ui`) on `addr` until SIGINT /
/// SIGTERM: `/ui/…`, and `/` redirected there. `announce` is told the
/// address bound (for `--port 0`) before the first request is taken.
pub async fn serve(
    engine: Engine,
    addr: std::net::SocketAddr,
    options: UiOptions,
    announce: impl FnOnce(std::net::SocketAddr),
) -> Result<(), String> {
    let app = router(Arc::new(engine), options).route("/", get(|| async { redirect("/ui/") }));
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        let hint =
            if e.kind() == std::io::ErrorKind::AddrInUse { "; pass --port 0 for any free port" } else { "" };
        format!("cannot listen on {addr}: {e}{hint}")
    })?;
    let local = listener.local_addr().map_err(|e| format!("cannot read the bound address: {e}"))?;
    announce(local);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stop => break,
        };
        let Ok((stream, _)) = accepted else {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let connection = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "an inspector connection ended with an error");
            }
        });
    }
    Ok(())
}

/// The `Host`s and `Origin`s a loopback server accepts: loopback names, any port.
pub fn loopback() -> (Vec<(String, Option<u16>)>, Vec<String>) {
    let hosts = crate::web_guard::LOOPBACK_HOSTS.iter().map(|h| (h.to_string(), None)).collect();
    let origins = crate::web_guard::LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect();
    (hosts, origins)
}
