//! `savant-think init`: a working project in the current directory (or
//! `--root`): a first workflow and its test, `savant-think.toml` with the
//! common settings commented, a pre-commit config, a `.gitignore` for run
//! state; it refuses to overwrite anything (unless `--force`), and prints the
//! next commands and the MCP client snippets for this root.

use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `savant-think init` arguments.
#[derive(Args)]
pub struct InitArgs {
    /// Where to create the project (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Overwrite files that already exist.
    #[arg(long)]
    pub force: bool,
    /// Also write this MCP client's project-local config file
    /// (claude-code: .mcp.json, vscode: .vscode/mcp.json, cursor: .cursor/mcp.json).
    #[arg(long, value_enum, value_name = "NAME")]
    pub mcp_client: Option<McpClient>,
}

/// MCP clients whose config `init` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum McpClient {
    /// Claude Code: `.mcp.json` in the project.
    ClaudeCode,
    /// VS Code: `.vscode/mcp.json`.
    Vscode,
    /// Cursor: `.cursor/mcp.json`.
    Cursor,
    /// Claude Desktop: a global file; `init` prints the snippet to paste.
    ClaudeDesktop,
}

const HELLO: &str = r#"# Your first workflow. `savant-think check` checks it, `savant-think test`
# runs its tests (tests/hello.test.yaml), and `savant-think plan hello
# --params '{"name": "Ada"}'` starts a run. The language: docs/language.md.
id: hello
description: Greet someone, then think about what to say next.
params:
  name: { type: string, description: Who to greet }
required: [name]
steps:
  - id: greet
    call: prompt.say
    input_template: { text: "Hello, <<params.name>>!" }
    capture_as: greeting
  - id: reflect
    call: think
    input_template: { thought: "I said <<greeting>> to <<params.name>>. What comes next?" }
"#;

const HELLO_TEST: &str = r#"# Tests of workflows/hello.yaml: `savant-think test` runs them with the
# tools mocked (no model, no server). The format: docs/testing.md.
workflow: hello
tests:
  - name: greets by name, then reflects
    params: { name: Ada }
    mocks:
      greet: { result: { shown: true } }
      reflect: { result: { thought: ask how they are } }
    expect:
      status: done
      ran: [greet, reflect]
      inputs:
        greet: { text: "Hello, Ada!" }
"#;

const CONFIG: &str = r#"# savant-think settings (every key is optional; docs/config.md lists them all).

# [check]
# ignore = ["UNUSED_CAPTURE"]               # codes never reported
# deny-warnings = true                      # warnings fail `check`
# tools = "tools.json"                      # a tool manifest: unknown tools and inputs
# [check.per-file-ignores]
# "workflows/legacy/*.yaml" = ["LEGACY_INTERPOLATION"]

# [state]
# fsync = true                              # durable run state (default)
# url = "postgres://user@host/db"           # run state in PostgreSQL (docs/deploy.md)

# [servers.gitlab]                          # an MCP server `exec` and `run` may call
# command = "gitlab-mcp"
# args = ["--stdio"]
"#;

const PRE_COMMIT: &str = r#"# pre-commit (https://pre-commit.com): `pre-commit install`, then every commit
# checks the workflows it touches and runs the workflow tests.
repos:
  - repo: local
    hooks:
      - id: savant-think-check
        name: savant-think check
        entry: savant-think check
        language: system
        files: (^|/)(workflows/.*\.ya?ml|schemas/.*\.json)$
        require_serial: true
      - id: savant-think-test
        name: savant-think test
        entry: savant-think test
        language: system
        pass_filenames: false
        files: (^|/)(workflows/.*\.ya?ml|schemas/.*\.json|tests/.*\.test\.ya?ml)$
"#;

const GITIGNORE: &str = "# savant-think run state and logs\n.savant/\nlogs/\n";

/// The files `init` writes: (path under the root, contents).
fn files() -> [(&'static str, &'static str); 5] {
    [
        ("workflows/hello.yaml", HELLO),
        ("tests/hello.test.yaml", HELLO_TEST),
        ("savant-think.toml", CONFIG),
        (".pre-commit-config.yaml", PRE_COMMIT),
        (".gitignore", GITIGNORE),
    ]
}

