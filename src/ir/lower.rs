//! YAML tree → [`Workflow`]. Reports `YAML_SCHEMA_VIOLATION` for missing,
//! ill-typed and unknown keys and `EXPR_SYNTAX` for expressions that do not
//! parse; always returns as much of the workflow as it could read.

use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::{
    ExprSource, Param, RESERVED_NAMES, ScalarLoc, SchemaRef, Step, Str, TemplateString, TemplateValue, Type,
    Workflow,
};
use crate::source::{SourceFile, Span};
use crate::syntax::node::{Entry, Node, NodeKind, ScalarValue};
use crate::syntax::scalar::ScalarMap;
use crate::syntax::{expr::parse_expr, template::parse_template};
use std::sync::Arc;

/// The JSON shape a key's value takes: drives both the lowerer's reading and
/// the format's JSON Schema ([`crate::schema`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A string.
    String,
    /// Any scalar, read as text (`version: 1.0` reads "1.0").
    ScalarText,
    /// A list of strings (or null).
    StringList,
    /// An expression string (`when`, `foreach`).
    Expr,
    /// A string that may hold `<<expr>>` interpolations.
    Template,
    /// Any JSON-like value whose strings are templates.
    TemplateValue,
    /// A workflow id: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`.
    WorkflowId,
    /// A step id: no whitespace, `[` or `]`.
    StepId,
    /// A capture name or loop variable: an identifier that is not reserved.
    Identifier,
    /// `params`: name → JSON Schema.
    Params,
    /// `steps`: a non-empty list of steps.
    Steps,
    /// A schema name or an inline JSON Schema.
    SchemaRef,
    /// Seconds or a duration string.
    Duration,
    /// `{max: N}`.
    Retry,
    /// A whole number from 0 to 1000.
    Count,
}

/// One key of a mapping: its name, the shape of its value, what it means
/// (the hover text editors show) and whether it is required.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyDoc {
    pub name: &'static str,
    pub shape: Shape,
    pub required: bool,
    pub description: &'static str,
}

const fn key(name: &'static str, shape: Shape, description: &'static str) -> KeyDoc {
    KeyDoc { name, shape, required: false, description }
}

const fn required(name: &'static str, shape: Shape, description: &'static str) -> KeyDoc {
    KeyDoc { name, shape, required: true, description }
}

/// Every key a workflow may have. The lowerer reports any other key; the JSON
/// Schema of the format is generated from this table.
pub(crate) const WORKFLOW_KEYS: &[KeyDoc] = &[
    key(
        "id",
        Shape::WorkflowId,
        "The workflow's id (1–128 letters, digits, `_`, `.`, `-`). Default: the file stem.",
    ),
    key("name", Shape::ScalarText, "A human-readable name."),
    key("version", Shape::ScalarText, "The workflow's version, recorded in every run's state."),
    key("description", Shape::ScalarText, "What the workflow does."),
    key(
        "driver_version",
        Shape::ScalarText,
        "The driver prompt the agent follows (prompts/<driver_version>.md).",
    ),
    key("rules", Shape::StringList, "Rules the driver must follow, by name."),
    key(
        "params",
        Shape::Params,
        "Inputs of a run: name → JSON Schema. Read as `params.NAME` in expressions.",
    ),
    key("required", Shape::StringList, "The names of params a run must be given."),
    required("steps", Shape::Steps, "The steps, a non-empty list of `{id, call}` mappings."),
];

/// Every key a step may have.
pub(crate) const STEP_KEYS: &[KeyDoc] = &[
    required("id", Shape::StepId, "The step's unique id; other steps name it in `deps`."),
    required("call", Shape::String, "The tool or agent this step calls, e.g. `gitlab.get_merge_request`."),
    key(
        "deps",
        Shape::StringList,
        "Ids of steps that must finish before this one (reads of captures add edges too).",
    ),
    key("input_template", Shape::TemplateValue, "The call's input; strings may interpolate `<<expr>>`."),
    key("capture_as", Shape::Identifier, "The name later expressions read this step's result by."),
    key(
        "success_schema",
        Shape::SchemaRef,
        "A schema name (schemas/<Name>.json) or an inline JSON Schema the result must match.",
    ),
    key("when", Shape::Expr, "A bool expression: the step is skipped when it is false."),
    key("foreach", Shape::Expr, "An array expression: the step runs once per item."),
    key("as", Shape::Identifier, "The loop variable of `foreach` (default `item`)."),
    key("rationale", Shape::Template, "Why the step exists; may interpolate `<<expr>>`."),
    key("timeout", Shape::Duration, "Seconds (`30`) or a duration (`500ms`, `30s`, `5m`, `1h`)."),
    key("retry", Shape::Retry, "Retries on failure: `{max: N}` (0–1000)."),
    key("description", Shape::ScalarText, "What the step does."),
];

