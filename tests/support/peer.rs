//! What a test says when a peer it started (chromium, Neovim, the model
//! server) dies under it: which process, how it ended — its exit status, or
//! the signal that killed it by name — and the last lines of its log, at
//! once, instead of a later, vaguer failure ("no answer in time").

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;

/// How a process ended, for a person: `exited with status 1`, or
/// `killed by signal 11 (SIGSEGV)`.
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal} ({})", signal_name(signal)),
        (None, None) => format!("ended ({status})"),
    }
}

/// The usual name of a signal number on Linux.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => "signal",
    }
}

/// The last `lines` lines of a log file (or why there are none).
pub fn log_tail(path: &Path, lines: usize) -> String {
    match std::fs::read(path) {
        Ok(bytes) => tail_of(&String::from_utf8_lossy(&bytes), lines),
        Err(e) => format!("(no log at {}: {e})", path.display()),
    }
}

/// The last `lines` lines of `text`.
pub fn tail_of(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let tail = all[all.len().saturating_sub(lines)..].join("\n");
    if tail.trim().is_empty() { "(its log is empty)".to_owned() } else { tail }
}

/// The report for a peer that died: `chromium (pid 123) killed by signal
/// 11 (SIGSEGV); the last lines of its log (PATH):\n…`.
pub fn died(name: &str, pid: u32, status: ExitStatus, log: &Path) -> String {
    format!(
        "{name} (pid {pid}) died: {}; the last lines of its log ({}):\n{}",
        describe_exit(status),
        log.display(),
        log_tail(log, 20)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_is_named_and_a_code_is_given() {
        assert_eq!(describe_exit(ExitStatus::from_raw(11)), "killed by signal 11 (SIGSEGV)");
        assert_eq!(describe_exit(ExitStatus::from_raw(9)), "killed by signal 9 (SIGKILL)");
        assert_eq!(describe_exit(ExitStatus::from_raw(1 << 8)), "exited with status 1");
        assert_eq!(tail_of("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail_of("", 2), "(its log is empty)");
    }
}
