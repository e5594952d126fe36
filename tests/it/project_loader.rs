//! One loader for a project's files (`runtime::Project`): `check`, `plan`,
//! `validate` and `think_workflows_read` read a workflow file by the same
//! rules, so they agree on what is in it.

use crate::common::Root;
use savant_think::runtime::{ErrorCode, Project};
use savant_think::{Code, Engine};
use serde_json::json;
use std::sync::Arc;

const LATIN1: &[u8] = b"id: latin\nsteps:\n  - id: a\n    call: \"caf\xe9\"\n";

/// The codes of a `YAML_SCHEMA_VIOLATION`'s or `validate`'s diagnostics.
fn codes(diags: &serde_json::Value) -> Vec<String> {
    diags.as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_byte_that_is_not_utf8_is_refused_alike_by_every_reader() {
    let root = Root::with_workflows("loader-latin1", &[]);
    root.write("workflows/latin.yaml", LATIN1);
    let engine = Engine::new(&root.path).unwrap();

    // check: YAML_SYNTAX at the byte.
    let (_, diags) = engine.project().check("latin").unwrap();
    assert_eq!(diags.iter().map(|d| d.code).collect::<Vec<_>>(), [Code::YamlSyntax]);

    // plan: refused, with the same diagnostic; no run starts with "caf�".
    let e = engine.plan("latin", json!({}), Some("r1"), true).unwrap_err();
    assert_eq!(e.code, ErrorCode::YamlSchemaViolation);
    assert_eq!(codes(&e.details.to_json()["diagnostics"]), ["YAML_SYNTAX"]);

    // validate: not valid, the same diagnostic.
    let v = serde_json::to_value(engine.validate_workflow("latin").unwrap()).unwrap();
    assert_eq!(v["valid"], false);
    assert_eq!(codes(&v["diagnostics"]), ["YAML_SYNTAX"]);

    // think_workflows_read: refused with the checker's message, not decoded lossily.
    let e = engine.workflows_read("latin").unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownWorkflow);
    let message = e.message_text().unwrap();
    assert!(message.contains("not valid UTF-8"), "{message}");
    assert_eq!(e.details.to_json()["help"], "save the file as UTF-8");
    assert!(engine.state_list(None).unwrap().runs.is_empty());
}

#[test]
fn a_file_over_the_cap_is_refused_alike_by_every_reader() {
    let root = Root::with_workflows("loader-cap", &[]);
    let big = format!("id: big\n# {}\nsteps:\n  - id: a\n    call: think\n", "x".repeat(9 * 1024 * 1024));
    root.write("workflows/big.yaml", big);
    let engine = Engine::new(&root.path).unwrap();

    let (_, diags) = engine.project().check("big").unwrap();
    assert_eq!(diags.iter().map(|d| d.code).collect::<Vec<_>>(), [Code::YamlLimit]);
    let e = engine.plan("big", json!({}), None, true).unwrap_err();
    assert_eq!(codes(&e.details.to_json()["diagnostics"]), ["YAML_LIMIT"]);
    let e = engine.workflows_read("big").unwrap_err();
    assert!(e.details.to_json()["message"].as_str().unwrap().contains("byte limit"), "{e:?}");
    assert!(e.details.to_json()["help"].as_str().unwrap().contains("--max-file-size"), "{e:?}");
}

#[test]
fn a_hot_workflow_is_the_same_compiled_value_until_its_file_changes() {
    let root = Root::with_workflows("loader-hot", &[("w", "id: w\nsteps:\n  - id: a\n    call: think\n")]);
    let file = root.join("workflows/w.yaml");
    let f = std::fs::File::options().write(true).open(&file).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(5)).unwrap();
    let project = Project::open(&root.path);

    let first = project.workflow("w").unwrap();
    // By id, and by the path it resolves to: one file, one compiled workflow.
    assert!(Arc::ptr_eq(&first, &project.workflow("w").unwrap()));
    assert!(Arc::ptr_eq(&first, &project.workflow(file.to_str().unwrap()).unwrap()));
    assert_eq!(first.wf.steps.len(), 1);

    std::fs::write(&file, "id: w\nsteps:\n  - id: a\n    call: think\n  - id: b\n    call: think\n").unwrap();
    let second = project.workflow("w").unwrap();
    assert_eq!(second.wf.steps.len(), 2);
    assert_ne!(first.hash, second.hash);
}

