//! A user's own project: an ordinary directory with `workflows/` and nothing
//! else from this repository. The binary must find its root from any
//! subdirectory and bring its own driver prompts.

use crate::common::{Root, assert_exit, run};

const TICKET: &str = "id: ticket
steps:
  - id: fetch
    call: jira.get_issue
    capture_as: issue
    success_schema: TicketV1
  - id: say
    call: prompt.say
    input_template: { text: \"<<issue.key>>\" }
";

const TICKET_SCHEMA: &str = r#"{"type":"object","properties":{"key":{"type":"string"}},"required":["key"],"additionalProperties":false}"#;

fn project() -> Root {
    let s = Root::new("project");
    s.write("workflows/team/ticket.yaml", TICKET);
    s.write("workflows/hello.yaml", "steps:\n  - id: hi\n    call: prompt.say\n");
    s.write("schemas/TicketV1.json", TICKET_SCHEMA);
    s
}

#[test]
fn driver_prompts_are_built_in() {
    let s = Root::new("bare");
    s.write("workflows/hello.yaml", "steps:\n  - id: hi\n    call: prompt.say\n");
    let r = run(&s.path, &["prompt"]);
    assert_exit(&r, 0);
    let v = r.json();
    assert_eq!(v["version"], "stable");
    assert_eq!(v["source"], "bundled");
    assert!(v["prompt_md"].as_str().unwrap().contains("think_next"), "{r:?}");
    let r = run(&s.path, &["prompt", "code_review"]);
    assert_exit(&r, 0);
    let r = run(&s.path, &["prompt", "nope"]);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["error"], "PROMPT_NOT_FOUND");
    assert_eq!(v["details"]["available"], serde_json::json!(["stable", "code_review"]));
    let r = run(&s.path, &["call", "think.driver_prompt", "--input", "{}"]);
    assert_exit(&r, 0);
}

#[test]
fn a_project_adds_and_overrides_prompt_versions() {
    let s = project();
    s.write("prompts/prompts.yml", "latest: mine\nversions:\n  mine: mine.md\n  stable: stable.md\n");
    s.write("prompts/mine.md", "# my driver\n");
    s.write("prompts/stable.md", "# our stable driver\n");
    let r = run(&s.path, &["prompt", "--list"]);
    assert_exit(&r, 0);
    let v = r.json();
    assert_eq!(v["latest"], "mine");
    let sources: Vec<(String, String)> = v["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["version"].as_str().unwrap().into(), e["source"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        sources,
        [
            ("stable".into(), "project".into()),
            ("code_review".into(), "bundled".into()),
            ("mine".into(), "project".into())
        ]
    );
    let v = run(&s.path, &["prompt"]).json();
    assert_eq!(v["prompt_md"], "# my driver\n");
    let v = run(&s.path, &["prompt", "stable"]).json();
    assert_eq!(v["prompt_md"], "# our stable driver\n");
}

#[test]
fn prompt_files_cannot_leave_the_root() {
    let s = project();
    s.write(
        "prompts/prompts.yml",
        "versions:\n  abs: /etc/passwd\n  up: ../../etc/passwd\n  link: link.md\n",
    );
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/passwd", s.path.join("prompts/link.md")).unwrap();
    for version in ["abs", "up", "link"] {
        let r = run(&s.path, &["prompt", version]);
        assert_exit(&r, 1);
        assert_eq!(r.json()["error"], "PROMPT_NOT_FOUND", "{version}: {r:?}");
        assert!(!r.stdout.contains("root:x:0"), "{version} served /etc/passwd: {r:?}");
    }
}

#[test]
fn check_from_a_subdirectory_uses_the_project_root() {
    let s = project();
    let sub = s.path.join("workflows/team");
    // The named schema is found at the root: no false UNKNOWN_SCHEMA.
    let r = run(&sub, &["check", "ticket.yaml"]);
    assert_exit(&r, 0);
    // With no path, the root's workflows/ is checked (both files).
    let r = run(&sub, &["check", "--format", "json"]);
    assert_exit(&r, 0);
    assert_eq!(r.json()["summary"]["files"], 2, "{r:?}");
    // From outside the project, a file's own project is found.
    let r = run(
        s.path.parent().unwrap(),
        &["check", s.path.join("workflows/team/ticket.yaml").to_str().unwrap()],
    );
    assert_exit(&r, 0);
}

