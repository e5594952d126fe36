//! The test-file format (`*.test.yaml`), read from the YAML tree with spans:
//! what is wrong with its shape is a `YAML_SCHEMA_VIOLATION` (with a
//! did-you-mean for unknown keys), a test with nothing to assert is
//! `TEST_NO_EXPECT`. Reading never fails: a broken test is left out and
//! reported, the others are kept.
//!
//! ```yaml
//! workflow: release_notes          # id or path (from the test file's directory)
//! tests:
//!   - name: skips publishing for drafts
//!     params: {milestone: "1.0"}
//!     mocks:                        # per step id, or per tool with `call:TOOL`
//!       list_changes: {result: {items: []}}
//!       describe_change:            # a list: the first case whose when_input matches
//!         - {when_input: {thought: "…"}, results: [{bad: 1}, {sentence: ok}]}
//!         - {error: timeout}
//!     expect: {status: done, ran: [list_changes], skipped: [], inputs: {…}, captures: {=notes: []}}
//! ```

use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::source::{Limits, SourceFile, Span};
use crate::syntax::node::{Node, NodeKind};
use crate::syntax::yaml;
use serde_json::Value;

/// The keys of a test file, of one test, of a mock case and of `expect`.
pub const FILE_KEYS: &[&str] = &["workflow", "tests"];
/// The keys of one test.
pub const TEST_KEYS: &[&str] = &["name", "params", "mocks", "answers", "timeouts", "events", "expect"];
/// The keys of one mock case.
pub const MOCK_KEYS: &[&str] = &["result", "results", "result_file", "error", "when_input"];
/// The keys of `expect`.
pub const EXPECT_KEYS: &[&str] = &["status", "skipped", "ran", "inputs", "captures"];
/// The statuses `expect.status` may name.
pub const STATUSES: &[&str] = &["done", "failed", "waiting"];

/// A value and where it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it is written in the test file.
    pub span: Span,
}

/// One test file: the workflow it tests and its tests.
#[derive(Clone, Debug, Default)]
pub struct TestFile {
    /// The workflow (id or path), as written.
    pub workflow: Option<Spanned<String>>,
    /// The tests that could be read, in file order.
    pub tests: Vec<TestCase>,
}

/// One test: params, mocks and what to expect.
#[derive(Clone, Debug)]
pub struct TestCase {
    /// Its name (unique per file is advised, not required).
    pub name: Spanned<String>,
    /// The whole test's mapping.
    pub span: Span,
    /// The run's params (`null` when none are given).
    pub params: Value,
    /// The mocks, in file order.
    pub mocks: Vec<Mock>,
    /// What to expect; a test without one is reported (`TEST_NO_EXPECT`).
    pub expect: Option<Expect>,
    /// How its run's waits end: answers, timeouts, events.
    pub waits: Waits,
}

/// What a mock answers for: a step, or every step calling a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MockTarget {
    /// `step_id:`.
    Step(String),
    /// `call:TOOL:`: every step that calls TOOL and has no mock of its own.
    Call(String),
}

/// The mock of one step (or tool).
#[derive(Clone, Debug)]
pub struct Mock {
    /// What it answers for.
    pub target: MockTarget,
    /// The key as written.
    pub span: Span,
    /// Its cases, in order: the first whose `when_input` matches answers.
    pub cases: Vec<MockCase>,
}

/// One way a mock answers.
#[derive(Clone, Debug)]
pub struct MockCase {
    /// Answer only when the rendered input contains this (subset match).
    pub when_input: Option<Value>,
    /// What the tool answers.
    pub reply: Reply,
    /// Where the reply is written (the result's node, or the case's).
    pub span: Span,
}

/// What a mocked tool answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The same result on every attempt.
    Result(Value),
    /// One result per attempt (a result failing `success_schema` is retried).
    Results(Vec<Spanned<Value>>),
    /// A JSON or YAML file holding the result, relative to the test file
    /// (read when the file is loaded, then a `Result`).
    ResultFile(Spanned<String>),
    /// The tool failed: nothing is submitted and the run stops there, waiting.
    Error(Value),
}

/// `expect`: each part is checked only when given.
#[derive(Clone, Debug, Default)]
pub struct Expect {
    /// The `expect` mapping (what `--update` rewrites).
    pub span: Span,
    /// `done`, `failed` or `waiting`.
    pub status: Option<Spanned<String>>,
    /// Steps that must have been skipped.
    pub skipped: Option<Vec<Spanned<String>>>,
    /// Steps that must have run.
    pub ran: Option<Vec<Spanned<String>>>,
    /// Rendered inputs by step id (or `id[i]`), subset match.
    pub inputs: Vec<Expected>,
    /// Captures by name, subset match.
    pub captures: Vec<Expected>,
}

