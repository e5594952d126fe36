//! The time runs are recorded at and their deadlines compared with:
//! [`now`], the system's, unless the binary's own tests moved it forward
//! with a *test clock* ([`use_test_clock`]). A leaf, so that both the
//! engine (`runtime::clock`, which re-exports it with the RFC 3339
//! helpers) and the stores (the file store's timer index compares its
//! markers with it) read the same time.
//!
//! A test clock is a file of lines, each a number of milliseconds; the
//! clock reads the system's time plus the largest of them, so it only
//! moves forward, and every process pointed at the same file (the CLI,
//! `serve`, `exec`) reads the same time. [`advance_to`] appends a line, so
//! that a test ends a wait's deadline without sleeping through it, and
//! `exec` jumps over a short wait rather than sleeping. The binary turns it
//! on only in a debug build, from `SAVANT_TEST_CLOCK` (the capability
//! matrix, `tests/it/matrix.rs`); a release build ignores the variable.

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
}
