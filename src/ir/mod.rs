//! The typed IR: what a workflow file means, with every piece still pointing
//! at the characters it came from.
//!
//! This file is the IR (`Workflow`, `Step`, `TemplateValue`, `ExprSource`;
//! `Str` values are inline `ast::Name`s; the expression AST re-exported as
//! `ir::ast`). `lower.rs` lowers Node → IR for the workflow and its keys
//! (`WORKFLOW_KEYS`, `STEP_KEYS`: name, shape, description, read by the
//! lowerer, the JSON Schema, hover and completion), with
//! `YAML_SCHEMA_VIOLATION` and `EXPR_SYNTAX`, taking the tree and dropping
//! each step's nodes once lowered (inline schemas shared per distinct
//! text); `lower_params.rs` the params, `lower_step.rs` a step,
//! `lower_expr.rs` expressions and templates, `lower_parts.rs` lowering
//! that keeps each step item's diagnostics apart, one item lowered alone,
//! and moving a workflow's spans after an edit (tests in `lower_tests.rs`).
//! `types.rs` is static types and JSON Schema → type; `builtins.rs` the
//! function table (names, parameter kinds, result types); `sure_schema.rs`
//! the certain "valid" of plain JSON Schemas and values without compiling
//! them (the lowerer's param schemas, the engine's params and tool inputs).

pub mod builtins;
pub mod lower;
pub mod sure_schema;
pub mod types;

use crate::source::Span;
use crate::syntax::ast::{Expr, Template};
use crate::syntax::node::ScalarStyle;
use crate::syntax::scalar::ScalarMap;
use serde_json::Value;
use std::sync::Arc;

/// The expression AST the IR holds (`when:`, `foreach:`, `<<…>>`), with its
/// walk: what the checks and the compiler read expressions through.
pub use crate::syntax::ast;
pub use lower::lower;
pub use types::{ObjectType, Type};

/// Names that a `capture_as` or `as` may not take: they are always in scope.
pub const RESERVED_NAMES: &[&str] = &["params", "loop", "workflow", "run", "steps"];

/// A string value and where it is in the file: an id, a call, a capture,
/// a dep, a key. Inline up to 24 bytes: the usual short names allocate
/// nothing (a large file holds several per step).
#[derive(Clone, Debug, PartialEq)]
pub struct Str {
    pub value: ast::Name,
    pub span: Span,
}

/// Where a YAML scalar is and how it was written, so that offsets in its
/// decoded value can be mapped back to the file.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarLoc {
    pub span: Span,
    pub style: ScalarStyle,
}

impl ScalarLoc {
    /// Maps a span in the decoded value (as `Expr` spans are) to a file
    /// span; `scalars` is the map of the file the scalar is in.
    pub fn file_span(&self, scalars: &ScalarMap<'_>, value: &str, inner: Span) -> Span {
        scalars.map_range(self.span, self.style, value, inner.range())
    }
}

/// An expression written in a YAML scalar (`when:`, `foreach:`).
#[derive(Clone, Debug, PartialEq)]
pub struct ExprSource {
    pub text: String,
    pub loc: ScalarLoc,
    /// `None` when the text does not parse (an `EXPR_SYNTAX` was reported).
    pub expr: Option<Expr>,
}

/// A string that may hold `<<expr>>` interpolations.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateString {
    pub text: String,
    pub loc: ScalarLoc,
    pub template: Template,
}

/// An `input_template` value: JSON-like, with every string a template.
#[derive(Clone, Debug, PartialEq)]
pub enum TemplateValue {
    Null(Span),
    Bool(bool, Span),
    Number(f64, Span),
    String(Box<TemplateString>),
    Array(Vec<TemplateValue>, Span),
    Object(Vec<(Str, TemplateValue)>, Span),
}

impl TemplateValue {
    /// Calls `f` on every template string, depth first, in file order.
    pub fn for_each_string<'a>(&'a self, f: &mut impl FnMut(&'a TemplateString)) {
        match self {
            TemplateValue::String(s) => f(s),
            TemplateValue::Array(items, _) => items.iter().for_each(|i| i.for_each_string(f)),
            TemplateValue::Object(entries, _) => entries.iter().for_each(|(_, v)| v.for_each_string(f)),
            _ => {}
        }
    }
}