impl Expect {
    /// True when it asserts nothing.
    pub fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.skipped.is_none()
            && self.ran.is_none()
            && self.inputs.is_empty()
            && self.captures.is_empty()
    }
}

/// One expected value of `inputs` or `captures`.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// The step id or capture name (without the `=`).
    pub name: String,
    /// `=name`: the value must be equal, not only contained.
    pub exact: bool,
    /// The key as written.
    pub span: Span,
    /// The expected value.
    pub value: Value,
}

/// Reads a test file's text. Never fails: what cannot be read is reported.
pub fn parse(src: &SourceFile, limits: &Limits) -> (TestFile, Vec<Diagnostic>) {
    let parsed = yaml::parse(src, limits);
    let mut out = parsed.diagnostics;
    let mut file = TestFile::default();
    let Some(root) = parsed.root else {
        if out.is_empty() {
            out.push(violation(Span::point(0), "the test file is empty: expected `workflow:` and `tests:`"));
        }
        return (file, out);
    };
    let Some(entries) = root.as_map() else {
        out.push(violation(root.span, format!("a test file is a mapping, not {}", root.kind_name())));
        return (file, out);
    };
    unknown_keys(entries, FILE_KEYS, "test file", &mut out);
    match root.get("workflow") {
        Some(n) => file.workflow = string(n, "`workflow`", &mut out),
        None => out.push(violation(root.span, "missing key `workflow`: the workflow's id or path")),
    }
    match root.get("tests").map(|n| (n, n.as_seq())) {
        Some((_, Some(items))) => {
            file.tests = items.iter().filter_map(|t| test_case(t, &mut out)).collect();
        }
        Some((n, None)) => out.push(violation(n.span, format!("`tests` is a list, not {}", n.kind_name()))),
        None => out.push(violation(root.span, "missing key `tests`: a list of tests")),
    }
    (file, out)
}

fn violation(span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::YamlSchemaViolation, span, message)
}

fn unknown_keys(
    entries: &[crate::syntax::node::Entry],
    known: &[&str],
    what: &str,
    out: &mut Vec<Diagnostic>,
) {
    for e in entries {
        let key = e.key.as_scalar().map_or("", |s| s.value.as_str());
        if !known.contains(&key) {
            out.push(
                // The did-you-mean (and its fix) when a key is close; else the keys there are.
                violation(e.key.span, format!("unknown key `{key}` in a {what}")).with_help_opt(
                    suggest(key, known.iter().copied())
                        .or_else(|| Some(format!("a {what} has: {}", known.join(", ")))),
                ),
            );
        }
    }
}

fn string(n: &Node, what: &str, out: &mut Vec<Diagnostic>) -> Option<Spanned<String>> {
    match n.as_scalar() {
        Some(s) if !n.is_null() => Some(Spanned { value: s.value.clone(), span: n.span }),
        _ => {
            out.push(violation(n.span, format!("{what} is a string, not {}", n.kind_name())));
            None
        }
    }
}

fn strings(n: &Node, what: &str, out: &mut Vec<Diagnostic>) -> Option<Vec<Spanned<String>>> {
    let Some(items) = n.as_seq() else {
        out.push(violation(n.span, format!("{what} is a list of step ids, not {}", n.kind_name())));
        return None;
    };
    Some(items.iter().filter_map(|i| string(i, &format!("an entry of {what}"), out)).collect())
}

fn test_case(n: &Node, out: &mut Vec<Diagnostic>) -> Option<TestCase> {
    let Some(entries) = n.as_map() else {
        out.push(violation(
            n.span,
            format!("a test is a mapping with `name` and `expect`, not {}", n.kind_name()),
        ));
        return None;
    };
    unknown_keys(entries, TEST_KEYS, "test", out);
    let Some(name) = n.get("name") else {
        out.push(violation(n.span, "missing key `name` in a test"));
        return None;
    };
    let name = string(name, "a test's `name`", out)?;
    // From here a broken part is an error inside this test's mapping: the
    // test is kept, so that the error is its own (it is reported as this
    // test's, never run) and the file's other tests still run.
    let params = match n.get("params") {
        None => Value::Null,
        Some(p) if p.as_map().is_some() || p.is_null() => p.to_json(),
        Some(p) => {
            out.push(violation(p.span, format!("`params` is a mapping, not {}", p.kind_name())));
            Value::Null
        }
    };
    let mut mocks = Vec::new();
    if let Some(m) = n.get("mocks") {
        match m.as_map() {
            Some(entries) => mocks.extend(entries.iter().filter_map(|e| mock(&e.key, &e.value, out))),
            None if m.is_null() => {}
            None => {
                out.push(violation(m.span, format!("`mocks` maps step ids to mocks, not {}", m.kind_name())));
            }
        }
    }
    let given = n.get("expect");
    let expect = given.and_then(|e| expect(e, out));
    let what = "a `status`, `ran`, `skipped`, `inputs` or `captures`";
    match given {
        None => out.push(
            Diagnostic::new(
                Code::TestNoExpect,
                name.span,
                format!("the test `{}` asserts nothing: it has no `expect`", name.value),
            )
            .with_help(format!("add `expect:` with {what} (or run `savant-think test --update`)")),
        ),
        // `expect: {}` is there, and empty: said at the empty mapping.
        Some(e) if expect.as_ref().is_some_and(Expect::is_empty) => out.push(
            Diagnostic::new(
                Code::TestNoExpect,
                e.span,
                format!("the test `{}` asserts nothing: its `expect` is empty", name.value),
            )
            .with_help(format!("give `expect` {what} (or run `savant-think test --update`)")),
        ),
        Some(_) => {}
    }
    let waits = waits(n, out);
    Some(TestCase { name, span: n.span, params, mocks, expect, waits })
}

