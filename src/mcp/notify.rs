//! Server → client notifications, per MCP session:
//! - `notifications/message`: the server's own log lines (targets
//!   `savant_think::…`) at or above the level the session chose with
//!   `logging/setLevel`; nothing before that. Stderr logging is unaffected.
//! - `notifications/resources/updated` for a subscribed `run://` after a tool
//!   changed that run, and `notifications/resources/list_changed` after a run
//!   was created. A run changed by another process (a replica on the same
//!   PostgreSQL database, or `savant-think next` on the same root) is seen
//!   by [`Hub::watch`], which compares the stored stamps of subscribed runs
//!   every [`WATCH_INTERVAL`].
//! - The same two on a 2026-07-28 `subscriptions/listen` stream ([`Hub::listen`]):
//!   only the types its filter asked for and this server accepted
//!   ([`accepted`]), each tagged with the subscription's id by rmcp's
//!   [`SubscriptionSink`], after rmcp's acknowledgement.
//!
//! rmcp marks MCP logging deprecated (SEP-2577), but the current protocol
//! versions and clients still use it, hence the `allow(deprecated)`.
#![allow(deprecated)]

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ResourceUpdatedNotificationParam, SubscriptionFilter,
};
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer};

/// No `logging/setLevel` yet: no log notifications.
const OFF: u8 = u8::MAX;
/// Log lines queued per session before new ones are dropped (a slow client
/// must not hold the server's memory).
const LOG_QUEUE: usize = 256;

/// The MCP levels in increasing severity (RFC 5424 order).
pub fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn from_tracing(level: tracing::Level) -> LoggingLevel {
    match level {
        tracing::Level::ERROR => LoggingLevel::Error,
        tracing::Level::WARN => LoggingLevel::Warning,
        tracing::Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// One MCP session's notification state.
pub struct Session {
    peer: OnceLock<Peer<RoleServer>>,
    level: AtomicU8,
    subscriptions: Mutex<HashSet<String>>,
    logs: OnceLock<mpsc::Sender<LoggingMessageNotificationParam>>,
}

impl Session {
    pub fn new() -> Arc<Session> {
        Arc::new(Session {
            peer: OnceLock::new(),
            level: AtomicU8::new(OFF),
            subscriptions: Mutex::new(HashSet::new()),
            logs: OnceLock::new(),
        })
    }

    /// Remembers the client to notify (the first peer seen wins).
    pub fn attach(&self, peer: &Peer<RoleServer>) {
        let _ = self.peer.set(peer.clone());
    }

    /// `logging/setLevel`: from now on, log lines at or above `level` go to
    /// the client. Needs a runtime (spawns the forwarding task once).
    pub fn set_level(self: &Arc<Self>, level: LoggingLevel) {
        if let Some(peer) = self.peer.get()
            && self.logs.get().is_none()
        {
            let (tx, mut rx) = mpsc::channel::<LoggingMessageNotificationParam>(LOG_QUEUE);
            if self.logs.set(tx).is_ok() {
                let peer = peer.clone();
                tokio::spawn(async move {
                    while let Some(message) = rx.recv().await {
                        if peer.notify_logging_message(message).await.is_err() {
                            break;
                        }
                    }
                });
            }
        }
        self.level.store(rank(level), Ordering::Relaxed);
        let mut sessions = LOG_SESSIONS.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|s| s.strong_count() > 0);
        if !sessions.iter().any(|s| std::ptr::eq(s.as_ptr(), Arc::as_ptr(self))) {
            sessions.push(Arc::downgrade(self));
        }
        let min = sessions.iter().filter_map(Weak::upgrade).map(|s| s.level.load(Ordering::Relaxed)).min();
        MIN_LEVEL.store(min.unwrap_or(OFF), Ordering::Relaxed);
    }

    pub fn subscribe(&self, uri: &str) {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).insert(uri.to_owned());
    }

    pub fn unsubscribe(&self, uri: &str) {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).remove(uri);
    }

    fn subscribed(&self, uri: &str) -> bool {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).contains(uri)
    }
}