/// The keys of `retry`.
pub(crate) const RETRY_KEYS: &[KeyDoc] =
    &[key("max", Shape::Count, "The most retries after the first attempt (0–1000).")];

/// Keys of the original system's dialects and what they became.
const LEGACY_KEYS: &[(&str, &str)] = &[
    ("workflow", "id"),
    ("title", "name"),
    ("summary", "description"),
    ("tool", "call"),
    ("agent", "call"),
    ("with", "input_template"),
    ("applicable_when", "when"),
    ("desc", "description"),
    ("name", "id"),
];

/// Keys other tools use and what this language calls them.
const FOREIGN_KEYS: &[(&str, &str)] = &[
    ("args", "input_template"),
    ("arguments", "input_template"),
    ("input", "input_template"),
    ("inputs", "input_template"),
    ("depends_on", "deps"),
    ("needs", "deps"),
    ("if", "when"),
    ("for_each", "foreach"),
    ("uses", "call"),
    ("output", "capture_as"),
    ("register", "capture_as"),
    ("schema", "success_schema"),
    ("inputs", "params"),
    ("parameters", "params"),
    ("jobs", "steps"),
    ("tasks", "steps"),
];

/// The edit that renames the key `scalar` (at `span`) to `to`: the name
/// itself, inside its quotes when quoted; none when escapes make the text
/// differ from the value.
fn key_fix(span: Span, scalar: &crate::syntax::node::Scalar, to: &str) -> Option<crate::diagnostic::Fix> {
    use crate::syntax::node::ScalarStyle;
    let len = (span.end - span.start) as usize;
    let inner = match scalar.style {
        ScalarStyle::Plain if len == scalar.value.len() => span,
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted if len == scalar.value.len() + 2 => {
            Span { start: span.start + 1, end: span.end - 1 }
        }
        _ => return None,
    };
    Some(crate::diagnostic::Fix { span: inner, replacement: to.to_owned() })
}

/// Lowers a parsed file. `default_id` (the file stem) is the id when the file has none.
///
/// Takes the tree: each step's subtree is dropped as soon as the step is
/// lowered, so the tree and the IR are not both whole in memory at once.
pub fn lower(src: &SourceFile, root: Node, default_id: &str) -> (Workflow, Vec<Diagnostic>) {
    let mut cx = Lower {
        scalars: ScalarMap::new(&src.text),
        diags: Vec::new(),
        expr_bytes: 0,
        expr_budget: expr_budget(src.text.len()),
        inline_schemas: Default::default(),
    };
    let mut wf = cx.workflow(root, default_id);
    cx.diags.shrink_to_fit();
    wf.has_expr_errors = cx.diags.iter().any(|d| d.code == Code::ExprSyntax);
    (wf, cx.diags)
}

struct Lower<'a> {
    /// Maps spans inside scalars to the file (for `EXPR_SYNTAX`).
    scalars: ScalarMap<'a>,
    diags: Vec<Diagnostic>,
    /// Bytes of expression text parsed so far (see [`expr_budget`]).
    expr_bytes: usize,
    /// The most expression text this file may hold.
    expr_budget: usize,
    /// Inline schemas already read, by JSON text: one shared value each,
    /// and whether it compiled without error.
    inline_schemas: std::collections::HashMap<String, (Arc<serde_json::Value>, bool)>,
}

/// `text` is one `<<expr>>` and nothing else (but blanks): the offset of
/// `<<` and the text between the delimiters.
fn wrapped_in_template(text: &str) -> Option<(usize, &str)> {
    let trimmed = text.trim();
    let inner = trimmed.strip_prefix("<<")?.strip_suffix(">>")?;
    (!inner.contains("<<") && !inner.contains(">>") && !inner.trim().is_empty())
        .then(|| (text.len() - text.trim_start().len(), inner))
}

/// The bytes between each `<<` and its `>>` (to the end when unclosed): the
/// part of a template that is parsed as expressions.
fn interpolation_bytes(text: &str) -> usize {
    let mut n = 0;
    let mut rest = text;
    while let Some(open) = rest.find("<<") {
        let after = &rest[open + 2..];
        match after.find(">>") {
            Some(close) => {
                n += close;
                rest = &after[close + 2..];
            }
            None => return n + after.len(),
        }
    }
    n
}