fn mock(key: &Node, value: &Node, out: &mut Vec<Diagnostic>) -> Option<Mock> {
    let name = string(key, "a mock's key", out)?;
    let target = match name.value.strip_prefix("call:") {
        Some(tool) => MockTarget::Call(tool.trim().to_owned()),
        None => MockTarget::Step(name.value),
    };
    let cases = match &value.kind {
        NodeKind::Seq(items) => items.iter().map(|c| mock_case(c, out)).collect::<Option<Vec<_>>>()?,
        _ => vec![mock_case(value, out)?],
    };
    if cases.is_empty() {
        out.push(violation(
            value.span,
            "a mock with no case: give `result`, `results`, `result_file` or `error`",
        ));
        return None;
    }
    Some(Mock { target, span: name.span, cases })
}

fn mock_case(n: &Node, out: &mut Vec<Diagnostic>) -> Option<MockCase> {
    let Some(entries) = n.as_map() else {
        out.push(violation(
            n.span,
            format!(
                "a mock is a mapping with `result`, `results`, `result_file` or `error`, not {}",
                n.kind_name()
            ),
        ));
        return None;
    };
    unknown_keys(entries, MOCK_KEYS, "mock", out);
    let replies: Vec<&crate::syntax::node::Entry> = entries
        .iter()
        .filter(|e| {
            e.key
                .as_scalar()
                .is_some_and(|k| k.value != "when_input" && MOCK_KEYS.contains(&k.value.as_str()))
        })
        .collect();
    let [reply] = replies.as_slice() else {
        let message = if replies.is_empty() {
            "a mock needs one of `result`, `results`, `result_file` or `error`".to_owned()
        } else {
            "a mock gives one of `result`, `results`, `result_file` or `error`, not several".to_owned()
        };
        out.push(violation(n.span, message));
        return None;
    };
    let value = &reply.value;
    let (reply, span) = match reply.key.as_scalar().map_or("", |s| s.value.as_str()) {
        "result" => (Reply::Result(value.to_json()), value.span),
        "results" => {
            let Some(items) = value.as_seq().filter(|i| !i.is_empty()) else {
                out.push(violation(value.span, "`results` is a non-empty list: one result per attempt"));
                return None;
            };
            let items = items.iter().map(|i| Spanned { value: i.to_json(), span: i.span }).collect();
            (Reply::Results(items), value.span)
        }
        "result_file" => (Reply::ResultFile(string(value, "`result_file`", out)?), value.span),
        _ => (Reply::Error(value.to_json()), value.span),
    };
    let when_input = match n.get("when_input") {
        Some(w) if w.as_map().is_some() => Some(w.to_json()),
        Some(w) => {
            out.push(violation(
                w.span,
                format!("`when_input` is a mapping (part of the rendered input), not {}", w.kind_name()),
            ));
            return None;
        }
        None => None,
    };
    Some(MockCase { when_input, reply, span })
}

fn expect(n: &Node, out: &mut Vec<Diagnostic>) -> Option<Expect> {
    let Some(entries) = n.as_map() else {
        if n.is_null() {
            return Some(Expect { span: n.span, ..Expect::default() });
        }
        out.push(violation(n.span, format!("`expect` is a mapping, not {}", n.kind_name())));
        return None;
    };
    unknown_keys(entries, EXPECT_KEYS, "`expect`", out);
    let mut e = Expect { span: n.span, ..Expect::default() };
    if let Some(s) = n.get("status") {
        let status = string(s, "`expect.status`", out)?;
        if !STATUSES.contains(&status.value.as_str()) {
            out.push(
                violation(
                    s.span,
                    format!("unknown status `{}`: expected done, failed or waiting", status.value),
                )
                .with_help_opt(suggest(&status.value, STATUSES.iter().copied())),
            );
            return None;
        }
        e.status = Some(status);
    }
    if let Some(s) = n.get("skipped") {
        e.skipped = Some(strings(s, "`expect.skipped`", out)?);
    }
    if let Some(s) = n.get("ran") {
        e.ran = Some(strings(s, "`expect.ran`", out)?);
    }
    if let Some(s) = n.get("inputs") {
        e.inputs = expected_map(s, "`expect.inputs`", out)?;
    }
    if let Some(s) = n.get("captures") {
        e.captures = expected_map(s, "`expect.captures`", out)?;
    }
    Some(e)
}

