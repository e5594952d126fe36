//! `tools.lock.json`: the tools of the project's MCP servers (`[servers.*]`),
//! as `savant-think tools sync` listed them — per server its name and
//! version, per tool its name, title, description, input and output schemas
//! and annotations. Written sorted (servers, tools, every object's keys) so
//! that it diffs well in review; read back here, from text (no I/O), into
//! the checker's contracts, with a diagnostic (`INVALID_TOOL_LOCK`) at the
//! place in the lock file for anything that is not a lock.

use crate::check::contract::{Contracts, Hints, ToolContract};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::{Limits, SourceFile, Span};
use crate::syntax::node::Node;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The lock's file name, at the project root.
pub const FILE_NAME: &str = "tools.lock.json";

/// The lock format this build writes and reads.
pub const FORMAT: u64 = 1;

/// A lock as the checker reads it: the lock, and its tools as contracts
/// (built once, when the lock is read).
#[derive(Clone, Debug, Default)]
pub struct LockTable {
    pub lock: ToolLock,
    pub contracts: Contracts,
}

impl From<ToolLock> for LockTable {
    fn from(lock: ToolLock) -> LockTable {
        let contracts = lock.contracts();
        LockTable { lock, contracts }
    }
}

/// Every locked server by its `[servers.NAME]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolLock {
    pub servers: BTreeMap<String, LockedServer>,
}

/// One server: what it said it is (`initialize`) and its tools.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockedServer {
    pub name: String,
    pub version: String,
    /// Sorted by name.
    pub tools: Vec<LockedTool>,
}

/// One tool as `tools/list` gave it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockedTool {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Hints,
}

impl ToolLock {
    /// The lock as JSON: servers and tools sorted by name, every object's
    /// keys sorted.
    pub fn to_json(&self) -> Value {
        let servers: Map<String, Value> = self
            .servers
            .iter()
            .map(|(key, s)| {
                let mut tools: Vec<&LockedTool> = s.tools.iter().collect();
                tools.sort_by(|a, b| a.name.cmp(&b.name));
                let tools: Vec<Value> = tools.into_iter().map(LockedTool::to_json).collect();
                (key.clone(), json!({"server": {"name": s.name, "version": s.version}, "tools": tools}))
            })
            .collect();
        sorted(json!({"format": FORMAT, "servers": servers}))
    }

    /// The file's text: pretty JSON, sorted, ending in a newline.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a lock file's text. Never fails: what is not a lock is a
    /// diagnostic at its place in `src` (the lock file), and is left out.
    pub fn parse(src: &SourceFile) -> (ToolLock, Vec<Diagnostic>) {
        // The common case, a lock as `tools sync` wrote it, is read as JSON;
        // anything wrong is read again for its place in the file.
        if let Some(lock) = serde_json::from_str::<Value>(&src.text).ok().as_ref().and_then(from_json) {
            return (lock, Vec::new());
        }
        let parsed = crate::syntax::yaml::parse(src, &Limits::default());
        let mut out: Vec<Diagnostic> = parsed
            .diagnostics
            .into_iter()
            .map(|d| Diagnostic::new(Code::InvalidToolLock, d.span, format!("{FILE_NAME}: {}", d.message)))
            .collect();
        let mut lock = ToolLock::default();
        let Some(root) = parsed.root else {
            if out.is_empty() {
                out.push(bad(Span::point(0), "the file is empty".into()));
            }
            return (lock, out);
        };
        let Some(servers) = root.get("servers") else {
            out.push(bad(root.span, "expected `{\"format\": 1, \"servers\": {…}}`".into()));
            return (lock, out);
        };
        match root.get("format").map(Node::to_json) {
            Some(Value::Number(n)) if n.as_u64() == Some(FORMAT) => {}
            _ => {
                let at = root.get("format").map_or(root.span, |n| n.span);
                out.push(bad(at, format!("`format` must be {FORMAT} (this build's lock format)")));
            }
        }
        let Some(entries) = servers.as_map() else {
            out.push(bad(servers.span, "`servers` must be an object of servers by name".into()));
            return (lock, out);
        };
        for entry in entries {
            let Some(key) = entry.key.as_str() else { continue };
            if let Some(server) = read_server(key, &entry.value, &mut out) {
                lock.servers.insert(key.to_owned(), server);
            }
        }
        (lock, out)
    }

    /// The locked tools as contracts, named `SERVER.tool` (found as
    /// `SERVER_tool` too, as the multiplexer routes them).
    pub fn contracts(&self) -> Contracts {
        let mut table = Contracts::default();
        for (server, s) in &self.servers {
            for t in &s.tools {
                let contract = ToolContract {
                    name: format!("{server}.{}", t.name),
                    title: t.title.clone(),
                    description: t.description.clone(),
                    input: Some(t.input_schema.clone()),
                    output: t.output_schema.clone(),
                    hints: t.annotations,
                    server: Some(server.clone()),
                    // A field the output schema does not list is read as a
                    // typo, as an input key is (`additionalProperties`
                    // opens it).
                    closed_output: true,
                    types_capture: true,
                    sub_workflow: false,
                };
                table.insert(contract, true);
            }
        }
        table
    }

