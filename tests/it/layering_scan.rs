//! The source scanner behind `layering.rs`: each library file of `src/`
//! as its module path and its code, read whole — comments and unit tests
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

/// The library's files: the tree minus the binary (`main.rs`, `cli/`) and
/// test code (files named `tests.rs`, files a `#[cfg(test)]` module loads
/// with `#[path]`, and a file's trailing `#[cfg(test)] mod NAME { … }`).
pub fn library(tree: &BTreeMap<String, String>) -> Vec<SourceFile> {
    let mut test_files = BTreeSet::new();
    let mut path_modules = BTreeMap::new(); // file → module path, for `#[path]` modules
    for (rel, text) in tree {
        let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(target) = line.strip_prefix("#[path = \"").and_then(|l| l.strip_suffix("\"]")) else {
                continue;
            };
            let file = format!("{dir}/{target}");
            let test = lines[..i].last().is_some_and(|l| *l == "#[cfg(test)]");
            if test {
                test_files.insert(file);
            } else if let Some(name) = lines.get(i + 1).and_then(|l| mod_name(l)) {
                path_modules.insert(file, format!("{}::{name}", module_of(rel)));
            }
        }
    }
    tree.iter()
        .filter(|(rel, _)| {
            *rel != "src/main.rs"
                && !rel.starts_with("src/cli/")
                && !rel.ends_with("/tests.rs")
                && !test_files.contains(*rel)
        })
        .map(|(rel, text)| {
            let module = path_modules.get(rel).cloned().unwrap_or_else(|| module_of(rel));
            let code = strip(text);
            let paths = paths_in(&code);
            SourceFile { rel: rel.clone(), module, code, paths }
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
        } else if b[i] == b'"' {
            // A string literal: kept, but a `//` inside it is not a comment.
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
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
    let mut cur = String::new();
    for c in squeezed.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' || c == ':' {
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

/// Whitespace next to `::`, `{`, `}` and `,` removed: `std::\n  fs` → `std::fs`.
fn squeeze(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut pending_space = false;
    for c in code.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space {
            let last = out.chars().next_back();
            let glue = matches!(c, ':' | '{' | '}' | ',') || matches!(last, Some(':' | '{' | ','));
            if !glue && last.is_some() {
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

/// A path as an absolute module path (`crate::…` → `…`; `super::`/`self::`
/// resolved against `module`, the file's own module, which is a directory
/// module when `is_mod_file`). `None` for paths outside the crate.
pub fn absolute(path: &str, module: &str) -> Option<String> {
    let mut parts: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = if module.is_empty() { Vec::new() } else { module.split("::").collect() };
    match parts.first() {
        Some(&"crate") => {
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
