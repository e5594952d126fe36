//! Times as runs record them: RFC 3339 text in, RFC 3339 text out (UTC,
//! whole seconds for deadlines). Parsing takes a `Z` or a numeric offset
//! (`2026-11-29T10:00:00+02:00`), and a date alone (midnight UTC).
//!
//! [`now`] is the time runs are recorded at and their deadlines compared
//! with: the system's, unless the binary's own tests moved it forward with
//! a test clock. It lives in the leaf `crate::clock` (re-exported here), so
//! that the stores read the same time (the file store's timer index).

use std::time::{Duration, SystemTime};

pub use crate::clock::{advance_to, is_test_clock, now, use_test_clock};

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