#[test]
fn resolution_listing_and_schemas_come_from_the_project() {
    let root = Root::with_workflows(
        "loader-list",
        &[
            ("review", "id: review\nsteps:\n  - id: a\n    call: think\n"),
            ("triage", "id: triage\nsteps: []\n"),
        ],
    );
    root.write("workflows/_draft.yaml", "id: draft\nsteps: []\n");
    root.write("schemas/Ticket.json", r#"{"type": "object", "required": ["key"]}"#);
    root.write("schemas/Broken.json", "{ not json");
    let project = Project::open(&root.path);

    // Files that cannot be named by id are not listed.
    assert_eq!(project.ids(), ["review", "triage"]);
    assert_eq!(project.resolve("review").unwrap(), root.join("workflows/review.yaml"));
    let e = project.resolve("reviw").unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownWorkflow);
    assert_eq!(e.details.to_json()["help"], "did you mean `review`?");
    assert_eq!(e.details.to_json()["available"], json!(["review", "triage"]));

    assert_eq!(project.schema("Ticket").unwrap()["required"], json!(["key"]));
    let e = project.schema("Broken").unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownSchema);
    assert!(e.details.to_json()["message"].as_str().unwrap().contains("not valid JSON"), "{e:?}");
    let e = project.schema("Tiket").unwrap_err();
    assert_eq!(e.details.to_json()["available"], json!(["Broken", "Ticket"]));
}

#[test]
fn the_prompt_list_is_typed_and_follows_the_project() {
    let root = Root::new("loader-prompts");
    let project = Project::open(&root.path);
    let bundled = project.prompt_list().unwrap();
    let latest = bundled.latest.clone().expect("the bundled prompts name their latest");
    assert!(bundled.versions.iter().all(|v| v.source == "bundled" && v.file.starts_with("bundled:")));
    assert!(bundled.versions.iter().any(|v| v.version == latest));

    // Edited while the project is open: seen at once.
    root.write("prompts/prompts.yml", "latest: mine\nversions:\n  mine: mine.md\n");
    root.write("prompts/mine.md", "# Mine\n");
    let list = project.prompt_list().unwrap();
    assert_eq!(list.latest.as_deref(), Some("mine"));
    let mine = list.versions.last().unwrap();
    assert_eq!((mine.source.as_str(), mine.file.as_str()), ("project", "prompts/mine.md"));
    assert_eq!(project.driver_prompt(None).unwrap().prompt_md, "# Mine\n");
}

#[test]
fn a_running_engine_sees_schemas_added_and_changed() {
    use savant_think::runtime::project::SCHEMAS_LOOK_EVERY;
    let wait = || std::thread::sleep(SCHEMAS_LOOK_EVERY + std::time::Duration::from_millis(100));
    let root = Root::with_workflows(
        "loader-schemas",
        &[(
            "t",
            "id: t\nsteps:\n  - id: fetch\n    call: jira.get_issue\n    success_schema: Ticket\n    \
             capture_as: ticket\n  - id: say\n    call: prompt.say\n",
        )],
    );
    let engine = Engine::new(&root.path).unwrap();

    // No schemas/ yet: the workflow does not check.
    let e = engine.plan("t", json!({}), Some("r0"), true).unwrap_err();
    assert_eq!(codes(&e.details.to_json()["diagnostics"]), ["UNKNOWN_SCHEMA"]);
    let e = engine.validate(&json!("Ticket"), &json!({})).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownSchema);

    // Added while the engine runs: seen without a restart.
    root.write("schemas/Ticket.json", r#"{"type": "object"}"#);
    wait();
    engine.plan("t", json!({}), Some("r1"), true).unwrap();
    let v = serde_json::to_value(engine.validate(&json!("Ticket"), &json!({})).unwrap()).unwrap();
    assert_eq!(v["valid"], true);

    // Changed: the cached validator and compiled workflow are not reused,
    // for new runs; a run going on keeps the schema it is pinned to.
    root.write("schemas/Ticket.json", r#"{"type": "object", "required": ["key"]}"#);
    wait();
    let v = serde_json::to_value(engine.validate(&json!("Ticket"), &json!({})).unwrap()).unwrap();
    assert_eq!(v["valid"], false);
    engine.plan("t", json!({}), Some("r2"), true).unwrap();
    let e = crate::support::next_json(&engine, "t", "r2", "fetch", json!({})).unwrap_err();
    assert_eq!(e["error"], "VALIDATION_FAILED", "{e}");
    crate::support::next_json(&engine, "t", "r2", "fetch", json!({"key": "PROJ-1"})).unwrap();
    crate::support::next_json(&engine, "t", "r1", "fetch", json!({})).unwrap();

    // Removed: unknown again.
    std::fs::remove_file(root.join("schemas/Ticket.json")).unwrap();
    wait();
    assert_eq!(engine.validate(&json!("Ticket"), &json!({})).unwrap_err().code, ErrorCode::UnknownSchema);
}