/// A `success_schema`: a name resolved in `schemas/<Name>.json`, or inline.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaRef {
    Named(Str),
    /// Steps with the same inline schema share one value (generated
    /// workflows repeat one schema thousands of times).
    Inline {
        schema: Arc<Value>,
        span: Span,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Str,
    pub schema: Value,
    pub ty: Type,
    pub required: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub id: Str,
    /// The whole step mapping.
    pub span: Span,
    /// `None` only when missing (reported), or when the step `uses` a workflow.
    pub call: Option<Str>,
    /// `uses: WORKFLOW_ID`: the step runs another workflow of the project
    /// (a sub-workflow); its `with:` is held in `input_template`, the
    /// callee's params.
    pub uses: Option<Str>,
    pub deps: Vec<Str>,
    pub input_template: Option<TemplateValue>,
    pub capture_as: Option<Str>,
    pub success_schema: Option<SchemaRef>,
    /// Boxed, like `foreach` and `rationale`: most steps have none, and a
    /// step is a few hundred bytes smaller for it (memory of a large check).
    pub when: Option<Box<ExprSource>>,
    pub foreach: Option<Box<ExprSource>>,
    /// The loop variable (`as:`), default `item`.
    pub loop_var: Option<Str>,
    pub rationale: Option<Box<TemplateString>>,
    pub description: Option<String>,
    /// Seconds.
    pub timeout: Option<f64>,
    pub retry_max: Option<u32>,
    /// `await:`, `sleep:`, `sleep_until:` or `wait_for:`: the step waits
    /// for a person, a time or an event instead of calling a tool (its
    /// `call` is `None`). An `await:` step's answer is typed by its
    /// `schema`, held in `success_schema`.
    pub wait: Option<Box<Wait>>,
}

impl Step {
    pub fn loop_var_name(&self) -> &str {
        self.loop_var.as_ref().map_or("item", |s| s.value.as_str())
    }

    /// Every expression of the step, with the scalar it lives in, in file order.
    pub fn expressions(&self) -> Vec<(&Expr, &str, &ScalarLoc, ExprSite)> {
        fn push_template<'s>(
            out: &mut Vec<(&'s Expr, &'s str, &'s ScalarLoc, ExprSite)>,
            t: &'s TemplateString,
        ) {
            for seg in &t.template.segments {
                if let crate::syntax::ast::Segment::Interp { expr, .. } = seg {
                    out.push((expr, t.text.as_str(), &t.loc, ExprSite::Template));
                }
            }
        }
        let mut out = Vec::new();
        if let Some(f) = &self.foreach
            && let Some(e) = &f.expr
        {
            out.push((e, f.text.as_str(), &f.loc, ExprSite::Foreach));
        }
        if let Some(w) = &self.when
            && let Some(e) = &w.expr
        {
            out.push((e, w.text.as_str(), &w.loc, ExprSite::When));
        }
        if let Some(tv) = &self.input_template {
            tv.for_each_string(&mut |t| push_template(&mut out, t));
        }
        if let Some(r) = &self.rationale {
            push_template(&mut out, r);
        }
        if let Some(w) = &self.wait {
            for t in w.templates() {
                push_template(&mut out, t);
            }
        }
        out
    }
}

/// What a waiting step waits for, and where its key is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Wait {
    /// The key that makes the step a wait: `await`, `sleep`, `sleep_until`
    /// or `wait_for`.
    pub key: Str,
    pub kind: WaitKind,
}

/// The four kinds of wait.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitKind {
    /// `await:` a person's answer to `ask`, typed by `schema` (the step's
    /// `success_schema`).
    Answer { ask: TemplateString, timeout: Option<WaitTimeout>, on_timeout: Option<JsonAt> },
    /// `sleep: 10m`: seconds from when the step starts.
    Sleep { secs: u64, span: Span },
    /// `sleep_until: <<ticket.due_at>>`: an RFC 3339 timestamp.
    SleepUntil { at: TemplateString },
    /// `wait_for:` an event declared in `savant-think.toml` (`[events.NAME]`)
    /// whose correlation key (`match:`) is the rendered template.
    Event {
        event: Str,
        key: Option<TemplateString>,
        timeout: Option<WaitTimeout>,
        on_timeout: Option<JsonAt>,
    },
}

/// A wait's `timeout:`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WaitTimeout {
    /// `timeout: never`: it waits for ever, on purpose.
    Never(Span),
    /// Seconds from when the wait starts.
    After { secs: u64, span: Span },
}

impl WaitTimeout {
    /// Seconds, unless `never`.
    pub fn secs(self) -> Option<u64> {
        match self {
            WaitTimeout::Never(_) => None,
            WaitTimeout::After { secs, .. } => Some(secs),
        }
    }
}

/// A literal JSON value written in the file (`on_timeout:`), with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonAt {
    pub value: Value,
    pub span: Span,
}

impl Wait {
    /// Its templates (`ask:`, `match:`, `sleep_until:`), in file order.
    pub fn templates(&self) -> Vec<&TemplateString> {
        match &self.kind {
            WaitKind::Answer { ask, .. } => vec![ask],
            WaitKind::SleepUntil { at } => vec![at],
            WaitKind::Event { key, .. } => key.iter().collect(),
            WaitKind::Sleep { .. } => Vec::new(),
        }
    }

