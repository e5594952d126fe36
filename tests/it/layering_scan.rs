//! The source scanner behind `layering.rs`: each file of `src/` (the
//! library and the binary's `src/cli/`) as its module path and its code, read whole — comments and unit tests
//! removed, `use` trees expanded to full paths, and whitespace inside paths
//! dropped — so a `use` split over lines, a grouped import or a fully
//! qualified path are all seen the same way.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One library file: where it is, which module it is, and its code.
pub struct SourceFile {
    /// Relative to the crate, with `/`: `src/runtime/eval.rs`.
    pub rel: String,
    /// The module path: `runtime::eval` (`""` for `lib.rs`).
    pub module: String,
    /// The code, comments and unit tests removed.
    pub code: String,
    /// Every path the code names, `use` trees expanded: `std::fs::read`,
    /// `crate::runtime::text::stringify`, `super::Cx`.
    pub paths: Vec<String>,
    /// The binary's glue (`src/cli/`, a module of `main.rs`): it may read
    /// the environment and set up logging and the async runtime.
    pub binary: bool,
}

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

/// Every `.rs` file under `root/src` with its text (relative path → text).
pub fn read_tree(root: &Path) -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The crate's files: the tree minus `main.rs` (the command tree) and test
/// code (files named `tests.rs`, the files of modules declared under a
/// `#[cfg(test)]` or `#[cfg(all(test, …))]`, with or without `#[path]`, and
/// a file's trailing `#[cfg(test)] mod NAME { … }`).
pub fn sources(tree: &BTreeMap<String, String>) -> Vec<SourceFile> {
    let mut test_files = BTreeSet::new();
    let mut path_modules = BTreeMap::new(); // file → module path, for `#[path]` modules
    for (rel, text) in tree {
        let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
        // Where `mod NAME;` looks for its file: beside a `mod.rs` or
        // `lib.rs`, else in the directory named after the file.
        let child_dir = match rel.rsplit_once('/') {
            Some((d, "mod.rs" | "lib.rs")) => d.to_owned(),
            _ => rel.trim_end_matches(".rs").to_owned(),
        };
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = mod_name(line) else { continue };
            // The attributes above the `mod`: a `#[cfg(…test…)]`, a `#[path]`.
            let attrs: Vec<&str> =
                lines[..i].iter().rev().take_while(|l| l.starts_with("#[")).copied().collect();
            let test = attrs.iter().any(|a| a.starts_with("#[cfg(") && a.contains("test"));
            let target = attrs.iter().find_map(|a| a.strip_prefix("#[path = \"")?.strip_suffix("\"]"));
            let file = match target {
                Some(t) => format!("{dir}/{t}"),
                None => format!("{child_dir}/{name}.rs"),
            };
            if test {
                test_files.insert(file);
            } else if target.is_some() {
                path_modules.insert(file, format!("{}::{name}", module_of(rel)));
            }
        }
    }
    tree.iter()
        .filter(|(rel, _)| *rel != "src/main.rs" && !rel.ends_with("/tests.rs") && !test_files.contains(*rel))
        .map(|(rel, text)| {
            let module = path_modules.get(rel).cloned().unwrap_or_else(|| module_of(rel));
            let code = strip(text);
            let paths = paths_in(&code);
            let binary = rel.starts_with("src/cli/");
            SourceFile { rel: rel.clone(), module, code, paths, binary }
        })
        .collect()
}

fn mod_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("pub ").unwrap_or(line);
    let rest = rest.strip_prefix("pub(crate) ").unwrap_or(rest);
    rest.strip_prefix("mod ")?.strip_suffix(';')
}

/// `src/a/b.rs` → `a::b`; `src/a/mod.rs` → `a`; `src/lib.rs` → ``.
pub fn module_of(rel: &str) -> String {
    let p = rel.strip_prefix("src/").unwrap_or(rel).strip_suffix(".rs").unwrap_or(rel);
    let p = p.strip_suffix("/mod").unwrap_or(p);
    if p == "lib" { String::new() } else { p.replace('/', "::") }
}

/// The code without comments (blanked to spaces, so line numbers stay) and
/// without the trailing unit-test module.
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            out.extend(text[i..end].chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
            i = end;
        } else if let Some(end) = literal_end(text, i) {
            // A string or character literal: kept, but a `//` inside it is
            // not a comment.
            out.push_str(&text[i..end]);
            i = end;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    let lines: Vec<&str> = out.lines().collect();
    let cut = lines.windows(2).position(|w| {
        let next = w[1].trim();
        w[0].trim() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{')
    });
    match cut {
        Some(n) => lines[..n].join("\n"),
        None => out,
    }
}

/// Every path in the code: `use` trees expanded, the rest as written with
/// whitespace around `::` removed.
pub fn paths_in(code: &str) -> Vec<String> {
    let squeezed = squeeze(code);
    let mut out = Vec::new();
    let mut rest = squeezed.as_str();
    while let Some(at) = find_use(rest) {
        let body_start = at + "use ".len();
        let Some(end) = rest[body_start..].find(';') else { break };
        expand("", rest[body_start..body_start + end].trim(), &mut out);
        rest = &rest[body_start + end..];
    }
    // Inline paths: runs of identifier characters and `::`.
    // A lone `:` (`a:crate::b`) ends a path as any other character does.
    let chars: Vec<char> = squeezed.chars().chain(std::iter::once(' ')).collect();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let colon = c == ':' && (chars.get(i + 1) == Some(&':') || (i > 0 && chars[i - 1] == ':'));
        if c.is_alphanumeric() || c == '_' || colon {
            cur.push(c);
        } else {
            if cur.contains("::") {
                out.push(cur.trim_matches(':').to_owned());
            }
            cur.clear();
        }
    }
    out
}

