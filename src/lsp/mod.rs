//! `savant-think lsp`: a language server on stdin/stdout, built on
//! `lsp-server` + `lsp-types` (synchronous, as rust-analyzer is). It runs the
//! same checker as `savant-think check` on the editor's unsaved text, so an
//! editor shows every problem `check` finds at the same characters.
//!
//! - diagnostics on open (at once) and on change (debounced: a burst of edits
//!   settles to one publish), in the negotiated position encoding; text
//!   sync is incremental, and an edit inside one step is checked from the
//!   last analysis (`check::incremental`), with `check`'s exact result;
//! - hover, go to definition, references, rename, document symbols,
//!   completion and quick fixes (each did-you-mean's [`crate::diagnostic::Fix`]);
//! - open documents are re-checked when a file under `schemas/` or a
//!   `savant-think.toml` changes.
//!
//! This file is the loop (initialize, position-encoding negotiation,
//! incremental text sync, debounced publishing: a publish's analysis is
//! abandoned between steps when another message waits). `document.rs`
//! holds open documents, their analyses (only what is a workflow: under
//! `workflows/`, a test file, or a top-level key only a workflow has) and
//! per-root `Config`; `text.rs` byte offsets ↔ UTF-16/UTF-8 positions;
//! `convert.rs` diagnostics and quick fixes; `navigate.rs` hover,
//! definition, references and rename from `check::scope` and
//! `check::infer`; `complete.rs` completion (tool names with their inputs,
//! input keys under `input_template:`, a capture's fields after `.`);
//! `requests.rs` the handlers.

mod complete;
mod convert;
mod document;
mod navigate;
mod text;

pub use text::Encoding;

use document::{Document, Projects, uri_path};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lt;
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// How long edits must pause before the diagnostics of a change are published.
pub const DEBOUNCE: Duration = Duration::from_millis(60);

/// Serves LSP on stdin/stdout until the client sends `exit`. `savant_path`
/// is the value of `SAVANT_PATH` (the caller reads it), which wins over root
/// discovery as for `check`; `overrides` are the state settings of the
/// environment (`SAVANT_STATE_URL`, …) for finding the runs in flight.
pub fn run_stdio(
    savant_path: Option<std::ffi::OsString>,
    overrides: crate::config::Overrides,
) -> Result<(), String> {
    let (conn, io) = Connection::stdio();
    serve_in(&conn, DEBOUNCE, savant_path, overrides)?;
    drop(conn);
    io.join().map_err(|e| format!("lsp: {e}"))
}

/// Serves one connection: initialize, then messages until `exit`. Roots
/// are discovered from each file (no `SAVANT_PATH`; see [`run_stdio`]).
pub fn serve(conn: &Connection) -> Result<(), String> {
    serve_with(conn, DEBOUNCE)
}

/// [`serve`] with another debounce (benchmarks measure with none).
pub fn serve_with(conn: &Connection, debounce: Duration) -> Result<(), String> {
    serve_in(conn, debounce, None, Default::default())
}

fn serve_in(
    conn: &Connection,
    debounce: Duration,
    savant_path: Option<std::ffi::OsString>,
    overrides: crate::config::Overrides,
) -> Result<(), String> {
    let (id, params) = conn.initialize_start().map_err(|e| format!("lsp: {e}"))?;
    let init: lt::InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let encoding = negotiate(&init);
    let result = serde_json::json!({
        "capabilities": capabilities(encoding),
        "serverInfo": { "name": "savant-think", "version": env!("CARGO_PKG_VERSION") },
    });
    conn.initialize_finish(id, result).map_err(|e| format!("lsp: {e}"))?;
    let mut server = Server::new(encoding, debounce, savant_path, overrides);
    if init
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|d| d.dynamic_registration)
        == Some(true)
    {
        server.send(conn, watch_schemas_request());
    }
    server.run(conn)
}

