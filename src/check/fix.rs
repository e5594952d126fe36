//! Applying the machine-applicable edits diagnostics carry ([`Fix`]): what
//! `check --fix` writes, `check --diff` shows and the language server's
//! "fix all" would do. Edits are plain byte-range replacements into the text
//! the diagnostics were computed on.

use crate::diagnostic::{Diagnostic, Fix};

/// The result of applying one round of fixes to a text.
#[derive(Debug, PartialEq, Eq)]
pub struct Applied {
    pub text: String,
    /// How many edits went in.
    pub applied: usize,
}

/// Applies every fix of `diagnostics` to `text`, in order of position. An
/// edit that overlaps one already taken, or whose span is not on character
/// boundaries of `text`, is left for a later round (the caller re-checks the
/// new text and applies again). Two diagnostics proposing the same edit
/// count once. `None` when nothing applies.
pub fn apply(text: &str, diagnostics: &[Diagnostic]) -> Option<Applied> {
    let mut fixes: Vec<&Fix> = diagnostics.iter().filter_map(|d| d.fix.as_ref()).collect();
    fixes.sort_by_key(|f| (f.span.start, f.span.end));
    fixes.dedup_by(|a, b| a == b);
    let mut out = String::with_capacity(text.len());
    let mut at = 0usize;
    let mut applied = 0;
    for fix in fixes {
        let (start, end) = (fix.span.start as usize, fix.span.end as usize);
        if start < at || end < start || end > text.len() {
            continue;
        }
        if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            continue;
        }
        if text[start..end] == fix.replacement {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(&fix.replacement);
        at = end;
        applied += 1;
    }
    if applied == 0 {
        return None;
    }
    out.push_str(&text[at..]);
    Some(Applied { text: out, applied })
}

/// How many rounds [`fix_until_stable`] runs at most: a fix may uncover
/// another (a renamed step id makes its `deps` entry resolve), but never
/// forever.
pub const MAX_ROUNDS: usize = 10;

/// Applies fixes, re-checks with `check`, and repeats until no fix applies
/// (at most [`MAX_ROUNDS`] rounds). Returns the final text, the number of
/// edits made, and the diagnostics of the final text.
pub fn fix_until_stable(
    text: &str,
    diagnostics: Vec<Diagnostic>,
    mut check: impl FnMut(&str) -> Vec<Diagnostic>,
) -> (String, usize, Vec<Diagnostic>) {
    let mut current = text.to_owned();
    let mut diagnostics = diagnostics;
    let mut total = 0;
    for _ in 0..MAX_ROUNDS {
        let Some(round) = apply(&current, &diagnostics) else { break };
        total += round.applied;
        current = round.text;
        diagnostics = check(&current);
    }
    (current, total, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::source::Span;

    fn fixing(start: usize, end: usize, to: &str) -> Diagnostic {
        Diagnostic::new(Code::UnresolvedVar, Span::new(start, end), "x").with_fix(Span::new(start, end), to)
    }

    #[test]
    fn edits_apply_in_position_order_whatever_the_diagnostic_order() {
        let text = "abc def ghi";
        let out = apply(text, &[fixing(8, 11, "GHI"), fixing(0, 3, "A")]).unwrap();
        assert_eq!(out, Applied { text: "A def GHI".into(), applied: 2 });
    }

    #[test]
    fn overlapping_and_duplicate_edits_apply_once() {
        let text = "abcdef";
        let out = apply(text, &[fixing(0, 4, "X"), fixing(2, 6, "Y"), fixing(0, 4, "X")]).unwrap();
        assert_eq!(out, Applied { text: "Xef".into(), applied: 1 });
    }

    #[test]
    fn out_of_range_or_split_characters_are_skipped_not_panics() {
        let text = "é!";
        assert_eq!(apply(text, &[fixing(1, 2, "e")]), None);
        assert_eq!(apply(text, &[fixing(2, 9, "e")]), None);
        assert_eq!(apply(text, &[Diagnostic::new(Code::UnresolvedVar, Span::new(0, 1), "no fix")]), None);
    }

    #[test]
    fn rounds_stop_when_nothing_changes() {
        let mut calls = 0;
        let (text, n, left) = fix_until_stable("ab", vec![fixing(0, 1, "A")], |t| {
            calls += 1;
            if t == "Ab" { vec![fixing(1, 2, "B")] } else { vec![] }
        });
        assert_eq!((text.as_str(), n, left.len(), calls), ("AB", 2, 0, 2));
    }
}
