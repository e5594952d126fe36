//! `UNDECLARED_EVENT`
//!
//! *What it does*: reports a `wait_for:` whose `event:` savant-think.toml
//! does not declare under `[events.NAME]`, with a did-you-mean among the
//! declared events (or how to declare one, when the project has none).
//! Checked where the project's savant-think.toml is known (`check`, the
//! language server).
//!
//! *Why is this bad?* `signal` refuses an event nobody declared
//! (`UNKNOWN_EVENT`): the step would wait until its timeout, or for ever.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::WaitKind;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    let Some(events) = cx.config.events.as_deref() else { return };
    for (_, step) in cx.steps() {
        let Some(WaitKind::Event { event, .. }) = step.wait.as_deref().map(|w| &w.kind) else { continue };
        let name = event.value.as_str();
        if events.contains_key(name) {
            continue;
        }
        let help = suggest(name, events.keys().map(String::as_str)).unwrap_or_else(|| {
            let quoted = if name.contains('.') { format!("\"{name}\"") } else { name.to_owned() };
            format!(
                "declare it in savant-think.toml: `[events.{quoted}]` with its payload's `schema = {{ type = \"object\", … }}`"
            )
        });
        let declared = if events.is_empty() {
            "savant-think.toml declares no events".to_owned()
        } else {
            "savant-think.toml does not declare it under `[events.NAME]`".to_owned()
        };
        out.push(
            Diagnostic::new(Code::UndeclaredEvent, event.span, format!("unknown event `{name}`: {declared}"))
                .with_help(help),
        );
    }
}
