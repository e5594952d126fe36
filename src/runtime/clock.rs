//! Times as runs record them: RFC 3339 text in, RFC 3339 text out (UTC,
//! whole seconds for deadlines). Parsing takes a `Z` or a numeric offset
//! (`2026-11-29T10:00:00+02:00`), and a date alone (midnight UTC).
//!
//! [`now`] is the time runs are recorded at and their deadlines compared
//! with: the system's, unless the binary's own tests moved it forward with
//! a *test clock* ([`use_test_clock`]). A test clock is a file of lines,
//! each a number of milliseconds; the clock reads the system's time plus
//! the largest of them, so it only moves forward, and every process
//! pointed at the same file (the CLI, `serve`, `exec`) reads the same
//! time. [`advance_to`] appends a line, so that a test ends a wait's
//! deadline without sleeping through it, and `exec` jumps over a short
//! wait rather than sleeping. The binary turns it on only in a debug
//! build, from `SAVANT_TEST_CLOCK` (the capability matrix,
//! `tests/it/matrix.rs`); a release build ignores the variable.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// The test clock's file, once [`use_test_clock`] is called.
static TEST_CLOCK: OnceLock<PathBuf> = OnceLock::new();

/// For tests only: from now on, [`now`] reads the system's time moved
/// forward by the test clock in `file` (see the module). Only the first
/// call counts.
pub fn use_test_clock(file: PathBuf) {
    let _ = TEST_CLOCK.set(file);
}

/// Whether a test clock is in use.
pub fn is_test_clock() -> bool {
    TEST_CLOCK.get().is_some()
}

/// The time now, as runs see it: the system's, moved forward by the test
/// clock when one is used.
pub fn now() -> SystemTime {
    let real = SystemTime::now();
    match TEST_CLOCK.get() {
        Some(file) => real + test_offset(file),
        None => real,
    }
}

/// The test clock's offset: the largest number of milliseconds in `file`
/// (none, or an unreadable file: zero).
fn test_offset(file: &std::path::Path) -> Duration {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let ms = text.lines().filter_map(|l| l.trim().parse::<u64>().ok()).max().unwrap_or(0);
    Duration::from_millis(ms)
}

/// Moves the test clock forward so that [`now`] reads `at` or later;
/// `false` (and nothing done) when no test clock is in use.
pub fn advance_to(at: SystemTime) -> bool {
    use std::io::Write;
    let Some(file) = TEST_CLOCK.get() else { return false };
    let needed = at.duration_since(SystemTime::now()).unwrap_or_default();
    // One short line, appended: writers never undo each other.
    let line = format!("{}\n", needed.as_millis() + 1);
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    appended.is_ok()
}

/// Parses an RFC 3339 time (`Z`, or an offset `±HH:MM`), or a date
/// (`2026-11-29`, midnight UTC). It lives with the wait syntax, so that
/// the checker reads `sleep_until:` literals as the runtime does.
pub use crate::ir::lower::parse_time;

/// `t` as RFC 3339 in UTC, whole seconds: how deadlines are written.
pub fn format_time(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// `at` (RFC 3339) plus `secs`, as a deadline: rounded up to the whole
/// second, so that a wait never ends before its time (`timeout: 1s` from
/// `…:00.950` ends at `…:02`, not 50 ms later); `None` when `at` does not parse.
pub fn deadline_after(at: &str, secs: u64) -> Option<String> {
    let end = parse_time(at)?.checked_add(Duration::from_secs(secs))?;
    let part = end.duration_since(SystemTime::UNIX_EPOCH).ok()?.subsec_nanos();
    let end =
        if part == 0 { end } else { end.checked_add(Duration::from_nanos(u64::from(1_000_000_000 - part)))? };
    Some(format_time(end))
}

/// Whether deadline `deadline` has passed at `now` (both RFC 3339; a
/// deadline that does not parse never passes).
pub fn is_due(deadline: &str, now: SystemTime) -> bool {
    parse_time(deadline).is_some_and(|d| d <= now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_clock_only_moves_forward() {
        let dir = std::env::temp_dir().join(format!("savant-clock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("clock");
        std::fs::write(&file, "5000\n100\nnot a number\n").unwrap();
        assert_eq!(test_offset(&file), Duration::from_millis(5000));
        assert_eq!(test_offset(&dir.join("missing")), Duration::ZERO);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn times_with_zones() {
        let z = parse_time("2026-11-29T10:00:00Z").unwrap();
        assert_eq!(parse_time("2026-11-29T12:00:00+02:00"), Some(z));
        assert_eq!(parse_time("2026-11-29T05:30:00-04:30"), Some(z));
        assert_eq!(format_time(z), "2026-11-29T10:00:00Z");
        assert_eq!(deadline_after("2026-11-29T10:00:00.250Z", 90).as_deref(), Some("2026-11-29T10:01:31Z"));
        assert_eq!(deadline_after("2026-11-29T10:00:00Z", 90).as_deref(), Some("2026-11-29T10:01:30Z"));
        assert_eq!(format_time(parse_time("2026-11-29").unwrap()), "2026-11-29T00:00:00Z");
        assert!(parse_time("tomorrow").is_none());
        assert!(parse_time("2026-11-29T10:00:00+25:00").is_none());
        assert!(parse_time("").is_none());
        assert!(parse_time("ééééééé").is_none());
    }
}
