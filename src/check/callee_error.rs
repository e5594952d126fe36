//! `CALLEE_ERROR`
//!
//! *What it does*: checks the workflow a `uses:` names (with the project's
//! other files, as its own check would) and, when it has an error, reports
//! it at the `uses:` line: the callee, the first error's code, message and
//! place — followed down when the callee's first error is that one of its
//! own callees has one. Reached from `workflow_cycle.rs` once no cycle is
//! below the `uses:` and the chain is not too deep.
//!
//! *Why is this bad?* `plan` refuses a workflow whose callee (at any depth)
//! does not compile: a run would fail at the first child that cannot
//! start. Checking only the changed files (as pre-commit does) must say so
//! at the parent too.
//!
//! Each callee is checked once per table ([`WorkflowTable::checked`]), and
//! a file checked both as a callee and as itself reuses that check.

use crate::check::Cx;
use crate::check::workflows::WorkflowTable;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;

/// The `CALLEE_ERROR` of a `uses: callee` at `span`, if the callee has an error.
pub(crate) fn diagnostic(
    cx: &Cx,
    table: &WorkflowTable,
    callee: &str,
    span: Span,
    here: String,
) -> Option<Diagnostic> {
    let fault = table.checked(callee, cx.config)?.fault.as_ref()?;
    let mut chain: Vec<&str> = vec![callee];
    chain.extend(fault.via.iter().map(String::as_str));
    let whose = match &chain[1..] {
        [] => format!("`{callee}` has"),
        [only] => format!("`{callee}` cannot run: it uses `{only}`, which has"),
        below => {
            let path = below.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" → ");
            format!("`{callee}` cannot run: it uses {path}, and `{}` has", fault.workflow)
        }
    };
    let more = match fault.errors {
        0 | 1 => String::new(),
        n => format!(" (the first of {n} errors there)"),
    };
    let message = format!("{whose} an error: {} {}", fault.code.as_str(), fault.message);
    let help = format!(
        "at {}:{}:{}{more}; fix it there (`savant-think check {}`): `plan` refuses this workflow until `{callee}` checks clean",
        fault.path, fault.line, fault.column, fault.path
    );
    Some(Diagnostic::new(Code::CalleeError, span, message).with_label(span, here).with_help(help))
}