/// The server entry every client runs: this binary's `serve` on this root.
fn server(root: &Path) -> (String, Vec<String>) {
    ("savant-think".to_owned(), vec!["serve".into(), "--root".into(), root.display().to_string()])
}

/// A client's config file (project-local path, JSON) for `root`, or `None`
/// for a client whose config is not project-local.
fn client_config(client: McpClient, root: &Path) -> (Option<&'static str>, Value) {
    let (command, args) = server(root);
    match client {
        McpClient::Vscode => (
            Some(".vscode/mcp.json"),
            json!({"servers": {"savant-think": {"type": "stdio", "command": command, "args": args}}}),
        ),
        McpClient::ClaudeCode => {
            (Some(".mcp.json"), json!({"mcpServers": {"savant-think": {"command": command, "args": args}}}))
        }
        McpClient::Cursor => (
            Some(".cursor/mcp.json"),
            json!({"mcpServers": {"savant-think": {"command": command, "args": args}}}),
        ),
        McpClient::ClaudeDesktop => {
            (None, json!({"mcpServers": {"savant-think": {"command": command, "args": args}}}))
        }
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// Runs `init`.
pub fn run(args: InitArgs, cwd: &Path) -> ExitCode {
    let root = match &args.root {
        Some(r) if r.is_absolute() => r.clone(),
        Some(r) => cwd.join(r),
        None => cwd.to_path_buf(),
    };
    if let Err(e) = std::fs::create_dir_all(&root) {
        return super::super::fail(format!("cannot create {}: {e}", root.display()));
    }
    let root = savant_think::fsx::canonical(&root).unwrap_or(root);
    let mut planned: Vec<(String, String)> =
        files().iter().map(|(p, c)| ((*p).to_owned(), (*c).to_owned())).collect();
    if let Some(client) = args.mcp_client {
        match client_config(client, &root) {
            (Some(path), config) => planned.push((path.to_owned(), pretty(&config) + "\n")),
            (None, config) => {
                eprintln!(
                    "note: Claude Desktop's config is not project-local; add this to claude_desktop_config.json:\n{}",
                    pretty(&config)
                );
            }
        }
    }
    // Nothing is written unless everything can be: existing files first.
    let existing: Vec<&str> = planned
        .iter()
        .filter(|(p, _)| root.join(p).symlink_metadata().is_ok())
        .map(|(p, _)| p.as_str())
        .collect();
    if !existing.is_empty() && !args.force {
        eprintln!(
            "error: refusing to overwrite what exists in {}: {}\n  help: pass --force to overwrite them, or run init in an empty directory",
            root.display(),
            existing.join(", ")
        );
        return ExitCode::from(1);
    }
    // Output into memory, written once at the end: a closed pipe (`| head`)
    // must not stop the writing half way.
    let mut out = String::new();
    for (path, contents) in &planned {
        let target = root.join(path);
        let written = target
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| savant_think::fsx::replace_file(&target, contents.as_bytes(), "savant-init"));
        if let Err(e) = written {
            return super::super::fail(format!("cannot write {}: {e}", target.display()));
        }
        out.push_str(&format!("created {path}\n"));
    }
    next_steps(&root, &mut out);
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    ExitCode::SUCCESS
}

fn next_steps(root: &Path, out: &mut String) {
    use std::fmt::Write;
    let (command, args) = server(root);
    let quoted: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
    let _ = writeln!(
        out,
        "\nNext:\n  savant-think check                       # check the workflows\n  \
         savant-think test                        # run the workflow tests\n  \
         savant-think plan hello --params '{{\"name\": \"Ada\"}}'   # start a run\n  \
         pre-commit install                       # check on every commit\n"
    );
    let _ = writeln!(out, "MCP clients (this project's root: {}):\n", root.display());
    let _ = writeln!(out, "  Claude Code:   claude mcp add savant-think -- {command} {}", quoted.join(" "));
    let _ =
        writeln!(out, "                 (or `savant-think init --mcp-client claude-code` writes .mcp.json)");
    for (name, client) in [
        ("Claude Desktop (claude_desktop_config.json)", McpClient::ClaudeDesktop),
        ("VS Code (.vscode/mcp.json)", McpClient::Vscode),
    ] {
        let (_, config) = client_config(client, root);
        let indented = pretty(&config).lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n");
        let _ = writeln!(out, "\n  {name}:\n{indented}");
    }
}

fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
