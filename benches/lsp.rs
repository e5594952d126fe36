//! Edit-to-diagnostics latency of `savant-think lsp`, driven as an editor
//! drives it: a `didChange` carrying a one-character edit (a range and its
//! new text, incremental sync) in, the `publishDiagnostics` out, through the
//! real server loop over an in-memory connection (JSON-RPC, analysis,
//! position conversion), with the debounce set to zero so only the work is
//! measured. Iterations alternate inserting the character and deleting it,
//! so every edit is a real change.
//!
//! Groups of `edit_to_diagnostics`: `1k_steps` and `10k_steps` (generated
//! workflows; a character typed into a step's rationale, after an emoji),
//! `1k_steps_expr` and `10k_steps_expr` (a digit typed into a `when:`
//! expression), `1k_steps_name` and `10k_steps_name` (a letter typed into
//! the name of a capture a step reads, so what the step reads changes: the
//! dependency graph's edges into it, the cycles and unused captures are
//! looked at again beyond the step; it publishes an `UNRESOLVED_VAR`, and an
//! `UNUSED_CAPTURE` for the capture no longer read),
//! `1k_steps_rename` and `10k_steps_rename` (a letter typed at the end of
//! the middle step's `id`, which the next step lists in `deps`: a rename,
//! so the step's name changes for the others; it publishes an
//! `UNKNOWN_DEP` with a did-you-mean over every step id),
//! `1k_steps_rename_capture` and `10k_steps_rename_capture` (a letter typed
//! at the end of the middle step's `capture_as`, which the next step reads:
//! an `UNRESOLVED_VAR` with a did-you-mean over every capture, and an
//! `UNUSED_CAPTURE` for the renamed one),
//! `1k_steps_call` and `10k_steps_call` (a letter typed at the end of the
//! middle step's `call:`: another tool, so what types its capture changes
//! for the steps that read it),
//! `1k_steps_whole_text` (the same rationale edit sent as the
//! whole text, as a client without incremental sync sends it) and one per
//! bundled workflow (a space typed into its first `<<…>>` after the middle).
//! Run with `cargo bench --bench lsp`; figures in docs/PERFORMANCE.md.

use criterion::Criterion;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// A 1,000-step workflow that checks clean: deps, captures read by the next
/// step, a `when:` on every tenth step and a foreach on every twentieth.
fn generated(n: usize) -> String {
    let mut s = String::from(
        "id: gen\nparams:\n  topic: { type: string, description: The topic. }\n  limit: { type: integer }\nrequired: [topic]\nsteps:\n",
    );
    // Every capture is read by the next step: the file checks clean.
    for i in 0..n {
        let _ = write!(s, "  - id: s{i}\n    call: tool.t{}\n", i % 7);
        if i > 0 {
            let _ = writeln!(s, "    deps: [s{}]", i - 1);
        }
        if i % 20 == 13 {
            let _ = write!(s, "    foreach: c{}.items\n    as: it\n", i - 1);
        }
        if i % 10 == 7 {
            s.push_str("    when: \"params.limit > 3 && len(params.topic) > 0\"\n");
        }
        let read = match i {
            0 => String::new(),
            // A foreach step's capture is an array of its items' results.
            _ if (i - 1) % 20 == 13 => format!(" after <<len(c{})>> items", i - 1),
            _ => format!(" after <<c{}.title>>", i - 1),
        };
        let _ = writeln!(s, "    input_template: {{ q: \"<<params.topic>>{read}\" }}");
        let _ = write!(
            s,
            "    capture_as: c{i}\n    success_schema: {{ type: object, properties: {{ title: {{ type: string }}, items: {{ type: array }} }} }}\n"
        );
        let _ = writeln!(s, "    rationale: \"Step {i} 😀 of the generated workflow.\"");
    }
    // The last capture is read by nobody: read it in a final step's `when`.
    let _ = write!(s, "  - id: end\n    call: tool.end\n    when: \"c{}.title != null\"\n", n - 1);
    s
}

struct Server {
    client: Connection,
    thread: Option<std::thread::JoinHandle<()>>,
    version: i32,
}

impl Server {
    fn start() -> Server {
        let (server, client) = Connection::memory();
        let thread = std::thread::spawn(move || {
            savant_think::lsp::serve_with(&server, Duration::ZERO).unwrap();
        });
        let init = Request::new(RequestId::from(1), "initialize".into(), json!({ "capabilities": {} }));
        client.sender.send(Message::Request(init)).unwrap();
        loop {
            if let Message::Response(_) = client.receiver.recv().unwrap() {
                break;
            }
        }
        client
            .sender
            .send(Message::Notification(Notification::new("initialized".into(), json!({}))))
            .unwrap();
        Server { client, thread: Some(thread), version: 1 }
    }

    fn notify(&self, method: &str, params: Value) {
        self.client.sender.send(Message::Notification(Notification::new(method.into(), params))).unwrap();
    }

