//! ARCHITECTURE.md's layering, checked on the source text: the library reads
//! no environment variable and knows nothing of clap, logging set-up or the
//! async runtime's set-up (all of that is the binary's `src/main.rs` and
//! `src/cli/`); the front half (`syntax`, `ir`, `check`, `compile`,
//! `report`) does no I/O; the runtime imports no adapter; the MCP adapter
//! does not reach into the lowerer; `lib.rs` is a table of contents; no two
//! files import each other, even through others, and no two rooms (the
//! top-level modules of `src/`: `runtime`, `state`, `cli`, …) either; no
//! file is too long to read and no function too long to hold in mind. Each
//! exception is a row of a list below with its reason, so a new offender
//! fails.
//!
//! What is scanned (`layering_scan.rs`): every file of `src/` but
//! `src/main.rs` — the library and the binary's `src/cli/` (which the
//! environment, clap and set-up rules exempt) — minus test modules
//! (`tests.rs`, files of modules declared under a `#[cfg(test)]`, a file's
//! trailing `#[cfg(test)] mod NAME { … }`) and [`TEST_SUPPORT`], read whole:
//! comments removed, `use` trees expanded, whitespace in paths dropped, so
//! `use std::{env, fs}`, a `use` over several lines, `std::fs::read(…)` and
//! `savant_think::runtime::…` from `src/cli/` are all seen.

use crate::common::CRATE;
use crate::layering_scan::{SourceFile, absolute, functions, paths_in, read_tree, sources, strip};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Paths the library must not name, and why. A needle matches a path that
/// contains it from a segment start (`env::var` matches `std::env::var_os`).
const FORBIDDEN: &[(&str, &str)] = &[
    ("env::var", "reads the environment (read it in src/cli/env.rs and pass the value)"),
    ("clap::", "uses clap (command-line types live in src/cli/)"),
    ("tracing_subscriber::fmt", "sets up logging (src/cli/logging.rs does)"),
    ("tracing_subscriber::registry", "sets up logging (src/cli/logging.rs does)"),
    ("EnvFilter", "sets up logging (src/cli/logging.rs does)"),
    ("tokio::runtime::Builder", "builds an async runtime (src/cli/runtime.rs does)"),
    ("Runtime::new", "builds an async runtime (src/cli/runtime.rs does)"),
    ("tokio::main", "builds an async runtime (src/cli/runtime.rs does)"),
];

/// Files allowed one [`FORBIDDEN`] path, and why: `(file, needle, why)`.
const ALLOWED: &[(&str, &str, &str)] = &[(
    "src/state/pg/pool.rs",
    "tokio::runtime::Builder",
    "each PostgreSQL connection is driven by its own current-thread runtime, as the \
     synchronous postgres crate does inside (never the process's runtime)",
)];

/// Modules a directory must not import: `(directory, module, why)`.
const FORBIDDEN_IMPORTS: &[(&str, &str, &str)] = &[
    ("src/mcp", "ir::lower", "reaches into the lowerer (ask workspace, e.g. workspace::valid_workflow_id)"),
    ("src/runtime", "mcp", "the runtime imports an adapter (adapters call the runtime, not the reverse)"),
    ("src/runtime", "lsp", "the runtime imports an adapter (adapters call the runtime, not the reverse)"),
    ("src/runtime", "cli", "the runtime imports the binary's glue"),
    ("src/state", "mcp", "the state stores import an adapter"),
];

/// The front half does no I/O: it is handed text and a `check::Config`.
const FRONT_HALF: &[&str] = &["src/syntax", "src/ir", "src/check", "src/compile", "src/report"];

/// What file-system and environment access looks like as a path.
const FRONT_HALF_IO: &[&str] = &["std::fs", "fsx::", "OpenOptions", "std::env", "crate::workspace::read"];

/// Words only one file may use: `(word, the file, why)`.
const ONLY_IN: &[(&str, &str, &str)] = &[
    (
        "canonicalize",
        "src/fsx/confine.rs",
        "resolves a path itself (use fsx::confine for a user's path, fsx::canonical or fsx::same_file to compare)",
    ),
    (
        "EngineError::new(",
        "src/runtime/error.rs",
        "builds an engine error from free JSON (use a typed constructor: runtime/error.rs, run_errors.rs)",
    ),
];