/// How often the stamps of subscribed runs are compared.
pub const WATCH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

/// What a `subscriptions/listen` filter gets: `resources/list_changed` and
/// updates of the URIs `subscribable` accepts (those `resources/read`
/// serves), if asked for. No tools or prompts list changes: this server's
/// lists do not change while it runs, and it does not advertise them. rmcp
/// narrows this to what was requested before acknowledging it.
pub fn accepted(requested: &SubscriptionFilter, subscribable: impl Fn(&str) -> bool) -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::new();
    filter.resources_list_changed = requested.resources_list_changed;
    filter.resource_subscriptions = requested
        .resource_subscriptions
        .as_ref()
        .map(|uris| uris.iter().filter(|u| subscribable(u)).cloned().collect());
    filter
}

/// A `subscriptions/listen` stream registered with the [`Hub`]; dropping it
/// (when the stream ends) unregisters it.
pub struct Listening {
    hub: Weak<Hub>,
    key: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Some(hub) = self.hub.upgrade() {
            hub.listeners.lock().unwrap_or_else(|p| p.into_inner()).retain(|(k, _)| *k != self.key);
        }
    }
}

/// Every session of one server, for resource notifications.
#[derive(Default)]
pub struct Hub {
    sessions: Mutex<Vec<Weak<Session>>>,
    /// Open `subscriptions/listen` streams, by a key of their own (request
    /// ids are only unique per client).
    listeners: Mutex<Vec<(u64, SubscriptionSink)>>,
    next_listener: std::sync::atomic::AtomicU64,
    /// The last stamp seen (or sent) per subscribed `run://` URI.
    seen: Mutex<std::collections::HashMap<String, Option<crate::state::Stamp>>>,
    watching: std::sync::atomic::AtomicBool,
}

