//! `savant-think tools sync` against real MCP servers started as the
//! multiplexer starts them: the project's own `serve`, and a small stdio
//! server (`tests/python/fixture_mcp_server.py`, standard library only) with
//! output schemas, annotations and a paged `tools/list`. No mocked
//! `tools/list`.

use crate::common::{CRATE, Root, assert_exit, run};
use crate::support::skip::skip;
use serde_json::Value;

/// `python3` is on the machine (the fixture server needs it).
fn python() -> bool {
    let found =
        std::process::Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        skip("tools_sync", "python3 is not installed (apt-get install python3)", None);
    }
    found
}

fn fixture() -> String {
    format!("{CRATE}/tests/python/fixture_mcp_server.py")
}

/// A root whose savant-think.toml names the fixture server, the project's
/// own `serve`, and `extra` (more TOML).
fn project(name: &str, extra: &str) -> Root {
    let root = Root::new(name);
    let toml = format!(
        "[servers.items]\ncommand = \"python3\"\nargs = [{:?}]\n\n[servers.own]\ncommand = {:?}\nargs = [\"serve\", \"--root\", {:?}]\n{extra}",
        fixture(),
        crate::support::BIN,
        root.path.display().to_string(),
    );
    root.write("savant-think.toml", toml);
    root
}

fn lock(root: &Root) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join("tools.lock.json")).unwrap()).unwrap()
}