/// UTF-8 when the client offers it, else UTF-16 (the protocol's default).
fn negotiate(init: &lt::InitializeParams) -> Encoding {
    let offered = init.capabilities.general.as_ref().and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(encs) if encs.contains(&lt::PositionEncodingKind::UTF8) => Encoding::Utf8,
        _ => Encoding::Utf16,
    }
}

fn capabilities(encoding: Encoding) -> lt::ServerCapabilities {
    lt::ServerCapabilities {
        position_encoding: Some(match encoding {
            Encoding::Utf8 => lt::PositionEncodingKind::UTF8,
            Encoding::Utf16 => lt::PositionEncodingKind::UTF16,
        }),
        // Incremental sync (ranges in the negotiated encoding), and saves:
        // a saved workflow is also checked against the runs in flight
        // (INCOMPATIBLE_UPGRADE warnings).
        text_document_sync: Some(lt::TextDocumentSyncCapability::Options(lt::TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(lt::TextDocumentSyncKind::INCREMENTAL),
            save: Some(lt::TextDocumentSyncSaveOptions::Supported(true)),
            ..Default::default()
        })),
        hover_provider: Some(lt::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lt::OneOf::Left(true)),
        references_provider: Some(lt::OneOf::Left(true)),
        document_symbol_provider: Some(lt::OneOf::Left(true)),
        rename_provider: Some(lt::OneOf::Right(lt::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        completion_provider: Some(lt::CompletionOptions {
            trigger_characters: Some(vec!["<".into(), ".".into(), "[".into(), " ".into()]),
            ..Default::default()
        }),
        code_action_provider: Some(lt::CodeActionProviderCapability::Options(lt::CodeActionOptions {
            code_action_kinds: Some(vec![lt::CodeActionKind::QUICKFIX]),
            ..Default::default()
        })),
        ..Default::default()
    }
}

fn watch_schemas_request() -> Message {
    let options = lt::DidChangeWatchedFilesRegistrationOptions {
        watchers: vec![
            lt::FileSystemWatcher {
                glob_pattern: lt::GlobPattern::String("**/schemas/*.json".into()),
                kind: None,
            },
            lt::FileSystemWatcher {
                glob_pattern: lt::GlobPattern::String("**/savant-think.toml".into()),
                kind: None,
            },
        ],
    };
    let params = lt::RegistrationParams {
        registrations: vec![lt::Registration {
            id: "savant-think-schemas".into(),
            method: lt::notification::DidChangeWatchedFiles::METHOD.into(),
            register_options: serde_json::to_value(options).ok(),
        }],
    };
    Message::Request(Request::new(
        RequestId::from("register-schemas".to_owned()),
        lt::request::RegisterCapability::METHOD.into(),
        params,
    ))
}

struct Server {
    encoding: Encoding,
    docs: HashMap<lt::Url, Document>,
    projects: Projects,
    /// Documents edited since their last publish, and when to publish them.
    pending: BTreeMap<lt::Url, Instant>,
    debounce: Duration,
}

impl Server {
    fn new(
        encoding: Encoding,
        debounce: Duration,
        savant_path: Option<std::ffi::OsString>,
        overrides: crate::config::Overrides,
    ) -> Server {
        Server {
            encoding,
            docs: HashMap::new(),
            projects: Projects::new(savant_path, overrides),
            pending: BTreeMap::new(),
            debounce,
        }
    }

    fn send(&self, conn: &Connection, msg: Message) {
        // The client hung up: the receive loop ends on its own.
        let _ = conn.sender.send(msg);
    }

    fn run(&mut self, conn: &Connection) -> Result<(), String> {
        loop {
            let deadline = self.pending.values().min().copied();
            let msg = match deadline {
                Some(d) => match conn.receiver.recv_deadline(d) {
                    Ok(m) => m,
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                        self.flush(conn, Instant::now());
                        continue;
                    }
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Ok(()),
                },
                None => match conn.receiver.recv() {
                    Ok(m) => m,
                    Err(_) => return Ok(()),
                },
            };
            match msg {
                Message::Request(req) => {
                    if conn.handle_shutdown(&req).map_err(|e| format!("lsp: {e}"))? {
                        return Ok(());
                    }
                    let resp = self.request(req);
                    self.send(conn, Message::Response(resp));
                }
                Message::Notification(n) => self.notification(conn, n),
                Message::Response(_) => {}
            }
        }
    }

    /// Publishes the diagnostics of every document whose debounce ran out.
    fn flush(&mut self, conn: &Connection, now: Instant) {
        let due: Vec<lt::Url> =
            self.pending.iter().filter(|(_, d)| **d <= now).map(|(u, _)| u.clone()).collect();
        for uri in due {
            self.pending.remove(&uri);
            self.publish(conn, &uri);
        }
    }

    /// Publishes a document's diagnostics, unless another message (maybe a
    /// newer version) waits: then its analysis is abandoned at the next
    /// step boundary (or kept, when complete, but not published), and the
    /// document is published again once the waiting messages are handled.
    /// A version already replaced when its analysis ends is not published.
    fn publish(&mut self, conn: &Connection, uri: &lt::Url) {
        let Some(doc) = self.docs.get_mut(uri) else { return };
        let waiting = || !conn.receiver.is_empty();
        // Kept (`current`) when complete: publishing it later costs nothing.
        if doc.analysis_until(&mut self.projects, &waiting).is_none_or(|_| waiting()) {
            self.pending.insert(uri.clone(), Instant::now());
            return;
        }
        let a = doc.analysis(&mut self.projects);
        let params = convert::publish_params(uri, doc.version, &a, self.encoding);
        let n = Notification::new(lt::notification::PublishDiagnostics::METHOD.into(), params);
        self.send(conn, Message::Notification(n));
    }

    fn notification(&mut self, conn: &Connection, n: Notification) {
        use lt::notification as ln;
        match n.method.as_str() {
            ln::DidOpenTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value(n.params) {
                    self.did_open(conn, p)
                }
            }
            ln::DidChangeTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value(n.params) {
                    self.did_change(p)
                }
            }
            ln::DidSaveTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value(n.params) {
                    self.did_save(conn, p)
                }
            }
            ln::DidCloseTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value(n.params) {
                    self.did_close(conn, p)
                }
            }
            ln::DidChangeWatchedFiles::METHOD => {
                if let Ok(p) = serde_json::from_value(n.params) {
                    self.watched_files_changed(conn, p)
                }
            }
            _ => {}
        }
    }

    fn did_open(&mut self, conn: &Connection, p: lt::DidOpenTextDocumentParams) {
        let d = p.text_document;
        let doc = Document {
            uri: d.uri.clone(),
            version: d.version,
            text: d.text,
            current: None,
            last_good: None,
            base: None,
            base_config: None,
        };
        self.docs.insert(d.uri.clone(), doc);
        self.pending.remove(&d.uri);
        self.publish(conn, &d.uri);
    }

    fn did_change(&mut self, p: lt::DidChangeTextDocumentParams) {
        let Some(doc) = self.docs.get_mut(&p.text_document.uri) else { return };
        // Incremental sync: each change applies to the text the one before left.
        if p.content_changes.is_empty() {
            return;
        }
        for c in p.content_changes {
            text::apply(&mut doc.text, c.range, &c.text, self.encoding);
        }
        doc.version = p.text_document.version;
        doc.current = None;
        self.pending.insert(p.text_document.uri, Instant::now() + self.debounce);
    }

    fn did_save(&mut self, conn: &Connection, p: lt::DidSaveTextDocumentParams) {
        let Some(doc) = self.docs.get_mut(&p.text_document.uri) else { return };
        // The file on disk is now the buffer: look at the runs again.
        doc.current = None;
        self.pending.remove(&p.text_document.uri);
        self.publish(conn, &p.text_document.uri);
    }

    fn did_close(&mut self, conn: &Connection, p: lt::DidCloseTextDocumentParams) {
        self.docs.remove(&p.text_document.uri);
        self.pending.remove(&p.text_document.uri);
        let clear =
            lt::PublishDiagnosticsParams { uri: p.text_document.uri, diagnostics: vec![], version: None };
        let method = lt::notification::PublishDiagnostics::METHOD.into();
        self.send(conn, Message::Notification(Notification::new(method, clear)));
    }

    /// A schema or savant-think.toml changed on disk: every open document
    /// is checked again.
    fn watched_files_changed(&mut self, conn: &Connection, p: lt::DidChangeWatchedFilesParams) {
        let schema_changed = p.changes.iter().any(|c| {
            let path = uri_path(&c.uri);
            path.parent().and_then(|d| d.file_name()).is_some_and(|d| d == "schemas")
                || path.file_name().is_some_and(|n| n == "savant-think.toml")
        });
        if !schema_changed {
            return;
        }
        self.projects.invalidate();
        let uris: Vec<lt::Url> = self.docs.keys().cloned().collect();
        for uri in uris {
            if let Some(d) = self.docs.get_mut(&uri) {
                d.current = None;
            }
            self.pending.remove(&uri);
            self.publish(conn, &uri);
        }
    }

    fn request(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        // A bug in one answer must not end the editor's session.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.answer(req))) {
            Ok(Ok(v)) => Response { id, result: Some(v), error: None },
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => Response::new_err(
                id,
                ErrorCode::InternalError as i32,
                "internal error (reported on stderr)".into(),
            ),
        }
    }

    fn answer(&mut self, req: Request) -> Result<Value, (ErrorCode, String)> {
        use lt::request as lr;
        fn parse<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, (ErrorCode, String)> {
            serde_json::from_value(v).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
        }
        let to =
            |v: Result<Value, serde_json::Error>| v.map_err(|e| (ErrorCode::InternalError, e.to_string()));
        match req.method.as_str() {
            lr::HoverRequest::METHOD => {
                let p: lt::HoverParams = parse(req.params)?;
                to(serde_json::to_value(self.hover(p.text_document_position_params)))
            }
            lr::GotoDefinition::METHOD => {
                let p: lt::GotoDefinitionParams = parse(req.params)?;
                to(serde_json::to_value(self.definition(p.text_document_position_params)))
            }
            lr::References::METHOD => {
                let p: lt::ReferenceParams = parse(req.params)?;
                let include = p.context.include_declaration;
                to(serde_json::to_value(self.references(p.text_document_position, include)))
            }
            lr::PrepareRenameRequest::METHOD => {
                let p: lt::TextDocumentPositionParams = parse(req.params)?;
                to(serde_json::to_value(self.prepare_rename(p)))
            }
            lr::Rename::METHOD => {
                let p: lt::RenameParams = parse(req.params)?;
                to(serde_json::to_value(self.rename(p)?))
            }
            lr::DocumentSymbolRequest::METHOD => {
                let p: lt::DocumentSymbolParams = parse(req.params)?;
                to(serde_json::to_value(self.symbols(&p.text_document.uri)))
            }
            lr::Completion::METHOD => {
                let p: lt::CompletionParams = parse(req.params)?;
                to(serde_json::to_value(self.completion(p.text_document_position)))
            }
            lr::CodeActionRequest::METHOD => {
                let p: lt::CodeActionParams = parse(req.params)?;
                to(serde_json::to_value(self.code_actions(&p.text_document.uri, p.range)))
            }
            other => Err((ErrorCode::MethodNotFound, format!("unsupported request {other}"))),
        }
    }
}

