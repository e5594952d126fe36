//! `savant-think lsp` spoken to over stdio, as an editor does: the real
//! binary, Content-Length framed JSON-RPC, one server per test.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// Only a guard against a hung server, never a speed assertion.
const HANG: Duration = Duration::from_secs(60);

pub(crate) struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    /// Notifications and server requests that arrived while waiting for something else.
    queue: Vec<Value>,
    next_id: i64,
}

impl Client {
    pub(crate) fn start(cwd: &Path, init_caps: Value) -> (Client, Value) {
        Client::start_with(cwd, init_caps, None)
    }

    /// [`Client::start`] with `SAVANT_PATH` set to `savant_path`.
    pub(crate) fn start_with(cwd: &Path, init_caps: Value, savant_path: Option<&Path>) -> (Client, Value) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_savant-think"));
        command.arg("lsp").current_dir(cwd).env_remove("SAVANT_PATH");
        if let Some(p) = savant_path {
            command.env("SAVANT_PATH", p);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn savant-think lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.expect("Content-Length header")];
                r.read_exact(&mut body).unwrap();
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut c = Client { child, stdin, rx, queue: Vec::new(), next_id: 0 };
        let root = url(cwd);
        let init =
            c.request("initialize", json!({ "processId": null, "rootUri": root, "capabilities": init_caps }));
        c.notify("initialized", json!({}));
        (c, init)
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    fn recv(&mut self) -> Value {
        self.rx.recv_timeout(HANG).expect("the server answered")
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let m = self.recv();
            if m["id"] == json!(id) && m.get("method").is_none() {
                assert!(m.get("error").is_none(), "{method} failed: {m}");
                return m["result"].clone();
            }
            self.queue.push(m);
        }
    }

    /// The next notification `method` (queued ones first).
    pub(crate) fn notification(&mut self, method: &str) -> Value {
        if let Some(i) = self.queue.iter().position(|m| m["method"] == method) {
            return self.queue.remove(i)["params"].clone();
        }
        loop {
            let m = self.recv();
            if m["method"] == method {
                return m["params"].clone();
            }
            self.queue.push(m);
        }
    }

    pub(crate) fn open(&mut self, path: &Path, text: &str) -> Value {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": url(path), "languageId": "yaml", "version": 1, "text": text } }),
        );
        self.notification("textDocument/publishDiagnostics")
    }

    fn at(&mut self, method: &str, path: &Path, line: u32, character: u32) -> Value {
        let mut params = json!({ "textDocument": { "uri": url(path) }, "position": { "line": line, "character": character } });
        if method == "textDocument/references" {
            params["context"] = json!({ "includeDeclaration": true });
        }
        self.request(method, params)
    }

    pub(crate) fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the server exits cleanly after shutdown: {status}");
    }
}

