//! Edit-to-diagnostics latency of `savant-think lsp`: a `didChange` with the
//! whole text in, the `publishDiagnostics` out, through the real server loop
//! over an in-memory connection (JSON-RPC, analysis, position conversion),
//! with the debounce set to zero so only the work is measured.
//!
//! Groups: `edit_to_diagnostics/1k_steps` (a generated 1,000-step workflow)
//! and one per bundled workflow. Run with `cargo bench --bench lsp`; figures in
//! docs/PERFORMANCE.md.

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

    fn edit(&mut self, uri: &str, text: &str) -> usize {
        self.version += 1;
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": self.version }, "contentChanges": [{ "text": text }] }),
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

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("savant-lsp-bench-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases: Vec<(String, String, String)> =
        vec![("1k_steps".into(), format!("file://{}/workflows/gen.yaml", dir.display()), generated(1_000))];
    for name in ["review_v1", "release_notes", "ticket_grooming"] {
        let path = repo.join("workflows").join(format!("{name}.yaml"));
        cases.push((
            name.into(),
            format!("file://{}", path.display()),
            std::fs::read_to_string(&path).unwrap(),
        ));
    }
    let mut group = c.benchmark_group("edit_to_diagnostics");
    for (name, uri, text) in &cases {
        let mut server = Server::start();
        assert_eq!(server.open(uri, text), 0, "{name} checks clean");
        // Alternate two texts so every edit is a real change.
        let edited = format!("{text}# edited\n");
        let mut flip = false;
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                flip = !flip;
                server.edit(uri, if flip { &edited } else { text })
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
