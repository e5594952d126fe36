//! Golden tests of the `savant-think check` command line: the real binary, run
//! in a scratch directory, judged by its exit status, stdout and stderr.

use crate::common::{BIN, CRATE, Root, assert_exit, cmd, run, run_cmd};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

// ---------------------------------------------------------------- fixtures

/// Checks clean.
pub(crate) const CLEAN: &str = "steps:
  - id: hello
    call: prompt.say
    input_template: { text: \"Hello from <<workflow.id>>\" }
";

/// One UNRESOLVED_VAR error (`mr_dta`, line 8, columns 14..20).
pub(crate) const ERROR: &str = "id: review
steps:
  - id: fetch_mr
    call: gitlab.get_merge_request
    capture_as: mr_data
  - id: review
    call: context.search
    foreach: mr_dta.changes
";

/// One UNUSED_CAPTURE warning (line 4, columns 17..22) and nothing else.
pub(crate) const WARNING: &str = "steps:
  - id: fetch
    call: jira.get_issue
    capture_as: issue
  - id: say
    call: prompt.say
    deps: [fetch]
";

/// Two UNRESOLVED_VAR errors inside one double-quoted string full of
/// multi-byte characters and escapes (one on each of its two lines).
pub(crate) const MULTIBYTE: &str = "# prélude ✓
steps:
  - id: ça_va
    call: prompt.say
    input_template:
      text: \"naïve \\\"q\\\" \\u00e9\\t😀 <<missing_a>> and
        ünïcödé 🚀 <<other>>\"
";

// ---------------------------------------------------------------- helpers

/// Every file under `dir` with its size, recursively.
fn listing(dir: &Path) -> BTreeSet<(PathBuf, u64)> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let m = e.metadata().unwrap();
        if m.is_dir() {
            out.insert((e.path(), 0));
            out.extend(listing(&e.path()));
        } else {
            out.insert((e.path(), m.len()));
        }
    }
    out
}

// ---------------------------------------------------------------- exit codes