pub(crate) fn url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// A scratch project: `workflows/` and `schemas/` under a fresh directory.
pub(crate) fn project(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("savant-lsp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::create_dir_all(dir.join("schemas")).unwrap();
    std::fs::canonicalize(dir).unwrap()
}

pub(crate) const BROKEN: &str = "id: demo
params:
  topic: { type: string, description: What to research. }
steps:
  - id: fetch
    call: t.get
    capture_as: mr_data
    input_template: { q: \"<<params.topic>>\" }
    rationale: Need the data first.
  - id: use
    call: t.use
    deps: [fetchh]
    rationale: \"😀 é see <<mr_dta.x>> and <<lenn(mr_data)>>\"
";

/// Line and character (in `enc` units) of a 1-based line and character column.
fn lsp_pos(text: &str, line: u64, column: u64, utf16: bool) -> (u64, u64) {
    let l = text.split('\n').nth(line as usize - 1).unwrap();
    let units: usize =
        l.chars().take(column as usize - 1).map(|c| if utf16 { c.len_utf16() } else { c.len_utf8() }).sum();
    (line - 1, units as u64)
}

pub(crate) fn assert_same_as_check(dir: &Path, file: &Path, text: &str, published: &Value, utf16: bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_savant-think"))
        .args(["check", "--format", "json"])
        .arg(file)
        .current_dir(dir)
        .env_remove("SAVANT_PATH")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected = report["diagnostics"].as_array().unwrap();
    let got = published["diagnostics"].as_array().unwrap();
    assert_eq!(got.len(), expected.len(), "lsp: {got:#?}\ncheck: {expected:#?}");
    assert!(!expected.is_empty());
    for (g, e) in got.iter().zip(expected) {
        assert_eq!(g["code"], e["code"]);
        assert!(g["message"].as_str().unwrap().starts_with(e["message"].as_str().unwrap()));
        if let Some(help) = e["help"].as_str() {
            assert!(g["message"].as_str().unwrap().contains(help), "{g}");
        }
        let (l, c) = lsp_pos(text, e["line"].as_u64().unwrap(), e["column"].as_u64().unwrap(), utf16);
        let (el, ec) =
            lsp_pos(text, e["end_line"].as_u64().unwrap(), e["end_column"].as_u64().unwrap(), utf16);
        assert_eq!(g["range"]["start"], json!({ "line": l, "character": c }), "{g}\n{e}");
        assert_eq!(g["range"]["end"], json!({ "line": el, "character": ec }), "{g}\n{e}");
        let severity = if e["severity"] == "error" { 1 } else { 2 };
        assert_eq!(g["severity"], severity);
        // Labels are related information, at the same characters.
        let related = g["relatedInformation"].as_array().cloned().unwrap_or_default();
        let labels = e["labels"].as_array().unwrap();
        assert_eq!(related.len(), labels.len(), "{g}\n{e}");
        for (r, l) in related.iter().zip(labels) {
            assert_eq!(r["message"], l["message"]);
            let (l0, c0) = lsp_pos(text, l["line"].as_u64().unwrap(), l["column"].as_u64().unwrap(), utf16);
            assert_eq!(r["location"]["range"]["start"], json!({ "line": l0, "character": c0 }), "{r}\n{l}");
        }
    }
}

#[test]
fn diagnostics_match_check_at_the_same_utf16_characters() {
    let dir = project("utf16");
    let file = dir.join("workflows/demo.yaml");
    std::fs::write(&file, BROKEN).unwrap();
    let (c, init) = Client::start(&dir, json!({}));
    let mut c = c;
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    let published = c.open(&file, BROKEN);
    assert_same_as_check(&dir, &file, BROKEN, &published, true);
    // The emoji line: `mr_dta` starts after "😀 é see <<" — the emoji is two UTF-16 units.
    let unresolved =
        published["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "UNRESOLVED_VAR").unwrap();
    let col = "    rationale: \"".encode_utf16().count() + "😀 é see <<".encode_utf16().count();
    assert_eq!(unresolved["range"]["start"], json!({ "line": 12, "character": col }));
    c.shutdown();
}

#[test]
fn labels_are_related_information() {
    let dir = project("labels");
    let file = dir.join("workflows/cycle.yaml");
    let text = "steps:\n  - id: a # 😀\n    call: t\n    deps: [b]\n  - id: b\n    call: t\n    deps: [a]\n";
    std::fs::write(&file, text).unwrap();
    let (mut c, _) = Client::start(&dir, json!({}));
    let published = c.open(&file, text);
    assert!(published["diagnostics"][0]["relatedInformation"].is_array(), "{published}");
    assert_same_as_check(&dir, &file, text, &published, true);
    c.shutdown();
}

#[test]
fn utf8_positions_when_the_client_offers_them() {
    let dir = project("utf8");
    let file = dir.join("workflows/demo.yaml");
    std::fs::write(&file, BROKEN).unwrap();
    let (mut c, init) =
        Client::start(&dir, json!({ "general": { "positionEncodings": ["utf-8", "utf-16"] } }));
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    let published = c.open(&file, BROKEN);
    assert_same_as_check(&dir, &file, BROKEN, &published, false);
    c.shutdown();
}

#[test]
fn a_burst_of_edits_settles_to_one_publish_of_the_last_text() {
    let dir = project("debounce");
    let file = dir.join("workflows/demo.yaml");
    let (mut c, _) = Client::start(&dir, json!({}));
    c.open(&file, BROKEN);
    let fixed = BROKEN.replace("fetchh", "fetch").replace("mr_dta", "mr_data").replace("lenn", "len");
    // One write: the burst reaches the server at once, as fast typing does.
    let mut burst = String::new();
    for v in 2..=20 {
        let text = if v == 20 { fixed.clone() } else { format!("{BROKEN}# edit {v}\n") };
        let body = json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": { "uri": url(&file), "version": v }, "contentChanges": [{ "text": text }] } })
        .to_string();
        burst.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    }
    c.stdin.write_all(burst.as_bytes()).unwrap();
    c.stdin.flush().unwrap();
    // Publishes come only after the edits pause, so the burst settles to one
    // publish of the last version (a scheduler stall longer than the
    // debounce could split it; it never publishes each edit).
    let mut publishes = 0;
    let last = loop {
        let p = c.notification("textDocument/publishDiagnostics");
        publishes += 1;
        if p["version"] == 20 {
            break p;
        }
    };
    assert_eq!(last["diagnostics"], json!([]), "the last text is clean: {last}");
    assert!(publishes < 19, "{publishes} publishes for 19 edits");
    // Nothing else is published for the burst: the next message is this request's answer.
    c.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": url(&file) } }));
    assert!(c.queue.iter().all(|m| m["method"] != "textDocument/publishDiagnostics"), "{:?}", c.queue);
    c.shutdown();
}

#[test]
fn hover_definition_completion_symbols_and_quick_fixes() {
    let dir = project("nav");
    let file = dir.join("workflows/demo.yaml");
    let (mut c, _) = Client::start(&dir, json!({}));
    c.open(&file, BROKEN);

    // Hover on a deps entry that exists: take a clean text.
    let good = BROKEN.replace("fetchh", "fetch");
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": url(&file), "version": 2 }, "contentChanges": [{ "text": good }] }),
    );
    c.notification("textDocument/publishDiagnostics");
    let deps_line = 11;
    let h = c.at("textDocument/hover", &file, deps_line, 12);
    let hover = h["contents"]["value"].as_str().unwrap();
    assert!(hover.contains("t.get") && hover.contains("Need the data first."), "{hover}");
    // Definition: deps entry → the step's id.
    let d = c.at("textDocument/definition", &file, deps_line, 12);
    assert_eq!(d["range"]["start"], json!({ "line": 4, "character": 8 }));
    // Hover on a param read: its type and description; definition → the param.
    let topic = good.lines().nth(7).unwrap().find("topic").unwrap() as u32 + 1;
    let h = c.at("textDocument/hover", &file, 7, topic);
    let hover = h["contents"]["value"].as_str().unwrap();
    assert!(hover.contains("string") && hover.contains("What to research."), "{hover}");
    let d = c.at("textDocument/definition", &file, 7, topic);
    assert_eq!(d["range"]["start"], json!({ "line": 2, "character": 2 }));
    // Hover on a capture read inside `<<…>>`: capture of step fetch; definition → capture_as.
    let line = good.lines().nth(12).unwrap();
    let at = line[..line.find("mr_data").unwrap()].encode_utf16().count() as u32 + 1;
    let h = c.at("textDocument/hover", &file, 12, at);
    assert!(h["contents"]["value"].as_str().unwrap().contains("capture of step `fetch`"), "{h}");
    let d = c.at("textDocument/definition", &file, 12, at);
    assert_eq!(d["range"]["start"], json!({ "line": 6, "character": 16 }));
    // Hover on a key: its description from the format's key table.
    let h = c.at("textDocument/hover", &file, 8, 6);
    assert!(h["contents"]["value"].as_str().unwrap().contains("Why the step exists"), "{h}");

    // Document symbols: the steps.
    let s = c.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": url(&file) } }));
    let names: Vec<&str> = s.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["fetch", "use"]);

    // Completion in deps: step ids; inside `<<`: names in scope and functions; keys.
    let with_deps = good.replace("deps: [fetch]", "deps: [f");
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": url(&file), "version": 3 }, "contentChanges": [{ "text": with_deps }] }),
    );
    let items = c.at("textDocument/completion", &file, 11, 12);
    let names = labels(&items);
    // Not `use` itself: a step cannot depend on itself.
    assert!(names.contains(&"fetch".to_owned()) && !names.contains(&"use".to_owned()), "{names:?}");
    let items = c.at("textDocument/completion", &file, 12, at);
    let names = labels(&items);
    for want in ["mr_data", "params", "len", "starts_with"] {
        assert!(names.contains(&want.to_owned()), "{want} in {names:?}");
    }
    let items =
        c.at("textDocument/completion", &file, 7, "    input_template: { q: \"<<params.".len() as u32);
    assert_eq!(labels(&items), ["topic"]);
    let items = c.at("textDocument/completion", &file, 9, 4);
    assert!(labels(&items).contains(&"capture_as".to_owned()));

    // Quick fixes: every did-you-mean, as an edit.
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": url(&file), "version": 4 }, "contentChanges": [{ "text": BROKEN }] }),
    );
    let p = c.notification("textDocument/publishDiagnostics");
    let mut fixed: Vec<String> = Vec::new();
    for d in p["diagnostics"].as_array().unwrap() {
        let actions = c.request(
            "textDocument/codeAction",
            json!({ "textDocument": { "uri": url(&file) }, "range": d["range"], "context": { "diagnostics": [d] } }),
        );
        for a in actions.as_array().unwrap() {
            assert_eq!(a["kind"], "quickfix");
            for e in a["edit"]["changes"][url(&file)].as_array().unwrap() {
                fixed.push(e["newText"].as_str().unwrap().to_owned());
            }
        }
    }
    fixed.sort();
    fixed.dedup();
    assert_eq!(fixed, ["fetch", "len", "mr_data"]);
    c.shutdown();
}

