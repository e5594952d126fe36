//! `savant-think test --update`: each test's `expect` rewritten from what
//! actually happened (snapshot style), the rest of the file left byte for
//! byte as it was (comments, layout, other tests). Only the `expect` value's
//! own text is replaced (a test without one gets `expect:` added after its
//! last key); a test that could not run is left alone.
//!
//! The new `expect` holds the run's `status`, the steps that ran and were
//! skipped, every capture, and the inputs the old `expect` listed (with their
//! `=` marks), now with their actual values.

use crate::migrate::emit::emit;
use crate::migrate::value::Yaml;
use crate::testing::format::{Expect, TestCase};
use crate::testing::run::Outcome;
use crate::testing::suite::{LoadedFile, TestResult};
use serde_json::{Map, Value};

/// A JSON value as the emitter's tree (strings stay strings whatever they read like).
pub fn to_yaml(v: &Value) -> Yaml {
    match v {
        Value::String(s) => Yaml::Str(s.clone()),
        Value::Array(items) => Yaml::Seq(items.iter().map(to_yaml).collect()),
        Value::Object(m) => Yaml::Map(m.iter().map(|(k, v)| (k.clone(), to_yaml(v))).collect()),
        other => Yaml::Raw(other.to_string()),
    }
}

/// The new `expect` of a test, as a value.
pub fn expect_value(old: Option<&Expect>, outcome: &Outcome) -> Value {
    let mut e = Map::new();
    e.insert("status".into(), Value::String(outcome.status.clone()));
    e.insert("ran".into(), outcome.ran.iter().cloned().map(Value::String).collect());
    e.insert("skipped".into(), outcome.skipped.iter().cloned().map(Value::String).collect());
    let mut inputs = Map::new();
    for x in old.map_or(&[][..], |o| &o.inputs[..]) {
        let key = if x.exact { format!("={}", x.name) } else { x.name.clone() };
        inputs.insert(key, outcome.input(&x.name).cloned().unwrap_or(Value::Null));
    }
    if !inputs.is_empty() {
        e.insert("inputs".into(), Value::Object(inputs));
    }
    if !outcome.captures.is_empty() {
        let exact = |name: &str| old.is_some_and(|o| o.captures.iter().any(|c| c.exact && c.name == name));
        let captures: Map<String, Value> = outcome
            .captures
            .iter()
            .map(|(k, v)| (if exact(k) { format!("={k}") } else { k.clone() }, v.clone()))
            .collect();
        e.insert("captures".into(), Value::Object(captures));
    }
    Value::Object(e)
}

/// `value` as YAML text for the place `at` in `text`: a block indented to
/// `at`'s column when the old value was a block, else one flow line.
fn render_at(text: &str, at: usize, value: &Value, block: bool) -> String {
    if !block {
        return value.to_string();
    }
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = " ".repeat(text[line_start..at].chars().count());
    let emitted = emit(&to_yaml(value));
    let mut out = String::new();
    for (i, line) in emitted.trim_end_matches('\n').lines().enumerate() {
        if i > 0 {
            out.push('\n');
            if !line.is_empty() {
                out.push_str(&indent);
            }
        }
        out.push_str(line);
    }
    out
}

/// One replacement in the file's text.
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

fn edit_for(text: &str, test: &TestCase, outcome: &Outcome) -> Option<Edit> {
    let value = expect_value(test.expect.as_ref(), outcome);
    match &test.expect {
        Some(e) => {
            let (start, end) = (e.span.start as usize, e.span.end as usize);
            let block = !text[start..].starts_with('{') && !text[start..].starts_with("null") && end > start;
            if end <= start {
                // `expect:` with nothing after it: a flow value right there.
                return Some(Edit { start, end, text: format!(" {value}") });
            }
            Some(Edit { start, end, text: render_at(text, start, &value, block) })
        }
        None => {
            // After the test's last key, at the indentation of its keys.
            let start = test.span.start as usize;
            if text[start..].starts_with('{') {
                return None; // a flow mapping: not rewritten
            }
            let end = test.span.end as usize;
            let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
            let indent = " ".repeat(text[line_start..start].chars().count());
            let body = render_at(&format!("{indent}  "), indent.len() + 2, &value, true);
            Some(Edit { start: end, end, text: format!("\n{indent}expect:\n{indent}  {body}") })
        }
    }
}

/// The file's new text with every test that ran given its actual `expect`,
/// and how many tests changed; `None` when nothing changes.
pub fn update_file(file: &LoadedFile, results: &[&TestResult]) -> Option<(String, usize)> {
    let text = &file.source.text;
    let mut edits: Vec<Edit> = Vec::new();
    for r in results {
        let (Some(test), Some(outcome)) = (file.file.tests.get(r.test_index), &r.outcome) else { continue };
        if r.mismatches.is_empty() && test.expect.as_ref().is_some_and(|e| !e.is_empty()) {
            continue; // it passes: its expect stays as written
        }
        if let Some(e) = edit_for(text, test, outcome) {
            edits.push(e);
        }
    }
    if edits.is_empty() {
        return None;
    }
    let n = edits.len();
    edits.sort_by_key(|e| std::cmp::Reverse(e.start));
    let mut out = text.clone();
    for e in edits {
        out.replace_range(e.start..e.end, &e.text);
    }
    Some((out, n))
}
