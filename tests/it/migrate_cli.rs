//! `savant-think migrate` through the real binary: dry run, --check, --out,
//! --write, idempotence, JSON summary and bad input.

use crate::common::{Root, assert_exit, run};

const LEGACY: &str = r#"# the original Think format
workflow: hello
summary: Greets.
steps:
  - id: 1
    call: prompt.say
    input_template:
      text: "Hello {{params.who}}"
"#;

const CURRENT: &str = "# kept exactly, comment included\nid: ok\nsteps:\n  - {id: a, call: prompt.say}\n";

const BROKEN: &str = "steps:\n  - id: a\n    call: \"bad \\( escape\"\n";

#[test]
fn dry_run_prints_the_migrated_yaml_and_writes_nothing() {
    let s = Root::new("dry");
    let f = s.write("old.yaml", LEGACY);
    let r = run(&s.path, &["migrate", "old.yaml"]);
    assert_exit(&r, 0);
    assert_eq!(
        r.stdout,
        "id: hello\ndescription: Greets.\nparams:\n  who:\n    description: \"Inferred by savant-think migrate: the original workflow used it without declaring it.\"\nrequired: [who]\nsteps:\n  - id: \"1\"\n    call: prompt.say\n    input_template:\n      text: \"Hello <<params.who>>\"\n"
    );
    assert!(r.stderr.contains("migrated old.yaml (think dialect)"), "{r:?}");
    assert!(r.stderr.contains("line 2: `workflow` → `id`"), "{r:?}");
    assert!(r.stderr.contains("`{{params.who}}` → `<<params.who>>`"), "{r:?}");
    assert_eq!(std::fs::read_to_string(f).unwrap(), LEGACY, "a dry run writes nothing");
}