fn labels(items: &Value) -> Vec<String> {
    items.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn rename_and_references_cover_the_file() {
    let dir = project("rename");
    let file = dir.join("workflows/demo.yaml");
    let (mut c, _) = Client::start(&dir, json!({}));
    let good = BROKEN.replace("fetchh", "fetch").replace("mr_dta", "mr_data").replace("lenn", "len");
    c.open(&file, &good);
    let r = c.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": url(&file) }, "position": { "line": 6, "character": 18 }, "newName": "mr" }),
    );
    let edits = r["changes"][url(&file)].as_array().unwrap();
    assert_eq!(edits.len(), 3, "capture_as and two reads: {edits:?}");
    let r = c.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": url(&file) }, "position": { "line": 4, "character": 11 }, "newName": "get" }),
    );
    assert_eq!(r["changes"][url(&file)].as_array().unwrap().len(), 2, "the id and the deps entry");
    let refs = c.at("textDocument/references", &file, 2, 3);
    assert_eq!(refs.as_array().unwrap().len(), 2, "the param and its read: {refs}");
    let params = json!({ "textDocument": { "uri": url(&file) }, "position": { "line": 2, "character": 3 },
                         "context": { "includeDeclaration": false } });
    let refs = c.request("textDocument/references", params);
    assert_eq!(refs.as_array().unwrap().len(), 1, "only the read: {refs}");
    c.shutdown();
}

