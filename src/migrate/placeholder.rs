//! `{{path}}` → `<<path>>` where the path resolves; otherwise literal text.
//!
//! A path resolves when its root is `params` (a declared param), the loop
//! variable or `loop` of a foreach step, or a capture of another step whose
//! reading does not close a dependency cycle (reading a capture adds an
//! inferred edge, so [`Scope`] keeps the graph and refuses an edge that
//! would make one). A string that is exactly one placeholder becomes exactly
//! one `<<path>>`, so it yields the typed value. Inside other text a value
//! that may be missing is written `<<path ?? ''>>`: the renderer refuses a
//! `null` in text, while the original engine never failed on a missing value.

use super::{Cx, Literal};
use crate::syntax::node::{Node, ScalarStyle};
use std::collections::HashMap;

/// What `{{…}}` may refer to, and the dependency graph so far.
#[derive(Debug, Default)]
pub struct Scope {
    /// Declared params (including inferred ones) and whether each is required.
    pub params: HashMap<String, bool>,
    /// Capture name → index of the first step that captures it.
    pub captures: HashMap<String, usize>,
    /// `dependents[i]`: the steps that depend on step `i` (explicitly or by
    /// reading its capture).
    pub dependents: Vec<Vec<usize>>,
}

impl Scope {
    pub fn new(steps: usize) -> Scope {
        Scope { dependents: vec![Vec::new(); steps], ..Scope::default() }
    }

    /// Records that `to` runs after `from`.
    pub fn add_edge(&mut self, from: usize, to: usize) {
        if from != to && !self.dependents[from].contains(&to) {
            self.dependents[from].push(to);
        }
    }

    /// Whether `to` is reachable from `from` along dependency edges.
    pub fn reaches(&self, from: usize, to: usize) -> bool {
        let mut seen = vec![false; self.dependents.len()];
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            stack.extend(&self.dependents[n]);
        }
        false
    }
}

/// The step a string belongs to.
pub struct StepRef<'a> {
    pub index: usize,
    /// The foreach loop variable (`item` unless `as:` says otherwise).
    pub loop_var: Option<&'a str>,
}

/// A placeholder path: `root.a.b[0]`, parsed.
#[derive(Debug, PartialEq)]
pub struct Path<'a> {
    pub root: &'a str,
    /// The canonical text (`a.b[0]`, spaces removed).
    pub text: String,
    /// The first field after the root (`params.NAME`).
    pub first_field: Option<&'a str>,
}

/// Parses the inside of `{{ … }}`: identifiers joined by `.`, each followed
/// by any number of `[N]`.
pub fn parse_path(inner: &str) -> Option<Path<'_>> {
    let inner = inner.trim();
    let mut text = String::new();
    let mut root = None;
    let mut first_field = None;
    for (i, part) in inner.split('.').enumerate() {
        let name_end = part.find('[').unwrap_or(part.len());
        let name = &part[..name_end];
        if !crate::ir::lower::is_identifier(name) {
            return None;
        }
        let mut rest = &part[name_end..];
        if i > 0 {
            text.push('.');
        }
        text.push_str(name);
        while !rest.is_empty() {
            let close = rest.find(']')?;
            let digits = &rest[1..close];
            if !rest.starts_with('[') || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            text.push_str(&rest[..=close]);
            rest = &rest[close + 1..];
        }
        match i {
            0 => root = Some(name),
            1 => first_field = Some(name),
            _ => {}
        }
    }
    Some(Path { root: root?, text, first_field })
}

/// Every `{{…}}` in a string: (byte range of the whole placeholder, inside).
pub fn find_all(text: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| i + from) {
        let Some(close) = text[open + 2..].find("}}").map(|i| i + open + 2) else { break };
        out.push((open..close + 2, &text[open + 2..close]));
        from = close + 2;
    }
    out
}

enum Resolution {
    /// Cannot be null: a required param, or the params object.
    Present,
    /// May be null or missing.
    MaybeMissing,
}