mod requests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every message of a burst is queued before the server reads any: the
    /// server drains the queue before a deadline can pass (a queued message
    /// is always received first), so exactly one publish follows, for the
    /// last version; the open's analysis is not published either, a newer
    /// version waiting when it ends. No timing is involved.
    #[test]
    fn a_queued_burst_publishes_once_for_the_last_version() {
        let (server, client) = Connection::memory();
        let send = |m: Message| client.sender.send(m).unwrap();
        let uri = "file:///nonexistent/savant-lsp-debounce/workflows/w.yaml";
        send(Message::Request(Request::new(
            RequestId::from(1),
            "initialize".into(),
            json!({ "capabilities": {} }),
        )));
        send(Message::Notification(Notification::new("initialized".into(), json!({}))));
        let open = json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": "steps: []\n" } });
        send(Message::Notification(Notification::new("textDocument/didOpen".into(), open)));
        for v in 2..=30 {
            let text = if v == 30 {
                "steps:\n  - id: a\n    call: t\n".to_owned()
            } else {
                format!("steps: [{v}\n")
            };
            let change =
                json!({ "textDocument": { "uri": uri, "version": v }, "contentChanges": [{ "text": text }] });
            send(Message::Notification(Notification::new("textDocument/didChange".into(), change)));
        }
        let thread = std::thread::spawn(move || serve_with(&server, Duration::from_millis(20)));
        let mut publishes = Vec::new();
        while publishes.last().is_none_or(|(v, _)| *v != json!(30)) {
            if let Message::Notification(n) = client.receiver.recv().unwrap()
                && n.method == "textDocument/publishDiagnostics"
            {
                publishes
                    .push((n.params["version"].clone(), n.params["diagnostics"].as_array().unwrap().len()));
            }
        }
        send(Message::Request(Request::new(RequestId::from(2), "shutdown".into(), Value::Null)));
        let rest: Vec<Message> = std::iter::from_fn(|| client.receiver.recv().ok())
            .take_while(|m| !matches!(m, Message::Response(r) if r.id == RequestId::from(2)))
            .collect();
        send(Message::Notification(Notification::new("exit".into(), Value::Null)));
        thread.join().unwrap().unwrap();
        assert_eq!(publishes, [(json!(30), 0)], "one publish, for the last version");
        assert!(rest.is_empty(), "nothing more was published: {rest:?}");
    }

    /// An analysis stopped between steps (a newer version waiting) returns
    /// nothing and keeps nothing of its version, nor the workflow and state
    /// it started from: the next analysis, of a newer text, is `check`'s.
    #[test]
    fn a_stopped_analysis_keeps_nothing_and_the_next_is_checks() {
        let mut text = String::from("id: w\nsteps:\n");
        for i in 0..6 {
            text += &format!("  - id: s{i}\n    call: t\n");
            if i > 0 {
                text += &format!("    when: \"c{} != null\"\n", i - 1);
            }
            text += &format!("    capture_as: c{i}\n");
        }
        let uri = lt::Url::parse("file:///nonexistent/savant-lsp-stop/workflows/w.yaml").unwrap();
        let mut projects = Projects::new(None, Default::default());
        let mut doc = Document {
            uri: uri.clone(),
            version: 1,
            text: text.clone(),
            current: None,
            last_good: None,
            base: None,
            base_config: None,
        };
        assert!(doc.analysis(&mut projects).diags.is_empty(), "{text}");
        // A step's id emptied (a step that does not lower: the steps are
        // not the same ones): every step is checked again, step by step.
        doc.text = text.replacen("  - id: s2\n", "  - id: \n", 1);
        doc.current = None;
        let asked = std::cell::Cell::new(0);
        let stopped = doc.analysis_until(&mut projects, &|| {
            asked.set(asked.get() + 1);
            asked.get() > 2
        });
        assert!(stopped.is_none() && asked.get() == 3, "stopped at the third step");
        assert!(doc.current.is_none() && doc.last_good.is_none() && doc.base.is_none());
        doc.text = text.replacen("capture_as: c2", "capture_as: c2y", 1);
        let a = doc.analysis(&mut projects);
        let (_, config) = projects.config_for(&uri_path(&uri));
        let want = crate::check::check_source(&a.src, &config);
        assert!(!want.is_empty());
        assert_eq!(a.diags, want);
        // And from that analysis on, edits are incremental again.
        assert!(doc.base.is_some());
    }
}