#[test]
fn a_clean_directory_exits_0() {
    let s = Root::new("clean");
    s.write("workflows/hello.yaml", CLEAN);
    let r = run(&s.path, &["check", "workflows"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("no problems in 1 file"), "{r:?}");
    assert!(r.stderr.is_empty(), "{r:?}");
}

#[test]
fn an_error_exits_1_and_is_shown() {
    let s = Root::new("error");
    s.write("review.yaml", ERROR);
    let r = run(&s.path, &["check", "review.yaml"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("UNRESOLVED_VAR"), "{r:?}");
    assert!(r.stdout.contains("review.yaml:8:14"), "{r:?}");
    assert!(r.stdout.contains("did you mean `mr_data`?"), "{r:?}");
    assert!(r.stdout.contains("1 error in 1 file"), "{r:?}");
}

#[test]
fn warnings_exit_0_unless_denied() {
    let s = Root::new("warning");
    s.write("warn.yaml", WARNING);
    let r = run(&s.path, &["check", "warn.yaml"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("UNUSED_CAPTURE") && r.stdout.contains("1 warning in 1 file"), "{r:?}");
    for format in ["human", "json", "sarif", "github"] {
        let r = run(&s.path, &["check", "warn.yaml", "--deny-warnings", "--format", format]);
        assert_exit(&r, 1);
        assert!(r.stdout.contains("UNUSED_CAPTURE"), "{format}: {r:?}");
    }
    // --deny-warnings changes nothing on a clean file.
    s.write("clean.yaml", CLEAN);
    assert_exit(&run(&s.path, &["check", "clean.yaml", "--deny-warnings"]), 0);
}

#[test]
fn errors_and_warnings_together_exit_1() {
    let s = Root::new("mixed");
    s.write("a.yaml", ERROR);
    s.write("b.yaml", WARNING);
    let r = run(&s.path, &["check", ".", "--format", "json"]);
    assert_exit(&r, 1);
    assert_eq!(r.json()["summary"], serde_json::json!({"files": 2, "errors": 1, "warnings": 1}));
}

#[test]
fn a_missing_path_exits_2_with_a_message() {
    let s = Root::new("missing");
    let r = run(&s.path, &["check", "no/such/file.yaml"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("error:"), "{r:?}");
    assert!(r.stderr.contains("no/such/file.yaml"), "{r:?}");
    assert!(r.stderr.contains("no such file or directory"), "{r:?}");
    // Nothing misleading on stdout when nothing could be read.
    assert!(!r.stdout.contains("no problems"), "{r:?}");
}

#[test]
fn a_missing_path_next_to_a_good_one_still_exits_2() {
    let s = Root::new("missing-and-good");
    s.write("good.yaml", CLEAN);
    s.write("bad.yaml", ERROR);
    for format in ["human", "json", "sarif", "github"] {
        let r = run(&s.path, &["check", "good.yaml", "bad.yaml", "gone.yaml", "--format", format]);
        assert_exit(&r, 2);
        assert!(r.stderr.contains("gone.yaml: no such file or directory"), "{format}: {r:?}");
        assert!(
            r.stdout.contains("UNRESOLVED_VAR"),
            "the readable files are still reported ({format}): {r:?}"
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let s = Root::new("usage");
    s.write("a.yaml", CLEAN);
    let cases: &[&[&str]] = &[
        &["check", "--bogus"],
        &["check", "a.yaml", "--format", "xml"],
        &["check", "a.yaml", "--max-file-size", "lots"],
        &["check", "a.yaml", "--tools"],
        &["frobnicate"],
        &[],
    ];
    for args in cases {
        let r = run(&s.path, args);
        assert_exit(&r, 2);
        assert!(!r.stderr.is_empty(), "{args:?} should explain itself on stderr: {r:?}");
    }
    let r = run(&s.path, &["check", "--bogus"]);
    assert!(r.stderr.contains("--bogus"), "{r:?}");
    let r = run(&s.path, &["check", "a.yaml", "--format", "xml"]);
    assert!(r.stderr.contains("human") && r.stderr.contains("sarif"), "lists the formats: {r:?}");
}

#[test]
fn an_empty_directory_exits_0_with_a_warning() {
    let s = Root::new("empty-dir");
    std::fs::create_dir(s.path.join("workflows")).unwrap();
    let r = run(&s.path, &["check", "workflows"]);
    assert_exit(&r, 0);
    assert!(r.stderr.contains("warning: no *.yaml or *.yml files found in workflows"), "{r:?}");
}

// ---------------------------------------------------------------- paths

#[test]
fn the_default_path_is_workflows_under_the_cwd() {
    let s = Root::new("default-cwd");
    s.write("workflows/bad.yaml", ERROR);
    s.write("elsewhere/ignored.yaml", ERROR);
    let r = run(&s.path, &["check", "--format", "json"]);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["summary"]["files"], 1, "{r:?}");
    assert!(v["diagnostics"][0]["file"].as_str().unwrap().ends_with("bad.yaml"), "{r:?}");
    // No workflows/ directory at all: an I/O error.
    let empty = Root::new("default-cwd-none");
    let r = run(&empty.path, &["check"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("workflows") && r.stderr.contains("no such file or directory"), "{r:?}");
}

#[test]
fn the_default_path_is_resolved_against_root_and_savant_path() {
    let bad = Root::new("root-bad");
    bad.write("workflows/nested/bad.yaml", ERROR);
    let good = Root::new("root-good");
    good.write("workflows/good.yaml", CLEAN);
    let cwd = Root::new("root-cwd");
    cwd.write("workflows/cwd_bad.yaml", ERROR);

    let bad_root = bad.path.to_str().unwrap();
    let good_root = good.path.to_str().unwrap();

    // --root
    let r = run(&cwd.path, &["check", "--root", bad_root, "--format", "json"]);
    assert_exit(&r, 1);
    let file = r.json()["diagnostics"][0]["file"].as_str().unwrap().to_owned();
    assert!(file.starts_with(bad_root) && file.ends_with("bad.yaml"), "{file}");
    assert_exit(&run(&cwd.path, &["check", "--root", good_root]), 0);

    // SAVANT_PATH
    let mut c = cmd(&cwd.path, &["check", "--format", "json"]);
    c.env("SAVANT_PATH", &bad.path);
    let r = run_cmd(c);
    assert_exit(&r, 1);
    assert!(r.json()["diagnostics"][0]["file"].as_str().unwrap().starts_with(bad_root), "{r:?}");
    let mut c = cmd(&cwd.path, &["check"]);
    c.env("SAVANT_PATH", &good.path);
    assert_exit(&run_cmd(c), 0);

    // --root wins over SAVANT_PATH.
    let mut c = cmd(&cwd.path, &["check", "--root", good_root]);
    c.env("SAVANT_PATH", &bad.path);
    assert_exit(&run_cmd(c), 0);
    let mut c = cmd(&cwd.path, &["check", "--root", bad_root]);
    c.env("SAVANT_PATH", &good.path);
    assert_exit(&run_cmd(c), 1);

    // An empty SAVANT_PATH means "unset": the cwd's workflows/.
    let mut c = cmd(&cwd.path, &["check", "--format", "json"]);
    c.env("SAVANT_PATH", "");
    let r = run_cmd(c);
    assert_exit(&r, 1);
    assert!(r.json()["diagnostics"][0]["file"].as_str().unwrap().ends_with("cwd_bad.yaml"), "{r:?}");

    // A root without workflows/: exit 2, naming the directory it looked for.
    let r = run(&cwd.path, &["check", "--root", "does-not-exist"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("does-not-exist"), "{r:?}");
}

#[test]
fn directories_are_searched_recursively_for_yaml_only() {
    let s = Root::new("recursive");
    s.write("workflows/top.yaml", CLEAN);
    s.write("workflows/a/b/c/deep.yaml", ERROR);
    s.write("workflows/a/short.yml", WARNING);
    // Not workflows: other extensions, whatever they hold.
    s.write("workflows/notes.txt", "steps: [[[ garbage");
    s.write("workflows/a/data.json", "{not yaml");
    s.write("workflows/a/b/README.md", "# hi");
    s.write("workflows/a/b/yaml", "steps: [[[ no extension");
    s.write("workflows/a/b/x.yaml.bak", "steps: [[[");
    s.write("workflows/a/b/binary.bin", [0u8, 159, 146, 150, 255]);
    let r = run(&s.path, &["check", "workflows", "--format", "json"]);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["summary"], serde_json::json!({"files": 3, "errors": 1, "warnings": 1}), "{r:?}");
    let files: BTreeSet<&str> =
        v["diagnostics"].as_array().unwrap().iter().map(|d| d["file"].as_str().unwrap()).collect();
    assert_eq!(files, BTreeSet::from(["workflows/a/b/c/deep.yaml", "workflows/a/short.yml"]), "{r:?}");
}

/// Files are checked on several threads; what is reported is in the order
/// of the files, as one at a time would report it.
#[test]
fn many_files_report_in_file_order() {
    let s = Root::new("many-files");
    let mut expected = Vec::new();
    for i in 0..40 {
        let name = format!("workflows/w{i:02}.yaml");
        match i % 3 {
            0 => {
                s.write(&name, CLEAN);
            }
            1 => {
                s.write(&name, ERROR);
                expected.push((name, "UNRESOLVED_VAR"));
            }
            _ => {
                s.write(&name, WARNING);
                expected.push((name, "UNUSED_CAPTURE"));
            }
        }
    }
    s.write("workflows/flow.test.yaml", "workflow: missing\ntests: []\n");
    let r = run(&s.path, &["check", "--format", "json"]);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["summary"]["files"], 41, "{r:?}");
    let got: Vec<(String, &str)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (d["file"].as_str().unwrap().trim_start_matches("./").to_owned(), d["code"].as_str().unwrap())
        })
        .filter(|(f, _)| !f.ends_with(".test.yaml"))
        .collect();
    assert_eq!(got, expected, "{r:?}");
    let concise = run(&s.path, &["check", "--format", "concise"]);
    let files: Vec<&str> = concise.stdout.lines().filter_map(|l| l.split(':').next()).collect();
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted, "{concise:?}");
}

/// A `uses:` in a file outside workflows/, when no workflow inside has one:
/// every file is checked against the project's workflows, not only the
/// files after the first `uses:`.
#[test]
fn a_uses_outside_workflows_checks_every_file_against_them() {
    let s = Root::new("uses-outside");
    s.write(
        "workflows/child.yaml",
        "params:\n  path: { type: string }\nrequired: [path]\nsteps:\n  - id: s\n    call: tool.x\n",
    );
    let call = |with: &str| format!("steps:\n  - id: r\n    uses: child\n    with: {{{with}}}\n");
    for i in 0..6 {
        s.write(&format!("flows/a{i}.yaml"), call("pth: a.rs"));
    }
    let r = run(&s.path, &["check", "flows", "--format", "json"]);
    assert_exit(&r, 1);
    let v = r.json();
    let files: BTreeSet<&str> =
        v["diagnostics"].as_array().unwrap().iter().map(|d| d["file"].as_str().unwrap()).collect();
    assert_eq!(files.len(), 6, "every file is checked against `child`: {r:?}");
}

#[test]
fn a_file_given_by_name_is_checked_whatever_its_extension() {
    let s = Root::new("explicit-file");
    s.write("flow.txt", ERROR);
    let r = run(&s.path, &["check", "flow.txt", "--format", "json"]);
    assert_exit(&r, 1);
    assert_eq!(r.json()["diagnostics"][0]["file"], "flow.txt");
}

// ---------------------------------------------------------------- --tools

const CALLS: &str = "steps:
  - id: fetch_mr
    call: gitlab.get_merge_requst
  - id: note
    call: gitlab.create_note
    deps: [fetch_mr]
    input_template: { projct: app, body: hi }
  - id: say
    call: prompt.say
    deps: [note]
";

#[test]
fn a_tool_manifest_turns_on_unknown_tool() {
    let s = Root::new("tools");
    s.write("calls.yaml", CALLS);
    // Without a manifest, any tool name is fine.
    assert_exit(&run(&s.path, &["check", "calls.yaml"]), 0);

    let mcp = r#"{"tools": [
        {"name": "gitlab.get_merge_request", "inputSchema": {"type": "object"}},
        {"name": "gitlab.create_note", "inputSchema": {"type": "object", "additionalProperties": false,
            "properties": {"project": {"type": "string"}, "body": {"type": "string"}}}}
    ]}"#;
    s.write("mcp.json", mcp);
    s.write("names.yaml", "- gitlab.get_merge_request\n- gitlab.create_note\n");
    s.write("map.yaml", "gitlab.get_merge_request: null\ngitlab.create_note: null\n");
    for manifest in ["mcp.json", "names.yaml", "map.yaml"] {
        let r = run(&s.path, &["check", "calls.yaml", "--tools", manifest, "--format", "json"]);
        assert_exit(&r, 1);
        let v = r.json();
        let diags = v["diagnostics"].as_array().unwrap();
        let first = &diags[0];
        assert_eq!(first["code"], "UNKNOWN_TOOL", "{manifest}: {r:?}");
        assert_eq!((first["line"].as_u64(), first["column"].as_u64()), (Some(3), Some(11)), "{manifest}");
        assert_eq!(first["help"], "did you mean `gitlab.get_merge_request`?", "{manifest}");
    }
    // Only the MCP manifest has input schemas: it also flags the `projct` key.
    let r = run(&s.path, &["check", "calls.yaml", "--tools", "mcp.json", "--format", "json"]);
    let v = r.json();
    assert_eq!(v["summary"]["errors"], 2, "{r:?}");
    assert_eq!(v["diagnostics"][1]["line"], 7, "{r:?}");
    assert_eq!(v["diagnostics"][1]["code"], "UNKNOWN_INPUT", "{r:?}");
    let r = run(&s.path, &["check", "calls.yaml", "--tools", "names.yaml", "--format", "json"]);
    assert_eq!(r.json()["summary"]["errors"], 1, "{r:?}");
}