#[test]
fn sync_locks_every_server_sorted_and_stable_and_check_sees_a_change() {
    if !python() {
        return;
    }
    let root = project("tools-sync", "");
    let r = run(&root.path, &["tools", "sync"]);
    assert_exit(&r, 0);
    let text = std::fs::read_to_string(root.join("tools.lock.json")).unwrap();
    let v = lock(&root);
    assert_eq!(v["format"], 1);
    let items = &v["servers"]["items"];
    assert_eq!(items["server"], serde_json::json!({"name": "fixture-items", "version": "1.0.0"}));
    // Three pages of one tool each, sorted by name.
    let names: Vec<&str> =
        items["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["delete_item", "echo", "get_item"]);
    let get = &items["tools"][2];
    assert_eq!(get["outputSchema"]["required"], serde_json::json!(["title", "labels"]));
    assert_eq!(get["annotations"], serde_json::json!({"openWorldHint": false, "readOnlyHint": true}));
    assert_eq!(items["tools"][0]["annotations"]["destructiveHint"], true);
    // The project's own server: its engine tools, with their output schemas.
    let own = v["servers"]["own"]["tools"].as_array().unwrap();
    let think = own.iter().find(|t| t["name"] == "think").expect("think is served");
    assert!(think["outputSchema"]["properties"]["thought"].is_object(), "{think}");
    assert_eq!(v["servers"]["own"]["server"]["name"], "savant-think");

    // Stable: a second sync writes the same bytes, and --check agrees.
    assert_exit(&run(&root.path, &["tools", "sync"]), 0);
    assert_eq!(std::fs::read_to_string(root.join("tools.lock.json")).unwrap(), text);
    assert_exit(&run(&root.path, &["tools", "sync", "--check"]), 0);

    // The server changed (a new version): --check exits 1 and says what.
    let toml = std::fs::read_to_string(root.join("savant-think.toml")).unwrap();
    root.write(
        "savant-think.toml",
        toml.replacen(
            &format!("args = [{:?}]", fixture()),
            &format!("args = [{:?}, \"--version\", \"2.0.0\"]", fixture()),
            1,
        ),
    );
    let r = run(&root.path, &["tools", "sync", "--check"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("server `items`: fixture-items 1.0.0 → fixture-items 2.0.0"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("tools.lock.json")).unwrap(),
        text,
        "--check writes nothing"
    );
    // --server syncs that one only.
    assert_exit(&run(&root.path, &["tools", "sync", "--server", "items"]), 0);
    assert_eq!(lock(&root)["servers"]["items"]["server"]["version"], "2.0.0");
    assert_exit(&run(&root.path, &["tools", "sync", "--check"]), 0);
}

#[test]
fn a_failing_server_is_named_with_what_it_printed_and_the_lock_is_kept() {
    if !python() {
        return;
    }
    let broken = format!("\n[servers.broken]\ncommand = \"python3\"\nargs = [{:?}, \"--fail\"]\n", fixture());
    let root = project("tools-sync-broken", &broken);
    root.write("tools.lock.json", "{\"format\": 1, \"servers\": {}}\n");
    let r = run(&root.path, &["tools", "sync"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("server `broken`"), "{r:?}");
    assert!(r.stderr.contains("cannot reach the item database"), "its stderr is shown: {r:?}");
    assert!(r.stderr.contains("tools.lock.json is unchanged"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("tools.lock.json")).unwrap(),
        "{\"format\": 1, \"servers\": {}}\n"
    );
    // The others can still be synced one by one; an unknown name is a usage error.
    assert_exit(&run(&root.path, &["tools", "sync", "--server", "items"]), 0);
    let r = run(&root.path, &["tools", "sync", "--server", "itemz"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("did you mean `items`?"), "{r:?}");
}

#[test]
fn check_reads_the_lock_at_the_root_and_reports_a_broken_one_in_it() {
    let root = Root::new("tools-lock-check");
    let lock =
        std::fs::read_to_string(format!("{CRATE}/tests/checks/unknown_tool/ok_lock.lock.json")).unwrap();
    root.write("tools.lock.json", &lock);
    root.write(
        "workflows/w.yaml",
        "id: w\nsteps:\n  - id: fetch\n    call: items.get_item\n    input_template: { id: 7 }\n    capture_as: item\n  \
         - id: show\n    call: prompt.say\n    input_template: { text: \"<<item.titel>>\" }\n",
    );
    let r = run(&root.path, &["check", "--format", "concise"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("UNRESOLVED_VAR") && r.stdout.contains("did you mean `title`?"), "{r:?}");
    // A lock that is not one: a diagnostic in the lock file, with its position; never a panic.
    root.write(
        "tools.lock.json",
        "{\"format\": 1, \"servers\": {\"items\": {\"tools\": [\n  {\"name\": \"get_item\", \"outputSchema\": {\"type\": 12}}]}}}\n",
    );
    let r = run(&root.path, &["check", "--format", "concise"]);
    assert_exit(&r, 1);
    // At the value at fault, in a person's words (not the validator's "anyOf").
    assert!(r.stdout.contains("tools.lock.json:2:49: error[INVALID_TOOL_LOCK]"), "{r:?}");
    assert!(r.stdout.contains("`12` is not a JSON Schema type"), "{r:?}");
    assert!(!r.stdout.contains("anyOf"), "{r:?}");
    root.write("tools.lock.json", "{ not json");
    let r = run(&root.path, &["check", "--format", "concise"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("error[INVALID_TOOL_LOCK]"), "{r:?}");
}

#[test]
fn exec_checks_a_result_against_the_tools_output_schema_and_blames_the_server() {
    if !python() {
        return;
    }
    let wf = "id: w\nsteps:\n  - id: fetch\n    call: items.get_item\n    input_template: { id: 7 }\n    capture_as: item\n";
    let root = project("tools-output-ok", "");
    root.write("workflows/w.yaml", wf);
    let r = run(&root.path, &["exec", "w", "--json"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("Item 7"), "{r:?}");
    // The same tool breaking its own outputSchema: the step fails, the server is named.
    let root = project("tools-output-wrong", "");
    let toml = std::fs::read_to_string(root.join("savant-think.toml")).unwrap();
    root.write(
        "savant-think.toml",
        toml.replacen(
            &format!("args = [{:?}]", fixture()),
            &format!("args = [{:?}, \"--wrong-output\"]", fixture()),
            1,
        ),
    );
    root.write("workflows/w.yaml", wf);
    let r = run(&root.path, &["exec", "w", "--json"]);
    assert_ne!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("TOOL_OUTPUT_INVALID"), "{r:?}");
    assert!(r.stdout.contains("server `items` returned a result of `get_item`"), "{r:?}");
}

#[test]
fn a_url_server_is_synced_too() {
    let served = Root::new("tools-sync-http-served");
    let server = crate::mcp_http::start_with(&served.path, &["--token", "sync-token-0123456789"], &[]);
    let root = Root::new("tools-sync-http");
    root.write(
        "savant-think.toml",
        format!("[servers.web]\nurl = \"http://{}/mcp\"\ntoken = \"sync-token-0123456789\"\n", server.addr),
    );
    let r = run(&root.path, &["tools", "sync"]);
    assert_exit(&r, 0);
    let v = lock(&root);
    let tools = v["servers"]["web"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "think_plan" && t["outputSchema"].is_object()), "{v}");
    assert_exit(&run(&root.path, &["tools", "sync", "--check"]), 0);
}

/// A long-running engine (`serve`) sees a new `tools.lock.json` as it sees
/// a new schema: `plan` checks with the lock as it is now, not as it was
/// when the process started.
#[test]
fn a_running_engine_reads_a_changed_lock() {
    let root = Root::new("tools-lock-reload");
    let lock =
        std::fs::read_to_string(format!("{CRATE}/tests/checks/unknown_tool/ok_lock.lock.json")).unwrap();
    root.write(
        "workflows/w.yaml",
        "id: w\nsteps:\n  - id: fetch\n    call: items.get_item\n    input_template: { id: 7 }\n    capture_as: item\n  \
         - id: show\n    call: prompt.say\n    input_template: { text: \"<<item.titel>>\" }\n",
    );
    let engine = root.engine();
    // No lock: the tool's output is untyped, so the typo passes.
    engine.plan("w", Value::Null, Some("r1"), false).unwrap();
    root.write("tools.lock.json", &lock);
    std::thread::sleep(
        savant_think::runtime::project::SCHEMAS_LOOK_EVERY + std::time::Duration::from_millis(100),
    );
    let e = engine.plan("w", Value::Null, Some("r2"), false).unwrap_err();
    assert_eq!(e.code, "YAML_SCHEMA_VIOLATION", "{e}");
    assert!(e.to_string().contains("did you mean `title`?"), "{e}");
}
