//! The one way a test skips itself because something it needs is not on the
//! machine: it says why and how to install it — and in CI (`CI` set to
//! anything but `0`/`false`, as `.ci/run` does) or with the test's own
//! `SAVANT_REQUIRE_*` variable set to `1`, a skip is a failure, so a CI run
//! never passes by testing less.

/// Whether skips fail: `CI` is set (and not `0`/`false`), or `require` (a
/// `SAVANT_REQUIRE_*` variable) is `1`.
pub fn required(require: Option<&str>) -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    ci || require.is_some_and(|var| std::env::var(var).is_ok_and(|v| v == "1"))
}

/// Skips `test` because `why` (install hint included), or fails it when
/// skips are not allowed here ([`required`]). Returns so the caller can
/// `return` right after.
///
/// # Panics
/// In CI, or when `require` is set to `1`.
pub fn skip(test: &str, why: &str, require: Option<&str>) {
    assert!(
        !required(require),
        "{test} cannot be skipped here (CI{}): {why}",
        require.map(|v| format!(" or {v}=1")).unwrap_or_default()
    );
    // Straight to stderr: the harness captures `eprintln!` of passing tests.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "note: {test} SKIPPED: {why}");
}
