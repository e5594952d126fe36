//! `savant-think tools sync`: lists the tools of every `[servers.*]` of
//! savant-think.toml (started exactly as the multiplexer starts them) and
//! writes `tools.lock.json` at the root, which `check` and the LSP read
//! (docs/config.md). Exit status: 0 written or up to date, 1 `--check`
//! found a difference, 2 a server or the configuration failed (the old lock
//! is kept).

use savant_think::agent::mux::remote::Server;
use savant_think::check::lock::{FILE_NAME, LockedServer, ToolLock};
use savant_think::source::SourceFile;
use std::path::PathBuf;

/// Lock the tools of the project's MCP servers (`tools.lock.json`).
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  savant-think tools sync\n  savant-think tools sync --check\n\nMore: docs/config.md (tools.lock.json)."
)]
pub struct ToolsArgs {
    #[command(subcommand)]
    command: ToolsCommand,
}

#[derive(clap::Subcommand, Debug)]
enum ToolsCommand {
    /// Call tools/list on every [servers.*] of savant-think.toml and write tools.lock.json.
    ///
    /// Each server is started as `exec` starts it (command, args, env, cwd;
    /// or url and token), asked for all its tools (every page), and stopped.
    /// The lock holds, per server, its name and version, and per tool its
    /// name, title, description, inputSchema, outputSchema and annotations,
    /// sorted so it diffs well. A server that fails leaves the lock as it was.
    #[command(
        after_help = "Examples:\n  savant-think tools sync\n  savant-think tools sync --server gitlab\n  savant-think tools sync --check   # in CI: exit 1 when the lock is stale\n\nExit status: 0 written (or up to date), 1 --check found a difference, 2 a server or savant-think.toml failed.\n\nMore: docs/config.md (tools.lock.json)."
    )]
    Sync(SyncArgs),
}

#[derive(clap::Args, Debug)]
struct SyncArgs {
    /// Compare the servers with the lock instead of writing it: exit 1 when they differ.
    #[arg(long)]
    check: bool,
    /// Sync this server only; the lock's other entries are kept.
    #[arg(long, value_name = "NAME")]
    server: Option<String>,
    /// Project root. Default: $SAVANT_PATH, else the nearest directory above holding savant-think.toml or workflows/.
    #[arg(long)]
    root: Option<PathBuf>,
}

pub fn main(args: ToolsArgs) -> u8 {
    super::logging::init("warn");
    let ToolsCommand::Sync(args) = args.command;
    match sync(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            2
        }
    }
}

fn sync(args: &SyncArgs) -> Result<u8, String> {
    let root = super::env::root(args.root.as_deref())?;
    let config = savant_think::config::EngineConfig::load(&root).map_err(|e| e.to_string())?;
    let path = root.join(FILE_NAME);
    let old_text = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let old =
        old_text.as_deref().map(|t| ToolLock::parse(&SourceFile::new(FILE_NAME, t)).0).unwrap_or_default();
    let names: Vec<&String> = match &args.server {
        Some(name) if !config.servers.contains_key(name) => {
            let help = savant_think::diagnostic::suggest(name, config.servers.keys().map(String::as_str))
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
            return Err(format!("no [servers.{name}] in savant-think.toml{help}"));
        }
        Some(name) => config.servers.keys().filter(|k| *k == name).collect(),
        None => config.servers.keys().collect(),
    };
    let env = super::env::lookup();
    let listed: Vec<(String, Result<LockedServer, String>)> = super::runtime::block_on(async {
        let mut out = Vec::new();
        for name in names {
            let server = Server::new(name, config.servers[name].clone(), &root, env.clone());
            out.push((name.clone(), server.listing().await));
        }
        out
    })?;
    let mut lock = match &args.server {
        Some(_) => old.clone(),
        None => ToolLock::default(),
    };
    let mut failed = Vec::new();
    for (name, result) in listed {
        match result {
            Ok(server) => {
                lock.servers.insert(name, server);
            }
            Err(message) => failed.push(message),
        }
    }
    if !failed.is_empty() {
        let kept = if old_text.is_some() { "; tools.lock.json is unchanged" } else { "" };
        return Err(format!("{}{kept}", failed.join("\nerror: ")));
    }
    let text = lock.render();
    // A schema a server publishes that is not JSON Schema: said now, against
    // the server (`check` reports it too, as INVALID_TOOL_LOCK).
    for d in ToolLock::parse(&SourceFile::new(FILE_NAME, text.as_str())).1 {
        eprintln!("warning: {}", d.message);
    }
    if args.check {
        if old_text.as_deref() == Some(text.as_str()) {
            println!("{FILE_NAME} is up to date ({})", count(&lock));
            return Ok(0);
        }
        println!("{FILE_NAME} differs from the servers:");
        for line in differences(&old, &lock, old_text.is_none()) {
            println!("  {line}");
        }
        println!("run `savant-think tools sync` and commit {FILE_NAME}");
        return Ok(1);
    }
    if old_text.as_deref() != Some(text.as_str()) {
        savant_think::fsx::replace_file(&path, text.as_bytes(), "sync")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    println!("wrote {} ({})", path.display(), count(&lock));
    Ok(0)
}

fn count(lock: &ToolLock) -> String {
    let tools: usize = lock.servers.values().map(|s| s.tools.len()).sum();
    format!("{} servers, {tools} tools", lock.servers.len())
}

/// What changed between two locks, a line each: servers and tools added,
/// removed or changed.
fn differences(old: &ToolLock, new: &ToolLock, missing: bool) -> Vec<String> {
    if missing {
        return vec![format!("{FILE_NAME} does not exist")];
    }
    let mut out = Vec::new();
    for (name, s) in &new.servers {
        let Some(o) = old.servers.get(name) else {
            out.push(format!("server `{name}`: new ({} tools)", s.tools.len()));
            continue;
        };
        if (&o.name, &o.version) != (&s.name, &s.version) {
            out.push(format!("server `{name}`: {} {} → {} {}", o.name, o.version, s.name, s.version));
        }
        for t in &s.tools {
            match o.tools.iter().find(|x| x.name == t.name) {
                None => out.push(format!("`{name}.{}`: new", t.name)),
                Some(x) if x != t => out.push(format!("`{name}.{}`: changed", t.name)),
                Some(_) => {}
            }
        }
        for x in o.tools.iter().filter(|x| !s.tools.iter().any(|t| t.name == x.name)) {
            out.push(format!("`{name}.{}`: removed", x.name));
        }
    }
    for name in old.servers.keys().filter(|k| !new.servers.contains_key(*k)) {
        out.push(format!("server `{name}`: no longer in savant-think.toml"));
    }
    if out.is_empty() {
        out.push("the same tools, written differently (not as `tools sync` writes it)".into());
    }
    out
}
