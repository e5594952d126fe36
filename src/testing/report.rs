//! Rendering a suite's results: `human` (each failing expectation as a diff
//! with its JSON path), `json` (one object) and `junit` (JUnit XML for CI
//! dashboards). The output is a function of the results: no timings, so two
//! runs print the same bytes.

use crate::diagnostic::Severity;
use crate::report::{self as diag_report, FileReport, Format, HumanOptions};
use crate::testing::matching::Mismatch;
use crate::testing::suite::{Report, TestResult, Verdict};
use serde_json::{Value, json};
use std::fmt::Write;

/// The report formats of `savant-think test`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestFormat {
    /// For people: PASS / FAIL / ERROR per test, diffs, a summary line.
    Human,
    /// One JSON object: files with their diagnostics, tests, summary.
    Json,
    /// JUnit XML: one testsuite per test file.
    Junit,
}

/// Renders the report.
pub fn render(report: &Report, format: TestFormat, opts: &HumanOptions) -> String {
    match format {
        TestFormat::Human => human(report, opts),
        TestFormat::Json => {
            let mut text = serde_json::to_string_pretty(&json_value(report)).unwrap_or_default();
            text.push('\n');
            text
        }
        TestFormat::Junit => junit(report),
    }
}

fn file_reports(report: &Report) -> Vec<FileReport<'_>> {
    report
        .files
        .iter()
        .filter(|f| !f.diagnostics.is_empty())
        .map(|f| FileReport { source: &f.source, diagnostics: &f.diagnostics })
        .collect()
}

/// The JSON report: `{version, files, io_errors, tests, summary}`.
pub fn json_value(report: &Report) -> Value {
    let diagnostics = diag_report::json_value(&file_reports(report));
    let (passed, failed, errors) = report.counts();
    let files: Vec<Value> = report
        .files
        .iter()
        .map(|f| json!({"file": f.source.path, "workflow": f.compiled.as_ref().map(|c| c.wf.id.clone()), "tests": f.file.tests.len()}))
        .collect();
    let io: Vec<Value> = report
        .io_errors
        .iter()
        .map(|e| json!({"path": e.path.display().to_string(), "message": e.message}))
        .collect();
    let mut summary = json!({"total": report.results.len(), "passed": passed, "failed": failed,
                             "errors": errors, "ok": report.passed()});
    if let Some(filter) = report.unmatched_filter() {
        summary["unmatched_filter"] = json!(filter);
    }
    json!({
        "version": 1,
        "files": files,
        "diagnostics": diagnostics["diagnostics"],
        "io_errors": io,
        "tests": report.results,
        "summary": summary,
    })
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A mismatch as a diff: `- expected` / `+ actual` lines.
pub fn mismatch_diff(m: &Mismatch) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", if m.path.is_empty() { "$" } else { &m.path }, m.message);
    let expected = m.expected.as_ref().map(pretty).unwrap_or_default();
    let actual = m.actual.as_ref().map(pretty).unwrap_or_default();
    if m.expected.is_none() || m.actual.is_none() || (!expected.contains('\n') && !actual.contains('\n')) {
        if m.expected.is_some() {
            for line in expected.lines() {
                let _ = writeln!(out, "  - {line}");
            }
        }
        if m.actual.is_some() {
            for line in actual.lines() {
                let _ = writeln!(out, "  + {line}");
            }
        }
        return out;
    }
    let diff = similar::TextDiff::from_lines(&expected, &actual);
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
            similar::ChangeTag::Equal => ' ',
        };
        let _ = write!(out, "  {sign} {}", change.value());
        if change.missing_newline() {
            out.push('\n');
        }
    }
    out
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

