//! `UNKNOWN_FUNCTION`
//!
//! *What it does*: reports a call to a function the expression language does
//! not have. The language has a fixed set (`len contains starts_with …`): no
//! user code, no I/O.
//!
//! *Why is this bad?* The expression cannot be evaluated; usually the name is
//! a typo or comes from another template language (`length`, `lowercase`).

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, did_you_mean, suggest};
use crate::ir::ast::ExprKind;
use crate::ir::ast::walk;
use crate::ir::builtins::{FUNCTIONS, lookup};

/// Names from other languages and what this one calls them.
const ALIASES: &[(&str, &str)] = &[
    ("length", "len"),
    ("size", "len"),
    ("count", "len"),
    ("lowercase", "lower"),
    ("uppercase", "upper"),
    ("toLower", "lower"),
    ("toUpper", "upper"),
    ("startsWith", "starts_with"),
    ("endsWith", "ends_with"),
    ("includes", "contains"),
    ("toJSON", "to_json"),
    ("fromJSON", "from_json"),
    ("strip", "trim"),
];

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (_, expr, text, loc, _) in cx.expressions() {
        walk(expr, &mut |e| {
            let ExprKind::Call { name, name_span, .. } = &e.kind else { return };
            if lookup(name).is_some() {
                return;
            }
            // An alias, a typo of a function, or a typo of an alias
            // (`lenght` → `length` → `len`).
            let alias_of = |n: &str| ALIASES.iter().find(|(from, _)| *from == n).map(|(_, to)| *to);
            let candidates = FUNCTIONS.iter().map(|f| f.name).chain(ALIASES.iter().map(|(from, _)| *from));
            let help = alias_of(name)
                .or_else(|| did_you_mean(name, candidates).map(|c| alias_of(c).unwrap_or(c)))
                .map(|to| format!("did you mean `{to}`?"))
                .or_else(|| suggest(name, FUNCTIONS.iter().map(|f| f.name)))
                .or_else(|| {
                    let names: Vec<&str> = FUNCTIONS.iter().map(|f| f.name).collect();
                    Some(format!("functions are: {}", names.join(", ")))
                });
            let span = cx.file_span(loc, text, *name_span);
            out.push(
                Diagnostic::new(Code::UnknownFunction, span, format!("unknown function `{name}`"))
                    .with_help_opt(help),
            );
        });
    }
}
