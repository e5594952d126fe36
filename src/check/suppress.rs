//! Suppressions, as ruff and actionlint users know them.
//!
//! - `# savant-think: ignore[CODE, …]` at the end of a line silences those
//!   codes for diagnostics that start on that line;
//! - `# savant-think: ignore-file[CODE, …]` anywhere silences them in the file;
//! - `[check] ignore` and `per-file-ignores` in `savant-think.toml` silence
//!   codes everywhere or in the files a glob matches.
//!
//! A suppression comment that silences nothing, or names a code that does
//! not exist, is itself reported as `UNUSED_SUPPRESSION` (a warning, like
//! ruff's RUF100), so stale comments do not pile up. Suppressions only change
//! what `check` reports: the engine still refuses a workflow with errors.

use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::source::{SourceFile, Span};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `[check]` in `savant-think.toml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct CheckSettings {
    /// Codes never reported.
    pub ignore: Vec<String>,
    /// Glob (relative to the project root, `**` for any depth) → codes not
    /// reported in the files it matches.
    pub per_file_ignores: BTreeMap<String, Vec<String>>,
    /// Exit 1 on warnings too (as `--deny-warnings`).
    pub deny_warnings: bool,
    /// The tool manifest (relative to the project root) `check` and the
    /// language server use when `--tools` is not given.
    pub tools: Option<std::path::PathBuf>,
    /// Globs (relative to the project root) of files `check` skips, even
    /// when named on the command line (fixtures, vendored workflows).
    pub exclude: Vec<String>,
    /// Opt-in codes to report (`DESTRUCTIVE_CALL`).
    pub select: Vec<String>,
}

impl CheckSettings {
    /// Every code named in the settings that is not a real code, with a hint.
    pub fn unknown_codes(&self) -> Vec<String> {
        let named = self.ignore.iter().chain(self.per_file_ignores.values().flatten()).chain(&self.select);
        named
            .filter(|c| code_of(c).is_none())
            .map(|c| match suggest(c, Code::ALL.iter().map(|c| c.as_str())) {
                Some(help) => format!("unknown code `{c}` in [check]: {help}"),
                None => format!("unknown code `{c}` in [check]"),
            })
            .collect()
    }

    /// The opt-in codes `select` names.
    pub fn selected(&self) -> Vec<Code> {
        self.select.iter().filter_map(|c| code_of(c)).filter(|c| c.is_opt_in()).collect()
    }

    /// The tool manifest `tools` names, resolved against the project root.
    pub fn tools_path(&self, root: &Path) -> Option<PathBuf> {
        self.tools.as_ref().map(|t| root.join(t))
    }

    /// Whether `[check] exclude` skips the file at `path` (relative to the
    /// root, `/`-separated).
    pub fn excluded(&self, path: &str) -> bool {
        let path = path.trim_start_matches("./");
        self.exclude.iter().any(|p| {
            let p = p.trim_start_matches("./").trim_end_matches('/');
            glob_match(p, path) || glob_match(&format!("{p}/**"), path)
        })
    }

    /// The `per-file-ignores` patterns that match none of `paths` (relative
    /// to the root): like an unused suppression, each is worth a warning.
    pub fn unmatched_per_file_ignores<'a>(&'a self, paths: &[String]) -> Vec<&'a str> {
        self.per_file_ignores
            .keys()
            .filter(|pattern| {
                let pattern = pattern.trim_start_matches("./");
                !paths.iter().any(|p| glob_match(pattern, p.trim_start_matches("./")))
            })
            .map(String::as_str)
            .collect()
    }

    /// The codes ignored for a file at `path` (relative to the root, `/`-separated).
    pub fn ignored_for(&self, path: &str) -> Vec<Code> {
        let mut codes: Vec<Code> = self.ignore.iter().filter_map(|c| code_of(c)).collect();
        for (pattern, list) in &self.per_file_ignores {
            if glob_match(pattern.trim_start_matches("./"), path.trim_start_matches("./")) {
                codes.extend(list.iter().filter_map(|c| code_of(c)));
            }
        }
        codes
    }
}

fn code_of(name: &str) -> Option<Code> {
    Code::ALL.iter().copied().find(|c| c.as_str() == name.trim())
}

/// A glob (globset syntax: `*` and `?` within one path segment, `**` across
/// segments, `{a,b}`, `[abc]`). A pattern without `/` matches the file name at
/// any depth, as in `.gitignore`. An invalid glob matches nothing.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let (pattern, path) = if pattern.contains('/') {
        (pattern, path)
    } else {
        (pattern, path.rsplit('/').next().unwrap_or(path))
    };
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(path))
}

/// One code named in a suppression comment.
struct Named {
    code: Option<Code>,
    text: String,
    span: Span,
    used: bool,
}

struct Comment {
    /// 0-based line of the comment (for line suppressions).
    line: usize,
    file_wide: bool,
    codes: Vec<Named>,
}

const MARKER: &str = "# savant-think:";

/// The suppression comments of a file.
fn comments(source: &SourceFile) -> Vec<Comment> {
    let text = &source.text;
    let mut out = Vec::new();
    // The marker is searched in the whole text at once (a large file has
    // none, and a search per line costs more than the check of an edit).
    // The line a match is on, counted as `split_inclusive('\n')` counts.
    let (mut line_no, mut counted) = (0usize, 0usize);
    let mut next = 0;
    while let Some(found) = text.get(next..).and_then(|t| t.find(MARKER)) {
        let line_start = text[..next + found].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[next + found..].find('\n').map_or(text.len(), |i| next + found + i + 1);
        line_no += text.as_bytes()[counted..line_start].iter().filter(|&&b| b == b'\n').count();
        counted = line_start;
        let line = &text[line_start..line_end];
        let mut from = next + found - line_start;
        next = line_end;
        while let Some(at) = line[from..].find(MARKER) {
            let at = from + at;
            from = at + MARKER.len();
            // A comment starts a line or follows whitespace.
            if at > 0 && !line.as_bytes()[at - 1].is_ascii_whitespace() {
                continue;
            }
            let rest = line[from..].trim_start();
            let rest_at = line.len() - line[from..].len() + (line[from..].len() - rest.len());
            let (file_wide, body_at) = if let Some(r) = rest.strip_prefix("ignore-file[") {
                (true, rest_at + (rest.len() - r.len()))
            } else if let Some(r) = rest.strip_prefix("ignore[") {
                (false, rest_at + (rest.len() - r.len()))
            } else {
                continue;
            };
            let Some(close) = line[body_at..].find(']') else { continue };
            let mut codes = Vec::new();
            let mut pos = body_at;
            for part in line[body_at..body_at + close].split(',') {
                let trimmed = part.trim();
                let lead = part.len() - part.trim_start().len();
                if !trimmed.is_empty() {
                    let start = line_start + pos + lead;
                    codes.push(Named {
                        code: code_of(trimmed),
                        text: trimmed.to_owned(),
                        span: Span::new(start, start + trimmed.len()),
                        used: false,
                    });
                }
                pos += part.len() + 1;
            }
            out.push(Comment { line: line_no, file_wide, codes });
        }
    }
    out
}

/// Drops the diagnostics silenced by the file's comments and by `ignored`
/// (from the settings), then adds an `UNUSED_SUPPRESSION` warning for each
/// code in a comment that silenced nothing.
pub fn apply(source: &SourceFile, diagnostics: Vec<Diagnostic>, ignored: &[Code]) -> Vec<Diagnostic> {
    let mut comments = comments(source);
    if comments.is_empty() && ignored.is_empty() {
        return diagnostics;
    }
    let mut kept = Vec::with_capacity(diagnostics.len());
    for d in diagnostics {
        if ignored.iter().any(|c| d.code.silenced_by(*c)) {
            continue;
        }
        let line = source.line_col(d.span.start as usize).line.saturating_sub(1);
        let mut silenced = false;
        for c in comments.iter_mut().filter(|c| c.file_wide || c.line == line) {
            for n in c.codes.iter_mut().filter(|n| n.code.is_some_and(|c| d.code.silenced_by(c))) {
                n.used = true;
                silenced = true;
            }
        }
        if !silenced {
            kept.push(d);
        }
    }
    let file_ignores_unused = comments
        .iter()
        .filter(|c| c.file_wide)
        .flat_map(|c| &c.codes)
        .any(|n| n.code == Some(Code::UnusedSuppression))
        || ignored.contains(&Code::UnusedSuppression);
    if !file_ignores_unused {
        for c in &comments {
            for n in c.codes.iter().filter(|n| !n.used) {
                // A comment silencing UNUSED_SUPPRESSION on its own line is used by definition.
                if n.code == Some(Code::UnusedSuppression) {
                    continue;
                }
                let d = match n.code {
                    Some(code) => Diagnostic::new(
                        Code::UnusedSuppression,
                        n.span,
                        format!(
                            "this suppression of `{code}` silences nothing{}",
                            if c.file_wide { " in this file" } else { " on this line" }
                        ),
                    )
                    .with_help("remove it"),
                    None => Diagnostic::new(
                        Code::UnusedSuppression,
                        n.span,
                        format!("`{}` is not a diagnostic code", n.text),
                    )
                    .with_help_opt(
                        suggest(&n.text, Code::ALL.iter().map(|c| c.as_str()))
                            .or_else(|| Some("see `savant-think rule --all` for the codes".to_owned())),
                    ),
                };
                kept.push(d);
            }
        }
        kept.sort_by_key(|d| (d.span.start, d.code));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("workflows/legacy/*.yaml", "workflows/legacy/a.yaml"));
        assert!(!glob_match("workflows/legacy/*.yaml", "workflows/legacy/x/a.yaml"));
        assert!(glob_match("workflows/**/*.yaml", "workflows/legacy/x/a.yaml"));
        assert!(glob_match("workflows/**/*.yaml", "workflows/a.yaml"));
        assert!(glob_match("*.yml", "deep/dir/a.yml"));
        assert!(!glob_match("a?c", "abbc"));
    }

    #[test]
    fn comments_are_found_with_the_spans_of_their_codes() {
        let src = SourceFile::new(
            "x.yaml",
            "a: 1 # savant-think: ignore[UNUSED_CAPTURE, NOPE]\nb: \"# savant-think: ignore[X]\"\n",
        );
        let found = comments(&src);
        assert_eq!(found.len(), 1, "a marker inside a string that is not after whitespace is no comment");
        let codes: Vec<&str> = found[0].codes.iter().map(|n| src.slice(n.span)).collect();
        assert_eq!(codes, ["UNUSED_CAPTURE", "NOPE"]);
    }
}