fn human(report: &Report, opts: &HumanOptions) -> String {
    let mut out = String::new();
    let reports = file_reports(report);
    if !reports.is_empty() {
        out.push_str(&diag_report::render(Format::Human, &reports, opts));
        out.push('\n');
    }
    for e in &report.io_errors {
        let _ = writeln!(out, "error[IO_ERROR]: {}: {}", e.path.display(), e.message);
    }
    // Results are in file order: each file's own, after its name. A file
    // with no test at all (`tests: []`) is listed too, not counted silently.
    let mut results = report.results.iter().peekable();
    for (fi, f) in report.files.iter().enumerate() {
        let mut mine = Vec::new();
        while let Some(r) = results.next_if(|r| r.file_index == fi) {
            mine.push(r);
        }
        if mine.is_empty() {
            if f.file.tests.is_empty() && !f.diagnostics.iter().any(|d| d.severity == Severity::Error) {
                let _ = writeln!(out, "{}\n  (no tests in this file)", f.source.path);
            }
            continue;
        }
        let _ = writeln!(out, "{}", f.source.path);
        for r in mine {
            human_result(&mut out, r);
        }
    }
    let (passed, failed, errors) = report.counts();
    if report.results.is_empty() && report.files.is_empty() && report.io_errors.is_empty() {
        out.push_str("no test files found (looked for tests/**/*.test.yaml)\n");
    }
    let verdict = if report.passed() { "ok" } else { "FAILED" };
    let _ = writeln!(
        out,
        "\ntest result: {verdict}. {passed} passed, {failed} failed, {errors} error(s); {} test file(s)",
        report.files.len()
    );
    out
}

fn human_result(out: &mut String, r: &TestResult) {
    match r.verdict {
        Verdict::Passed => {
            let _ = writeln!(out, "  PASS  {}", r.name);
        }
        Verdict::Failed => {
            let _ = writeln!(out, "  FAIL  {} ({}:{})", r.name, r.file, r.line);
            for m in &r.mismatches {
                out.push_str(&indent(&mismatch_diff(m), "        "));
            }
        }
        Verdict::Error => {
            let _ = writeln!(out, "  ERROR {} ({}:{})", r.name, r.file, r.line);
            if let Some(e) = &r.error {
                let _ = writeln!(out, "        {}: {}", e.code, e.message);
                if let Some(help) = &e.help {
                    let _ = writeln!(out, "        help: {help}");
                }
            }
        }
    }
}

fn xml(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => s.push('\u{FFFD}'),
            c => s.push(c),
        }
    }
    s
}

fn junit(report: &Report) -> String {
    let (_, failed, errors) = report.counts();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"savant-think test\" tests=\"{}\" failures=\"{failed}\" errors=\"{errors}\">",
        report.results.len()
    );
    for (fi, f) in report.files.iter().enumerate() {
        let mine: Vec<&TestResult> = report.results.iter().filter(|r| r.file_index == fi).collect();
        let count = |v| mine.iter().filter(|r| r.verdict == v).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
            xml(&f.source.path),
            mine.len(),
            count(Verdict::Failed),
            count(Verdict::Error)
        );
        let classname = f.compiled.as_ref().map_or_else(|| f.source.path.clone(), |c| c.wf.id.clone());
        for r in mine {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{}\"",
                xml(&r.name),
                xml(&classname),
                xml(&r.file),
                r.line
            );
            match r.verdict {
                Verdict::Passed => out.push_str("/>\n"),
                Verdict::Failed => {
                    let text: String = r.mismatches.iter().map(mismatch_diff).collect();
                    let first =
                        r.mismatches.first().map_or(String::new(), |m| format!("{}: {}", m.path, m.message));
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                        xml(&first),
                        xml(&text)
                    );
                }
                Verdict::Error => {
                    let (code, message) =
                        r.error.as_ref().map_or(("ERROR", ""), |e| (e.code.as_str(), e.message.as_str()));
                    let _ = writeln!(
                        out,
                        ">\n      <error type=\"{}\" message=\"{}\"/>\n    </testcase>",
                        xml(code),
                        xml(message)
                    );
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