/// The most expression text (`when:`, `foreach:` and templates with `<<…>>`)
/// a file may hold: 1 MiB, or a quarter of the file when that is more. A
/// parsed expression takes up to ~50× its text in memory, so this bounds a
/// file's checking memory: under the default 8 MiB file cap it is 1 MiB
/// whatever the file; only a file larger than 4 MiB, allowed by a raised
/// cap (`--max-file-size`), gets more, in proportion to its size. Real
/// workflows hold a few KB; generated ones about a sixth of their text.
pub const MAX_FILE_EXPR_BYTES: usize = 1024 * 1024;

/// The expression budget of a file of `file_bytes` bytes (see [`MAX_FILE_EXPR_BYTES`]).
pub fn expr_budget(file_bytes: usize) -> usize {
    MAX_FILE_EXPR_BYTES.max(file_bytes / 4)
}

impl Lower<'_> {
    fn violation(&mut self, span: Span, message: impl Into<String>, help: Option<String>) {
        self.diags.push(Diagnostic::new(Code::YamlSchemaViolation, span, message).with_help_opt(help));
    }

    /// Reports unknown keys of a mapping, with a did-you-mean.
    fn check_keys(&mut self, entries: &[Entry], table: &[KeyDoc], what: &str) {
        for e in entries {
            let Some(key) = e.key.as_scalar() else {
                self.violation(e.key.span, format!("{what} keys must be strings"), None);
                continue;
            };
            let k = key.value.as_str();
            if table.iter().any(|d| d.name == k) {
                continue;
            }
            let known: Vec<&str> = table.iter().map(|d| d.name).collect();
            let legacy =
                LEGACY_KEYS.iter().find(|(old, new)| *old == k && known.contains(new)).map(|(_, new)| *new);
            let foreign =
                FOREIGN_KEYS.iter().find(|(old, new)| *old == k && known.contains(new)).map(|(_, new)| *new);
            let (help, replacement) = if let Some(new) = legacy {
                let help = format!(
                    "`{k}` is the original system's key: this language calls it `{new}` (`savant-think migrate` rewrites it)"
                );
                (Some(help), Some(new))
            } else if let Some(new) = foreign {
                (Some(format!("this language calls it `{new}`")), Some(new))
            } else if let Some(help) = suggest(k, known.iter().copied()) {
                let to = crate::diagnostic::suggestion(&help);
                (Some(help.clone()), to.and_then(|t| known.iter().copied().find(|n| *n == t)))
            } else {
                (Some(format!("{what} keys are: {}", known.join(", "))), None)
            };
            let mut d =
                Diagnostic::new(Code::YamlSchemaViolation, e.key.span, format!("unknown {what} key `{k}`"))
                    .with_help_opt(help);
            // The edit renames the key inside its quotes, if any.
            d.fix = replacement.and_then(|r| key_fix(e.key.span, key, r));
            // A key already present would be a duplicate after the rename.
            if replacement
                .is_some_and(|r| entries.iter().any(|o| o.key.as_scalar().is_some_and(|s| s.value == r)))
            {
                d.fix = None;
            }
            self.diags.push(d);
        }
    }

    /// Whether an unknown key of `entries` is a misspelling of `key` (already
    /// reported with its did-you-mean): then `key` missing is not reported
    /// again. One mistake, one diagnostic.
    fn misspelled(entries: &[Entry], table: &[KeyDoc], key: &str) -> bool {
        let known = || table.iter().map(|d| d.name);
        entries.iter().filter_map(|e| e.key.as_scalar()).any(|k| {
            let k = k.value.as_str();
            !known().any(|n| n == k) && crate::diagnostic::did_you_mean(k, known()) == Some(key)
        })
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<Str> {
        match node.as_scalar().map(|s| s.resolve()) {
            Some(ScalarValue::String(s)) => Some(Str { value: s.into(), span: node.span }),
            _ => {
                self.violation(
                    node.span,
                    format!("{what} must be a string, found {}", node.kind_name()),
                    None,
                );
                None
            }
        }
    }

    /// A scalar of any kind as text (`version: 1.0` and `version: "1.0"` both read "1.0").
    fn scalar_text(&mut self, node: &Node, what: &str) -> Option<String> {
        match node.as_scalar() {
            Some(s) if !node.is_null() => Some(s.value.clone()),
            _ => {
                self.violation(
                    node.span,
                    format!("{what} must be a string, found {}", node.kind_name()),
                    None,
                );
                None
            }
        }
    }

    fn string_list(&mut self, node: &Node, what: &str) -> Vec<Str> {
        if node.is_null() {
            return Vec::new();
        }
        let Some(items) = node.as_seq() else {
            let help = node.as_str().map(|s| format!("write a list: `[{s}]`"));
            self.violation(
                node.span,
                format!("{what} must be a list of strings, found {}", node.kind_name()),
                help,
            );
            return Vec::new();
        };
        let mut list: Vec<Str> =
            items.iter().filter_map(|i| self.string(i, &format!("each entry of {what}"))).collect();
        list.shrink_to_fit();
        list
    }

    fn workflow(&mut self, mut root: Node, default_id: &str) -> Workflow {
        let mut wf = Workflow {
            id: default_id.to_owned(),
            name: None,
            version: None,
            description: None,
            driver_version: None,
            rules: Vec::new(),
            params: Vec::new(),
            steps: Vec::new(),
            has_expr_errors: false,
        };
        let Some(entries) = root.as_map() else {
            self.violation(
                root.span,
                format!("a workflow must be a mapping with `steps`, found {}", root.kind_name()),
                None,
            );
            return wf;
        };
        self.check_keys(entries, WORKFLOW_KEYS, "workflow");
        if let Some(n) = root.get("id")
            && let Some(id) = self.string(n, "`id`")
        {
            if !valid_workflow_id(&id.value) {
                self.violation(
                        id.span,
                        format!("workflow id `{}` is not a valid id", id.value),
                        Some("ids are 1–128 characters of letters, digits, `_`, `.` and `-`, starting with a letter or digit".into()),
                    );
            }
            wf.id = id.value.into();
        }
        wf.name = root.get("name").and_then(|n| self.scalar_text(n, "`name`"));
        wf.version = root.get("version").and_then(|n| self.scalar_text(n, "`version`"));
        wf.description = root.get("description").and_then(|n| self.scalar_text(n, "`description`"));
        wf.driver_version = root.get("driver_version").and_then(|n| self.scalar_text(n, "`driver_version`"));
        wf.rules = root
            .get("rules")
            .map(|n| self.string_list(n, "`rules`").into_iter().map(|s| s.value.into()).collect())
            .unwrap_or_default();
        wf.rules.dedup();
        let required = root.get("required").map(|n| self.string_list(n, "`required`")).unwrap_or_default();
        if let Some(p) = root.get("params") {
            wf.params = self.params(p, &required);
        } else if let Some(r) = required.first() {
            self.violation(
                r.span,
                format!("`{}` is required but the workflow declares no `params`", r.value),
                None,
            );
        }
        match root.get("steps") {
            None if Self::misspelled(entries, WORKFLOW_KEYS, "steps") => {}
            None => self.violation(
                root.span,
                "missing required key `steps`",
                Some("a workflow needs `steps:`, a list of `{id, call}` mappings".into()),
            ),
            Some(s) => match s.as_seq() {
                Some([]) => self.violation(
                    s.span,
                    "`steps` is empty",
                    Some("a workflow needs at least one `{id, call}` step".into()),
                ),
                Some(_) => {}
                None => {
                    self.violation(s.span, format!("`steps` must be a list, found {}", s.kind_name()), None)
                }
            },
        }
        // The steps are most of the tree: lower them one by one, dropping
        // each one's nodes once lowered.
        if let NodeKind::Map(entries) = &mut root.kind
            && let Some(e) =
                entries.iter_mut().find(|e| e.key.as_scalar().is_some_and(|k| k.value == "steps"))
            && let NodeKind::Seq(items) = &mut e.value.kind
        {
            let items = std::mem::take(items);
            drop(root);
            let mut steps = Vec::with_capacity(items.len());
            for item in items {
                steps.extend(self.step(&item));
            }
            steps.shrink_to_fit();
            wf.steps = steps;
        }
        wf
    }

    fn params(&mut self, node: &Node, required: &[Str]) -> Vec<Param> {
        if node.is_null() {
            return Vec::new();
        }
        // A full JSON Schema object (`type: object, properties: …`) is accepted too.
        let (props, required_inner) = match (node.get("type").and_then(Node::as_str), node.get("properties"))
        {
            (Some("object"), Some(props)) => {
                let inner = node.get("required").map(|n| self.string_list(n, "`params.required`"));
                (props, inner.unwrap_or_default())
            }
            _ => (node, Vec::new()),
        };
        let Some(entries) = props.as_map() else {
            self.violation(
                node.span,
                format!("`params` must be a mapping of name → JSON Schema, found {}", node.kind_name()),
                None,
            );
            return Vec::new();
        };
        let mut params = Vec::new();
        for e in entries {
            let Some(name) = e.key.as_str() else {
                self.violation(e.key.span, "param names must be strings", None);
                continue;
            };
            let name = Str { value: name.into(), span: e.key.span };
            if !is_identifier(&name.value) {
                self.violation(
                    name.span,
                    format!("param name `{}` is not an identifier", name.value),
                    Some("expressions read params as `params.NAME`: use letters, digits and `_`".into()),
                );
            }
            if !e.value.is_null() && e.value.as_map().is_none() {
                self.violation(
                    e.value.span,
                    format!(
                        "param `{}` must be a JSON Schema mapping, found {}",
                        name.value,
                        e.value.kind_name()
                    ),
                    Some("e.g. `{ type: string, description: … }`".into()),
                );
            }
            if let Some(r) = e.value.get("required")
                && matches!(r.as_scalar().map(|s| s.resolve()), Some(ScalarValue::Bool(_)))
            {
                self.violation(
                    r.span,
                    "`required: true` inside a param is the original system's form",
                    Some("list required params at the top level: `required: [NAME]`".into()),
                );
            }
            let type_ok = match e.value.get("type") {
                Some(t) => self.schema_type(t, Code::YamlSchemaViolation),
                None => true,
            };
            let schema = if e.value.is_null() { serde_json::json!({}) } else { e.value.to_json() };
            if type_ok && e.value.as_map().is_some() {
                self.param_schema(&name.value, &e.value, &schema);
            }
            let ty = Type::from_schema(&schema);
            params.push(Param { name, schema, ty, required: false });
        }
        for r in required.iter().chain(&required_inner) {
            match params.iter_mut().find(|p| p.name.value == r.value) {
                Some(p) => p.required = true,
                None => {
                    let help = suggest(&r.value, params.iter().map(|p| p.name.value.as_str()));
                    self.violation(
                        r.span,
                        format!("required param `{}` is not declared in `params`", r.value),
                        help,
                    );
                }
            }
        }
        params
    }

    /// Compiles a param's schema as the engine does (`jsonschema`), pointing
    /// a failure at the offending key, and checks its `default` against it:
    /// what passes here, `plan` accepts.
    fn param_schema(&mut self, name: &str, node: &Node, schema: &serde_json::Value) {
        let what = format!("the schema of param `{name}`");
        let help = "`plan` would refuse the workflow; fix the schema";
        if let Some(validator) = self.invalid_schema(node, schema, Code::YamlSchemaViolation, &what, help)
            && let (Some(d), Some(dn)) = (schema.get("default"), node.get("default"))
            && let Some(err) = validator.iter_errors(d).next()
        {
            self.violation(
                dn.span,
                format!("the default of param `{name}` does not match its schema: {err}"),
                Some("`plan` would refuse the params; fix the default or the schema".into()),
            );
        }
    }

    /// Compiles `schema` (written at `node`) as the engine does; when it is
    /// not a valid JSON Schema, reports `code` at the offending key (a bad
    /// `type` with the did-you-mean of the type names) and returns `None`.
    fn invalid_schema(
        &mut self,
        node: &Node,
        schema: &serde_json::Value,
        code: Code,
        what: &str,
        help: &str,
    ) -> Option<jsonschema::Validator> {
        let e = match jsonschema::validator_for(schema) {
            Ok(v) => return Some(v),
            Err(e) => e,
        };
        let path: Vec<String> = e.instance_path().into_iter().map(|s| s.to_string()).collect();
        let at = node_at(node, &path);
        // A bad `type` anywhere gets the did-you-mean of the type names.
        if path.last().is_some_and(|k| k == "type") || (path.len() >= 2 && path[path.len() - 2] == "type") {
            let type_node = if path.last().is_some_and(|k| k == "type") {
                at
            } else {
                node_at(node, &path[..path.len() - 1])
            };
            if !self.schema_type(type_node, code) {
                return None;
            }
        }
        let shown = if path.is_empty() { String::new() } else { format!(" at `{}`", path.join(".")) };
        self.diags.push(
            Diagnostic::new(code, at.span, format!("{what} is not a valid JSON Schema{shown}: {e}"))
                .with_help(help),
        );
        None
    }

    /// Checks `type:` values; false when one was reported.
    fn schema_type(&mut self, t: &Node, code: Code) -> bool {
        const TYPES: &[&str] = &["string", "number", "integer", "boolean", "array", "object", "null"];
        let mut ok = true;
        let names: Vec<&Node> = match &t.kind {
            NodeKind::Seq(items) => items.iter().collect(),
            _ => vec![t],
        };
        for n in names {
            match n.as_str() {
                Some(s) if TYPES.contains(&s) => {}
                _ => {
                    let v = n.as_scalar().map_or("", |s| s.value.as_str());
                    let help = suggest(v, TYPES.iter().copied())
                        .or_else(|| Some(format!("JSON Schema types are: {}", TYPES.join(", "))));
                    self.diags.push(
                        Diagnostic::new(code, n.span, format!("`{v}` is not a JSON Schema type"))
                            .with_help_opt(help),
                    );
                    ok = false;
                }
            }
        }
        ok
    }

    fn step(&mut self, node: &Node) -> Option<Step> {
        let Some(entries) = node.as_map() else {
            self.violation(
                node.span,
                format!("a step must be a mapping with `id` and `call`, found {}", node.kind_name()),
                None,
            );
            return None;
        };
        self.check_keys(entries, STEP_KEYS, "step");
        let id = match node.get("id") {
            Some(n) => self.string(n, "step `id`")?,
            None => {
                // A legacy `name:` or a misspelling is already reported as the key to rename.
                if node.get("name").is_none() && !Self::misspelled(entries, STEP_KEYS, "id") {
                    let span = entries.first().map_or(node.span, |e| e.key.span);
                    self.violation(
                        span,
                        "step is missing required key `id`",
                        Some("every step needs a unique `id`".into()),
                    );
                }
                return None;
            }
        };
        if let Some(bad) = id.value.chars().find(|c| matches!(c, '[' | ']') || c.is_whitespace()) {
            let why = if bad == '[' || bad == ']' {
                "`[` and `]` are reserved for foreach items"
            } else {
                "ids cannot hold whitespace"
            };
            self.violation(id.span, format!("step id `{}` is not valid: {why}", id.value), None);
        } else if id.value.is_empty() {
            self.violation(id.span, "step id is empty", None);
        }
        let call = match node.get("call") {
            Some(n) => self.string(n, "`call`"),
            None => {
                // A legacy `tool:` / `agent:` or a misspelling is already reported as the key to rename.
                if node.get("tool").is_none()
                    && node.get("agent").is_none()
                    && !Self::misspelled(entries, STEP_KEYS, "call")
                {
                    self.violation(
                        id.span,
                        format!("step `{}` is missing required key `call`", id.value),
                        None,
                    );
                }
                None
            }
        };
        let deps = node.get("deps").map(|n| self.string_list(n, "`deps`")).unwrap_or_default();
        let capture_as = node.get("capture_as").and_then(|n| self.string(n, "`capture_as`"));
        if let Some(c) = &capture_as {
            self.binding_name(c, "capture name");
        }
        let loop_var = node.get("as").and_then(|n| self.string(n, "`as`"));
        if let Some(v) = &loop_var {
            self.binding_name(v, "loop variable");
        }
        let foreach = node.get("foreach").and_then(|n| self.expression(n, "`foreach`")).map(Box::new);
        if let (Some(v), None) = (&loop_var, &foreach)
            && node.get("foreach").is_none()
        {
            self.violation(
                v.span,
                "`as` names the loop variable of `foreach`, but this step has no `foreach`",
                None,
            );
        }
        let when = node.get("when").and_then(|n| self.expression(n, "`when`")).map(Box::new);
        let success_schema = node.get("success_schema").and_then(|n| match &n.kind {
            NodeKind::Map(_) => {
                let schema = n.to_json();
                // Generated workflows repeat one inline schema: compile each
                // text once, and keep one copy of it.
                let text = schema.to_string();
                let (shared, valid) = match self.inline_schemas.get(&text) {
                    Some((shared, valid)) => (Arc::clone(shared), *valid),
                    None => (Arc::new(schema), false),
                };
                if !valid {
                    let help = "the run would stop at this step with UNKNOWN_SCHEMA; fix the schema";
                    let what = "this inline schema";
                    let valid = self.invalid_schema(n, &shared, Code::UnknownSchema, what, help).is_some();
                    self.inline_schemas.insert(text, (Arc::clone(&shared), valid));
                }
                let schema = shared;
                Some(SchemaRef::Inline { schema, span: n.span })
            }
            _ => self.string(n, "`success_schema`").map(SchemaRef::Named),
        });
        let input_template = node.get("input_template").map(|n| self.template_value(n));
        let rationale = node.get("rationale").and_then(|n| {
            let s = self.scalar_text(n, "`rationale`")?;
            Some(Box::new(self.template_string(n, s)))
        });
        let description = node.get("description").and_then(|n| self.scalar_text(n, "`description`"));
        let timeout = node.get("timeout").and_then(|n| self.timeout(n));
        let retry_max = node.get("retry").and_then(|n| self.retry(n));
        Some(Step {
            id,
            span: node.span,
            call,
            deps,
            input_template,
            capture_as,
            success_schema,
            when,
            foreach,
            loop_var,
            rationale,
            description,
            timeout,
            retry_max,
        })
    }

    fn binding_name(&mut self, name: &Str, what: &str) {
        if RESERVED_NAMES.contains(&name.value.as_str()) {
            self.violation(
                name.span,
                format!("`{}` is a reserved name and cannot be a {what}", name.value),
                Some(format!("reserved names: {}", RESERVED_NAMES.join(", "))),
            );
        } else if !is_identifier(&name.value) {
            self.violation(
                name.span,
                format!("{what} `{}` is not an identifier", name.value),
                Some(
                    "expressions read it by name: use letters, digits and `_`, not starting with a digit"
                        .into(),
                ),
            );
        }
    }

    fn expression(&mut self, node: &Node, what: &str) -> Option<ExprSource> {
        let Some(scalar) = node.as_scalar() else {
            self.violation(
                node.span,
                format!("{what} must be an expression string, found {}", node.kind_name()),
                None,
            );
            return None;
        };
        let loc = ScalarLoc { span: node.span, style: scalar.style };
        let text = scalar.value.clone();
        if !self.expr_budget(node.span, text.len()) {
            return Some(ExprSource { text, loc, expr: None });
        }
        // `foreach: "<<files>>"`: template syntax where an expression goes.
        // One diagnostic with the edit, and the inner expression is checked.
        if let Some((open, inner)) = wrapped_in_template(&text) {
            let whole = Span::new(open, open + inner.len() + 4);
            let span = loc.file_span(&self.scalars, &text, whole);
            let inner_span = loc.file_span(&self.scalars, &text, Span::new(open + 2, open + 2 + inner.len()));
            let trimmed = inner.trim();
            let mut d = Diagnostic::new(
                Code::ExprSyntax,
                span,
                format!("{what} is an expression already: `<<…>>` belongs in strings"),
            )
            .with_help(format!("write `{trimmed}`"));
            // The edit keeps the text inside `<<` `>>`, when it maps one to one.
            if (span.end - span.start) as usize == inner.len() + 4
                && (inner_span.end - inner_span.start) as usize == inner.len()
            {
                d = d.with_fix(span, trimmed);
            }
            self.diags.push(d);
            let expr = crate::syntax::expr::parse_expr_at(inner, open + 2).ok();
            return Some(ExprSource { text, loc, expr });
        }
        let expr = match parse_expr(&text) {
            Ok(e) => Some(e),
            Err(err) => {
                let span = loc.file_span(&self.scalars, &text, err.span);
                let help = err.help.or_else(|| foreign_syntax_hint(&text, err.span));
                self.diags.push(Diagnostic::new(Code::ExprSyntax, span, err.message).with_help_opt(help));
                None
            }
        };
        Some(ExprSource { text, loc, expr })
    }

    /// Counts `len` bytes of expression text against the file's budget; past
    /// it, reports once (at `span`) and the text is not parsed.
    fn expr_budget(&mut self, span: Span, len: usize) -> bool {
        let before = self.expr_bytes;
        self.expr_bytes = before.saturating_add(len);
        let budget = self.expr_budget;
        if self.expr_bytes <= budget {
            return true;
        }
        if before <= budget {
            self.diags.push(
                Diagnostic::new(
                    Code::ExprSyntax,
                    span,
                    format!("the file's expressions total over {budget} bytes; the rest are not checked"),
                )
                .with_help("pass large data as a param or a capture and read it by name"),
            );
        }
        false
    }

    fn template_string(&mut self, node: &Node, text: String) -> TemplateString {
        let style = node.as_scalar().map_or(crate::syntax::node::ScalarStyle::Plain, |s| s.style);
        let loc = ScalarLoc { span: node.span, style };
        if !self.expr_budget(node.span, interpolation_bytes(&text)) {
            // Not parsed; the error above keeps the file from running.
            let template = crate::syntax::ast::Template { segments: vec![] };
            return TemplateString { text, loc, template };
        }
        let (template, errors) = parse_template(&text);
        for err in errors {
            let span = loc.file_span(&self.scalars, &text, err.span);
            let help = err.help.or_else(|| foreign_syntax_hint(&text, err.span));
            self.diags.push(Diagnostic::new(Code::ExprSyntax, span, err.message).with_help_opt(help));
        }
        TemplateString { text, loc, template }
    }

    fn template_value(&mut self, node: &Node) -> TemplateValue {
        match &node.kind {
            NodeKind::Scalar(s) => match s.resolve() {
                ScalarValue::Null => TemplateValue::Null(node.span),
                ScalarValue::Bool(b) => TemplateValue::Bool(b, node.span),
                ScalarValue::Int(i) => TemplateValue::Number(i as f64, node.span),
                ScalarValue::Float(f) => TemplateValue::Number(f, node.span),
                ScalarValue::String(text) => {
                    TemplateValue::String(Box::new(self.template_string(node, text.to_owned())))
                }
            },
            NodeKind::Seq(items) => {
                TemplateValue::Array(items.iter().map(|i| self.template_value(i)).collect(), node.span)
            }
            NodeKind::Map(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for e in entries {
                    let Some(k) = e.key.as_scalar() else {
                        self.violation(e.key.span, "`input_template` keys must be strings", None);
                        continue;
                    };
                    let key = Str { value: k.value.as_str().into(), span: e.key.span };
                    out.push((key, self.template_value(&e.value)));
                }
                TemplateValue::Object(out, node.span)
            }
        }
    }

    fn timeout(&mut self, node: &Node) -> Option<f64> {
        let help = Some("write seconds (`30`) or a duration (`500ms`, `30s`, `5m`, `1h`)".to_owned());
        let secs = match node.as_scalar().map(|s| s.resolve()) {
            Some(ScalarValue::Int(i)) => Some(i as f64),
            Some(ScalarValue::Float(f)) => Some(f),
            Some(ScalarValue::String(s)) => parse_duration(s),
            _ => None,
        };
        match secs {
            Some(s) if s.is_finite() && s > 0.0 => Some(s),
            _ => {
                self.violation(node.span, "`timeout` must be a positive duration", help);
                None
            }
        }
    }

    fn retry(&mut self, node: &Node) -> Option<u32> {
        let Some(entries) = node.as_map() else {
            self.violation(
                node.span,
                format!("`retry` must be a mapping like `{{max: 3}}`, found {}", node.kind_name()),
                None,
            );
            return None;
        };
        self.check_keys(entries, RETRY_KEYS, "retry");
        let max = node.get("max")?;
        match max.as_scalar().map(|s| s.resolve()) {
            Some(ScalarValue::Int(i)) if (0..=1000).contains(&i) => Some(i as u32),
            _ => {
                self.violation(max.span, "`retry.max` must be a whole number from 0 to 1000", None);
                None
            }
        }
    }
}

