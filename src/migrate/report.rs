//! The summary of a `migrate` run: what changed per file, what stayed
//! literal, what could not be migrated. Human text or JSON.

use super::files::{FileResult, RunResult};
use super::{Literal, Outcome};
use serde_json::{Value, json};

/// How many files ended how.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub migrated: usize,
    pub current: usize,
    pub failed: usize,
}

impl Counts {
    pub fn of(result: &RunResult) -> Counts {
        let mut c = Counts::default();
        for f in &result.files {
            match f.migration.outcome {
                Outcome::Migrated { .. } => c.migrated += 1,
                Outcome::Current { .. } => c.current += 1,
                Outcome::Failed { .. } => c.failed += 1,
            }
        }
        c
    }
}

/// The human summary. Identical changes in one file are one line with
/// every line number (`{{mr.title}}` rewritten 16 times is one line).
pub fn human(result: &RunResult) -> String {
    let mut out = String::new();
    for f in &result.files {
        file_human(&mut out, f);
    }
    for e in &result.io_errors {
        out.push_str(&format!("error[IO_ERROR]: {e}\n"));
    }
    // With nothing migrated because of I/O errors, a count would only mislead.
    if result.files.is_empty() && !result.io_errors.is_empty() {
        return out;
    }
    let c = Counts::of(result);
    out.push_str(&format!(
        "{} file(s): {} migrated, {} already current, {} not migrated{}\n",
        result.files.len(),
        c.migrated,
        c.current,
        c.failed,
        if c.failed > 0 { " (left unchanged; `savant-think check` shows the same errors)" } else { "" }
    ));
    out
}

fn file_human(out: &mut String, f: &FileResult) {
    let path = f.path.display();
    let dest = f
        .written
        .as_ref()
        .filter(|w| **w != f.path)
        .map(|w| format!(" → {}", w.display()))
        .unwrap_or_default();
    match &f.migration.outcome {
        Outcome::Migrated { dialect, .. } => {
            let unwritten = if f.write_failed { " — NOT WRITTEN (see the error below)" } else { "" };
            out.push_str(&format!("migrated {path}{dest} ({} dialect){unwritten}\n", dialect.as_str()));
            let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
            for c in &f.migration.changes {
                match groups.iter_mut().find(|(m, _)| *m == c.message) {
                    Some((_, lines)) => lines.push(c.line),
                    None => groups.push((&c.message, vec![c.line])),
                }
            }
            for (message, lines) in groups {
                out.push_str(&format!("  {}: {message}\n", line_list(&lines)));
            }
        }
        Outcome::Current { .. } => out.push_str(&format!("current  {path}{dest}\n")),
        Outcome::Failed { diagnostics } => {
            for d in diagnostics {
                let lc = f.source.line_col(d.span.start as usize);
                out.push_str(&format!(
                    "failed   {path}:{}:{}: {}: {} (left unchanged{})\n",
                    lc.line,
                    lc.column,
                    d.code,
                    d.message,
                    if dest.is_empty() { String::new() } else { format!("; copied{dest}") }
                ));
                if let Some(h) = &d.help {
                    out.push_str(&format!("  help: {h}\n"));
                }
            }
        }
    }
    for l in literal_groups(&f.migration.literals) {
        out.push_str(&format!("  {}: kept `{}`: {}\n", line_list(&l.1), l.0.text, l.0.reason));
    }
}

fn literal_groups(literals: &[Literal]) -> Vec<(&Literal, Vec<usize>)> {
    let mut groups: Vec<(&Literal, Vec<usize>)> = Vec::new();
    for l in literals {
        match groups.iter_mut().find(|(g, _)| g.text == l.text && g.reason == l.reason) {
            Some((_, lines)) => lines.push(l.line),
            None => groups.push((l, vec![l.line])),
        }
    }
    groups
}

/// `line 4` or `lines 4, 9, 12`.
fn line_list(lines: &[usize]) -> String {
    let mut lines = lines.to_vec();
    lines.dedup();
    match lines.as_slice() {
        [one] => format!("line {one}"),
        many => format!("lines {}", many.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// The JSON summary: `{version, files: [...], io_errors, summary}`. With
/// `with_text`, each migrated file carries its new text (`--format json`
/// without `--write` / `--out`).
pub fn json(result: &RunResult, with_text: bool) -> Value {
    let files: Vec<Value> = result
        .files
        .iter()
        .map(|f| {
            let (status, dialect, text, errors) = match &f.migration.outcome {
                Outcome::Migrated { dialect, text } => {
                    ("migrated", Some(*dialect), Some(text.as_str()), vec![])
                }
                Outcome::Current { dialect } => ("current", Some(*dialect), None, vec![]),
                Outcome::Failed { diagnostics } => {
                    let errors = diagnostics
                        .iter()
                        .map(|d| {
                            let lc = f.source.line_col(d.span.start as usize);
                            json!({"code": d.code.as_str(), "message": d.message, "line": lc.line,
                                   "column": lc.column, "help": d.help})
                        })
                        .collect();
                    ("failed", None, None, errors)
                }
            };
            let mut v = json!({
                "file": f.path.display().to_string(),
                "status": status,
                "dialect": dialect,
                "written": f.written.as_ref().map(|w| w.display().to_string()),
                "changes": f.migration.changes,
                "literals": f.migration.literals,
                "errors": errors,
            });
            if with_text && let Some(t) = text {
                v["text"] = json!(t);
            }
            v
        })
        .collect();
    let c = Counts::of(result);
    json!({
        "version": 1,
        "files": files,
        "io_errors": result.io_errors.iter().map(|e| json!({"code": "IO_ERROR", "path": e.path.display().to_string(), "message": e.message})).collect::<Vec<_>>(),
        "summary": {"files": result.files.len(), "migrated": c.migrated, "current": c.current, "failed": c.failed},
    })
}