#[test]
fn the_config_file_marks_the_root_in_a_monorepo() {
    let s = Root::new("mono");
    s.write("apps/a/savant-think.toml", "");
    s.write("apps/a/flows/ticket.yaml", TICKET);
    s.write("apps/a/schemas/TicketV1.json", TICKET_SCHEMA);
    let r = run(&s.path, &["check", "apps/a/flows/ticket.yaml"]);
    assert_exit(&r, 0);
    let r = run(&s.path.join("apps/a/flows"), &["root"]);
    assert_exit(&r, 0);
    let v = r.json();
    assert_eq!(v["root"], "..");
    assert!(v["found_by"].as_str().unwrap().contains("savant-think.toml"), "{r:?}");
}

#[test]
fn plan_from_a_subdirectory_finds_the_workflows() {
    let s = project();
    let r = run(&s.path.join("workflows/team"), &["plan", "hello", "--run-id", "r1"]);
    assert_exit(&r, 0);
    assert_eq!(r.json()["instruction"]["step_id"], "hi");
    assert!(s.path.join(".savant/state").is_dir(), "state lives at the root");
}

#[test]
fn a_missing_root_is_a_usage_error() {
    let s = project();
    for args in
        [&["check", "--root", "nope"][..], &["plan", "hello", "--root", "nope"], &["root", "--root", "nope"]]
    {
        let r = run(&s.path, args);
        assert_exit(&r, 2);
        assert!(r.stderr.contains("no such directory"), "{args:?}: {r:?}");
    }
}

#[test]
fn an_invalid_config_stops_check() {
    let s = project();
    s.write("savant-think.toml", "[state\nfsync = ");
    let r = run(&s.path, &["check"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("INVALID_CONFIG"), "{r:?}");
}

#[test]
fn a_changed_schema_checks_the_workflows_that_use_it() {
    // pre-commit passes the changed files: here only a schema.
    let s = project();
    s.write(
        "schemas/TicketV1.json",
        r#"{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":false}"#,
    );
    // Only the workflow that uses the schema (issue 30: never a file the
    // change does not touch); hello.yaml does not use it.
    let r = run(&s.path, &["check", "--format", "json", "schemas/TicketV1.json"]);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["summary"]["files"], 1, "{r:?}");
    let codes: Vec<&str> =
        v["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"UNRESOLVED_VAR") || codes.contains(&"TYPE_MISMATCH"), "{codes:?}");
    // A workflow passed as well as its directory is reported once.
    let r = run(&s.path, &["check", "--format", "json", "workflows/hello.yaml", "schemas/TicketV1.json"]);
    assert_eq!(r.json()["summary"]["files"], 2, "{r:?}");
}

/// The README's `check` sample: the file it shows (as `cat -n` prints it)
/// checked by the real binary prints exactly the output it shows.
#[test]
fn the_readme_check_sample_is_true() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("$ cat -n workflows/review.yaml\n").expect("the README shows its sample file");
    let block = &readme[start..];
    let block = &block[..block.find("```").unwrap()];
    let (file_part, output_part) = block.split_once("$ savant-think check workflows/\n").unwrap();
    let file: String = file_part
        .lines()
        .skip(1)
        .map(|l| {
            // `cat -n`: a right-aligned number, then the line after two spaces.
            let rest = l.trim_start();
            let (_, text) = rest.split_at(rest.find(' ').unwrap_or(rest.len()));
            format!("{}\n", text.strip_prefix("  ").unwrap_or(text.trim_start()))
        })
        .collect();
    let s = Root::new("readme");
    s.write("workflows/review.yaml", file);
    let r = run(&s.path, &["check", "workflows/"]);
    assert_exit(&r, 1);
    assert_eq!(r.stdout, output_part, "the README's sample output differs from the real one");
}

/// Every flag and argument of every command says what it is for, and no help
/// points an installed user at a bare `docs/…` path.
#[test]
fn every_option_has_a_description() {
    let s = Root::new("help");
    let commands: &[&[&str]] = &[
        &["check"],
        &["compile"],
        &["graph"],
        &["plan"],
        &["next"],
        &["explain"],
        &["reset"],
        &["state", "get"],
        &["state", "list"],
        &["state", "delete"],
        &["validate"],
        &["prompt"],
        &["workflows", "list"],
        &["workflows", "read"],
        &["workflows", "graph"],
        &["serve"],
        &["exec"],
        &["run"],
        &["migrate"],
        &["call"],
        &["root"],
        &["schema"],
        &["lsp"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.push("--help");
        let r = run(&s.path, &args);
        assert_exit(&r, 0);
        let lines: Vec<&str> = r.stdout.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            let is_item = (trimmed.starts_with('-') || trimmed.starts_with('<') || trimmed.starts_with('['))
                && (2..=6).contains(&indent);
            if !is_item {
                continue;
            }
            // `  --flag <V>  description` or the description on the next, deeper line.
            let inline = trimmed.split("  ").filter(|p| !p.trim().is_empty()).count() > 1;
            let next_deeper = lines.get(i + 1).is_some_and(|n| {
                let t = n.trim_start();
                !t.is_empty() && n.len() - t.len() > indent + 2
            });
            assert!(
                inline || next_deeper,
                "`savant-think {}`: `{}` has no description",
                command.join(" "),
                trimmed
            );
        }
        assert!(!r.stdout.contains("Docs: docs/"), "{command:?} points at a docs/ path: {r:?}");
    }
}