/// Test and benchmark support compiled into the library: exempt.
const TEST_SUPPORT: &[&str] = &["src/state/pg/cluster.rs"];

/// The longest a source file may be (tests moved to a sibling file count
/// apart): a file a person can read.
const MAX_LINES: usize = 650;

/// File circles found today that no small move breaks, each with the edge
/// that closes it and where it is being untangled: `(circle as the test
/// prints it, why)`. A new circle fails the test; an entry goes when its
/// circle is broken.
const KNOWN_CIRCLES: &[(&str, &str)] = &[];

/// Rooms (top-level modules) that import each other today, each with why it
/// is not broken yet: `(circle as the test prints it, why)`. A new circle
/// fails the test; an entry goes when its circle is broken.
const KNOWN_ROOM_CIRCLES: &[(&str, &str)] = &[];

/// The longest a function may be: one a person can hold in their head (a
/// table of data excepted, by an entry in [`LONG_FUNCTIONS`]).
const MAX_FN_LINES: usize = 80;

/// Functions over [`MAX_FN_LINES`] today: `(file, name, lines)`. One may
/// shrink, never grow; a new one fails the test; an entry goes when its
/// function is split (issue 41, point 5).
const LONG_FUNCTIONS: &[(&str, &str, usize)] = &[];

/// Files over [`MAX_LINES`] being split on another branch. Keep it empty.
const KNOWN_LONG: &[&str] = &[];

