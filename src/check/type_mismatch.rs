//! `TYPE_MISMATCH`
//!
//! *What it does*: infers the type of every expression from the `params`
//! schema and the steps' `success_schema`s, and reports values used where
//! their type cannot work: a `when:` that is not a bool, a `foreach:` that is
//! not an array, operators and function arguments of the wrong type, a
//! tool input whose value cannot have the type the tool's input schema
//! gives it (a literal of another type, or a lone `<<expr>>` of another
//! type: `text: "<<idea>>"` when `idea` is an object), and a `success_schema`
//! that cannot hold what a locked tool returns (its `outputSchema`).
//!
//! *Why is this bad?* The run would fail, or silently take the wrong branch,
//! at the step that evaluates it — possibly hours into a workflow. There are
//! no implicit string↔number conversions to paper over it.

use crate::check::Cx;
use crate::check::infer::{Infer, loop_item_type};
use crate::diagnostic::Diagnostic;
use crate::ir::{ExprSite, Type};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    crate::check::tool_input::check_types(cx, out);
    crate::check::tool_input::check_success_schema(cx, out);
    for (i, step) in cx.steps() {
        let loop_item = loop_item_type(cx, i);
        for (expr, text, loc, site) in step.expressions() {
            check_expr(cx, i, (expr, text, loc, site), &loop_item, out);
        }
    }
    let outputs = if cx.whole() { cx.wf.output_expressions() } else { Vec::new() };
    for (expr, text, loc) in outputs {
        check_expr(cx, 0, (expr, text, loc, ExprSite::Output), &Type::Any, out);
    }
}

/// `TYPE_MISMATCH` in one expression of step `i` (any index for `outputs:`).
fn check_expr(
    cx: &Cx,
    i: usize,
    (expr, text, loc, site): (&crate::ir::ast::Expr, &str, &crate::ir::ScalarLoc, ExprSite),
    loop_item: &Type,
    out: &mut Vec<Diagnostic>,
) {
    let mut inf = Infer { cx, step: i, site, loc, text, loop_item: loop_item.clone(), out: Some(&mut *out) };
    let t = inf.infer(expr);
    match site {
        ExprSite::When => inf.expect_bool(expr, &t, "`when`"),
        ExprSite::Foreach if !matches!(t, Type::Array(_) | Type::Any | Type::Null) => {
            let help = match t {
                Type::Object(_) => Some("loop over `keys(x)` or `values(x)`".to_owned()),
                Type::String => Some("split it first, e.g. `split(x, ',')`".to_owned()),
                _ => None,
            };
            let span = cx.file_span(loc, text, expr.span);
            out.push(
                Diagnostic::new(
                    crate::diagnostic::Code::TypeMismatch,
                    span,
                    format!("`foreach` must be an array, found {}", t.article()),
                )
                .with_help_opt(help),
            );
        }
        _ => {}
    }
}