    /// Whether `call` names a tool of a locked server (`SERVER.x`, `SERVER_x`):
    /// the server's name, when it does.
    pub fn server_of<'a>(&'a self, call: &str) -> Option<&'a str> {
        self.servers
            .keys()
            .map(String::as_str)
            .find(|s| call.strip_prefix(s).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('_')))
    }
}

impl LockedTool {
    fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("name".into(), json!(self.name));
        if let Some(t) = &self.title {
            o.insert("title".into(), json!(t));
        }
        if let Some(d) = &self.description {
            o.insert("description".into(), json!(d));
        }
        o.insert("inputSchema".into(), self.input_schema.clone());
        if let Some(s) = &self.output_schema {
            o.insert("outputSchema".into(), s.clone());
        }
        let a = &self.annotations;
        let mut hints = Map::new();
        for (k, v) in [
            ("readOnlyHint", a.read_only),
            ("destructiveHint", a.destructive),
            ("idempotentHint", a.idempotent),
            ("openWorldHint", a.open_world),
        ] {
            if let Some(v) = v {
                hints.insert(k.into(), json!(v));
            }
        }
        if !hints.is_empty() {
            o.insert("annotations".into(), Value::Object(hints));
        }
        Value::Object(o)
    }
}

/// `value` with every object's keys sorted (a server's own key order is
/// not kept: the lock must not change when only that order does).
pub fn sorted(value: Value) -> Value {
    match value {
        Value::Object(o) => {
            let mut entries: Vec<(String, Value)> = o.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// A lock from its JSON, or `None` at the first thing that is not right
/// (the caller then reads the file again with positions, to say where).
fn from_json(v: &Value) -> Option<ToolLock> {
    if v.get("format")?.as_u64()? != FORMAT {
        return None;
    }
    let mut lock = ToolLock::default();
    for (key, s) in v.get("servers")?.as_object()? {
        let text = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
        let info = s.get("server").cloned().unwrap_or(Value::Null);
        let mut server = LockedServer {
            name: text(&info, "name").unwrap_or_default(),
            version: text(&info, "version").unwrap_or_default(),
            tools: Vec::new(),
        };
        for t in s.get("tools")?.as_array()? {
            let schema = |k: &str| -> Option<Option<Value>> {
                match t.get(k) {
                    None => Some(None),
                    Some(s @ (Value::Object(_) | Value::Bool(_))) if jsonschema::validator_for(s).is_ok() => {
                        Some(Some(s.clone()))
                    }
                    Some(_) => None,
                }
            };
            let a = t.get("annotations").cloned().unwrap_or(Value::Null);
            let hint = |k: &str| a.get(k).and_then(Value::as_bool);
            server.tools.push(LockedTool {
                name: text(t, "name")?,
                title: text(t, "title"),
                description: text(t, "description"),
                input_schema: schema("inputSchema")?.unwrap_or_else(|| json!({"type": "object"})),
                output_schema: schema("outputSchema")?,
                annotations: Hints {
                    read_only: hint("readOnlyHint"),
                    destructive: hint("destructiveHint"),
                    idempotent: hint("idempotentHint"),
                    open_world: hint("openWorldHint"),
                },
            });
        }
        lock.servers.insert(key.clone(), server);
    }
    Some(lock)
}

fn bad(span: Span, message: String) -> Diagnostic {
    Diagnostic::new(Code::InvalidToolLock, span, format!("{FILE_NAME}: {message}"))
        .with_help("run `savant-think tools sync` to write it again from the servers")
}

fn read_server(key: &str, node: &Node, out: &mut Vec<Diagnostic>) -> Option<LockedServer> {
    let Some(tools) = node.get("tools").and_then(Node::as_seq) else {
        out.push(bad(node.span, format!("server `{key}` needs `tools`, a list")));
        return None;
    };
    let info = node.get("server");
    let field = |k: &str| info.and_then(|i| i.get(k)).and_then(Node::as_str).unwrap_or_default().to_owned();
    let mut server = LockedServer { name: field("name"), version: field("version"), tools: Vec::new() };
    for t in tools {
        if let Some(tool) = read_tool(key, t, out) {
            server.tools.push(tool);
        }
    }
    Some(server)
}

fn read_tool(server: &str, node: &Node, out: &mut Vec<Diagnostic>) -> Option<LockedTool> {
    let Some(name) = node.get("name").and_then(Node::as_str) else {
        out.push(bad(node.span, format!("a tool of server `{server}` needs a `name`")));
        return None;
    };
    let schema = |key: &str, out: &mut Vec<Diagnostic>| -> Option<Value> {
        let n = node.get(key)?;
        let v = n.to_json();
        if !matches!(v, Value::Object(_) | Value::Bool(_)) {
            out.push(bad(
                n.span,
                format!("server `{server}`: the `{key}` of `{name}` must be a JSON Schema (an object)"),
            ));
            return None;
        }
        // Said at the value at fault, as an inline schema's is.
        if let Err(faults) = crate::ir::lower::schema_faults(n, &v) {
            for f in faults {
                let message = match f.type_name {
                    true => format!("server `{server}`: the `{key}` of `{name}`: {}", f.message),
                    false => format!("server `{server}`: the `{key}` of `{name}` {}", f.message),
                };
                out.push(bad(f.span, message).with_help_opt(f.help));
            }
            return None;
        }
        Some(v)
    };
    let input_schema = schema("inputSchema", out).unwrap_or_else(|| json!({"type": "object"}));
    let output_schema = schema("outputSchema", out);
    let text = |k: &str| node.get(k).and_then(Node::as_str).map(str::to_owned);
    let a = node.get("annotations");
    let hint = |k: &str| a.and_then(|a| a.get(k)).and_then(|n| n.to_json().as_bool());
    Some(LockedTool {
        name: name.to_owned(),
        title: text("title"),
        description: text("description"),
        input_schema,
        output_schema,
        annotations: Hints {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            idempotent: hint("idempotentHint"),
            open_world: hint("openWorldHint"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock() -> ToolLock {
        let tool = LockedTool {
            name: "get_mr".into(),
            description: Some("Get a merge request".into()),
            input_schema: json!({"type": "object", "required": ["iid"], "properties": {"iid": {"type": "integer"}}}),
            output_schema: Some(json!({"type": "object", "properties": {"title": {"type": "string"}}})),
            annotations: Hints { read_only: Some(true), ..Hints::default() },
            ..LockedTool::default()
        };
        let server = LockedServer { name: "gitlab-mcp".into(), version: "1.2.0".into(), tools: vec![tool] };
        ToolLock { servers: BTreeMap::from([("gitlab".to_owned(), server)]) }
    }

    #[test]
    fn a_lock_round_trips_through_its_text() {
        let text = lock().render();
        let (read, diags) = ToolLock::parse(&SourceFile::new(FILE_NAME, text.clone()));
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(read, lock());
        assert_eq!(read.render(), text, "rendering is stable");
        let c = read.contracts();
        assert!(c.get("gitlab.get_mr").is_some() && c.get("gitlab_get_mr").is_some());
        assert_eq!(read.server_of("gitlab.x"), Some("gitlab"));
        assert_eq!(read.server_of("gitlabx.y"), None);
    }

    #[test]
    fn every_cut_of_a_lock_reads_without_panicking() {
        let text = lock().render();
        for end in (0..text.len()).filter(|&e| text.is_char_boundary(e)) {
            let cut = &text[..end];
            let (_, diags) = ToolLock::parse(&SourceFile::new(FILE_NAME, cut));
            let whole = cut.trim_end() == text.trim_end();
            assert_eq!(diags.is_empty(), whole, "a lock cut at byte {end}");
            assert!(diags.iter().all(|d| d.code == Code::InvalidToolLock && d.span.end as usize <= end));
        }
    }

    #[test]
    fn what_is_not_a_lock_is_a_diagnostic_at_its_place() {
        let text =
            "{\"format\": 1, \"servers\": {\"s\": {\"tools\": [{\"name\": \"t\", \"outputSchema\": 3}]}}}";
        let src = SourceFile::new(FILE_NAME, text);
        let (lock, diags) = ToolLock::parse(&src);
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(&text[diags[0].span.range()], "3");
        assert_eq!(lock.servers["s"].tools[0].output_schema, None);
        // A bad schema is said at the value at fault, with a did-you-mean.
        let text = "{\"format\": 1, \"servers\": {\"s\": {\"tools\": [{\"name\": \"t\", \"outputSchema\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"strnig\"}}}}]}}}";
        let (_, diags) = ToolLock::parse(&SourceFile::new(FILE_NAME, text));
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(&text[diags[0].span.range()], "\"strnig\"");
        assert!(diags[0].message.ends_with("`strnig` is not a JSON Schema type"), "{}", diags[0].message);
        assert_eq!(diags[0].help.as_deref(), Some("did you mean `string`?"));
        for broken in ["", "{", "[]", "{\"servers\": 3}", "{\"format\": 2, \"servers\": {}}"] {
            let (_, diags) = ToolLock::parse(&SourceFile::new(FILE_NAME, broken));
            assert!(!diags.is_empty(), "{broken:?}");
            assert!(diags.iter().all(|d| d.code == Code::InvalidToolLock));
        }
    }
}
