//! `savant-think migrate`: the original system's two dialects → the current
//! language (docs/migrating.md).
//!
//! [`migrate`] reads a file with the crate's own YAML reader, recognises its
//! [`Dialect`], rewrites it into a [`Yaml`] tree ([`think`] for workflow-level
//! keys and Think-format steps, [`params`] the params, [`engine_dialect`] for the workflow-engine
//! format, [`placeholder`] for `{{path}}`, [`when`] for `applicable_when`)
//! and emits it ([`emit`]). A file with nothing to change is
//! [`Outcome::Current`] and is never rewritten, so migrating a migrated file
//! changes nothing. Indentation only libyaml accepted is fixed first
//! ([`repair`]). [`files`] is the I/O edge (reading, `--write`, `--out`);
//! [`report`] renders the per-file summary.

pub mod emit;
pub mod engine_dialect;
pub mod files;
pub mod params;
pub mod placeholder;
pub mod repair;
pub mod report;
pub mod step;
pub mod think;
pub mod value;
pub mod when;

use crate::diagnostic::{Code, Diagnostic};
use crate::source::Limits;
use crate::source::{SourceFile, Span};
use crate::syntax::node::Node;
use crate::syntax::yaml;
use serde::Serialize;
pub use value::Yaml;

/// Which format a file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// `steps[]` of `id`, `call`, `deps`, `input_template`, `capture_as`:
    /// the current language, or the original Think format (`{{path}}`,
    /// `applicable_when`, legacy keys).
    Think,
    /// The original workflow engine: `steps[]` of `name`, `tool` | `agent`,
    /// `with`, run one after the other.
    WorkflowEngine,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Think => "think",
            Dialect::WorkflowEngine => "workflow-engine",
        }
    }
}

/// One thing migration changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// 1-based line in the original file.
    pub line: usize,
    pub message: String,
}

/// A `{{…}}` left as literal text, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Literal {
    pub line: usize,
    /// The placeholder as written, e.g. `{{workflow}}`.
    pub text: String,
    pub reason: String,
}

/// What migrating one file gave.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The file needs migration: here is its new text.
    Migrated { dialect: Dialect, text: String },
    /// Nothing to change; the file is left exactly as it is.
    Current { dialect: Dialect },
    /// The file cannot be migrated (not valid YAML, not a workflow): it is
    /// left as it is, and these are the reasons (`YAML_SYNTAX`, …).
    Failed { diagnostics: Vec<Diagnostic> },
}

/// The result for one file.
#[derive(Clone, Debug)]
pub struct Migration {
    pub outcome: Outcome,
    pub changes: Vec<Change>,
    pub literals: Vec<Literal>,
}

impl Migration {
    pub fn needs_migration(&self) -> bool {
        matches!(self.outcome, Outcome::Migrated { .. })
    }
}

/// Migrates one file's text. Never panics; never fails outright (a file it
/// cannot read comes back as [`Outcome::Failed`]).
pub fn migrate(src: &SourceFile, limits: &Limits) -> Migration {
    let mut parsed = yaml::parse(src, limits);
    let failed = |diagnostics| Migration {
        outcome: Outcome::Failed { diagnostics },
        changes: vec![],
        literals: vec![],
    };
    // Indentation the original system's reader accepted is repaired first.
    let mut repaired_src = None;
    let mut repaired_lines = Vec::new();
    if !parsed.diagnostics.is_empty() {
        let Some((text, lines)) = repair::reindent(src, &parsed.diagnostics, limits) else {
            return failed(parsed.diagnostics);
        };
        let fixed = SourceFile::new(src.path.clone(), text);
        parsed = yaml::parse(&fixed, limits);
        repaired_src = Some(fixed);
        repaired_lines = lines;
    }
    let src = repaired_src.as_ref().unwrap_or(src);
    let Some(root) = parsed.root else {
        return failed(vec![Diagnostic::new(Code::YamlSchemaViolation, Span::point(0), "the file is empty")]);
    };
    let steps_ok = root.get("steps").is_some_and(|s| s.as_seq().is_some());
    if root.as_map().is_none() || !steps_ok {
        let d = Diagnostic::new(
            Code::YamlSchemaViolation,
            root.span,
            format!("not a workflow: expected a mapping with a `steps` list, found {}", root.kind_name()),
        )
        .with_help("migrate reads workflow files; this one is left unchanged");
        return failed(vec![d]);
    }
    let mut cx = Cx { src, changes: Vec::new(), literals: Vec::new() };
    for line in repaired_lines {
        let message =
            "indented a continuation line: YAML 1.2 requires it (the original system's libyaml did not)";
        cx.changes.push(Change { line, message: message.into() });
    }
    let dialect = detect(&root);
    let out = think::migrate_workflow(&mut cx, &root, dialect);
    let Cx { mut changes, mut literals, .. } = cx;
    changes.sort_by_key(|c| c.line);
    literals.sort_by_key(|l| l.line);
    let outcome = if changes.is_empty() {
        Outcome::Current { dialect }
    } else {
        Outcome::Migrated { dialect, text: emit::emit(&out) }
    };
    Migration { outcome, changes, literals }
}

/// The workflow-engine format: no step has `id` or `call`, and some step
/// has `tool` or `agent`.
pub fn detect(root: &Node) -> Dialect {
    let steps = root.get("steps").and_then(Node::as_seq).unwrap_or_default();
    let engine = !steps.is_empty()
        && steps.iter().all(|s| s.get("id").is_none() && s.get("call").is_none())
        && steps.iter().any(|s| s.get("tool").is_some() || s.get("agent").is_some());
    if engine { Dialect::WorkflowEngine } else { Dialect::Think }
}

/// What the rewriting passes share: the file (for line numbers) and what
/// they report.
pub struct Cx<'a> {
    pub src: &'a SourceFile,
    pub changes: Vec<Change>,
    pub literals: Vec<Literal>,
}

impl Cx<'_> {
    /// The 1-based line of a byte offset.
    pub fn line(&self, offset: u32) -> usize {
        self.src.line_col(offset as usize).line
    }

    pub fn change(&mut self, at: &Node, message: impl Into<String>) {
        let line = self.line(at.span.start);
        self.changes.push(Change { line, message: message.into() });
    }
}