/// A circle as written in a list (a `\` line break leaves runs of spaces)
/// as the test prints it.
fn squash(circle: &str) -> String {
    circle.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn matches(path: &str, needle: &str) -> bool {
    format!("::{path}").contains(&format!("::{}", needle.trim_end_matches("::")))
        && (!needle.ends_with("::") || format!("::{path}").contains(&format!("::{needle}")))
}

fn files() -> Vec<SourceFile> {
    sources(&read_tree(Path::new(CRATE)))
        .into_iter()
        .filter(|f| !TEST_SUPPORT.contains(&f.rel.as_str()))
        .collect()
}

/// `file: why: path` for each forbidden use in the library.
fn offenders(files: &[SourceFile]) -> Vec<String> {
    let mut found = BTreeSet::new();
    for f in files {
        let inside = |dir: &str| f.rel.starts_with(&format!("{dir}/"));
        let front_half = FRONT_HALF.iter().any(|d| inside(d));
        for &(word, only, why) in ONLY_IN.iter().filter(|_| !f.binary) {
            if f.rel != only && f.code.contains(word) {
                found.insert(format!("{}: {why}: {word}", f.rel));
            }
        }
        for path in &f.paths {
            let abs = absolute(path, &f.module);
            for &(needle, why) in FORBIDDEN.iter().filter(|_| !f.binary) {
                let allowed = ALLOWED.iter().any(|&(file, n, _)| file == f.rel && n == needle);
                if !allowed && (matches(path, needle) || abs.as_deref().is_some_and(|a| matches(a, needle))) {
                    found.insert(format!("{}: {why}: {path}", f.rel));
                }
            }
            for &(dir, module, why) in FORBIDDEN_IMPORTS {
                let hit =
                    abs.as_deref().is_some_and(|a| a == module || a.starts_with(&format!("{module}::")));
                if inside(dir) && hit {
                    found.insert(format!("{}: {why}: {path}", f.rel));
                }
            }
            if front_half {
                let full = abs.as_deref().map(|a| format!("crate::{a}"));
                for needle in FRONT_HALF_IO {
                    if matches(path, needle) || full.as_deref().is_some_and(|a| matches(a, needle)) {
                        let why = "does I/O (the front half is handed text; read files in workspace.rs)";
                        found.insert(format!("{}: {why}: {path}", f.rel));
                    }
                }
            }
        }
    }
    found.into_iter().collect()
}

/// Edges between files that are neither ancestor nor descendant of each
/// other (a module and its own submodules may name each other).
fn import_graph(files: &[SourceFile]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<&str> = files.iter().map(|f| f.module.as_str()).collect();
    let related = |a: &str, b: &str| {
        a.is_empty() || b.is_empty() || a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"))
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let edges = graph.entry(f.module.clone()).or_default();
        for path in &f.paths {
            let Some(abs) = absolute(path, &f.module) else { continue };
            // The longest prefix of the path that is a file's module.
            let mut target = abs.as_str();
            while !modules.contains(target) {
                match target.rsplit_once("::") {
                    Some((head, _)) => target = head,
                    None => break,
                }
            }
            if modules.contains(target) && target != f.module && !related(target, &f.module) {
                edges.insert(target.to_owned());
            }
        }
    }
    graph
}

/// Strongly connected components with more than one module (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(t: &mut T<'g>, v: &'g str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                scc.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        out: vec![],
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn the_library_has_no_cli_glue_and_the_front_half_no_io() {
    let found = offenders(&files());
    assert!(found.is_empty(), "layering broken:\n{}", found.join("\n"));
}

#[test]
fn no_two_files_import_each_other() {
    let found: Vec<String> = circles(&import_graph(&files()))
        .into_iter()
        .map(|c| c.join(" <-> "))
        .filter(|c| !KNOWN_CIRCLES.iter().any(|(k, _)| squash(k) == *c))
        .collect();
    assert!(
        found.is_empty(),
        "import circles (move the shared piece into one module below both):\n{}",
        found.join("\n")
    );
}

/// The room of a module: its top-level module under `src/` (`runtime` for
/// `runtime::engine::plan`); `lib.rs` is in none.
fn room(module: &str) -> &str {
    module.split("::").next().unwrap_or("")
}

/// The file graph seen from above: an edge between two rooms when a file
/// of one imports a file of the other.
fn room_graph(files: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in files {
        for to in targets {
            let (a, b) = (room(from), room(to));
            if !a.is_empty() && !b.is_empty() && a != b {
                graph.entry(a.to_owned()).or_default().insert(b.to_owned());
            }
        }
    }
    graph
}

#[test]
fn no_two_rooms_import_each_other() {
    let files = import_graph(&files());
    let found: Vec<String> = circles(&room_graph(&files))
        .into_iter()
        .filter(|c| !KNOWN_ROOM_CIRCLES.iter().any(|(k, _)| squash(k) == c.join(" <-> ")))
        .map(|c| {
            // The file edges that tie the circle's rooms, so the fix can start.
            let ties: Vec<String> = files
                .iter()
                .flat_map(|(from, to)| to.iter().map(move |t| (from, t)))
                .filter(|(a, b)| {
                    room(a) != room(b) && c.iter().any(|r| r == room(a)) && c.iter().any(|r| r == room(b))
                })
                .map(|(a, b)| format!("  {a} -> {b}"))
                .collect();
            format!("{}\n{}", c.join(" <-> "), ties.join("\n"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "rooms (top-level modules) that import each other (move the shared piece into a module below both):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_function_is_too_long_to_hold_in_mind() {
    let mut found = Vec::new();
    for f in files() {
        for func in functions(&f.code).into_iter().filter(|func| func.lines > MAX_FN_LINES) {
            let known = LONG_FUNCTIONS.iter().find(|(file, name, _)| *file == f.rel && *name == func.name);
            match known {
                Some(&(_, _, was)) if func.lines <= was => {}
                Some(&(_, _, was)) => found.push(format!(
                    "{}:{}: fn {} grew from {was} to {} lines",
                    f.rel, func.line, func.name, func.lines
                )),
                None => {
                    found.push(format!("{}:{}: fn {}: {} lines", f.rel, func.line, func.name, func.lines))
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "functions over {MAX_FN_LINES} lines (split along the work: gather, decide, render, exit code):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_long_functions_list_is_current() {
    let files = files();
    let stale: Vec<String> = LONG_FUNCTIONS
        .iter()
        .filter(|(file, name, _)| {
            !files.iter().filter(|f| f.rel == *file).any(|f| {
                functions(&f.code).iter().any(|func| func.name == *name && func.lines > MAX_FN_LINES)
            })
        })
        .map(|(file, name, n)| format!("{file}: fn {name} ({n})"))
        .collect();
    assert!(
        stale.is_empty(),
        "LONG_FUNCTIONS entries no longer over {MAX_FN_LINES} lines (remove them):\n{}",
        stale.join("\n")
    );
}

#[test]
fn no_file_is_too_long_to_read() {
    let long: Vec<String> = read_tree(Path::new(CRATE))
        .into_iter()
        .map(|(rel, text)| (rel, text.lines().count()))
        .filter(|(rel, n)| *n > MAX_LINES && !KNOWN_LONG.contains(&rel.as_str()))
        .map(|(rel, n)| format!("{rel}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split by topic; tests to a sibling file):\n{}",
        long.join("\n")
    );
}

#[test]
fn lib_rs_is_a_table_of_contents() {
    let text = std::fs::read_to_string(Path::new(CRATE).join("src/lib.rs")).unwrap();
    let code = strip(&text);
    let items: Vec<&str> = code
        .lines()
        .map(str::trim)
        .filter(|l| {
            let l = l.strip_prefix("pub ").or_else(|| l.strip_prefix("pub(crate) ")).unwrap_or(l);
            [
                "struct ",
                "enum ",
                "fn ",
                "impl ",
                "impl<",
                "trait ",
                "type ",
                "const ",
                "static ",
                "macro_rules!",
            ]
            .iter()
            .any(|k| l.starts_with(k))
        })
        .collect();
    assert!(
        items.is_empty(),
        "src/lib.rs holds only module declarations, re-exports and docs:\n{}",
        items.join("\n")
    );
}

#[test]
fn the_scan_sees_what_it_forbids() {
    // Comments and trailing unit tests do not count; a split `use`, a
    // grouped import and a fully qualified path do.
    let text = "use std::{\n    env,\n    io,\n};\n// std::env::var(\"X\") in a comment\n\
                fn f() { env::var(\"X\").ok(); std::fs::read(\"p\").ok(); }\n\
                #[cfg(test)]\nmod tests {\n    fn g() { std::process::exit(0); }\n}\n";
    let paths = paths_in(&strip(text));
    assert!(paths.iter().any(|p| p == "std::env"), "{paths:?}");
    assert!(paths.iter().any(|p| matches(p, "env::var")), "{paths:?}");
    assert!(paths.iter().any(|p| matches(p, "std::fs")), "{paths:?}");
    assert!(!paths.iter().any(|p| p.contains("process")), "test code scanned: {paths:?}");
    let split = paths_in(&strip("use crate::runtime::\n    mcp_x;\nuse super::{a::{b, c as d}, self};\n"));
    assert!(split.contains(&"crate::runtime::mcp_x".to_owned()), "{split:?}");
    assert!(split.contains(&"super::a::c".to_owned()), "{split:?}");
    assert_eq!(absolute("super::a::c", "x::y"), Some("x::a::c".into()));
    assert_eq!(absolute("crate::mcp::server", "runtime::run"), Some("mcp::server".into()));
    // A field's `name:` is not glued onto the path after it.
    let field = paths_in(&strip("Config {\n    builtins: crate::runtime::contracts::builtin(),\n}"));
    assert!(field.contains(&"crate::runtime::contracts::builtin".to_owned()), "{field:?}");
    assert_eq!(absolute("savant_think::runtime::x", "cli::check"), Some("runtime::x".into()));
    // Functions are measured from `fn` to their closing brace; a brace or a
    // quote in a literal does not count, nor a `fn` pointer type.
    let code = strip(
        "fn a(f: fn(u8)) {\n    let c = '{';\n    let q = '\"';\n    let s = r#\"}\"#;\n}\nfn b() {}\n",
    );
    let found: Vec<(String, usize, usize)> =
        functions(&code).into_iter().map(|f| (f.name, f.line, f.lines)).collect();
    assert_eq!(found, vec![("a".to_owned(), 1, 5), ("b".to_owned(), 6, 1)]);
    // A circle of three is found.
    let mut g = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        g.entry(a.to_owned()).or_insert_with(BTreeSet::new).insert(b.to_owned());
    }
    assert_eq!(circles(&g), vec![vec!["a".to_owned(), "b".into(), "c".into()]]);
    // And the binary's glue is where the rule says: src/cli/ reads the environment.
    let env = std::fs::read_to_string(Path::new(CRATE).join("src/cli/env.rs")).unwrap();
    assert!(env.contains("std::env::var"), "src/cli/env.rs should read the environment");
}
