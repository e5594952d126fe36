//! What is at a position, and what it refers to: hover, go to definition,
//! references, rename and document symbols, from the checker's own scope and
//! type inference (`check::scope`, `check::infer`).

use super::document::Analysis;
use crate::check::infer::{Infer, loop_item_type};
use crate::check::scope::{self, Binding};
use crate::check::{Config, Cx};
use crate::ir::builtins::{self, Function};
use crate::ir::lower::{KeyDoc, RETRY_KEYS, STEP_KEYS, WORKFLOW_KEYS};
use crate::ir::{Param, SchemaRef, Step, Type, Workflow};
use crate::source::Span;
use crate::syntax::ast::ExprKind;
use crate::syntax::ast::walk;
use crate::syntax::node::Node;

/// A named thing of the workflow.
#[derive(Clone, Debug)]
pub enum Symbol {
    /// A step, by index.
    Step(usize),
    /// The capture of the step with this index.
    Capture(usize),
    /// A param, by index.
    Param(usize),
    /// The loop variable of the step with this index.
    LoopVar(usize),
    /// `params`, `workflow`, `run`, `steps`, `loop`.
    Root(&'static str),
    Function(&'static Function),
    /// A named `success_schema`.
    Schema(String),
    Key(&'static KeyDoc),
    /// Any other expression: its type is all there is to say.
    Expr,
}

/// The symbol under the cursor, the span of that occurrence, and (for
/// expressions) the static type there.
pub struct Hit {
    pub symbol: Symbol,
    pub span: Span,
    pub ty: Option<Type>,
}

fn contains(span: Span, offset: usize) -> bool {
    (span.start as usize) <= offset && offset <= (span.end as usize)
}

/// Finds what is at `offset`.
pub fn at(a: &Analysis, config: &Config, offset: usize) -> Option<Hit> {
    let wf = a.wf.as_ref()?;
    let cx = Cx::new(&a.src, wf, config);
    let hit = |symbol, span, _step: Option<usize>| Some(Hit { symbol, span, ty: None });
    for (i, p) in wf.params.iter().enumerate() {
        if contains(p.name.span, offset) {
            return hit(Symbol::Param(i), p.name.span, None);
        }
    }
    for (i, s) in wf.steps.iter().enumerate() {
        if !contains(s.span, offset) {
            continue;
        }
        if contains(s.id.span, offset) {
            return hit(Symbol::Step(i), s.id.span, Some(i));
        }
        for d in &s.deps {
            if contains(d.span, offset) {
                let j = *cx.step_index.get(d.value.as_str())?;
                return hit(Symbol::Step(j), d.span, Some(i));
            }
        }
        if let Some(c) = &s.capture_as
            && contains(c.span, offset)
        {
            return hit(Symbol::Capture(i), c.span, Some(i));
        }
        if let Some(v) = &s.loop_var
            && contains(v.span, offset)
        {
            return hit(Symbol::LoopVar(i), v.span, Some(i));
        }
        if let Some(SchemaRef::Named(n)) = &s.success_schema
            && contains(n.span, offset)
        {
            return hit(Symbol::Schema(n.value.to_string()), n.span, Some(i));
        }
        if let Some(h) = in_expressions(&cx, i, offset) {
            return Some(h);
        }
    }
    key_at(a.root()?, offset).map(|(k, span)| Hit { symbol: Symbol::Key(k), span, ty: None })
}

/// The innermost name or expression of step `i` at `offset`.
fn in_expressions(cx: &Cx, i: usize, offset: usize) -> Option<Hit> {
    let step = &cx.wf.steps[i];
    let mut best: Option<Hit> = None;
    for (expr, text, loc, site) in step.expressions() {
        if !contains(loc.span, offset) {
            continue;
        }
        let file = |s: Span| cx.file_span(loc, text, s);
        walk(expr, &mut |e| {
            let span = file(e.span);
            if !contains(span, offset) || best.as_ref().is_some_and(|b| b.span.len() < span.len()) {
                return;
            }
            let mut inf = Infer { cx, step: i, site, loc, text, loop_item: loop_item_type(cx, i), out: None };
            let ty = Some(inf.infer(e));
            let (symbol, span) = match &e.kind {
                ExprKind::Var(name) => match scope::resolve(cx, i, site, name) {
                    Some(Binding::Capture(j)) => (Symbol::Capture(j), span),
                    Some(Binding::LoopVar) => (Symbol::LoopVar(i), span),
                    Some(b) => (Symbol::Root(root_name(b)), span),
                    None => (Symbol::Expr, span),
                },
                ExprKind::Field { base, name, name_span, .. } if contains(file(*name_span), offset) => {
                    let ns = file(*name_span);
                    let root = match &base.kind {
                        ExprKind::Var(r) => scope::resolve(cx, i, site, r),
                        _ => None,
                    };
                    match root {
                        Some(Binding::Params) => {
                            match cx.wf.params.iter().position(|p| p.name.value == name) {
                                Some(p) => (Symbol::Param(p), ns),
                                None => (Symbol::Expr, ns),
                            }
                        }
                        Some(Binding::Steps) => match cx.step_index.get(name.as_str()) {
                            Some(&j) => (Symbol::Step(j), ns),
                            None => (Symbol::Expr, ns),
                        },
                        _ => (Symbol::Expr, ns),
                    }
                }
                ExprKind::Call { name, name_span, .. } if contains(file(*name_span), offset) => {
                    match builtins::lookup(name) {
                        Some(f) => (Symbol::Function(f), file(*name_span)),
                        None => (Symbol::Expr, file(*name_span)),
                    }
                }
                _ => (Symbol::Expr, span),
            };
            best = Some(Hit { symbol, span, ty });
        });
    }
    best
}

fn root_name(b: Binding) -> &'static str {
    match b {
        Binding::Params => "params",
        Binding::Workflow => "workflow",
        Binding::Run => "run",
        Binding::Steps => "steps",
        Binding::Loop => "loop",
        Binding::LoopVar | Binding::Capture(_) => "",
    }
}

/// A workflow, step or retry key at `offset`, with its table entry.
pub fn key_at(root: &Node, offset: usize) -> Option<(&'static KeyDoc, Span)> {
    fn lookup(table: &'static [KeyDoc], k: &str) -> Option<&'static KeyDoc> {
        table.iter().find(|d| d.name == k)
    }
    let entries = root.as_map()?;
    for e in entries {
        let k = e.key.as_str().unwrap_or_default();
        if contains(e.key.span, offset) {
            return lookup(WORKFLOW_KEYS, k).map(|d| (d, e.key.span));
        }
        if k == "steps" && contains(e.value.span, offset) {
            for step in e.value.as_seq().unwrap_or_default() {
                for se in step.as_map().unwrap_or_default() {
                    let sk = se.key.as_str().unwrap_or_default();
                    if contains(se.key.span, offset) {
                        return lookup(STEP_KEYS, sk).map(|d| (d, se.key.span));
                    }
                    if sk == "retry" {
                        for re in se.value.as_map().unwrap_or_default() {
                            if contains(re.key.span, offset) {
                                let rk = re.key.as_str().unwrap_or_default();
                                return lookup(RETRY_KEYS, rk).map(|d| (d, re.key.span));
                            }
                        }
                    }
                }
            }
        }
    }
    None
}

/// Where a symbol is defined in this file.
pub fn definition(wf: &Workflow, symbol: &Symbol) -> Option<Span> {
    match symbol {
        Symbol::Step(i) => Some(wf.steps[*i].id.span),
        Symbol::Capture(i) => wf.steps[*i].capture_as.as_ref().map(|c| c.span),
        Symbol::Param(i) => Some(wf.params[*i].name.span),
        Symbol::LoopVar(i) => {
            let s = &wf.steps[*i];
            s.loop_var.as_ref().map(|v| v.span).or(s.foreach.as_ref().map(|f| f.loc.span))
        }
        _ => None,
    }
}

/// Every occurrence of a renamable symbol in the file, the definition first.
pub fn references(a: &Analysis, config: &Config, symbol: &Symbol) -> Vec<Span> {
    let Some(wf) = &a.wf else { return Vec::new() };
    let cx = Cx::new(&a.src, wf, config);
    let mut out: Vec<Span> = definition(wf, symbol).into_iter().collect();
    for (i, s) in wf.steps.iter().enumerate() {
        if let Symbol::Step(j) = symbol {
            let id = &wf.steps[*j].id.value;
            out.extend(s.deps.iter().filter(|d| d.value == id).map(|d| d.span));
        }
        for (expr, text, loc, site) in s.expressions() {
            walk(expr, &mut |e| {
                let found = match (&e.kind, symbol) {
                    (ExprKind::Var(n), Symbol::Capture(j)) => {
                        (scope::resolve(&cx, i, site, n) == Some(Binding::Capture(*j))).then_some(e.span)
                    }
                    (ExprKind::Var(n), Symbol::LoopVar(j)) => (i == *j
                        && scope::resolve(&cx, i, site, n) == Some(Binding::LoopVar))
                    .then_some(e.span),
                    (ExprKind::Field { base, name, name_span, .. }, Symbol::Param(p) | Symbol::Step(p)) => {
                        let (root, want) = match symbol {
                            Symbol::Param(_) => (Binding::Params, &wf.params[*p].name.value),
                            _ => (Binding::Steps, &wf.steps[*p].id.value),
                        };
                        let is_root = matches!(&base.kind, ExprKind::Var(r) if scope::resolve(&cx, i, site, r) == Some(root));
                        (is_root && name == want).then_some(*name_span)
                    }
                    _ => None,
                };
                if let Some(span) = found {
                    out.push(cx.file_span(loc, text, span));
                }
            });
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What a step's hover says of the tool it calls, when the tool is known
/// (an engine tool, a tool of the lock): its description, inputs with
/// their types, and the fields it returns.
fn tool_doc(config: &Config, call: &str) -> Option<String> {
    let c = config.contract(call)?;
    let mut out = format!("\n\n**tool `{}`**", c.name);
    if let Some(server) = &c.server {
        out.push_str(&format!(" (server `{server}`, tools.lock.json)"));
    }
    if let Some(d) = c.description.as_deref().or(c.title.as_deref()) {
        out.push_str(&format!(" — {d}"));
    }
    let fields = |schema: Option<&serde_json::Value>| -> Vec<String> {
        let props = schema.and_then(|s| s.get("properties")).and_then(|p| p.as_object());
        props
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("`{k}`: `{}`", crate::ir::Type::from_schema(v)))
            .collect()
    };
    let inputs = fields(c.input.as_ref());
    if !inputs.is_empty() {
        out.push_str(&format!("\n\ninputs: {}", inputs.join(", ")));
    }
    let outputs = fields(c.output.as_ref());
    if !outputs.is_empty() {
        out.push_str(&format!("\n\nreturns: {}", outputs.join(", ")));
    }
    Some(out)
}

/// Markdown for a hover.
pub fn hover(a: &Analysis, config: &Config, hit: &Hit) -> Option<String> {
    let wf = a.wf.as_ref()?;
    let ty = hit.ty.as_ref().map(|t| format!(": `{t}`")).unwrap_or_default();
    let text = match &hit.symbol {
        Symbol::Step(i) => step_hover(config, &wf.steps[*i]),
        Symbol::Capture(i) => capture_hover(config, &wf.steps[*i], &ty),
        Symbol::Param(i) => param_hover(&wf.params[*i]),
        Symbol::LoopVar(i) => {
            let s = &wf.steps[*i];
            let over = s.foreach.as_ref().map_or("", |f| f.text.as_str());
            format!(
                "**`{}`**{ty}\n\nloop item of step `{}` (foreach `{over}`)",
                s.loop_var_name(),
                s.id.value
            )
        }
        Symbol::Root(r) => {
            let what = match *r {
                "params" => "the run's params",
                "workflow" => "the workflow: `id`, `name`, `version`",
                "run" => "the run: `id`",
                "steps" => "the steps: `steps.<id>.status` is `done` or `skipped`",
                "loop" => "the loop: `loop.index` counts items from 0",
                _ => "",
            };
            format!("**`{r}`**{ty}\n\n{what}")
        }
        Symbol::Function(f) => format!("```\n{}\n```\n{}", f.signature(), f.doc),
        Symbol::Schema(n) => format!("**schema `{n}`** — `schemas/{n}.json`"),
        Symbol::Key(k) => {
            format!("**`{}`**{}\n\n{}", k.name, if k.required { " (required)" } else { "" }, k.description)
        }
        Symbol::Expr => format!("`{}`", hit.ty.as_ref()?),
    };
    Some(text)
}

/// A step's hover: what it calls (with the tool's contract), why, and its description.
fn step_hover(config: &Config, s: &Step) -> String {
    let mut out = format!("**step `{}`**", s.id.value);
    if let Some(c) = &s.call {
        out.push_str(&format!(" — calls `{}`", c.value));
        out.push_str(&tool_doc(config, &c.value).unwrap_or_default());
    }
    if let Some(r) = &s.rationale {
        out.push_str(&format!("\n\n{}", r.text));
    }
    if let Some(d) = &s.description {
        out.push_str(&format!("\n\n{d}"));
    }
    out
}

/// A capture's hover: its type (`ty`, already formatted) and what types it.
fn capture_hover(config: &Config, s: &Step, ty: &str) -> String {
    let name = s.capture_as.as_ref().map_or("", |c| c.value.as_str());
    let schema = match &s.success_schema {
        Some(SchemaRef::Named(n)) => format!(", schema `{}`", n.value),
        Some(SchemaRef::Inline { .. }) => ", inline schema".to_owned(),
        None => String::new(),
    };
    let each = if s.foreach.is_some() { " (one item per loop iteration)" } else { "" };
    let typed = match (&s.success_schema, &s.call) {
        (None, Some(c))
            if config.contract(&c.value).is_some_and(|t| t.types_capture && t.output.is_some()) =>
        {
            format!(", typed by the output schema of `{}`", c.value)
        }
        _ => String::new(),
    };
    format!("**`{name}`**{ty}\n\ncapture of step `{}`{schema}{typed}{each}", s.id.value)
}

/// A param's hover: its type, whether it is required, its description.
fn param_hover(p: &Param) -> String {
    let req = if p.required { "required" } else { "optional" };
    // The checker's types have one number; the schema says which.
    let ty = match p.schema.get("type").and_then(|t| t.as_str()) {
        Some("integer") => "integer".to_owned(),
        _ => p.ty.to_string(),
    };
    let mut out = format!("**`params.{}`**: `{ty}`\n\n{req} param", p.name.value);
    if let Some(d) = p.schema.get("description").and_then(|d| d.as_str()) {
        out.push_str(&format!(" — {d}"));
    }
    out
}
