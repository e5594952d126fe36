//! `check --fix` and `check --diff`: the edits diagnostics carry, applied
//! to files, shown as a diff, or written to stdout for `-`.

use crate::common::{CRATE, Root, assert_exit, cmd, run, run_cmd};
use savant_think::check::{Config, check_source, fix};
use savant_think::diagnostic::Code;
use savant_think::source::SourceFile;
use savant_think::workspace;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

/// Four mistakes, each with one certain fix, plus one without a fix.
const BROKEN: &str = "params:
  topic: { type: string }
steps:
  - id: fetch
    cal: prompt.say
    args: { text: \"<<paramz.topic>>\" }
    capture_as: fetched
  - id: use
    call: prompt.say
    deps: [fetchh]
    input_template: { text: \"<<fetchd>> and <<nothing_like_it>>\" }
";

const FIXED: &str = "params:
  topic: { type: string }
steps:
  - id: fetch
    call: prompt.say
    input_template: { text: \"<<params.topic>>\" }
    capture_as: fetched
  - id: use
    call: prompt.say
    deps: [fetch]
    input_template: { text: \"<<fetched>> and <<nothing_like_it>>\" }
";

#[test]
fn fix_rewrites_the_file_and_reports_what_is_left() {
    let s = Root::new("fix");
    let path = s.write("workflows/a.yaml", BROKEN);
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;
    #[cfg(unix)]
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let r = run(&s.path, &["check", "--fix", "--format", "json"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FIXED, "{r:?}");
    // What no edit can fix is still reported, and fails the run.
    let v = r.json();
    let codes: Vec<&str> =
        v["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["UNRESOLVED_VAR"], "{r:?}");
    assert!(v["diagnostics"][0]["message"].as_str().unwrap().contains("nothing_like_it"));
    assert!(r.stderr.contains("fixed 5 problem(s) in 1 file(s)"), "{r:?}");
    assert_exit(&r, 1);
    #[cfg(unix)]
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640, "permissions kept");
    // No temporary file is left beside it.
    let names: Vec<_> =
        std::fs::read_dir(s.path.join("workflows")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // A second run has nothing to fix.
    let r = run(&s.path, &["check", "--fix", "--format", "json"]);
    assert!(!r.stderr.contains("fixed"), "{r:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FIXED);
}

#[test]
fn diff_shows_the_edits_and_changes_nothing() {
    let s = Root::new("diff");
    let path = s.write("workflows/a.yaml", BROKEN);
    let r = run(&s.path, &["check", "--diff"]);
    assert_exit(&r, 1);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), BROKEN, "--diff must not write");
    assert!(r.stdout.starts_with("--- a/workflows/a.yaml\n+++ b/workflows/a.yaml\n@@ "), "{r:?}");
    assert!(r.stdout.contains("\n-    cal: prompt.say\n"), "{r:?}");
    assert!(r.stdout.contains("\n+    call: prompt.say\n"), "{r:?}");
    assert!(r.stdout.contains("\n-    deps: [fetchh]\n"), "{r:?}");
    assert!(r.stdout.contains("\n+    deps: [fetch]\n"), "{r:?}");
    assert!(r.stderr.contains("would fix 5 problem(s) in 1 file(s)"), "{r:?}");
    // Nothing to fix: no output, exit 0, even though an error remains.
    s.write("workflows/a.yaml", FIXED);
    let r = run(&s.path, &["check", "--diff"]);
    assert_eq!(r.stdout, "", "{r:?}");
    assert_exit(&r, 0);
}

#[test]
fn fix_from_stdin_writes_the_fixed_text_to_stdout() {
    let s = Root::new("fix-stdin");
    let mut c =
        cmd(&s.path, &["check", "-", "--fix", "--format", "concise", "--stdin-filename", "workflows/a.yaml"]);
    c.stdin(Stdio::piped());
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(BROKEN.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), FIXED);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("UNRESOLVED_VAR") && stderr.contains("nothing_like_it"), "{stderr}");
    assert_eq!(out.status.code(), Some(1));
    assert!(!s.path.join("workflows/a.yaml").exists(), "stdin mode writes no file");
}

#[test]
fn suppressed_diagnostics_are_not_fixed() {
    let s = Root::new("fix-suppressed");
    let text = BROKEN.replace("deps: [fetchh]", "deps: [fetchh]  # savant-think: ignore[UNKNOWN_DEP]");
    let path = s.write("workflows/a.yaml", &text);
    run(&s.path, &["check", "--fix"]);
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("deps: [fetchh]  # savant-think: ignore[UNKNOWN_DEP]"), "{after}");
    assert!(after.contains("    call: prompt.say\n    input_template:"), "the rest is fixed: {after}");
}

#[test]
fn a_quoted_key_stays_quoted_and_a_rename_onto_an_existing_key_is_not_made() {
    let s = Root::new("fix-keys");
    let path = s.write(
        "workflows/a.yaml",
        "steps:\n  - id: a\n    \"cal\": prompt.say\n  - id: b\n    call: prompt.say\n    with: {}\n    input_template: {}\n",
    );
    let r = run(&s.path, &["check", "--fix", "--format", "json"]);
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("    \"call\": prompt.say\n"), "{after}");
    // `with` is the original system's `input_template`, but step b has one.
    assert!(after.contains("    with: {}\n    input_template: {}\n"), "{after}");
    let v = r.json();
    assert_eq!(v["diagnostics"][0]["code"], "YAML_SCHEMA_VIOLATION", "{r:?}");
    assert!(v["diagnostics"][0].get("fix").is_none(), "{r:?}");
}

#[test]
fn machine_formats_carry_the_fix() {
    let s = Root::new("fix-json");
    s.write("workflows/a.yaml", "steps:\n  - id: a\n    cal: prompt.say\n");
    let v = run(&s.path, &["check", "--format", "json"]).json();
    let fix = &v["diagnostics"][0]["fix"];
    assert_eq!(fix["replacement"], "call");
    assert_eq!((fix["line"].as_u64(), fix["column"].as_u64()), (Some(3), Some(5)));
    assert_eq!((fix["end_line"].as_u64(), fix["end_column"].as_u64()), (Some(3), Some(8)));
    let v = run(&s.path, &["check", "--format", "sarif"]).json();
    let change = &v["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0];
    assert_eq!(change["artifactLocation"]["uri"], "workflows/a.yaml");
    assert_eq!(change["replacements"][0]["insertedContent"]["text"], "call");
    assert_eq!(change["replacements"][0]["deletedRegion"]["startColumn"], 5);
}

#[test]
fn fix_and_statistics_or_diff_do_not_combine() {
    let s = Root::new("fix-usage");
    assert_exit(&run_cmd(cmd(&s.path, &["check", "--fix", "--diff"])), 2);
    assert_exit(&run_cmd(cmd(&s.path, &["check", "--fix", "--statistics"])), 2);
}

/// Over every broken fixture: fixing never breaks the YAML, never adds an
/// error, and reaches a fixed point (a second round finds nothing to fix).
#[test]
fn fixes_over_the_error_fixtures_are_safe_and_stable() {
    let dir = Path::new(CRATE).join("tests/checks");
    let config = Config {
        schemas: workspace::load_schemas(&Path::new(CRATE).join("tests/checks/schemas")),
        ..Config::default()
    };
    let mut fixed_files = 0;
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|d| d.unwrap().path())
        .filter(|d| d.is_dir())
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("err")))
        .collect();
    paths.sort();
    for path in paths {
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let check = |t: &str| check_source(&SourceFile::new(path.display().to_string(), t), &config);
        let before = check(&text);
        let (after_text, edits, after) = fix::fix_until_stable(&text, before.clone(), check);
        if edits == 0 {
            continue;
        }
        fixed_files += 1;
        let errors = |ds: &[savant_think::Diagnostic]| {
            ds.iter().filter(|d| d.severity == savant_think::diagnostic::Severity::Error).count()
        };
        assert!(
            !after.iter().any(|d| d.code == Code::YamlSyntax)
                || before.iter().any(|d| d.code == Code::YamlSyntax),
            "{}: a fix broke the YAML:\n{after_text}",
            path.display()
        );
        assert!(
            errors(&after) <= errors(&before),
            "{}: fixing added errors:\n{after_text}\n{after:#?}",
            path.display()
        );
        assert!(fix::apply(&after_text, &after).is_none(), "{}: not a fixed point", path.display());
    }
    assert!(fixed_files >= 5, "only {fixed_files} fixtures had a fix");
}
