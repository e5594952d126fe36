//! `UNKNOWN_TOOL`
//!
//! *What it does*: reports a `call` the tool manifest does not list (with a
//! manifest), and a call to a server of `tools.lock.json` that names none of
//! its tools. A tool's inputs are `UNKNOWN_INPUT` and `MISSING_INPUT`.
//!
//! *Why is this bad?* The client cannot run a tool it does not have.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, suggest};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let Some(call) = &step.call else { continue };
        if let Some(manifest) = &cx.config.tools
            && !manifest.contains(&call.value)
            && cx.contract(i).is_none()
        {
            let help = suggest(&call.value, manifest.tools.keys().map(String::as_str));
            out.push(
                Diagnostic::new(Code::UnknownTool, call.span, format!("unknown tool `{}`", call.value))
                    .with_help_opt(
                        help.or_else(|| Some("the tool manifest (--tools) does not list it".into())),
                    ),
            );
            continue;
        }
        if let Some(table) = &cx.config.lock
            && let Some(server) = table.lock.server_of(&call.value)
            && cx.contract(i).is_none()
        {
            let tools = table.lock.servers[server].tools.iter().map(|t| format!("{server}.{}", t.name));
            let tools: Vec<String> = tools.collect();
            let help = suggest(&call.value, tools.iter().map(String::as_str)).unwrap_or_else(|| {
                let more = tools.len().saturating_sub(20);
                let shown = tools.iter().take(20).cloned().collect::<Vec<_>>().join(", ");
                let more = if more > 0 { format!(" and {more} more") } else { String::new() };
                format!("`{server}` has: {shown}{more} (tools.lock.json)")
            });
            out.push(
                Diagnostic::new(
                    Code::UnknownTool,
                    call.span,
                    format!("server `{server}` has no tool `{}`", call.value),
                )
                .with_help(help),
            );
        }
    }
}