    /// Waits for the next publish and returns its diagnostic count.
    fn published(&self) -> usize {
        loop {
            if let Message::Notification(n) = self.client.receiver.recv().unwrap()
                && n.method == "textDocument/publishDiagnostics"
            {
                return n.params["diagnostics"].as_array().map_or(0, Vec::len);
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) -> usize {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": text } }),
        );
        self.published()
    }

    /// A change: the whole text (`range` none), or `range` replaced by `text`.
    fn edit(&mut self, uri: &str, range: Option<Value>, text: &str) -> usize {
        self.version += 1;
        let change = match range {
            Some(range) => json!({ "range": range, "text": text }),
            None => json!({ "text": text }),
        };
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": self.version }, "contentChanges": [change] }),
        );
        self.published()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let shutdown = Request::new(RequestId::from(2), "shutdown".into(), Value::Null);
        let _ = self.client.sender.send(Message::Request(shutdown));
        let _ = self.client.receiver.recv();
        self.notify("exit", Value::Null);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The LSP position (UTF-16 characters) of a byte offset.
fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": line, "character": before[start..].encode_utf16().count() })
}

/// One benchmark case: a document and the place a character is typed.
struct Case {
    name: String,
    uri: String,
    text: String,
    /// The byte offset the character goes in at.
    at: usize,
    typed: &'static str,
    /// Send the whole text instead of the range.
    whole: bool,
    /// Whether the typed text still checks clean.
    clean: bool,
}

/// The offset just after `needle`, searched from the first `from`.
fn after(text: &str, from: &str, needle: &str) -> usize {
    let base = text.find(from).unwrap();
    base + text[base..].find(needle).unwrap() + needle.len()
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("savant-lsp-bench-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases = Vec::new();
    for (n, label, mid) in [(1_000, "1k", 500), (10_000, "10k", 5_000)] {
        let uri = format!("file://{}/workflows/gen{label}.yaml", dir.display());
        let text = generated(n);
        let rationale = after(&text, &format!("id: s{mid}\n"), &format!("Step {mid} 😀"));
        let when = after(&text, &format!("id: s{}\n", mid + 7), "params.limit > 3");
        let capture_ref = after(&text, &format!("id: s{mid}\n"), &format!("<<c{}", mid - 1));
        let id = after(&text, &format!("- id: s{mid}\n"), &format!("- id: s{mid}"));
        let capture = after(&text, &format!("id: s{mid}\n"), &format!("capture_as: c{mid}"));
        let call = after(&text, &format!("- id: s{mid}\n"), &format!("call: tool.t{}", mid % 7));
        let case = |name: String, at: usize, typed: &'static str, whole: bool| Case {
            name,
            uri: uri.clone(),
            text: text.clone(),
            at,
            typed,
            whole,
            clean: true,
        };
        cases.push(case(format!("{label}_steps"), rationale, "x", false));
        cases.push(case(format!("{label}_steps_expr"), when, "5", false));
        cases.push(Case { clean: false, ..case(format!("{label}_steps_name"), capture_ref, "x", false) });
        cases.push(Case { clean: false, ..case(format!("{label}_steps_rename"), id, "x", false) });
        let rename_capture = case(format!("{label}_steps_rename_capture"), capture, "x", false);
        cases.push(Case { clean: false, ..rename_capture });
        cases.push(case(format!("{label}_steps_call"), call, "x", false));
        // A `foreach` added to the middle step (its capture becomes a list).
        let looped = after(&text, &format!("- id: s{mid}\n"), &format!("call: tool.t{}\n", mid % 7));
        let foreach: &'static str = Box::leak(format!("    foreach: c{}.items\n", mid - 1).into_boxed_str());
        cases.push(Case { clean: false, ..case(format!("{label}_steps_foreach"), looped, foreach, false) });
        if n == 1_000 {
            cases.push(case(format!("{label}_steps_whole_text"), rationale, "x", true));
        }
    }
    for name in ["review_v1", "release_notes", "ticket_grooming"] {
        let path = repo.join("workflows").join(format!("{name}.yaml"));
        let text = std::fs::read_to_string(&path).unwrap();
        let middle = text[..text.len() / 2].rfind('\n').map_or(0, |i| i + 1);
        let at = middle + text[middle..].find("<<").unwrap() + 2;
        let uri = format!("file://{}", path.display());
        cases.push(Case { name: name.into(), uri, text, at, typed: " ", whole: false, clean: true });
    }
    let mut group = c.benchmark_group("edit_to_diagnostics");
    for case in &cases {
        let Case { name, uri, text, at, typed, whole, clean } = case;
        let mut server = Server::start();
        assert_eq!(server.open(uri, text), 0, "{name} checks clean");
        let mut typed_text = text.clone();
        typed_text.insert_str(*at, typed);
        let typed_diagnostics = server.edit(uri, None, &typed_text);
        assert_eq!(
            typed_diagnostics == 0,
            *clean,
            "{name}: {typed_diagnostics} diagnostic(s) when typed into"
        );
        assert_eq!(server.edit(uri, None, text), 0);
        let start = position(text, *at);
        let end = position(&typed_text, at + typed.len());
        let insert = json!({ "start": start, "end": start });
        let delete = json!({ "start": start, "end": end });
        let mut flip = false;
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                flip = !flip;
                match (whole, flip) {
                    (true, true) => server.edit(uri, None, &typed_text),
                    (true, false) => server.edit(uri, None, text),
                    (false, true) => server.edit(uri, Some(insert.clone()), typed),
                    (false, false) => server.edit(uri, Some(delete.clone()), ""),
                }
            })
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(dir);
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