#[test]
fn a_bad_tool_manifest_exits_2() {
    let s = Root::new("tools-bad");
    s.write("calls.yaml", CALLS);
    let bad: &[(&str, &[u8])] = &[
        ("syntax.json", b"{\"tools\": [" as &[u8]),
        ("syntax.yaml", b"tools: [unclosed\n"),
        ("scalar.json", b"12"),
        ("empty.json", b""),
        ("nameless.json", b"{\"tools\": [{\"inputSchema\": {}}]}"),
        ("numbers.json", b"[1, 2]"),
        ("binary.json", &[0, 1, 2, 0xff, 0xfe, 0]),
    ];
    for (name, contents) in bad {
        s.write(name, contents);
        let r = run(&s.path, &["check", "calls.yaml", "--tools", name]);
        assert_exit(&r, 2);
        assert!(r.stderr.contains("error:") && r.stderr.contains(name), "{name}: {r:?}");
        assert!(r.stdout.is_empty(), "{name}: nothing is checked with a broken manifest: {r:?}");
    }
    let r = run(&s.path, &["check", "calls.yaml", "--tools", "missing.json"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("missing.json"), "{r:?}");
    let r = run(&s.path, &["check", "calls.yaml", "--tools", "."]);
    assert_exit(&r, 2);
}

// ---------------------------------------------------------------- colour

const ANSI_ESC: char = '\u{1b}';

#[test]
fn piped_output_has_no_ansi_escapes() {
    let s = Root::new("no-ansi");
    s.write("a.yaml", ERROR);
    s.write("b.yaml", WARNING);
    for no_color in [None, Some("1")] {
        let mut c = cmd(&s.path, &["check", "a.yaml", "b.yaml"]);
        // Even a terminal-looking environment does not turn colour on for a pipe.
        c.env("TERM", "xterm-256color").env("CLICOLOR_FORCE", "0");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        let r = run_cmd(c);
        assert_exit(&r, 1);
        assert!(r.stdout.contains("UNRESOLVED_VAR"));
        assert!(!r.stdout.contains(ANSI_ESC), "{r:?}");
        assert!(!r.stderr.contains(ANSI_ESC), "{r:?}");
    }
}

/// Runs the binary on a pseudo-terminal with util-linux `script`, when there is one.
fn run_on_a_tty(dir: &Path, args: &str, no_color: Option<&str>) -> Option<String> {
    let probe = Command::new("script").args(["-qec", "true", "/dev/null"]).output().ok()?;
    if !probe.status.success() {
        return None;
    }
    let mut c = Command::new("script");
    c.args(["-qec", &format!("'{BIN}' {args}"), "/dev/null"])
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env("TERM", "xterm-256color");
    if let Some(v) = no_color {
        c.env("NO_COLOR", v);
    }
    let r = run_cmd(c);
    Some(r.stdout)
}

#[test]
fn a_terminal_gets_colour_unless_no_color_is_set() {
    let s = Root::new("tty");
    s.write("a.yaml", ERROR);
    let Some(coloured) = run_on_a_tty(&s.path, "check a.yaml", None) else {
        crate::support::skip::skip(
            "the terminal colour check",
            "no `script` command to make a pseudo-terminal (apt-get install bsdutils)",
            None,
        );
        return;
    };
    assert!(coloured.contains("UNRESOLVED_VAR"), "{coloured}");
    assert!(coloured.contains(ANSI_ESC), "a terminal gets colour: {coloured:?}");
    let plain = run_on_a_tty(&s.path, "check a.yaml", Some("1")).unwrap();
    assert!(plain.contains("UNRESOLVED_VAR"), "{plain}");
    assert!(!plain.contains(ANSI_ESC), "NO_COLOR=1 turns colour off: {plain:?}");
    // An empty NO_COLOR does not count (no-color.org).
    let empty = run_on_a_tty(&s.path, "check a.yaml", Some("")).unwrap();
    assert!(empty.contains(ANSI_ESC), "{empty:?}");
    // Machine formats never have colour, even on a terminal.
    for format in ["json", "sarif", "github"] {
        let out = run_on_a_tty(&s.path, &format!("check a.yaml --format {format}"), None).unwrap();
        assert!(!out.contains(ANSI_ESC), "{format}: {out:?}");
    }
}

// ---------------------------------------------------------------- side effects

#[test]
fn check_writes_nothing() {
    let s = Root::new("read-only");
    s.write("workflows/a.yaml", ERROR);
    s.write("workflows/sub/b.yaml", WARNING);
    s.write("workflows/c.yaml", CLEAN);
    s.write("workflows/bad.yaml", [0xffu8, 0xfe, 0, 1]);
    s.write("schemas/MergeRequestV1.json", r#"{"type": "object"}"#);
    s.write("tools.json", r#"["gitlab.get_merge_request"]"#);
    let before = listing(&s.path);
    for format in ["human", "json", "sarif", "github"] {
        for extra in [&[][..], &["--deny-warnings"][..], &["--tools", "tools.json"][..]] {
            let mut args = vec!["check", "--format", format];
            args.extend_from_slice(extra);
            let r = run(&s.path, &args);
            assert_exit(&r, 1);
            let mut args = vec!["check", "workflows", "missing", "--format", format];
            args.extend_from_slice(extra);
            assert_exit(&run(&s.path, &args), 2);
        }
    }
    assert_eq!(listing(&s.path), before, "check created, removed or changed files");
}

// ---------------------------------------------------------------- help and the bundled workflows

#[test]
fn help_mentions_every_flag() {
    let s = Root::new("help");
    for flag in ["--help", "-h"] {
        let r = run(&s.path, &["check", flag]);
        assert_exit(&r, 0);
        for needle in [
            "--format",
            "human",
            "json",
            "sarif",
            "github",
            "--deny-warnings",
            "--tools",
            "--schemas",
            "--root",
            "--max-file-size",
            "PATHS",
            "--help",
        ] {
            assert!(r.stdout.contains(needle), "`check {flag}` does not mention {needle}:\n{}", r.stdout);
        }
    }
    let r = run(&s.path, &["check", "--help"]);
    for needle in ["Exit status", "SAVANT_PATH", "workflows"] {
        assert!(r.stdout.contains(needle), "`check --help` does not mention {needle}:\n{}", r.stdout);
    }
    let r = run(&s.path, &["--help"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("check"), "{r:?}");
    let r = run(&s.path, &["--version"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains(env!("CARGO_PKG_VERSION")), "{r:?}");
}

#[test]
fn the_bundled_workflows_check_clean() {
    let s = Root::new("bundled");
    let expected = std::fs::read_dir(Path::new(CRATE).join("workflows"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .count();
    assert!(expected > 0);
    // And, by default, the project's test files (tests/bundled/*.test.yaml).
    let tests = std::fs::read_dir(Path::new(CRATE).join("tests/bundled"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".test.yaml"))
        .count();
    assert!(tests >= expected, "a test file per bundled workflow");
    let expected = expected + tests;
    let r = run(&s.path, &["check", "--root", CRATE, "--format", "json", "--deny-warnings"]);
    assert_exit(&r, 0);
    let v = r.json();
    assert_eq!(v["diagnostics"], serde_json::json!([]), "{r:?}");
    assert_eq!(v["summary"]["files"], expected);
    let r = run(&s.path, &["check", "--root", CRATE]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains(&format!("no problems in {expected} files")), "{r:?}");
}

// ---------------------------------------------------------------- terminal safety

#[test]
fn control_characters_in_the_file_are_not_sent_to_the_terminal() {
    let s = Root::new("esc");
    s.write(
        "esc.yaml",
        "steps:\n  - id: a\n    call: think\n    when: nope # \u{1b}[2J\u{1b}]0;pwned\u{7}\n",
    );
    let mut c = cmd(&s.path, &["check", "esc.yaml"]);
    c.env("NO_COLOR", "1");
    let r = run_cmd(c);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("UNRESOLVED_VAR"), "{r:?}");
    assert!(!r.stdout.contains(ANSI_ESC) && !r.stdout.contains('\u{7}'), "{:?}", r.stdout);
}