/// `use` at a word start (also after `pub `, `pub(crate) `).
fn find_use(s: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find("use ") {
        let at = from + i;
        let before = s[..at].chars().next_back();
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
            return Some(at);
        }
        from = at + 4;
    }
    None
}

/// Whitespace next to `::`, `{`, `}` and `,` removed: `std::\n  fs` →
/// `std::fs`. A single `:` (a field, a type ascription) glues nothing, so
/// `builtins: crate::x::y` stays two words and `crate::x::y` is seen.
fn squeeze(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut pending_space = false;
    for (i, &c) in chars.iter().enumerate() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space {
            let next_is_path = c == ':' && chars.get(i + 1) == Some(&':');
            let last_is_path = out.ends_with("::");
            let glue =
                next_is_path || last_is_path || matches!(c, '{' | '}' | ',') || out.ends_with(['{', ',']);
            if !glue && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
        }
        out.push(c);
    }
    out
}

/// Expands a use tree (`std::{fs, io::Read as R}`) under `prefix`.
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    let join = |p: &str, t: &str| if p.is_empty() { t.to_owned() } else { format!("{p}::{t}") };
    match tree.find('{') {
        Some(open) if tree.ends_with('}') => {
            let head = tree[..open].trim_end_matches(':');
            let prefix = join(prefix, head);
            let inner = &tree[open + 1..tree.len() - 1];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&prefix, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&prefix, &inner[start..], out);
        }
        _ if tree.is_empty() => {}
        _ => {
            let name = tree.split(" as ").next().unwrap_or(tree).trim();
            out.push(if name == "self" { prefix.to_owned() } else { join(prefix, name) });
        }
    }
}

/// A path as an absolute module path (`crate::…` and, from the binary's
/// `src/cli/`, `savant_think::…` → `…`; `super::`/`self::`
/// resolved against `module`, the file's own module, which is a directory
/// module when `is_mod_file`). `None` for paths outside the crate.
pub fn absolute(path: &str, module: &str) -> Option<String> {
    let mut parts: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = if module.is_empty() { Vec::new() } else { module.split("::").collect() };
    match parts.first() {
        Some(&"crate") | Some(&"savant_think") => {
            parts.remove(0);
            base.clear();
        }
        Some(&"super") | Some(&"self") => {
            while let Some(&p) = parts.first() {
                match p {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                parts.remove(0);
            }
        }
        _ => return None,
    }
    base.extend(parts);
    Some(base.join("::"))
}

/// Where the string, raw string or character literal that starts at `i`
/// ends (one past it), or `None` when none starts there (a lifetime's `'`
/// starts none).
pub fn literal_end(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    match b[i] {
        b'"' => {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            Some((j + 1).min(b.len()))
        }
        b'r' if !ident_before && matches!(b.get(i + 1), Some(b'"' | b'#')) => {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                return None;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let from = i + 2 + hashes;
            Some(text[from..].find(&close).map_or(b.len(), |e| from + e + close.len()))
        }
        b'\'' => {
            if b.get(i + 1) == Some(&b'\\') {
                let end = text[i + 3..].find('\'').map_or(b.len(), |e| i + 3 + e + 1);
                return Some(end);
            }
            let c = text[i + 1..].chars().next()?;
            let after = i + 1 + c.len_utf8();
            (b.get(after) == Some(&b'\'')).then_some(after + 1)
        }
        _ => None,
    }
}

/// One function of a file: its name, the line its `fn` is on (1-based) and
/// how many lines it spans, signature to closing brace.
pub struct Function {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// Every function with a body in `code` (comments already stripped),
/// nested ones too; `fn(…)` pointer types and bodiless trait methods aside.
pub fn functions(code: &str) -> Vec<Function> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut line = 1;
    let mut depth = 0usize;
    let mut pending: Option<(String, usize)> = None; // a `fn NAME` before its body
    let mut open: Vec<(String, usize, usize)> = Vec::new(); // name, line, depth of its `{`
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = literal_end(code, i) {
            line += code[i..end].matches('\n').count();
            i = end;
            continue;
        }
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        match b[i] {
            b'\n' => line += 1,
            b'f' if !ident_before && code[i..].starts_with("fn ") => {
                let name: String = code[i + 3..]
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    pending = Some((name, line));
                }
            }
            b';' => pending = None,
            b'{' => {
                if let Some((name, at)) = pending.take() {
                    open.push((name, at, depth));
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if open.last().is_some_and(|o| o.2 == depth) {
                    let (name, at, _) = open.pop().unwrap();
                    out.push(Function { name, line: at, lines: line - at + 1 });
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}
