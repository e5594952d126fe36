//! `UNRESOLVED_VAR`
//!
//! *What it does*: reports a name an expression reads that is not in scope:
//! not `params`, `workflow`, `run`, `steps`, the loop variable or `loop` (in a
//! foreach step), nor any step's `capture_as`. Also a `params.X` that the
//! workflow does not declare, a `steps.X` that is not a step, and unknown
//! fields of `workflow`, `run`, `loop` and `steps.X`.
//!
//! *Why is this bad?* The value would be missing at run time; most often it
//! is a typo of a name that exists ("did you mean `mr_data`?").

use crate::check::Cx;
use crate::check::scope::{self, Binding, LOOP_FIELDS, RUN_FIELDS, STEP_FIELDS, WORKFLOW_FIELDS};
use crate::diagnostic::{Code, Diagnostic, Label, suggest};
use crate::ir::ExprSite;
use crate::ir::ast::walk;
use crate::ir::ast::{Expr, ExprKind};
use std::collections::HashMap;

/// Distinct unresolved names per file that get a "did you mean".
const MAX_SUGGESTIONS: usize = 256;

/// Unresolved names reported one by one per expression.
const MAX_PER_EXPRESSION: usize = 20;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    // "Did you mean" compares against every capture name: remember the answer
    // per name (and loop variable), so many errors stay linear.
    let mut memo: HashMap<(String, Option<String>), Option<String>> = HashMap::new();
    for (i, expr, text, loc, site) in cx.expressions() {
        // A generated expression can name thousands of unknowns: report
        // the first few, then one line for the rest.
        let mut reported = 0usize;
        let mut more = 0usize;
        let mut report =
            |span, message: String, help: Option<String>, label: Option<Label>, fix: Option<String>| {
                if reported == MAX_PER_EXPRESSION {
                    more += 1;
                    return;
                }
                reported += 1;
                let span = cx.file_span(loc, text, span);
                let mut d = Diagnostic::new(Code::UnresolvedVar, span, message).with_help_opt(help);
                if let Some(label) = label {
                    d = d.with_label(label.span, label.message);
                }
                if let Some(to) = fix {
                    d = d.with_fix(span, to);
                }
                out.push(d);
            };
        walk(expr, &mut |e| match &e.kind {
            ExprKind::Var(name) if scope::resolve(cx, i, site, name).is_none() => {
                let (message, help) = unresolved_root(cx, i, site, name, &mut memo);
                report(e.span, message, help, defined_at(cx, i, site, name), replacement(cx, i, site, name));
            }
            ExprKind::Field { base, name, name_span, .. } => {
                if let Some((message, help)) = bad_field(cx, i, site, base, name) {
                    report(*name_span, message, help, None, None);
                }
            }
            // `x['key']`: the same as `x.key` (step ids with `-` can only be read so).
            ExprKind::Index { base, index, .. } => {
                if let ExprKind::Str(key) = &index.kind
                    && let Some((message, help)) = bad_field(cx, i, site, base, key)
                {
                    report(index.span, message, help, None, None);
                }
            }
            _ => {}
        });
        if more > 0 {
            let span = cx.file_span(loc, text, expr.span);
            out.push(Diagnostic::new(
                Code::UnresolvedVar,
                span,
                format!("… and {more} more names in this expression that are not in scope"),
            ));
        }
    }
}

/// Where a name that is not in scope here *is* defined, as a label: the
/// loop variable of another step (its `as:`, or its `foreach` for `item`),
/// a param read without `params.`, a step id read as a value.
fn defined_at(cx: &Cx, step: usize, site: ExprSite, name: &str) -> Option<Label> {
    let looping = scope::looping(cx, step, site);
    let loop_of = |o: &crate::ir::Step| -> Option<Label> {
        let at = match &o.loop_var {
            Some(var) => var.span,
            None => o.foreach.as_ref()?.loc.span,
        };
        let var = o.loop_var_name();
        Some(Label { span: at, message: format!("`{var}` is the loop variable of `{}` here", o.id.value) })
    };
    if let Some(s) = looping
        && (name == s.loop_var_name() || name == "item")
    {
        // Its own loop variable, read in `foreach` or as `item` after `as:`.
        return if site == ExprSite::Foreach || name != s.loop_var_name() { loop_of(s) } else { None };
    }
    if let Some(other) = cx.wf.steps.iter().find(|o| o.foreach.is_some() && o.loop_var_name() == name) {
        return loop_of(other);
    }
    if let Some(p) = cx.wf.params.iter().find(|p| p.name.value == name) {
        return Some(Label { span: p.name.span, message: format!("`{name}` is declared here as a param") });
    }
    let j = *cx.step_index.get(name)?;
    Some(Label { span: cx.wf.steps[j].id.span, message: format!("`{name}` is this step's id") })
}

