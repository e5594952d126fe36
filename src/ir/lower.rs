//! YAML tree → [`Workflow`]. Reports `YAML_SCHEMA_VIOLATION` for missing,
//! ill-typed and unknown keys and `EXPR_SYNTAX` for expressions that do not
//! parse; always returns as much of the workflow as it could read.

use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::{
    ExprSource, Output, Param, RESERVED_NAMES, ScalarLoc, SchemaRef, Step, Str, TemplateString,
    TemplateValue, Type, Workflow,
};
use crate::source::{SourceFile, Span};
use crate::syntax::expr::parse_expr;
use crate::syntax::node::{Entry, Node, NodeKind, ScalarValue};
use crate::syntax::scalar::ScalarMap;
use crate::syntax::template::{find_pair, parse_template};
use std::sync::Arc;

// The lowerer by the part of the IR it builds: the workflow and its keys
// here, then `params`, each step, and expressions and templates.
#[path = "lower_expr.rs"]
mod expr;
#[path = "lower_params.rs"]
mod params;
pub use params::{SchemaFault, schema_faults};
#[path = "lower_parts.rs"]
mod parts;
pub use parts::{Item, Parts, lower_item, lower_parts, move_spans, move_step};
#[path = "lower_step.rs"]
mod step;
#[path = "lower_wait.rs"]
mod wait;
pub(crate) use wait::{AWAIT_KEYS, WAIT_FOR_KEYS, WAIT_KEYS};
pub use wait::{MAX_WAIT_SECS, parse_time, parse_wait_duration, valid_event_name};

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
    /// `outputs`: name → a string that may hold `<<expr>>`.
    Outputs,
    /// A whole number from 0 to 1000.
    Count,
    /// A wait's duration (`30s`, `10m`, `24h`, `7d`) or `never`.
    WaitDuration,
    /// `await: {ask, schema, timeout, on_timeout}`.
    Await,
    /// `wait_for: {event, match, timeout, on_timeout}`.
    WaitFor,
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
    key(
        "outputs",
        Shape::Outputs,
        "What a caller's `capture_as` holds when another workflow `uses:` this one: name → `<<expr>>`.",
    ),
];

/// Every key a step may have.
pub(crate) const STEP_KEYS: &[KeyDoc] = &[
    required("id", Shape::StepId, "The step's unique id; other steps name it in `deps`."),
    key("call", Shape::String, "The tool or agent this step calls, e.g. `gitlab.get_merge_request`."),
    key(
        "uses",
        Shape::WorkflowId,
        "Another workflow of the project this step runs as a sub-workflow (instead of `call`).",
    ),
    key(
        "with",
        Shape::TemplateValue,
        "The params of the workflow `uses:` runs; strings may interpolate `<<expr>>`.",
    ),
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
    key(
        "await",
        Shape::Await,
        "Waits for a person's answer to `ask`, typed by `schema` (instead of `call`).",
    ),
    key(
        "sleep",
        Shape::WaitDuration,
        "Waits this long (`30s`, `10m`, `24h`, `7d`) before its dependents run.",
    ),
    key("sleep_until", Shape::Template, "Waits until this RFC 3339 time; may interpolate `<<expr>>`."),
    key(
        "wait_for",
        Shape::WaitFor,
        "Waits for an event declared in savant-think.toml, matched by a correlation key.",
    ),
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
    let mut cx = Lower::new(src, expr_budget(src.text.len()), None);
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
    /// When recording ([`lower_parts`]): what each item of `steps:` gave.
    items: Option<Vec<parts::Record>>,
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
    while let Some(open) = find_pair(rest, *b"<<") {
        let after = &rest[open + 2..];
        match find_pair(after, *b">>") {
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

impl<'a> Lower<'a> {
    /// A lowering of `src` that may parse `expr_budget` bytes of
    /// expressions, recording each item of `steps:` when `items` is given.
    fn new(src: &'a SourceFile, expr_budget: usize, items: Option<Vec<parts::Record>>) -> Lower<'a> {
        Lower {
            scalars: ScalarMap::new(&src.text),
            diags: Vec::new(),
            expr_bytes: 0,
            expr_budget,
            inline_schemas: Default::default(),
            items,
        }
    }
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
        let each = format!("each entry of {what}");
        let mut list: Vec<Str> = items.iter().filter_map(|i| self.string(i, &each)).collect();
        list.shrink_to_fit();
        list
    }

    fn workflow(&mut self, root: Node, default_id: &str) -> Workflow {
        let mut wf = Workflow {
            id: default_id.to_owned(),
            name: None,
            version: None,
            description: None,
            driver_version: None,
            rules: Vec::new(),
            params: Vec::new(),
            steps: Vec::new(),
            outputs: Vec::new(),
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
        if let Some(id) = self.workflow_id(&root) {
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
        self.steps_key(&root, entries);
        if let Some(o) = root.get("outputs") {
            wf.outputs = self.outputs(o);
        }
        wf.steps = self.steps(root);
        wf
    }

    /// The workflow's own `id:`, reported when it is not a valid id.
    fn workflow_id(&mut self, root: &Node) -> Option<Str> {
        let id = self.string(root.get("id")?, "`id`")?;
        if !valid_workflow_id(&id.value) {
            self.violation(
                id.span,
                format!("workflow id `{}` is not a valid id", id.value),
                Some("ids are 1–128 characters of letters, digits, `_`, `.` and `-`, starting with a letter or digit".into()),
            );
        }
        Some(id)
    }

    /// `steps:` missing, empty or not a list, reported.
    fn steps_key(&mut self, root: &Node, entries: &[Entry]) {
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
    }

    /// The steps are most of the tree: lower them one by one, dropping
    /// each one's nodes once lowered (the rest of `root` first).
    fn steps(&mut self, mut root: Node) -> Vec<Step> {
        let NodeKind::Map(entries) = &mut root.kind else { return Vec::new() };
        let Some(e) = entries.iter_mut().find(|e| e.key.as_scalar().is_some_and(|k| k.value == "steps"))
        else {
            return Vec::new();
        };
        let NodeKind::Seq(items) = &mut e.value.kind else { return Vec::new() };
        let items = std::mem::take(items);
        drop(root);
        let mut steps = Vec::with_capacity(items.len());
        for item in items {
            let (diags, bytes) = (self.diags.len(), self.expr_bytes);
            let nodes = if self.items.is_some() { item.count() } else { 0 };
            let step = self.step(&item);
            if let Some(records) = &mut self.items {
                records.push(parts::Record {
                    span: item.span,
                    lowered: step.is_some(),
                    diags: diags..self.diags.len(),
                    expr_bytes: self.expr_bytes - bytes,
                    nodes,
                });
            }
            steps.extend(step);
        }
        steps.shrink_to_fit();
        steps
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