/// `30`, `1.5`, `500ms`, `30s`, `5m`, `1h` → seconds.
pub fn parse_duration(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let factor = match unit {
        "" | "s" => 1.0,
        "ms" => 0.001,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    Some(n * factor)
}

pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Workflow and run ids: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$` (no path traversal).
/// The node at a JSON-pointer-like path of keys and indexes (as deep as it
/// exists: the deepest node found).
fn node_at<'n>(node: &'n Node, path: &[String]) -> &'n Node {
    let mut at = node;
    for key in path {
        let next = match &at.kind {
            NodeKind::Seq(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => at.get(key),
        };
        match next {
            Some(n) => at = n,
            None => break,
        }
    }
    at
}

/// A hint for syntax people bring from other languages, found at the
/// position a parse failed: `AND`/`OR`/`NOT`, `is null`, `<>`.
fn foreign_syntax_hint(text: &str, at: Span) -> Option<String> {
    let start = (at.start as usize).min(text.len());
    let rest = text.get(start..)?;
    let word: String = rest.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    let before = text.get(..start).unwrap_or("").trim_end();
    let hint = match word.to_ascii_lowercase().as_str() {
        "and" => "write `&&` for \"and\" (`a && b`)",
        "or" => "write `||` for \"or\" (`a || b`)",
        "not" => "write `!` for \"not\" (`!a`)",
        "is" if rest.to_ascii_lowercase().starts_with("is not") => "write `x != null` (there is no `is not`)",
        "is" => "write `x == null` (there is no `is`)",
        _ if rest.starts_with('>') && before.ends_with('<') => {
            "write `!=` for \"not equal\" (there is no `<>`)"
        }
        _ if rest.starts_with("<>") => "write `!=` for \"not equal\" (there is no `<>`)",
        _ => return None,
    };
    Some(hint.to_owned())
}

pub fn valid_workflow_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && b[0].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

#[cfg(test)]
#[path = "lower_tests.rs"]
mod tests;