/// The one certain rewrite of a name that is not in scope, besides a
/// did-you-mean: a param read without `params.`, a step id read where its
/// capture is meant, `item` in a step whose loop variable is renamed.
fn replacement(cx: &Cx, step: usize, site: ExprSite, name: &str) -> Option<String> {
    if let Some(s) = scope::looping(cx, step, site)
        && site != ExprSite::Foreach
        && name == "item"
        && s.loop_var_name() != "item"
    {
        return Some(s.loop_var_name().to_owned());
    }
    if cx.wf.params.iter().any(|p| p.name.value == name) && scope::resolve(cx, step, site, "params").is_some()
    {
        return Some(format!("params.{name}"));
    }
    let j = *cx.step_index.get(name)?;
    let capture = cx.wf.steps[j].capture_as.as_ref()?;
    scope::resolve(cx, step, site, &capture.value).map(|_| capture.value.to_string())
}

fn unresolved_root(
    cx: &Cx,
    step: usize,
    site: ExprSite,
    name: &str,
    memo: &mut HashMap<(String, Option<String>), Option<String>>,
) -> (String, Option<String>) {
    let looping = scope::looping(cx, step, site);
    if let Some(s) = looping
        && site == ExprSite::Foreach
        && (name == s.loop_var_name() || name == "loop")
    {
        return (
            format!("`{name}` is not in scope in `foreach`"),
            Some("the loop variable exists only inside the loop: in `when` and `input_template`".into()),
        );
    }
    if let Some(s) = looping
        && name == "item"
        && s.loop_var_name() != "item"
    {
        let var = s.loop_var_name();
        return (
            format!("`item` is not in scope: this step's loop variable is `{var}`"),
            Some(format!("`as: {var}` renames the loop variable; write `{var}`")),
        );
    }
    if name == "loop" || name == "item" {
        return (format!("`{name}` is only in scope in a step with `foreach`"), None);
    }
    // The loop variable of another step: it exists only inside that step.
    if let Some(other) = cx.wf.steps.iter().find(|o| o.foreach.is_some() && o.loop_var_name() == name) {
        return (
            format!("`{name}` is not in scope"),
            Some(format!(
                "`{name}` is the loop variable of step `{}`; it exists only inside that step",
                other.id.value
            )),
        );
    }
    if cx.wf.params.iter().any(|p| p.name.value == name) {
        return (format!("`{name}` is not in scope"), Some(format!("params are read as `params.{name}`")));
    }
    if let Some(j) = cx.step_index.get(name) {
        let help = match &cx.wf.steps[*j].capture_as {
            Some(c) => format!("`{name}` is a step id; read its result by its capture name `{}`", c.value),
            None => format!("`{name}` is a step id; add `capture_as: {name}` to it to read its result"),
        };
        return (format!("`{name}` is not in scope"), Some(help));
    }
    let in_loop = looping.filter(|_| site != ExprSite::Foreach);
    let key = (name.to_owned(), in_loop.map(|s| s.loop_var_name().to_owned()));
    if let Some(help) = memo.get(&key) {
        return (format!("`{name}` is not in scope"), help.clone());
    }
    // Each suggestion compares against every name in scope; past a few
    // hundred distinct misses a file is not a typo, so stop paying for them.
    let help =
        (memo.len() < MAX_SUGGESTIONS).then(|| suggest(name, scope::visible_names(cx, step, site))).flatten();
    memo.insert(key, help.clone());
    (format!("`{name}` is not in scope"), help)
}