    /// Its `timeout:`, if it has one (`sleep` has none: it is its own).
    pub fn timeout(&self) -> Option<WaitTimeout> {
        match &self.kind {
            WaitKind::Answer { timeout, .. } | WaitKind::Event { timeout, .. } => *timeout,
            _ => None,
        }
    }

    /// Its `on_timeout:` value, if it has one.
    pub fn on_timeout(&self) -> Option<&JsonAt> {
        match &self.kind {
            WaitKind::Answer { on_timeout, .. } | WaitKind::Event { on_timeout, .. } => on_timeout.as_ref(),
            _ => None,
        }
    }

    /// What it waits for, as replies name it: `answer`, `timer` or `event`.
    pub fn reason(&self) -> &'static str {
        match self.kind {
            WaitKind::Answer { .. } => "answer",
            WaitKind::Sleep { .. } | WaitKind::SleepUntil { .. } => "timer",
            WaitKind::Event { .. } => "event",
        }
    }
}

/// Where an expression sits in a step; it decides what is in scope and what
/// type is expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprSite {
    /// The `foreach:` collection: the loop variable is not yet in scope.
    Foreach,
    /// `when:`; on a foreach step it is evaluated per item.
    When,
    /// Inside `<<…>>` in `input_template` or `rationale`.
    Template,
    /// Inside `<<…>>` in the workflow's `outputs:`: every capture is in
    /// scope (they are evaluated when the run is done), no loop variable.
    Output,
}

/// One entry of a workflow's `outputs:`: what a caller's `capture_as`
/// holds under `name` when the workflow runs as a sub-workflow (`uses:`).
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub name: Str,
    pub value: TemplateString,
}

/// Whether a workflow's tree has a step that runs another workflow: an
/// item of `steps:` with a `uses` key, read as the lowerer reads a step.
/// Parsing is enough (no lowering): `check` asks it to decide whether the
/// project's workflow table is needed at all.
pub fn uses_workflows(root: &crate::syntax::node::Node) -> bool {
    let steps = root.get("steps").and_then(|s| s.as_seq());
    steps.is_some_and(|steps| steps.iter().any(|step| step.get("uses").is_some()))
}

#[derive(Clone, Debug, PartialEq)]
pub struct Workflow {
    pub id: String,
    pub name: Option<String>,
    pub version: Option<String>,
    pub description: Option<String>,
    pub driver_version: Option<String>,
    pub rules: Vec<String>,
    pub params: Vec<Param>,
    pub steps: Vec<Step>,
    /// `outputs:`, in file order.
    pub outputs: Vec<Output>,
    /// Some expression or template failed to parse: checks that need to see
    /// every read (like `UNUSED_CAPTURE`) stay quiet rather than guess.
    pub has_expr_errors: bool,
}

impl Workflow {
    /// Every expression of the workflow: each step's ([`Step::expressions`],
    /// with the step's index), then `outputs:`'s (index 0, site `Output`).
    pub fn expressions(&self) -> Vec<(usize, &Expr, &str, &ScalarLoc, ExprSite)> {
        let steps = self.steps.iter().enumerate().flat_map(|(i, step)| {
            step.expressions().into_iter().map(move |(e, text, loc, site)| (i, e, text, loc, site))
        });
        let outputs =
            self.output_expressions().into_iter().map(|(e, text, loc)| (0, e, text, loc, ExprSite::Output));
        steps.chain(outputs).collect()
    }

    /// Every `<<…>>` of `outputs:`, with the scalar it lives in, in file order.
    pub fn output_expressions(&self) -> Vec<(&Expr, &str, &ScalarLoc)> {
        let mut out = Vec::new();
        for o in &self.outputs {
            for seg in &o.value.template.segments {
                if let crate::syntax::ast::Segment::Interp { expr, .. } = seg {
                    out.push((expr, o.value.text.as_str(), &o.value.loc));
                }
            }
        }
        out
    }

    /// The JSON Schema of the `params` object, as a caller's `with:` is
    /// checked against it: one property per param, `required`, closed.
    pub fn params_schema(&self) -> Value {
        let props: serde_json::Map<String, Value> =
            self.params.iter().map(|p| (p.name.value.to_string(), p.schema.clone())).collect();
        let required: Vec<&str> =
            self.params.iter().filter(|p| p.required).map(|p| p.name.value.as_str()).collect();
        serde_json::json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
    }

    /// The `params` object's type: closed, one field per declared param.
    pub fn params_type(&self) -> Type {
        Type::Object(ObjectType {
            fields: self.params.iter().map(|p| (p.name.value.to_string(), p.ty.clone())).collect(),
            open: false,
        })
    }
}