fn expected_map(n: &Node, what: &str, out: &mut Vec<Diagnostic>) -> Option<Vec<Expected>> {
    let Some(entries) = n.as_map() else {
        out.push(violation(n.span, format!("{what} is a mapping, not {}", n.kind_name())));
        return None;
    };
    let mut items = Vec::new();
    for e in entries {
        let key = string(&e.key, &format!("a key of {what}"), out)?;
        let (name, exact) = match key.value.strip_prefix('=') {
            Some(rest) => (rest.trim().to_owned(), true),
            None => (key.value.clone(), false),
        };
        items.push(Expected { name, exact, span: key.span, value: e.value.to_json() });
    }
    Some(items)
}

// The wait keys of a test (`answers:`, `timeouts:`, `events:`): how a test
// ends the waits of its run (docs/testing.md, "Waits"; run_waits.rs).

/// The keys of one event of `events:`.
pub const EVENT_KEYS: &[&str] = &["event", "key", "payload"];

/// How a test ends its run's waits.
#[derive(Clone, Debug, Default)]
pub struct Waits {
    /// `answers`: by step path (`approve`, `ask[1]`, `ask` for every item,
    /// `child/sure`), the answer.
    pub answers: Vec<(Spanned<String>, Value)>,
    /// `timeouts`: the waits whose deadline passes (their `on_timeout`, or
    /// WAIT_TIMED_OUT).
    pub timeouts: Vec<Spanned<String>>,
    /// `events`: each delivered to the first wait that takes it.
    pub events: Vec<TestEvent>,
}

/// One event of `events:`.
#[derive(Clone, Debug)]
pub struct TestEvent {
    /// Its name (declared in savant-think.toml).
    pub event: Spanned<String>,
    /// Its correlation key.
    pub key: Option<String>,
    /// Its payload (default `{}`).
    pub payload: Value,
}

/// Reads a test's wait keys (each optional).
pub fn waits(n: &Node, out: &mut Vec<Diagnostic>) -> Waits {
    let mut w = Waits::default();
    if let Some(a) = n.get("answers").filter(|a| !a.is_null()) {
        match a.as_map() {
            Some(entries) => {
                for e in entries {
                    if let Some(step) = string(&e.key, "a key of `answers`", out) {
                        w.answers.push((step, e.value.to_json()));
                    }
                }
            }
            None => out.push(violation(
                a.span,
                format!("`answers` maps step ids to answers, not {}", a.kind_name()),
            )),
        }
    }
    if let Some(t) = n.get("timeouts").filter(|t| !t.is_null()) {
        match t.as_seq() {
            Some(items) => {
                w.timeouts = items.iter().filter_map(|i| string(i, "an entry of `timeouts`", out)).collect()
            }
            None => out
                .push(violation(t.span, format!("`timeouts` is a list of step ids, not {}", t.kind_name()))),
        }
    }
    if let Some(ev) = n.get("events").filter(|e| !e.is_null()) {
        match ev.as_seq() {
            Some(items) => w.events = items.iter().filter_map(|i| event(i, out)).collect(),
            None => out.push(violation(
                ev.span,
                format!("`events` is a list of {{event, key, payload}}, not {}", ev.kind_name()),
            )),
        }
    }
    w
}

fn event(n: &Node, out: &mut Vec<Diagnostic>) -> Option<TestEvent> {
    let Some(entries) = n.as_map() else {
        out.push(violation(
            n.span,
            format!("an event is a mapping with `event`, `key`, `payload`, not {}", n.kind_name()),
        ));
        return None;
    };
    unknown_keys(entries, EVENT_KEYS, "event", out);
    let Some(name) = n.get("event") else {
        out.push(violation(n.span, "missing key `event`: the event's name"));
        return None;
    };
    let event = string(name, "`event`", out)?;
    let key = match n.get("key") {
        Some(k) if !k.is_null() => Some(string(k, "an event's `key`", out)?.value),
        _ => None,
    };
    let payload = n.get("payload").map_or_else(|| serde_json::json!({}), Node::to_json);
    Some(TestEvent { event, key, payload })
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