#[test]
fn workflow_files_and_ids_agree() {
    let s = project();
    s.write("workflows/_draft.yaml", "steps:\n  - id: a\n    call: prompt.say\n");
    // Listed only what can be planned by id.
    let r = run(&s.path, &["workflows", "list"]);
    assert_exit(&r, 0);
    let ids: Vec<String> = r.json()["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["hello"], "{r:?}");
    // A path that does not exist is "no such file", not a missing id.
    let r = run(&s.path, &["plan", "./nope.yaml"]);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["error"], "UNKNOWN_WORKFLOW");
    assert_eq!(v["details"]["message"], "./nope.yaml: no such file");
}

#[test]
fn a_run_started_from_a_path_is_listed_with_its_real_status() {
    let s = project();
    s.write("elsewhere/solo.yaml", "id: solo\nsteps:\n  - id: a\n    call: prompt.say\n");
    assert_exit(&run(&s.path, &["plan", "elsewhere/solo.yaml", "--run-id", "r1"]), 0);
    let r = run(&s.path, &["next", "elsewhere/solo.yaml", "--run-id", "r1", "--step", "a", "--result", "{}"]);
    assert_eq!(r.json()["done"], true, "{r:?}");
    let r = run(&s.path, &["state", "list"]);
    let runs = r.json()["runs"].clone();
    assert_eq!(runs[0]["workflow"], "solo");
    assert_eq!(runs[0]["status"], "done", "{r:?}");
    assert!(runs[0].get("note").is_none(), "{r:?}");
}

fn doc(name: &str) -> String {
    std::fs::read_to_string(format!("{}/docs/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// runtime.md's walkthrough: each accepted `next` bumps the version by one,
/// so the final version is the number of `next` commands shown.
#[test]
fn the_runtime_walkthrough_counts_its_versions() {
    let text = doc("runtime.md");
    let start = text.find("$ savant-think plan review_v1").unwrap();
    let block = &text[start..];
    let block = &block[..block.find("```").unwrap()];
    let nexts = block.lines().filter(|l| l.starts_with("$ savant-think next")).count();
    let last = block.rfind("\"version\": ").unwrap();
    let version: usize =
        block[last + 11..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap();
    assert_eq!(version, nexts, "the walkthrough ends at version {version} after {nexts} next(s)");
    // And `state get` of the same run shows the same version.
    assert!(
        text.contains(&format!("{{\"version\": {nexts}, \"workflow\": \"review_v1\", \"run_id\": \"demo\""))
    );
}

/// Every `exec` command line in the docs and in `exec --help` is accepted as
/// written (checked with --dry-run, so no tool runs).
#[test]
fn the_documented_exec_command_lines_run() {
    let s = Root::new("exec-docs");
    for dir in ["workflows", "schemas"] {
        for e in std::fs::read_dir(format!("{}/{dir}", env!("CARGO_MANIFEST_DIR"))).unwrap() {
            let e = e.unwrap();
            s.write(&format!("{dir}/{}", e.file_name().to_string_lossy()), std::fs::read(e.path()).unwrap());
        }
    }
    s.write("params.json", r#"{"project": "g/app", "mr_iid": "!7"}"#);
    let help = run(&s.path, &["exec", "--help"]).stdout;
    let text = doc("exec.md") + &help;
    let mut seen = 0;
    for line in text.lines() {
        let Some(rest) = line
            .trim_start()
            .strip_prefix("$ ")
            .or_else(|| line.trim_start().strip_prefix("savant-think exec").map(|_| line.trim_start()))
        else {
            continue;
        };
        let rest = rest.split("  #").next().unwrap();
        if !rest.starts_with("savant-think exec review_v1") {
            continue;
        }
        let mut args = shlex::split(rest).expect("a shell command line");
        args.remove(0);
        if !args.iter().any(|a| a == "--dry-run") {
            args.push("--dry-run".into());
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run(&s.path, &refs);
        assert_exit(&r, 0);
        seen += 1;
    }
    assert!(seen >= 4, "found only {seen} exec command lines");
}
