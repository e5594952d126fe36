//! `WAIT_WITHOUT_TIMEOUT`
//!
//! *What it does*: reports an `await:` or a `wait_for:` with no
//! `timeout:`. `timeout: never` says the step waits for ever on purpose
//! and is not reported; `sleep:` and `sleep_until:` are their own time.
//!
//! *Why is this bad?* A question nobody answers, or an event that never
//! comes, parks the run for good: nothing fails, nothing says so.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::WaitKind;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (_, step) in cx.steps() {
        let Some(wait) = step.wait.as_deref() else { continue };
        if !matches!(wait.kind, WaitKind::Answer { .. } | WaitKind::Event { .. }) || wait.timeout().is_some()
        {
            continue;
        }
        let what = if matches!(wait.kind, WaitKind::Answer { .. }) { "an answer" } else { "its event" };
        out.push(
            Diagnostic::new(
                Code::WaitWithoutTimeout,
                wait.key.span,
                format!("step `{}` waits for {what} with no `timeout:`", step.id.value),
            )
            .with_help(format!(
                "add `timeout: 24h` under `{}:` (and `on_timeout:` to go on without it), or `timeout: never` to wait for ever on purpose",
                wait.key.value
            )),
        );
    }
}
