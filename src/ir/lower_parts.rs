//! Lowering that remembers what each item of `steps:` gave, so that the
//! language server re-lowers only the item an edit touched
//! (`check::incremental`), and moving a lowered workflow's spans after an
//! edit.

use super::*;

/// What lowering one item of `steps:` gave.
#[derive(Clone, Debug)]
pub struct Item {
    /// The item's node.
    pub span: Span,
    /// Whether it gave a step (an item that is not a mapping, or has no
    /// `id`, gives none).
    pub lowered: bool,
    /// Its lowering diagnostics.
    pub diags: Vec<Diagnostic>,
    /// Its bytes of expression text, counted against the file's budget.
    pub expr_bytes: usize,
    /// Its YAML nodes, counted against `Limits::max_nodes`.
    pub nodes: usize,
}

/// A lowered file, with the lowering diagnostics by where they came from.
#[derive(Clone, Debug)]
pub struct Parts {
    pub wf: Workflow,
    /// The diagnostics of everything but the items of `steps:`, in the
    /// order they were found.
    pub head: Vec<Diagnostic>,
    /// Each item of `steps:`, in file order (one [`Step`] each that was lowered).
    pub items: Vec<Item>,
    /// Expression bytes outside the items.
    pub head_expr_bytes: usize,
    /// YAML nodes in the whole file.
    pub nodes: usize,
}

/// While recording: one item, its diagnostics as a range of `Lower::diags`.
pub(super) struct Record {
    pub span: Span,
    pub lowered: bool,
    pub diags: std::ops::Range<usize>,
    pub expr_bytes: usize,
    pub nodes: usize,
}

/// [`lower`], keeping each item's diagnostics apart. The workflow and the
/// diagnostics (head and items together) are exactly [`lower`]'s.
pub fn lower_parts(src: &SourceFile, root: Node, default_id: &str) -> Parts {
    let nodes = root.count();
    let mut cx = Lower::new(src, expr_budget(src.text.len()), Some(Vec::new()));
    let mut wf = cx.workflow(root, default_id);
    wf.has_expr_errors = cx.diags.iter().any(|d| d.code == Code::ExprSyntax);
    let records = cx.items.take().unwrap_or_default();
    let mut head = Vec::new();
    let mut items: Vec<Item> = Vec::with_capacity(records.len());
    let mut diags = cx.diags.into_iter().enumerate().peekable();
    for r in records {
        while let Some((_, d)) = diags.next_if(|(i, _)| *i < r.diags.start) {
            head.push(d);
        }
        let own = diags.by_ref().take(r.diags.len()).map(|(_, d)| d).collect();
        items.push(Item {
            span: r.span,
            lowered: r.lowered,
            diags: own,
            expr_bytes: r.expr_bytes,
            nodes: r.nodes,
        });
    }
    head.extend(diags.map(|(_, d)| d));
    let item_bytes: usize = items.iter().map(|i| i.expr_bytes).sum();
    Parts { wf, head, items, head_expr_bytes: cx.expr_bytes - item_bytes, nodes }
}

/// Lowers one item of `steps:` of `src` (its node already placed in the
/// file), as [`lower_parts`] would within the whole file when the file's
/// expressions stay under budget.
pub fn lower_item(src: &SourceFile, node: &Node) -> (Option<Step>, Item) {
    let mut cx = Lower::new(src, usize::MAX, None);
    let step = cx.step(node);
    let item = Item {
        span: node.span,
        lowered: step.is_some(),
        diags: cx.diags,
        expr_bytes: cx.expr_bytes,
        nodes: node.count(),
    };
    (step, item)
}

/// Moves every span of a lowered workflow as an edit of `delta` bytes at
/// `at` moves the text (see [`Span::moved`]).
pub fn move_spans(wf: &mut Workflow, at: u32, delta: i64) {
    let mv = |s: &mut Span| *s = s.moved(at, delta);
    for p in &mut wf.params {
        mv(&mut p.name.span);
    }
    for o in &mut wf.outputs {
        mv(&mut o.name.span);
        mv(&mut o.value.loc.span);
    }
    for step in &mut wf.steps {
        move_step(step, at, delta);
    }
}

/// [`move_spans`] for one step.
pub fn move_step(step: &mut Step, at: u32, delta: i64) {
    let mv = |s: &mut Span| *s = s.moved(at, delta);
    mv(&mut step.id.span);
    mv(&mut step.span);
    for s in [&mut step.call, &mut step.uses, &mut step.capture_as, &mut step.loop_var].into_iter().flatten()
    {
        mv(&mut s.span);
    }
    step.deps.iter_mut().for_each(|d| mv(&mut d.span));
    if let Some(t) = &mut step.input_template {
        move_value(t, at, delta);
    }
    match &mut step.success_schema {
        Some(SchemaRef::Named(s)) => mv(&mut s.span),
        Some(SchemaRef::Inline { span, .. }) => mv(span),
        None => {}
    }
    for e in [&mut step.when, &mut step.foreach].into_iter().flatten() {
        mv(&mut e.loc.span);
    }
    if let Some(r) = &mut step.rationale {
        mv(&mut r.loc.span);
    }
    if let Some(w) = &mut step.wait {
        move_wait(w, at, delta);
    }
}

fn move_wait(w: &mut crate::ir::Wait, at: u32, delta: i64) {
    use crate::ir::{WaitKind, WaitTimeout};
    let mv = |s: &mut Span| *s = s.moved(at, delta);
    mv(&mut w.key.span);
    let (timeout, on_timeout) = match &mut w.kind {
        WaitKind::Answer { ask, timeout, on_timeout } => {
            mv(&mut ask.loc.span);
            (timeout, on_timeout)
        }
        WaitKind::Event { event, key, timeout, on_timeout } => {
            mv(&mut event.span);
            if let Some(k) = key {
                mv(&mut k.loc.span);
            }
            (timeout, on_timeout)
        }
        WaitKind::Sleep { span, .. } => return mv(span),
        WaitKind::SleepUntil { at: t } => return mv(&mut t.loc.span),
    };
    if let Some(WaitTimeout::Never(span) | WaitTimeout::After { span, .. }) = timeout {
        mv(span);
    }
    if let Some(o) = on_timeout {
        mv(&mut o.span);
    }
}

fn move_value(v: &mut TemplateValue, at: u32, delta: i64) {
    match v {
        TemplateValue::Null(s) | TemplateValue::Bool(_, s) | TemplateValue::Number(_, s) => {
            *s = s.moved(at, delta)
        }
        TemplateValue::String(t) => t.loc.span = t.loc.span.moved(at, delta),
        TemplateValue::Array(items, s) => {
            *s = s.moved(at, delta);
            items.iter_mut().for_each(|i| move_value(i, at, delta));
        }
        TemplateValue::Object(entries, s) => {
            *s = s.moved(at, delta);
            for (k, v) in entries {
                k.span = k.span.moved(at, delta);
                move_value(v, at, delta);
            }
        }
    }
}
