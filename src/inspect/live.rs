//! Live updates of a run page: server-sent events. Each open page has a
//! task that looks at the run's stored stamp (file metadata, or one
//! counter read in PostgreSQL) every [`POLL`], and sends the steps'
//! statuses when it changed — whoever wrote it (this server, the CLI, an
//! executor). No page open, no task: live updates cost nothing then.

use super::api::blocking;
use super::guard::Ui;
use super::view;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often an open page's run is looked at.
pub const POLL: Duration = Duration::from_millis(250);

/// A comment line this often keeps proxies from closing an idle stream
/// (and finds out that a page went away).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// A response body fed by a channel: each message one SSE frame.
struct Stream {
    rx: tokio::sync::mpsc::Receiver<Bytes>,
}

impl http_body::Body for Stream {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.get_mut().rx.poll_recv(cx).map(|m| m.map(|b| Ok(http_body::Frame::data(b))))
    }
}

/// One event: `event: NAME` and its JSON on one `data:` line.
fn frame(name: &str, data: &serde_json::Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// `GET /ui/api/runs/{workflow}/{run_id}/live`: `state` events with the
/// statuses (see [`view::Statuses`]) at once and on every change, `error`
/// when the run cannot be read (it was deleted, or is corrupt).
pub(crate) async fn live(
    State(ui): State<Arc<Ui>>,
    Path((workflow, run_id)): Path<(String, String)>,
) -> Response {
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    tokio::spawn(async move {
        let mut last = None;
        let mut first = true;
        let mut sent = Instant::now();
        loop {
            if tx.is_closed() {
                break;
            }
            let (w, r) = (workflow.clone(), run_id.clone());
            let Ok(stamp) = blocking(&ui, move |engine| engine.run_stamp(&w, &r)).await else { break };
            let message = if first || stamp != last {
                first = false;
                last = stamp;
                let (w, r) = (workflow.clone(), run_id.clone());
                let read =
                    blocking(&ui, move |engine| engine.run_snapshot(&w, &r).map(|s| view::statuses(&s)))
                        .await;
                match read {
                    Ok(Ok(statuses)) => {
                        Some(frame("state", &serde_json::to_value(statuses).unwrap_or_default()))
                    }
                    Ok(Err(e)) => Some(frame("error", &e.to_json())),
                    Err(_) => break,
                }
            } else if sent.elapsed() >= KEEP_ALIVE {
                Some(Bytes::from_static(b": keep-alive\n\n"))
            } else {
                None
            };
            if let Some(m) = message {
                if tx.send(m).await.is_err() {
                    break;
                }
                sent = Instant::now();
            }
            tokio::time::sleep(POLL).await;
        }
    });
    let mut r = axum::body::Body::new(Stream { rx }).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}
