//! The conventions people use every day with linters: suppressions, stdin,
//! one-line output, colour control, `rule`, statistics, and machine formats
//! that never make an unreadable input look clean.

use crate::common::{Root, assert_exit, cmd, run, run_cmd};
use std::io::Write;
use std::process::Stdio;

const BROKEN: &str = "id: flow
steps:
  - id: fetch
    call: jira.get_issue
    capture_as: issue
  - id: say
    call: prompt.say
    deps: [fetch]
    input_template: { text: \"<<isue>>\" }
";

fn codes(v: &serde_json::Value) -> Vec<String> {
    v["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn an_inline_ignore_silences_its_line_only() {
    let s = Root::new("inline");
    s.write(
        "workflows/a.yaml",
        BROKEN.replace("<<isue>>\" }", "<<isue>>\" }  # savant-think: ignore[UNRESOLVED_VAR]"),
    );
    let r = run(&s.path, &["check", "--format", "json"]);
    // UNUSED_CAPTURE (issue is never read) remains: it is on another line.
    assert_eq!(codes(&r.json()), ["UNUSED_CAPTURE"], "{r:?}");
    assert_exit(&r, 0);
    s.write(
        "workflows/a.yaml",
        format!("# savant-think: ignore-file[UNUSED_CAPTURE, UNRESOLVED_VAR]\n{BROKEN}"),
    );
    let r = run(&s.path, &["check", "--format", "json"]);
    assert!(codes(&r.json()).is_empty(), "{r:?}");
}

#[test]
fn config_ignores_per_file_ignores_and_deny_warnings() {
    let s = Root::new("config");
    s.write("workflows/a.yaml", BROKEN);
    s.write("workflows/legacy/b.yaml", BROKEN);
    s.write(
        "savant-think.toml",
        "[check]\nignore = [\"UNRESOLVED_VAR\"]\ndeny-warnings = true\n[check.per-file-ignores]\n\"workflows/legacy/**\" = [\"UNUSED_CAPTURE\"]\n",
    );
    let r = run(&s.path, &["check", "--format", "json"]);
    let v = r.json();
    assert_eq!(codes(&v), ["UNUSED_CAPTURE"], "only a.yaml's warning is left: {r:?}");
    assert_eq!(v["diagnostics"][0]["file"], "./workflows/a.yaml");
    // deny-warnings from the config: the warning fails the run.
    assert_exit(&r, 1);
    // The same from a subdirectory: the root (and so its config) is found.
    let r = run(&s.path.join("workflows/legacy"), &["check", "--format", "json", "b.yaml"]);
    assert!(codes(&r.json()).is_empty(), "{r:?}");
    // A code that does not exist is a broken config, with a hint.
    s.write("savant-think.toml", "[check]\nignore = [\"UNUSED_CAPTUR\"]\n");
    let r = run(&s.path, &["check"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("did you mean `UNUSED_CAPTURE`?"), "{r:?}");
}

#[test]
fn stdin_with_a_filename_finds_the_root_and_its_schemas() {
    let s = Root::new("stdin");
    s.write("proj/workflows/.keep", "");
    s.write(
        "proj/schemas/IssueV1.json",
        r#"{"type":"object","properties":{"key":{"type":"string"}},"additionalProperties":false}"#,
    );
    let text = "steps:\n  - id: a\n    call: jira.get_issue\n    success_schema: IssueV1\n    capture_as: i\n  - id: b\n    call: prompt.say\n    input_template: { text: \"<<i.key>> <<i.nope>>\" }\n";
    let mut c =
        cmd(&s.path, &["check", "-", "--stdin-filename", "proj/workflows/x.yaml", "--format", "concise"]);
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // One line, the given name, the field unknown to the root's schema (no UNKNOWN_SCHEMA).
    assert!(stdout.starts_with("proj/workflows/x.yaml:8:"), "{stdout}");
    assert!(stdout.contains("nope"), "{stdout}");
    assert!(!stdout.contains("UNKNOWN_SCHEMA"), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    // `-` with other paths, or --stdin-filename without `-`, is a usage error.
    assert_exit(&run(&s.path, &["check", "-", "proj"]), 2);
    assert_exit(&run(&s.path, &["check", "--stdin-filename", "x.yaml"]), 2);
}

#[test]
fn concise_lines_have_path_line_col_severity_code() {
    let s = Root::new("concise");
    s.write("workflows/a.yaml", BROKEN);
    let r = run(&s.path, &["check", "--format", "concise", "workflows/a.yaml"]);
    assert_exit(&r, 1);
    assert_eq!(
        r.stdout,
        "workflows/a.yaml:5:17: warning[UNUSED_CAPTURE] capture `issue` is never read (help: read it in a later step as `<<issue>>`, or remove `capture_as`)\n\
         workflows/a.yaml:9:32: error[UNRESOLVED_VAR] `isue` is not in scope (help: did you mean `issue`?)\n"
    );
}

#[test]
fn colour_follows_the_flag_then_the_environment() {
    let s = Root::new("color");
    s.write("workflows/a.yaml", BROKEN);
    let ansi = |extra: &[(&str, &str)], args: &[&str]| {
        let mut c = cmd(&s.path, args);
        for (k, v) in extra {
            c.env(k, v);
        }
        run_cmd(c).stdout.contains('\u{1b}')
    };
    assert!(!ansi(&[], &["check"]), "piped: plain");
    assert!(ansi(&[("FORCE_COLOR", "1")], &["check"]));
    assert!(ansi(&[("CLICOLOR_FORCE", "1")], &["check"]));
    assert!(!ansi(&[("FORCE_COLOR", "1"), ("NO_COLOR", "1")], &["check"]));
    assert!(ansi(&[("NO_COLOR", "1")], &["check", "--color", "always"]));
    assert!(!ansi(&[("FORCE_COLOR", "1")], &["check", "--color", "never"]));
}

#[test]
fn rule_prints_a_codes_documentation() {
    let s = Root::new("rule");
    let r = run(&s.path, &["rule", "unresolved_var"]);
    assert_exit(&r, 0);
    assert!(r.stdout.starts_with("## UNRESOLVED_VAR (error)"), "{r:?}");
    assert!(r.stdout.contains("*How to fix*"), "{r:?}");
    let r = run(&s.path, &["rule", "--all"]);
    assert_eq!(r.stdout.lines().count(), savant_think::diagnostic::Code::ALL.len());
    let r = run(&s.path, &["rule", "UNRESOLVED_VARS"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("did you mean `UNRESOLVED_VAR`?"), "{r:?}");
}

#[test]
fn statistics_count_per_code() {
    let s = Root::new("stats");
    s.write("workflows/a.yaml", BROKEN);
    s.write("workflows/b.yaml", BROKEN);
    let r = run(&s.path, &["check", "--statistics"]);
    assert_exit(&r, 1);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].trim_start().starts_with("2  UNRESOLVED_VAR"), "{r:?}");
    assert!(lines[1].trim_start().starts_with("2  UNUSED_CAPTURE"), "{r:?}");
    assert_eq!(lines[2], "2 error(s), 2 warning(s) in 2 file(s)");
}

#[test]
fn an_unreadable_input_is_never_a_clean_run() {
    let s = Root::new("io");
    s.write("workflows/a.yaml", "steps:\n  - id: a\n    call: prompt.say\n");
    let r = run(&s.path, &["check", "--format", "sarif", "workflows/a.yaml", "missing.yaml"]);
    assert_exit(&r, 2);
    let v = r.json();
    let run0 = &v["runs"][0];
    assert_eq!(run0["invocations"][0]["executionSuccessful"], false, "{r:?}");
    assert_eq!(run0["results"][0]["ruleId"], "IO_ERROR");
    assert_eq!(
        run0["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "missing.yaml"
    );
    for format in ["json", "github", "concise"] {
        let r = run(&s.path, &["check", "--format", format, "missing.yaml"]);
        assert_exit(&r, 2);
        assert!(r.stdout.contains("IO_ERROR"), "{format}: {r:?}");
    }
    let r = run(&s.path, &["check", "--format", "sarif", "workflows/a.yaml"]);
    assert_eq!(r.json()["runs"][0]["invocations"][0]["executionSuccessful"], true);
}

#[test]
fn sarif_rules_carry_their_documentation() {
    let s = Root::new("sarif-rules");
    s.write("workflows/a.yaml", BROKEN);
    let r = run(&s.path, &["check", "--format", "sarif"]);
    let v = r.json();
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), savant_think::diagnostic::Code::ALL.len());
    for rule in rules {
        let id = rule["id"].as_str().unwrap();
        assert!(rule["fullDescription"]["text"].as_str().unwrap().len() > 20, "{id}");
        assert!(rule["help"]["markdown"].as_str().unwrap().starts_with(&format!("## {id} (")), "{id}");
        assert!(!rule["help"]["text"].as_str().unwrap().is_empty(), "{id}");
    }
}

#[test]
fn shell_completions_and_a_man_page_are_generated() {
    let s = Root::new("completions");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = run(&s.path, &["completions", shell]);
        assert_exit(&r, 0);
        assert!(r.stdout.contains("savant-think") && r.stdout.contains("check"), "{shell}: {r:?}");
    }
    let r = run(&s.path, &["man"]);
    assert_exit(&r, 0);
    assert!(r.stdout.starts_with(".ie \\n(.g .ds Aq") || r.stdout.contains(".TH savant-think"), "{r:?}");
    assert_exit(&run(&s.path, &["completions", "nushellx"]), 2);
}

#[test]
fn the_tool_manifest_can_come_from_the_config() {
    let s = Root::new("config-tools");
    s.write("workflows/a.yaml", "steps:\n  - id: a\n    call: jira.get_isue\n");
    // No manifest anywhere: tools are not checked.
    assert_exit(&run(&s.path, &["check"]), 0);
    s.write("tools.json", r#"["jira.get_issue"]"#);
    s.write("savant-think.toml", "[check]\ntools = \"tools.json\"\n");
    let r = run(&s.path.join("workflows"), &["check", "--format", "json", "a.yaml"]);
    assert_eq!(codes(&r.json()), ["UNKNOWN_TOOL"], "{r:?}");
    assert!(r.stdout.contains("did you mean `jira.get_issue`?"), "{r:?}");
    // --tools wins over the config.
    s.write("other.json", r#"["jira.get_isue"]"#);
    assert_exit(&run(&s.path, &["check", "--tools", "other.json"]), 0);
    // A configured manifest that is missing is an error, not silence.
    s.write("savant-think.toml", "[check]\ntools = \"missing.json\"\n");
    let r = run(&s.path, &["check"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("missing.json"), "{r:?}");
}

/// `UNKNOWN_INPUT` and `MISSING_INPUT` were reported as `UNKNOWN_TOOL` /
/// `UNKNOWN_WORKFLOW` before they had codes of their own: a suppression
/// or `[check] ignore` of the old codes still silences them.
#[test]
fn the_old_codes_of_input_diagnostics_still_silence_them() {
    let s = Root::new("input-codes");
    s.write(
        "workflows/child.yaml",
        "params:\n  path: {type: string}\nrequired: [path]\nsteps:\n  - id: s\n    call: think\n",
    );
    let parent = "steps:\n  - id: a\n    call: prompt.say\n    input_template: {msg: hi}\n  - id: b\n    uses: child\n    with: {pth: a.rs}\n";
    s.write("workflows/parent.yaml", parent);
    let r = run(&s.path, &["check", "--format", "json", "workflows/parent.yaml"]);
    assert_eq!(codes(&r.json()), ["UNKNOWN_INPUT", "UNKNOWN_INPUT"], "{r:?}");
    assert!(
        r.stdout.contains("did you mean `message`?") && r.stdout.contains("did you mean `path`?"),
        "{r:?}"
    );
    let silenced = parent
        .replace("{msg: hi}", "{msg: hi}  # savant-think: ignore[UNKNOWN_TOOL]")
        .replace("{pth: a.rs}", "{pth: a.rs}  # savant-think: ignore[UNKNOWN_WORKFLOW]");
    s.write("workflows/parent.yaml", &silenced);
    assert_exit(&run(&s.path, &["check", "workflows/parent.yaml"]), 0);
    s.write("workflows/parent.yaml", parent);
    s.write("savant-think.toml", "[check]\nignore = [\"UNKNOWN_TOOL\", \"UNKNOWN_WORKFLOW\"]\n");
    assert_exit(&run(&s.path, &["check", "workflows/parent.yaml"]), 0);
}
