//! `savant-think init`: a project that works at once (check, plan, serve),
//! nothing overwritten without `--force`, and the MCP client configs.

use crate::common::{BIN, Root, assert_exit, run};
use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use std::time::Duration;

const FILES: [&str; 5] = [
    "workflows/hello.yaml",
    "tests/hello.test.yaml",
    "savant-think.toml",
    ".pre-commit-config.yaml",
    ".gitignore",
];

#[test]
fn init_makes_a_project_that_checks_and_runs() {
    let dir = Root::new("init");
    let r = run(&dir.path, &["init"]);
    assert_exit(&r, 0);
    for f in FILES {
        assert!(dir.path.join(f).is_file(), "{f} missing: {r:?}");
        assert!(r.stdout.contains(&format!("created {f}")), "{r:?}");
    }
    // The next commands and every client's snippet, for this root.
    let root = savant_think::fsx::canonical(&dir.path).unwrap().display().to_string();
    for needle in [
        "savant-think check",
        "savant-think test",
        "claude mcp add savant-think",
        "Claude Desktop",
        "VS Code",
        "\"servers\"",
        "\"mcpServers\"",
    ] {
        assert!(r.stdout.contains(needle), "{needle}: {r:?}");
    }
    assert!(r.stdout.contains(&root), "names the root {root}: {r:?}");
    let gitignore = std::fs::read_to_string(dir.path.join(".gitignore")).unwrap();
    assert!(gitignore.lines().any(|l| l == ".savant/"), "{gitignore}");
    let hooks = std::fs::read_to_string(dir.path.join(".pre-commit-config.yaml")).unwrap();
    assert!(
        hooks.contains("entry: savant-think check") && hooks.contains("entry: savant-think test"),
        "{hooks}"
    );
    // The settings file is valid TOML (every setting commented out).
    let toml_text = std::fs::read_to_string(dir.path.join("savant-think.toml")).unwrap();
    assert!(toml_text.parse::<toml::Table>().unwrap().is_empty(), "{toml_text}");

    // check passes with no problem at all (warnings included), and the
    // workflow's test passes.
    let r = run(&dir.path, &["check", "--deny-warnings"]);
    assert_exit(&r, 0);
    let r = run(&dir.path, &["test"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("1 passed"), "{r:?}");
    // plan → next → next → done.
    let r = run(&dir.path, &["plan", "hello", "--params", r#"{"name": "Ada"}"#, "--run-id", "r1"]);
    assert_exit(&r, 0);
    let plan = r.json();
    assert_eq!(plan["instruction"]["step_id"], "greet", "{plan}");
    assert_eq!(plan["instruction"]["input"], json!({"text": "Hello, Ada!"}));
    let r = run(
        &dir.path,
        &["next", "hello", "--run-id", "r1", "--step", "greet", "--result", r#"{"shown": true}"#],
    );
    assert_exit(&r, 0);
    let next = r.json();
    assert_eq!(next["instruction"]["step_id"], "reflect", "{next}");
    let r = run(
        &dir.path,
        &["next", "hello", "--run-id", "r1", "--step", "reflect", "--result", r#"{"thought": "ok"}"#],
    );
    assert_exit(&r, 0);
    assert_eq!(r.json()["done"], true, "{r:?}");
}

#[test]
fn init_never_overwrites_without_force() {
    let dir = Root::new("init-again");
    dir.write("workflows/hello.yaml", "id: mine\nsteps:\n  - id: a\n    call: think\n");
    let r = run(&dir.path, &["init"]);
    assert_exit(&r, 1);
    assert!(r.stderr.contains("workflows/hello.yaml") && r.stderr.contains("--force"), "{r:?}");
    // Nothing at all was written: not even the files that did not exist.
    assert!(!dir.path.join("savant-think.toml").exists(), "{r:?}");
    assert!(std::fs::read_to_string(dir.path.join("workflows/hello.yaml")).unwrap().contains("id: mine"));
    let r = run(&dir.path, &["init", "--force"]);
    assert_exit(&r, 0);
    assert!(std::fs::read_to_string(dir.path.join("workflows/hello.yaml")).unwrap().contains("id: hello"));
}

#[test]
fn init_writes_a_project_local_mcp_client_config() {
    for (client, file, key) in [
        ("claude-code", ".mcp.json", "mcpServers"),
        ("vscode", ".vscode/mcp.json", "servers"),
        ("cursor", ".cursor/mcp.json", "mcpServers"),
    ] {
        let dir = Root::new("init-client");
        let r = run(&dir.path, &["init", "--mcp-client", client]);
        assert_exit(&r, 0);
        let config: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path.join(file)).unwrap()).unwrap();
        let server = &config[key]["savant-think"];
        let root = savant_think::fsx::canonical(&dir.path).unwrap().display().to_string();
        assert_eq!(server["args"], json!(["serve", "--root", root]), "{client}: {config}");
    }
    // Claude Desktop's file is global: printed, not written.
    let dir = Root::new("init-desktop");
    let r = run(&dir.path, &["init", "--mcp-client", "claude-desktop"]);
    assert_exit(&r, 0);
    assert!(r.stderr.contains("claude_desktop_config.json") && r.stderr.contains("mcpServers"), "{r:?}");
    let r = run(&dir.path, &["init", "--mcp-client", "emacs"]);
    assert_exit(&r, 2);
}

/// `serve` in the new project lists its workflow.
#[tokio::test(flavor = "multi_thread")]
async fn init_then_serve_lists_the_workflow() {
    let dir = Root::new("init-serve");
    assert_exit(&run(&dir.path, &["init"]), 0);
    let transport = TokioChildProcess::new(tokio::process::Command::new(BIN).configure(|c| {
        c.arg("serve").current_dir(&dir.path).env_remove("SAVANT_PATH").env("LOG_LEVEL", "warn");
    }))
    .unwrap();
    let client = tokio::time::timeout(Duration::from_secs(20), ().serve(transport)).await.unwrap().unwrap();
    let (is_error, out) = crate::mcp_support::call(&client, "think_workflows_list", json!({})).await;
    assert!(!is_error, "{out}");
    assert!(out.to_string().contains("hello"), "{out}");
    client.cancel().await.unwrap();
}
