//! How the binary writes to stdout, for every command: whether the human
//! formats paint (`--color`, `NO_COLOR`, `FORCE_COLOR` / `CLICOLOR_FORCE`,
//! then whether stdout is a terminal), how wide they draw (`COLUMNS`), and
//! printing text or an engine tool's JSON reply. A leaf of `cli/`: the
//! command files use it, it uses none of them.

use savant_think::runtime::EngineResult;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// `--color`: whether the human format paints.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Whether the human format paints: `--color`, then NO_COLOR, FORCE_COLOR /
/// CLICOLOR_FORCE, then whether stdout is a terminal.
pub fn color(choice: ColorChoice) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set("NO_COLOR") => false,
        ColorChoice::Auto if set("FORCE_COLOR") || set("CLICOLOR_FORCE") => true,
        ColorChoice::Auto => stdout_is_terminal(),
    }
}

/// Whether the human format paints, for a command without `--color`.
pub fn auto_color() -> bool {
    color(ColorChoice::Auto)
}

/// The width to draw in: `COLUMNS` (at least 40), else 100.
pub fn width() -> usize {
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).filter(|&w: &usize| w >= 40).unwrap_or(100)
}

/// Whether stdout is a terminal (a person reads it).
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Prints `text` as it is: exit 0.
pub fn print(text: &str) -> ExitCode {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

/// Prints a tool result as JSON: exit 0 on success, 1 on an error object.
pub fn print_result(result: EngineResult) -> ExitCode {
    let (value, code) = match result {
        Ok(v) => (v, ExitCode::SUCCESS),
        Err(e) => (e.to_json(), ExitCode::from(1)),
    };
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    code
}