/// A field read from a capture typed by a tool's output schema that the
/// result does not have.
fn tool_field(cx: &Cx, step: usize, root: &str, name: &str) -> Option<(String, Option<String>)> {
    let tool = cx.capture_tool[step]?;
    let crate::ir::Type::Object(o) = &*cx.capture_types[step] else { return None };
    if o.open || o.fields.contains_key(name) {
        return None;
    }
    if tool.sub_workflow {
        let help = suggest(name, o.fields.keys().map(String::as_str)).unwrap_or_else(|| {
            if o.fields.is_empty() {
                format!("`{}` declares no `outputs:`", tool.name)
            } else {
                let names = o.fields.keys().cloned().collect::<Vec<_>>().join(", ");
                format!("`{}` declares these `outputs:`: {names}", tool.name)
            }
        });
        let message = format!("`{root}.{name}`: workflow `{}` has no output `{name}`", tool.name);
        return Some((message, Some(help)));
    }
    let help = suggest(name, o.fields.keys().map(String::as_str)).or_else(|| {
        Some(format!(
            "`{}` returns: {}; a step the client answers in its own shape says so with `success_schema`",
            tool.name,
            o.fields.keys().cloned().collect::<Vec<_>>().join(", ")
        ))
    });
    Some((format!("`{root}.{name}`: `{}` returns no field `{name}`", tool.name), help))
}

fn bad_field(
    cx: &Cx,
    step: usize,
    site: ExprSite,
    base: &Expr,
    name: &str,
) -> Option<(String, Option<String>)> {
    match &base.kind {
        ExprKind::Var(root) => {
            let known = match scope::resolve(cx, step, site, root)? {
                Binding::Params => cx.wf.params.iter().any(|p| p.name.value == name),
                Binding::Steps => cx.step_index.contains_key(name),
                Binding::Workflow => WORKFLOW_FIELDS.contains(&name),
                Binding::Run => RUN_FIELDS.contains(&name),
                Binding::Loop => LOOP_FIELDS.contains(&name),
                Binding::Capture(i) => {
                    return tool_field(cx, i, root, name)
                        .or_else(|| crate::check::waits::unknown_field(cx, i, root, name));
                }
                Binding::LoopVar => true,
            };
            if known {
                return None;
            }
            let (fields, what): (Vec<&str>, &str) = match scope::resolve(cx, step, site, root)? {
                Binding::Params => (cx.wf.params.iter().map(|p| p.name.value.as_str()).collect(), "param"),
                Binding::Steps => (cx.step_index.keys().copied().collect(), "step"),
                Binding::Workflow => (WORKFLOW_FIELDS.to_vec(), "field of `workflow`"),
                Binding::Run => (RUN_FIELDS.to_vec(), "field of `run`"),
                Binding::Loop => (LOOP_FIELDS.to_vec(), "field of `loop`"),
                Binding::LoopVar | Binding::Capture(_) => return None,
            };
            // `steps.mr` where `mr` is a capture: point at the step that captures it.
            let captured_by = (root == "steps")
                .then(|| cx.wf.steps.iter().find(|s| s.capture_as.as_ref().is_some_and(|c| c.value == name)))
                .flatten();
            let help = match captured_by {
                Some(s) => Some(format!(
                    "`{name}` is the capture of step `{0}`; its status is `steps.{0}.status`",
                    s.id.value
                )),
                None => suggest(name, fields.iter().copied()).or_else(|| {
                    (root == "params" && fields.is_empty()).then(|| "declare it under `params:`".to_owned())
                }),
            };
            let message = if root == "params" {
                format!("`params.{name}` is not a declared param")
            } else {
                format!("`{name}` is not a {what}")
            };
            Some((message, help))
        }
        ExprKind::Field { .. } | ExprKind::Index { .. }
            if crate::check::infer::is_step_ref(cx, step, site, base) =>
        {
            let step_id = match &base.kind {
                ExprKind::Field { name, .. } => name.as_str(),
                ExprKind::Index { index, .. } => match &index.kind {
                    ExprKind::Str(k) => k.as_str(),
                    _ => return None,
                },
                _ => return None,
            };
            if !cx.step_index.contains_key(step_id) || STEP_FIELDS.contains(&name) {
                return None;
            }
            let help = match suggest(name, STEP_FIELDS.iter().copied()) {
                Some(s) => format!("{s} (a step exposes only `status`: `done` or `skipped`)"),
                None => "a step exposes only `status` (`done` or `skipped`)".into(),
            };
            Some((format!("`steps.{step_id}` has no field `{name}`"), Some(help)))
        }
        _ => None,
    }
}