#[test]
fn a_changed_schema_rechecks_open_documents() {
    let dir = project("schemas");
    let file = dir.join("workflows/demo.yaml");
    let text = "steps:\n  - id: a\n    call: t\n    success_schema: ResultV1\n";
    let (mut c, _) = Client::start(&dir, json!({}));
    let p = c.open(&file, text);
    assert_eq!(p["diagnostics"][0]["code"], "UNKNOWN_SCHEMA", "{p}");
    let schema = dir.join("schemas/ResultV1.json");
    std::fs::write(&schema, r#"{"type": "object"}"#).unwrap();
    c.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": url(&schema), "type": 1 }] }));
    let p = c.notification("textDocument/publishDiagnostics");
    assert_eq!(p["diagnostics"], json!([]), "{p}");
    // And go to definition on the schema name opens the file.
    let d = c.at("textDocument/definition", &file, 3, 22);
    assert_eq!(d["uri"], url(&schema));
    c.shutdown();
}

/// The project's `[check]` settings hold in the editor as in `check`: its
/// suppressions, and its tool manifest (UNKNOWN_TOOL, and tool names with
/// their input keys offered in `call:`). A changed savant-think.toml is
/// picked up.
#[test]
fn project_settings_suppressions_and_tool_manifest() {
    let dir = project("settings");
    let file = dir.join("workflows/demo.yaml");
    std::fs::write(
        dir.join("tools.json"),
        r#"{"tools": [{"name": "gitlab.get_mr", "inputSchema": {"type": "object", "properties": {"iid": {"type": "integer"}}}}]}"#,
    )
    .unwrap();
    let text = "steps:\n  - id: a\n    call: gitlab.get_mrr\n  - id: b\n    call: prompt.say\n    input_template: { text: \"<<zzz_unknown>>\" }  # savant-think: ignore[UNRESOLVED_VAR]\n";
    std::fs::write(&file, text).unwrap();
    let (mut c, _) = Client::start(&dir, json!({}));
    // Without settings: no manifest, so no UNKNOWN_TOOL; the comment
    // suppresses the unknown name.
    let p = c.open(&file, text);
    let codes = |p: &Value| -> Vec<String> {
        p["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_owned()).collect()
    };
    assert!(codes(&p).is_empty(), "{p}");
    let toml = dir.join("savant-think.toml");
    std::fs::write(&toml, "[check]\ntools = \"tools.json\"\n").unwrap();
    c.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": url(&toml), "type": 1 }] }));
    let p = c.notification("textDocument/publishDiagnostics");
    assert_eq!(codes(&p), ["UNKNOWN_TOOL"], "{p}");
    assert!(p["diagnostics"][0]["message"].as_str().unwrap().contains("gitlab.get_mr"), "{p}");
    assert_same_as_check(&dir, &file, text, &p, true);
    // `call:` completes the manifest's tools (with their input keys) and the built-in ones.
    let items = c.at("textDocument/completion", &file, 2, 14);
    let items = items.as_array().cloned().or_else(|| items["items"].as_array().cloned()).unwrap();
    let get_mr = items.iter().find(|i| i["label"] == "gitlab.get_mr").expect("manifest tool offered");
    assert_eq!(get_mr["detail"], "tool(iid)");
    assert!(items.iter().any(|i| i["label"] == "prompt.say"), "{items:?}");
    c.shutdown();
}

/// `SAVANT_PATH` names the root for the language server as for `check`:
/// its `[check]` settings (here a tool manifest) apply to a file elsewhere.
#[test]
fn savant_path_picks_the_root_as_for_check() {
    let named = project("savant-path-root");
    std::fs::write(named.join("savant-think.toml"), "[check]\ntools = \"tools.json\"\n").unwrap();
    std::fs::write(named.join("tools.json"), r#"{"tools": [{"name": "gitlab.get_mr"}]}"#).unwrap();
    let dir = project("savant-path-file");
    let file = dir.join("workflows/demo.yaml");
    let text = "steps:\n  - id: a\n    call: gitlab.get_mrr\n";
    std::fs::write(&file, text).unwrap();
    let codes = |p: &Value| -> Vec<String> {
        p["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_owned()).collect()
    };
    let (mut c, _) = Client::start_with(&dir, json!({}), None);
    assert!(codes(&c.open(&file, text)).is_empty());
    c.shutdown();
    let (mut c, _) = Client::start_with(&dir, json!({}), Some(&named));
    assert_eq!(codes(&c.open(&file, text)), ["UNKNOWN_TOOL"]);
    c.shutdown();
    let check = Command::new(env!("CARGO_BIN_EXE_savant-think"))
        .args(["check", "--format", "concise"])
        .arg(&file)
        .current_dir(&dir)
        .env("SAVANT_PATH", &named)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&check.stdout).contains("UNKNOWN_TOOL"), "{check:?}");
}

/// A real editor: headless Neovim (Debian's `neovim`) attaches the server,
/// and the diagnostics and a hover it holds are read back. Skipped, with a
/// note, when `nvim` is not installed, unless `SAVANT_REQUIRE_NVIM=1`.
#[test]
fn neovim_shows_diagnostics_and_hover() {
    let has_nvim = Command::new("nvim").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_nvim {
        crate::support::skip::skip(
            "neovim_shows_diagnostics_and_hover",
            "nvim is not installed (apt-get install neovim)",
            Some("SAVANT_REQUIRE_NVIM"),
        );
        return;
    }
    let dir = project("nvim");
    let file = dir.join("workflows/demo.yaml");
    std::fs::write(&file, BROKEN).unwrap();
    let out = dir.join("nvim-out.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp_support/nvim.lua");
    // Hover `topic` in `<<params.topic>>` (line 7).
    let line = BROKEN.lines().nth(7).unwrap();
    let col = line[..line.find("topic").unwrap()].encode_utf16().count() + 1;
    let log = dir.join("nvim-stderr.log");
    let mut nvim = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .current_dir(&dir)
        .env("SAVANT_BIN", env!("CARGO_BIN_EXE_savant-think"))
        .env("SAVANT_FILE", &file)
        .env("SAVANT_OUT", &out)
        .env("SAVANT_HOVER_LINE", "7")
        .env("SAVANT_HOVER_COL", col.to_string())
        .env_remove("SAVANT_PATH")
        .stdin(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let status = nvim.wait().unwrap();
    assert!(status.success(), "{}", crate::support::peer::died("nvim", nvim.id(), status, &log));
    let got: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(got["error"], Value::Null, "{got}");
    // Neovim holds byte columns: the emoji line's error is at the byte of `mr_dta`.
    let diags = got["diagnostics"].as_array().unwrap();
    let codes: Vec<&str> = diags.iter().map(|d| d["code"].as_str().unwrap_or("")).collect();
    for want in ["UNKNOWN_DEP", "UNRESOLVED_VAR", "UNKNOWN_FUNCTION"] {
        assert!(codes.contains(&want), "{want} in {codes:?}");
    }
    let unresolved = diags.iter().find(|d| d["code"] == "UNRESOLVED_VAR").unwrap();
    let emoji_line = BROKEN.lines().nth(12).unwrap();
    assert_eq!(unresolved["lnum"], 12);
    assert_eq!(unresolved["col"], emoji_line.find("mr_dta").unwrap(), "{unresolved}");
    let hover = got["hover"].as_str().unwrap_or_default();
    assert!(hover.contains("What to research."), "{got}");
}

/// The bundled workflows: no diagnostics, every `deps` entry resolves to
/// its step's id and hovers with its call, every `<<name` hovers with a type,
/// and `<<mr.` completes the fields of the capture's schema.
#[test]
fn navigation_works_on_the_bundled_workflows() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut c, _) = Client::start(repo, json!({}));
    for name in ["review_v1", "release_notes", "ticket_grooming"] {
        let file = repo.join("workflows").join(format!("{name}.yaml"));
        let text = std::fs::read_to_string(&file).unwrap();
        let p = c.open(&file, &text);
        assert_eq!(p["diagnostics"], json!([]), "{name}");
        let lines: Vec<&str> = text.lines().collect();
        let mut checked = 0;
        for (n, line) in lines.iter().enumerate() {
            if let Some(list) = line.trim_start().strip_prefix("deps: [") {
                for dep in list.trim_end_matches(']').split(", ") {
                    let col = line.find(dep).unwrap() as u32;
                    let d = c.at("textDocument/definition", &file, n as u32, col + 1);
                    let target = d["range"]["start"]["line"].as_u64().unwrap() as usize;
                    assert_eq!(lines[target].trim(), format!("- id: {dep}"), "{name}:{n} {dep}");
                    let h = c.at("textDocument/hover", &file, n as u32, col + 1);
                    assert!(h["contents"]["value"].as_str().unwrap().contains("calls `"), "{h}");
                    checked += 1;
                }
            }
            let mut from = 0;
            while let Some(i) = line[from..].find("<<") {
                let col = line[..from + i + 2].encode_utf16().count() as u32;
                let h = c.at("textDocument/hover", &file, n as u32, col);
                assert!(
                    h["contents"]["value"].as_str().is_some_and(|v| v.contains('`')),
                    "{name}:{n}:{col} {h}"
                );
                from += i + 2;
                checked += 1;
            }
        }
        assert!(checked > 0, "{name}");
    }
    // Fields from the capture's JSON Schema (schemas/MergeRequestV1.json).
    let file = repo.join("workflows/review_v1.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let (n, line) = text.lines().enumerate().find(|(_, l)| l.contains("<<mr.source_branch")).unwrap();
    let col = line.find("<<mr.").unwrap() as u32 + 5;
    let names = labels(&c.at("textDocument/completion", &file, n as u32, col));
    assert!(
        names.contains(&"source_branch".to_owned()) && names.contains(&"changes".to_owned()),
        "{names:?}"
    );
    c.shutdown();
}

#[test]
fn a_test_file_gets_the_diagnostics_check_gives_it() {
    let dir = project("testfile");
    std::fs::write(dir.join("workflows/w.yaml"), "id: w\nsteps:\n  - id: fetch\n    call: api.fetch\n")
        .unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let file = dir.join("tests/w.test.yaml");
    let text =
        "workflow: w\ntests:\n  - name: a\n    mocks: {fetc: {result: {}}}\n    expect: {ran: [fetch]}\n";
    std::fs::write(&file, text).unwrap();
    let (mut c, _) = Client::start(&dir, json!({}));
    let published = c.open(&file, text);
    assert_eq!(published["diagnostics"][0]["code"], "TEST_UNKNOWN_STEP", "{published}");
    assert_same_as_check(&dir, &file, text, &published, true);
    c.shutdown();
}

#[test]
fn yaml_of_other_tools_gets_no_diagnostics_a_workflow_anywhere_does() {
    let dir = project("other-yaml");
    let (mut c, _) = Client::start(&dir, json!({}));
    for (name, text) in [
        (".pre-commit-config.yaml", "repos:\n  - repo: local\n    hooks: []\n"),
        (".github/workflows/ci.yml", "on: push\njobs:\n  t:\n    steps:\n      - run: x\n"),
    ] {
        let published = c.open(&dir.join(name), text);
        assert_eq!(published["diagnostics"], json!([]), "{name}: {published}");
    }
    // Outside workflows/, a file with top-level steps is a workflow; inside, any file is.
    let published = c.open(&dir.join("elsewhere.yaml"), "steps:\n  - {id: a, call: think, deps: [zz]}\n");
    assert_ne!(published["diagnostics"], json!([]), "{published}");
    let published = c.open(&dir.join("workflows/half.yaml"), "name: half\n");
    assert_ne!(published["diagnostics"], json!([]), "{published}");
    let published = c.open(&dir.join("half_elsewhere.yaml"), "id: half\n");
    assert_ne!(published["diagnostics"], json!([]), "an id is a workflow's: {published}");
    c.shutdown();
}
