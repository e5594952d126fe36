//! The `concise` format: one line per diagnostic,
//! `path:line:col: severity[CODE] message`, for vim's `errorformat`, VS Code
//! problem matchers and `grep`. Help goes after ` (help: …)` on the same line.

use super::{FileReport, line_cols};
use std::fmt::Write;

pub(super) fn render(reports: &[FileReport<'_>]) -> String {
    let mut out = String::new();
    for report in reports {
        for d in report.diagnostics {
            let (start, _) = line_cols(report.source, d.span);
            // One line each: newlines in a message become spaces.
            let message = d.message.replace(['\n', '\r'], " ");
            let _ = write!(
                out,
                "{}:{}:{}: {}[{}] {message}",
                report.source.path,
                start.line,
                start.column,
                d.severity.as_str(),
                d.code
            );
            if let Some(help) = &d.help {
                let _ = write!(out, " (help: {})", help.replace(['\n', '\r'], " "));
            }
            out.push('\n');
        }
    }
    out
}
