//! `DESTRUCTIVE_CALL` (opt-in: `[check] select = ["DESTRUCTIVE_CALL"]`)
//!
//! *What it does*: reports a step that calls a tool marked
//! `destructiveHint: true` (in `tools.lock.json`, or an engine tool such as
//! `think.reset`) when nothing stands before it: no `when:` guard, and no
//! step it depends on (explicitly or by reading its capture) asks the user
//! first (`prompt.say`).
//!
//! *Why is this bad?* A workflow runs unattended (`exec`) or is driven by a
//! model: a destructive call that nothing guards runs whenever the step is
//! reached, and what it removes cannot be brought back.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    if !cx.config.select.contains(&Code::DestructiveCall) {
        return;
    }
    for (i, step) in cx.steps() {
        let Some(call) = &step.call else { continue };
        let Some(tool) = cx.contract(i).filter(|c| c.hints.destructive == Some(true)) else { continue };
        if step.when.is_some() {
            continue;
        }
        let asks = cx.graph.deps_of(i).any(|d| {
            cx.wf.steps[d]
                .call
                .as_ref()
                .is_some_and(|c| matches!(c.value.as_str(), "prompt.say" | "prompt_say"))
        });
        if asks {
            continue;
        }
        let owner = tool.server.as_ref().map_or("the engine".to_owned(), |s| format!("server `{s}`"));
        out.push(
            Diagnostic::new(
                Code::DestructiveCall,
                call.span,
                format!("`{}` is destructive ({owner} says so) and nothing guards this step", call.value),
            )
            .with_help("ask first (a `prompt.say` step it depends on) or guard it with `when:`"),
        );
    }
}
