//! ARCHITECTURE.md's layering, checked on the source text: the library reads
//! no environment variable and knows nothing of clap, logging set-up or the
//! async runtime's set-up (all of that is the binary's `src/main.rs` and
//! `src/cli/`), the MCP adapter does not reach into the lowerer, and the
//! front half (`syntax`, `ir`, `check`, `compile`) does no I/O.
//!
//! The rule for what is scanned: every `*.rs` file under `src/` except
//! `src/main.rs`, `src/cli/**`, files named `tests.rs` (test modules), the
//! part of a file from a `#[cfg(test)]` line followed by `mod NAME {` to its
//! end (the unit tests, last in a file by convention), comment lines, and
//! the files in [`TEST_SUPPORT`] (helpers compiled into the library only so
//! that integration tests and benchmarks can share them; nothing else calls
//! them).

use crate::common::CRATE;
use std::path::{Path, PathBuf};

/// What the library must not contain, and why.
const FORBIDDEN: &[(&str, &str)] = &[
    // Also `env::var_os`, `env::vars`, `env::vars_os`.
    ("env::var", "reads the environment (read it in src/cli/env.rs and pass the value)"),
    ("clap::", "uses clap (command-line types live in src/cli/)"),
    ("use clap", "uses clap (command-line types live in src/cli/)"),
    ("tracing_subscriber::fmt", "sets up logging (src/cli/logging.rs does)"),
    ("tracing_subscriber::registry", "sets up logging (src/cli/logging.rs does)"),
    ("EnvFilter", "sets up logging (src/cli/logging.rs does)"),
    ("tokio::runtime::Builder", "builds an async runtime (src/cli/runtime.rs does)"),
    ("Runtime::new", "builds an async runtime (src/cli/runtime.rs does)"),
    ("#[tokio::main]", "builds an async runtime (src/cli/runtime.rs does)"),
];

/// Forbidden only under a directory: `(directory, text, why)`.
const FORBIDDEN_UNDER: &[(&str, &str, &str)] = &[(
    "src/mcp",
    "ir::lower",
    "reaches into the lowerer (ask workspace, e.g. workspace::valid_workflow_id)",
)];

/// The front half does no I/O: it is handed text and a `check::Config`.
/// Each of [`FILE_SYSTEM`] is forbidden under each of these directories.
const FRONT_HALF: &[&str] = &["src/syntax", "src/ir", "src/check", "src/compile"];

/// What file-system use looks like in the source.
const FILE_SYSTEM: &[&str] = &["std::fs", "fsx::", "OpenOptions"];

const FRONT_HALF_WHY: &str = "does I/O (the front half is handed text; read files in workspace.rs)";

/// Test and benchmark support compiled into the library: exempt.
const TEST_SUPPORT: &[&str] = &["src/state/pg/cluster.rs"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The lines of `text` the rule scans, with their 1-based numbers.
fn library_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        let next = lines.get(i + 1).map_or("", |l| l.trim());
        if t == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push((i + 1, *line));
    }
    out
}

/// `file:line: why: the line` for each forbidden use in the library.
fn offenders() -> Vec<String> {
    let root = Path::new(CRATE);
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for path in files {
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "src/main.rs"
            || rel.starts_with("src/cli/")
            || rel.ends_with("/tests.rs")
            || TEST_SUPPORT.contains(&rel.as_str())
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in library_lines(&text) {
            let inside = |dir: &str| rel.starts_with(&format!("{dir}/"));
            let under = FORBIDDEN_UNDER
                .iter()
                .filter(|(dir, _, _)| inside(dir))
                .map(|&(_, needle, why)| (needle, why));
            let front_half: &[&str] =
                if FRONT_HALF.iter().any(|dir| inside(dir)) { FILE_SYSTEM } else { &[] };
            let front_half = front_half.iter().map(|&needle| (needle, FRONT_HALF_WHY));
            for (needle, why) in FORBIDDEN.iter().copied().chain(under).chain(front_half) {
                if line.contains(needle) {
                    found.push(format!("{rel}:{n}: {why}: {}", line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn the_library_has_no_cli_glue() {
    let found = offenders();
    assert!(found.is_empty(), "CLI glue in the library:\n{}", found.join("\n"));
}

#[test]
fn the_scan_sees_what_it_forbids() {
    // The rule itself: code counts, comments and trailing unit tests do not.
    let text = "use std::env;\n// std::env::var(\"X\") in a comment\nfn f() { std::env::var(\"X\").ok(); }\n\
                #[cfg(test)]\nmod tests {\n    fn g() { std::env::var(\"Y\").ok(); }\n}\n";
    let lines: Vec<usize> = library_lines(text)
        .into_iter()
        .filter(|(_, l)| FORBIDDEN.iter().any(|(needle, _)| l.contains(needle)))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(lines, [3]);
    // And the binary's glue is where the rule says: src/cli/ reads the environment.
    let env = std::fs::read_to_string(Path::new(CRATE).join("src/cli/env.rs")).unwrap();
    assert!(env.contains("std::env::var"), "src/cli/env.rs should read the environment");
}