/// Rewrites the placeholders of one template string of `step`; `node` is the
/// scalar it came from (for line numbers). Returns the new text.
pub fn rewrite(cx: &mut Cx, scope: &mut Scope, step: &StepRef, node: &Node, text: &str) -> String {
    let found = find_all(text);
    if found.is_empty() {
        return text.to_owned();
    }
    let whole = found.len() == 1 && found[0].0 == (0..text.len());
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (range, inner) in found {
        let line = line_of(cx, node, text, range.start);
        let written = &text[range.clone()];
        let resolved = match parse_path(inner) {
            None => Err("not a path (names joined by `.`)".to_owned()),
            Some(path) => resolve(scope, step, &path).map(|r| (path.text, r)),
        };
        out.push_str(&text[copied..range.start]);
        copied = range.end;
        match resolved {
            Ok((path, how)) => {
                let expr = match (whole, how) {
                    (true, _) | (false, Resolution::Present) => format!("<<{path}>>"),
                    (false, Resolution::MaybeMissing) => format!("<<{path} ?? ''>>"),
                };
                cx.changes.push(super::Change { line, message: format!("`{written}` → `{expr}`") });
                out.push_str(&expr);
            }
            Err(reason) => {
                cx.literals.push(Literal { line, text: written.to_owned(), reason });
                out.push_str(written);
            }
        }
    }
    out.push_str(&text[copied..]);
    out
}

fn resolve(scope: &mut Scope, step: &StepRef, path: &Path) -> Result<Resolution, String> {
    if path.root == "params" {
        return match path.first_field {
            None => Ok(Resolution::Present),
            Some(name) => match scope.params.get(name) {
                Some(true) if path.text.matches(['.', '[']).count() == 1 => Ok(Resolution::Present),
                Some(_) => Ok(Resolution::MaybeMissing),
                None => Err(format!("`{name}` is not a declared param")),
            },
        };
    }
    if step.loop_var.is_some_and(|v| v == path.root) || (step.loop_var.is_some() && path.root == "loop") {
        return Ok(Resolution::MaybeMissing);
    }
    let Some(&from) = scope.captures.get(path.root) else {
        return Err("not a param, capture or loop variable".to_owned());
    };
    if from == step.index {
        return Err("reads the step's own capture".to_owned());
    }
    if scope.reaches(step.index, from) {
        return Err(format!(
            "`{}` is captured by a step that runs after this one (a dependency cycle)",
            path.root
        ));
    }
    scope.add_edge(from, step.index);
    Ok(Resolution::MaybeMissing)
}

/// The line of a byte offset inside a scalar's decoded text: exact for
/// literal blocks, the scalar's first line otherwise.
fn line_of(cx: &Cx, node: &Node, text: &str, at: usize) -> usize {
    let start = cx.line(node.span.start);
    match node.as_scalar().map(|s| s.style) {
        Some(ScalarStyle::Literal) => start + 1 + text[..at].matches('\n').count(),
        _ => start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let p = parse_path(" mr.changes[0].new_path ").unwrap();
        assert_eq!(
            (p.root, p.text.as_str(), p.first_field),
            ("mr", "mr.changes[0].new_path", Some("changes"))
        );
        for bad in ["", "a b", "a..b", "a[x]", "a[]", "#if x", "a | upper", "1a", "a.", "a[0"] {
            assert_eq!(parse_path(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn finds_placeholders() {
        let text = "a {{x}} b {{ y.z }} {{unclosed";
        let found: Vec<_> = find_all(text).into_iter().map(|(r, i)| (&text[r], i)).collect();
        assert_eq!(found, [("{{x}}", "x"), ("{{ y.z }}", " y.z ")]);
    }

    #[test]
    fn cycles_are_refused() {
        let mut s = Scope::new(3);
        s.add_edge(0, 1);
        s.add_edge(1, 2);
        assert!(s.reaches(0, 2));
        assert!(!s.reaches(2, 0));
    }
}