#[test]
fn check_exits_1_only_when_something_needs_migration() {
    let s = Root::new("check");
    s.write("old.yaml", LEGACY);
    s.write("ok.yaml", CURRENT);
    s.write("bad.yaml", BROKEN);
    assert_exit(&run(&s.path, &["migrate", "--check", "ok.yaml"]), 0);
    let r = run(&s.path, &["migrate", "--check", "old.yaml", "ok.yaml"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("migrated old.yaml") && r.stdout.contains("current  ok.yaml"), "{r:?}");
    let r = run(&s.path, &["migrate", "--check", "bad.yaml"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("failed   bad.yaml:3:16: YAML_SYNTAX"), "{r:?}");
    assert_eq!(std::fs::read_to_string(s.path.join("old.yaml")).unwrap(), LEGACY, "--check writes nothing");
}

#[test]
fn out_writes_every_file_and_the_result_checks() {
    let s = Root::new("out");
    s.write("in/a/old.yaml", LEGACY);
    s.write("in/ok.yaml", CURRENT);
    let r = run(&s.path, &["migrate", "in", "--out", "out"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("migrated in/a/old.yaml → out/a/old.yaml"), "{r:?}");
    assert!(r.stdout.contains("2 file(s): 1 migrated, 1 already current, 0 not migrated"), "{r:?}");
    assert_eq!(std::fs::read_to_string(s.path.join("out/ok.yaml")).unwrap(), CURRENT, "copied unchanged");
    let migrated = std::fs::read_to_string(s.path.join("out/a/old.yaml")).unwrap();
    assert!(migrated.contains("<<params.who>>"), "{migrated}");
    assert_exit(&run(&s.path, &["check", "out"]), 0);
    // The migrated directory needs nothing more.
    assert_exit(&run(&s.path, &["migrate", "--check", "out"]), 0);
}

#[test]
fn out_copies_broken_files_so_check_reports_them() {
    let s = Root::new("out-broken");
    s.write("in/bad.yaml", BROKEN);
    let r = run(&s.path, &["migrate", "in", "--out", "out"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("(left unchanged; copied → out/bad.yaml)"), "{r:?}");
    assert_eq!(std::fs::read_to_string(s.path.join("out/bad.yaml")).unwrap(), BROKEN);
    let c = run(&s.path, &["check", "out/bad.yaml"]);
    assert_exit(&c, 1);
    assert!(c.stdout.contains("YAML_SYNTAX"), "{c:?}");
}

#[test]
fn write_rewrites_in_place_and_is_idempotent() {
    let s = Root::new("write");
    s.write("wf/old.yaml", LEGACY);
    s.write("wf/ok.yaml", CURRENT);
    let r = run(&s.path, &["migrate", "--write", "wf"]);
    assert_exit(&r, 0);
    let once = std::fs::read_to_string(s.path.join("wf/old.yaml")).unwrap();
    assert!(once.starts_with("id: hello\n"), "{once}");
    assert_eq!(std::fs::read_to_string(s.path.join("wf/ok.yaml")).unwrap(), CURRENT);
    let r = run(&s.path, &["migrate", "--write", "wf"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("2 file(s): 0 migrated, 2 already current"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(s.path.join("wf/old.yaml")).unwrap(),
        once,
        "a second run changes nothing"
    );
    let leftovers: Vec<_> =
        std::fs::read_dir(s.path.join("wf")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 2, "no temporary files left: {leftovers:?}");
}

#[test]
fn json_summary() {
    let s = Root::new("json");
    s.write("old.yaml", LEGACY);
    s.write("bad.yaml", BROKEN);
    let r = run(&s.path, &["migrate", "old.yaml", "bad.yaml", "--format", "json"]);
    assert_exit(&r, 0);
    let v = r.json();
    assert_eq!(v["summary"], serde_json::json!({"files": 2, "migrated": 1, "current": 0, "failed": 1}));
    assert_eq!(v["files"][0]["status"], "migrated");
    assert_eq!(v["files"][0]["dialect"], "think");
    assert!(
        v["files"][0]["text"].as_str().unwrap().contains("<<params.who>>"),
        "a dry run includes the text"
    );
    assert_eq!(v["files"][1]["errors"][0]["code"], "YAML_SYNTAX");
    assert_eq!(v["files"][1]["errors"][0]["line"], 3);
}

#[test]
fn bad_input() {
    let s = Root::new("bad");
    // A missing path is an I/O error: exit 2, with its code.
    let r = run(&s.path, &["migrate", "nope.yaml"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("error[IO_ERROR]: nope.yaml: no such file or directory"), "{r:?}");
    // Not UTF-8: reported with its position, left unchanged.
    s.write("latin1.yaml", b"steps:\n  - id: caf\xe9\n".as_slice());
    let r = run(&s.path, &["migrate", "--check", "latin1.yaml"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("latin1.yaml:2:12: YAML_SYNTAX: the file is not valid UTF-8"), "{r:?}");
    // Not a workflow.
    s.write("list.yaml", "- a\n- b\n");
    let r = run(&s.path, &["migrate", "list.yaml"]);
    assert_exit(&r, 0);
    assert!(r.stderr.contains("YAML_SCHEMA_VIOLATION: not a workflow"), "{r:?}");
    // Conflicting flags and no paths are usage errors.
    assert_exit(&run(&s.path, &["migrate", "x.yaml", "--write", "--out", "o"]), 2);
    assert_exit(&run(&s.path, &["migrate", "x.yaml", "--write", "--check"]), 2);
    assert_exit(&run(&s.path, &["migrate"]), 2);
    // Two inputs that would land on one output.
    s.write("a/w.yaml", LEGACY);
    s.write("b/w.yaml", LEGACY);
    let r = run(&s.path, &["migrate", "a/w.yaml", "b/w.yaml", "--out", "o"]);
    assert_exit(&r, 2);
    assert_eq!(
        r.stdout,
        "error[IO_ERROR]: b/w.yaml: a/w.yaml and b/w.yaml would both be written to o/w.yaml\n"
    );
    assert!(!s.path.join("o").exists(), "nothing written after a collision");
}

#[test]
fn help_explains_the_flags() {
    let r = run(std::path::Path::new("."), &["migrate", "--help"]);
    assert_exit(&r, 0);
    for flag in ["--write", "--out", "--check", "--format", "--max-file-size", "Exit status"] {
        assert!(r.stdout.contains(flag), "{flag} missing from help: {r:?}");
    }
}

#[test]
fn a_dry_run_of_one_current_file_prints_it_unchanged() {
    let s = Root::new("dry-current");
    s.write("ok.yaml", CURRENT);
    let r = run(&s.path, &["migrate", "ok.yaml"]);
    assert_exit(&r, 0);
    assert_eq!(r.stdout, CURRENT);
    assert!(r.stderr.contains("current  ok.yaml"), "{r:?}");
}

#[test]
fn an_output_that_cannot_be_written_is_an_io_error() {
    let s = Root::new("unwritable");
    s.write("old.yaml", LEGACY);
    s.write("taken", "a file, not a directory");
    let r = run(&s.path, &["migrate", "old.yaml", "--out", "taken"]);
    assert_exit(&r, 2);
    assert!(r.stdout.contains("error[IO_ERROR]: taken/old.yaml: cannot"), "{r:?}");
}

#[test]
fn out_never_overwrites_an_input_nor_reads_its_own_output() {
    let s = Root::new("out-self");
    s.write("legacy/old.yaml", LEGACY);
    // --out onto the input's own directory would be --write without a word: refused, nothing written.
    for args in [["migrate", "legacy", "--out", "legacy"], ["migrate", "legacy/old.yaml", "--out", "legacy"]]
    {
        let r = run(&s.path, &args);
        assert_exit(&r, 2);
        assert!(r.stdout.contains("--out would overwrite the input itself"), "{r:?}");
        assert!(r.stdout.contains("use --write"), "{r:?}");
        assert_eq!(std::fs::read_to_string(s.path.join("legacy/old.yaml")).unwrap(), LEGACY);
    }
    // An --out inside the input directory is output, not input: a second run does not nest it.
    for _ in 0..2 {
        let r = run(&s.path, &["migrate", "legacy", "--out", "legacy/new"]);
        assert_exit(&r, 0);
        assert!(r.stdout.contains("1 file(s): 1 migrated"), "{r:?}");
    }
    assert!(!s.path.join("legacy/new/new").exists(), "the output was migrated again");
    // Pointed at the output directory itself, it is read as any input.
    let r = run(&s.path, &["migrate", "--check", "legacy/new"]);
    assert_exit(&r, 0);
}

#[test]
fn a_lone_file_that_cannot_be_migrated_is_printed_as_it_is() {
    let s = Root::new("dry-failed");
    for (name, text) in [("bad.yaml", BROKEN), ("list.yaml", "- a\n- b\n")] {
        s.write(name, text);
        let r = run(&s.path, &["migrate", name]);
        assert_eq!(r.stdout, text, "`migrate {name} > new.yaml` must not make an empty file");
        assert!(r.stderr.contains("not migrated"), "{r:?}");
    }
}

#[test]
fn a_migrated_file_that_could_not_be_written_says_so() {
    let s = Root::new("out-unwritable");
    s.write("old.yaml", LEGACY);
    s.write("afile", "not a directory");
    let r = run(&s.path, &["migrate", "old.yaml", "--out", "afile"]);
    assert_exit(&r, 2);
    assert!(r.stdout.contains("migrated old.yaml (think dialect) — NOT WRITTEN"), "{r:?}");
    assert!(r.stdout.contains("error[IO_ERROR]: afile/old.yaml: cannot create afile"), "{r:?}");
}