impl Hub {
    pub fn join(&self, session: &Arc<Session>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(session));
    }

    /// Registers a `subscriptions/listen` stream until the returned guard drops.
    pub fn listen(self: &Arc<Self>, sink: SubscriptionSink) -> Listening {
        let key = self.next_listener.fetch_add(1, Ordering::Relaxed);
        self.listeners.lock().unwrap_or_else(|p| p.into_inner()).push((key, sink));
        Listening { hub: Arc::downgrade(self), key }
    }

    /// The listen streams whose accepted filter `want`s.
    fn sinks(&self, want: impl Fn(&SubscriptionFilter) -> bool) -> Vec<SubscriptionSink> {
        let listeners = self.listeners.lock().unwrap_or_else(|p| p.into_inner());
        listeners.iter().map(|(_, s)| s).filter(|s| want(s.accepted())).cloned().collect()
    }

    fn peers(&self, want: impl Fn(&Session) -> bool) -> Vec<Peer<RoleServer>> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|s| want(s))
            .filter_map(|s| s.peer.get().cloned())
            .collect()
    }

    /// `notifications/resources/updated` to every session subscribed to `uri`.
    pub async fn resource_updated(&self, uri: &str) {
        for peer in self.peers(|s| s.subscribed(uri)) {
            if let Err(e) = peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await {
                tracing::debug!(uri, "could not send resources/updated: {e}");
            }
        }
        for sink in self.sinks(|f| listens_to(f, uri)) {
            if let Err(e) = sink.notify_resource_updated(uri).await {
                tracing::debug!(uri, "could not send resources/updated to a listen stream: {e}");
            }
        }
    }

    /// The `run://` URIs some session is subscribed to.
    fn subscribed_runs(&self) -> Vec<String> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: HashSet<String> = HashSet::new();
        for s in sessions.iter().filter_map(Weak::upgrade) {
            let subs = s.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
            out.extend(subs.iter().filter(|u| u.starts_with("run://")).cloned());
        }
        for sink in self.sinks(|_| true) {
            let uris = sink.accepted().resource_subscriptions.iter().flatten();
            out.extend(uris.filter(|u| u.starts_with("run://")).cloned());
        }
        out.into_iter().collect()
    }

    /// Whether any session is subscribed to `uri`.
    pub fn has_subscriber(&self, uri: &str) -> bool {
        !self.peers(|s| s.subscribed(uri)).is_empty() || !self.sinks(|f| listens_to(f, uri)).is_empty()
    }

    /// Records `stamp` as the state of `uri` the subscribers know, and
    /// whether it differs from the one recorded before (`None` before: never
    /// seen, not a change).
    pub fn record(&self, uri: &str, stamp: Option<crate::state::Stamp>) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        match seen.insert(uri.to_owned(), stamp) {
            Some(before) => before != stamp,
            None => false,
        }
    }

    /// Starts (once) the task that notices runs changed by another process:
    /// every [`WATCH_INTERVAL`] it reads the stamp of each subscribed run
    /// (`stamp_of`, a blocking store read) and sends `resources/updated` when
    /// it changed. It ends when the hub is gone.
    pub fn watch(
        self: &Arc<Self>,
        stamp_of: impl Fn(&str) -> Option<crate::state::Stamp> + Send + Sync + 'static,
    ) {
        if self.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let hub = Arc::downgrade(self);
        let stamp_of = Arc::new(stamp_of);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(WATCH_INTERVAL).await;
                let Some(hub) = hub.upgrade() else { return };
                let uris = hub.subscribed_runs();
                if uris.is_empty() {
                    continue;
                }
                let read = stamp_of.clone();
                let stamps = tokio::task::spawn_blocking(move || {
                    uris.into_iter().map(|u| (read(&u), u)).collect::<Vec<_>>()
                })
                .await
                .unwrap_or_default();
                for (stamp, uri) in stamps {
                    if hub.record(&uri, stamp) {
                        hub.resource_updated(&uri).await;
                    }
                }
            }
        });
    }

    /// `notifications/resources/list_changed` to every session.
    pub async fn resource_list_changed(&self) {
        for peer in self.peers(|_| true) {
            if let Err(e) = peer.notify_resource_list_changed().await {
                tracing::debug!("could not send resources/list_changed: {e}");
            }
        }
        for sink in self.sinks(|f| f.resources_list_changed == Some(true)) {
            if let Err(e) = sink.notify_resource_list_changed().await {
                tracing::debug!("could not send resources/list_changed to a listen stream: {e}");
            }
        }
    }
}

/// Whether a listen stream's accepted filter takes updates of `uri`.
fn listens_to(filter: &SubscriptionFilter, uri: &str) -> bool {
    filter.resource_subscriptions.as_ref().is_some_and(|uris| uris.iter().any(|u| u == uri))
}

/// Sessions that asked for log lines, and the lowest level any of them wants.
static LOG_SESSIONS: Mutex<Vec<Weak<Session>>> = Mutex::new(Vec::new());
static MIN_LEVEL: AtomicU8 = AtomicU8::new(OFF);

/// Whether a log line could go to some client (cheap; used as a per-layer filter).
pub fn wanted(meta: &tracing::Metadata<'_>) -> bool {
    let min = MIN_LEVEL.load(Ordering::Relaxed);
    min != OFF && rank(from_tracing(*meta.level())) >= min && meta.target().starts_with("savant_think")
}

/// A tracing layer that turns the server's log lines into `notifications/message`.
pub struct McpLogLayer;

struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), Value::from(format!("{value:?}")));
    }
}

impl<S: tracing::Subscriber> Layer<S> for McpLogLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if !wanted(meta) {
            return;
        }
        let level = from_tracing(*meta.level());
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        let mut message = LoggingMessageNotificationParam::new(level, Value::Object(fields.0));
        message.logger = Some(meta.target().to_owned());
        let sessions = LOG_SESSIONS.lock().unwrap_or_else(|p| p.into_inner());
        for session in sessions.iter().filter_map(Weak::upgrade) {
            if session.level.load(Ordering::Relaxed) <= rank(level)
                && let Some(tx) = session.logs.get()
            {
                let _ = tx.try_send(message.clone());
            }
        }
    }
}
