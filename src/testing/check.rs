//! Checking a test file against its workflow, before anything runs (and in
//! `check` and the editor): a workflow that cannot be found or compiled
//! (`TEST_UNKNOWN_WORKFLOW`), a step id in `mocks` / `expect` the workflow
//! does not have or a tool no step calls (`TEST_UNKNOWN_STEP`; a step inside
//! a `uses:` child is named by its path, `review_each/read`, and a tool
//! called by a child counts, at any depth), a capture no
//! step sets (`TEST_UNKNOWN_CAPTURE`), a mock result that violates the step's
//! `success_schema` (`TEST_MOCK_INVALID`, a warning: a test of retries or of
//! a failing run gives invalid results on purpose; of `results`, only the
//! last, the one meant to be accepted, is checked).

use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::SchemaRef;
use crate::runtime::reply::Validation;
use crate::runtime::workflow::CompiledWorkflow;
use crate::runtime::{Engine, EngineError};
use crate::source::Span;
use crate::testing::children::{self, PathError};
use crate::testing::format::{Expect, Mock, MockTarget, Reply, Spanned, TestFile};
use crate::testing::run::base_id;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The workflow a test file names, compiled, or `TEST_UNKNOWN_WORKFLOW`.
pub fn workflow_of(
    engine: &Engine,
    name: &Spanned<String>,
    resolved: &str,
) -> Result<Arc<CompiledWorkflow>, Diagnostic> {
    engine.workflow(resolved).map_err(|e| unknown_workflow(name, &e))
}

fn unknown_workflow(name: &Spanned<String>, e: &EngineError) -> Diagnostic {
    let detail = e.describe();
    let help = e.help_text().map(str::to_owned);
    Diagnostic::new(
        Code::TestUnknownWorkflow,
        name.span,
        format!("the workflow `{}` cannot be tested: {} {detail}", name.value, e.code.as_str()),
    )
    .with_help_opt(help.or_else(|| Some("run `savant-think check` on the workflow".into())))
}

/// Every problem of `file` against its compiled workflow, in file order.
pub fn check(file: &TestFile, cw: &Arc<CompiledWorkflow>, engine: &Engine) -> Vec<Diagnostic> {
    let known = Known {
        cw,
        engine,
        steps: cw.wf.steps.iter().map(|s| s.id.value.as_str()).collect(),
        tools: children::tools_below(engine, cw),
        captures: cw.capture_steps.keys().map(String::as_str).collect(),
    };
    let mut out = Vec::new();
    for test in &file.tests {
        for mock in &test.mocks {
            known.mock(mock, &mut out);
        }
        check_waits(test, cw, &|name, span, what| known.unknown_step(name, span, what), &mut out);
        if let Some(expect) = &test.expect {
            known.expect(expect, &mut out);
        }
    }
    out.sort_by_key(|d| (d.span.start, d.code));
    out
}

/// What a test file's names are checked against: the workflow's steps,
/// the tools called below it (at any depth) and its captures.
struct Known<'a> {
    cw: &'a Arc<CompiledWorkflow>,
    engine: &'a Engine,
    steps: Vec<&'a str>,
    tools: BTreeSet<String>,
    captures: Vec<&'a str>,
}

impl Known<'_> {
    fn unknown_step(&self, name: &str, span: Span, what: &str) -> Diagnostic {
        Diagnostic::new(
            Code::TestUnknownStep,
            span,
            format!("{what} `{name}`: the workflow `{}` has no such step", self.cw.wf.id),
        )
        .with_help_opt(suggest(name, self.steps.iter().copied()))
    }

    /// A path into a child: resolved through the `uses:` steps it crosses.
    fn unknown_path(path: &str, span: Span, what: &str, e: PathError) -> Diagnostic {
        let help = match &e {
            PathError::NoSuchStep { step, known, .. } => suggest(step, known.iter().map(String::as_str)),
            PathError::NotUses { .. } | PathError::Callee { .. } => None,
        };
        Diagnostic::new(Code::TestUnknownStep, span, e.message(what, path)).with_help_opt(help)
    }

    /// A mock names a step (or a path into a child) or a tool called below
    /// the workflow, and its results match the step's schema.
    fn mock(&self, mock: &Mock, out: &mut Vec<Diagnostic>) {
        let (cw, engine) = (self.cw, self.engine);
        match &mock.target {
            MockTarget::Step(id) if !id.contains('/') => {
                match cw.wf.steps.iter().find(|s| s.id.value == base_id(id)) {
                    None => out.push(self.unknown_step(base_id(id), mock.span, "a mock for")),
                    Some(step) => {
                        if let Some(schema) = &step.success_schema {
                            mock_schema(engine, schema, id, mock, out);
                        }
                    }
                }
            }
            MockTarget::Step(id) => match children::resolve(engine, cw, id) {
                Err(e) => out.push(Self::unknown_path(id, mock.span, "a mock for", e)),
                Ok((callee, i)) => {
                    if let Some(schema) = &callee.wf.steps[i].success_schema {
                        mock_schema(engine, schema, id, mock, out);
                    }
                }
            },
            MockTarget::Call(tool) if !self.tools.contains(tool) => {
                let below = if cw.wf.steps.iter().any(|s| s.uses.is_some()) {
                    " (or of a workflow it uses)"
                } else {
                    ""
                };
                let mut d = Diagnostic::new(
                    Code::TestUnknownStep,
                    mock.span,
                    format!("a mock for the tool `{tool}`: no step of `{}`{below} calls it", cw.wf.id),
                );
                d.help = suggest(tool, self.tools.iter().map(String::as_str))
                    .map(|h| h.replace("did you mean `", "did you mean `call:"));
                out.push(d);
            }
            MockTarget::Call(_) => {}
        }
    }

    /// `expect` names steps, inputs (by step or path) and captures the
    /// workflow has.
    fn expect(&self, expect: &Expect, out: &mut Vec<Diagnostic>) {
        for (list, what) in [(&expect.ran, "`expect.ran` names"), (&expect.skipped, "`expect.skipped` names")]
        {
            for s in list.iter().flatten() {
                if !self.steps.contains(&s.value.as_str()) {
                    out.push(self.unknown_step(&s.value, s.span, what));
                }
            }
        }
        for e in &expect.inputs {
            if !e.name.contains('/') {
                if !self.steps.contains(&base_id(&e.name)) {
                    out.push(self.unknown_step(base_id(&e.name), e.span, "`expect.inputs` names"));
                }
            } else if let Err(err) = children::resolve(self.engine, self.cw, &e.name) {
                out.push(Self::unknown_path(&e.name, e.span, "`expect.inputs` names", err));
            }
        }
        for e in &expect.captures {
            if !self.captures.contains(&e.name.as_str()) {
                let mut known = self.captures.clone();
                known.sort_unstable();
                out.push(
                    Diagnostic::new(
                        Code::TestUnknownCapture,
                        e.span,
                        format!(
                            "`expect.captures` names `{}`, which no step of `{}` captures",
                            e.name, self.cw.wf.id
                        ),
                    )
                    .with_help_opt(
                        suggest(&e.name, known.iter().copied())
                            .or_else(|| Some(format!("the workflow captures: {}", known.join(", ")))),
                    ),
                );
            }
        }
    }
}

/// `answers:` and `timeouts:` name wait steps (paths into a child are
/// resolved when the test runs).
fn check_waits(
    test: &crate::testing::format::TestCase,
    cw: &CompiledWorkflow,
    unknown_step: &dyn Fn(&str, Span, &str) -> Diagnostic,
    out: &mut Vec<Diagnostic>,
) {
    let answers = test.waits.answers.iter().map(|(s, _)| (s, "`answers` names", true));
    let timeouts = test.waits.timeouts.iter().map(|s| (s, "`timeouts` names", false));
    for (s, what, asks) in answers.chain(timeouts).filter(|(s, _, _)| !s.value.contains('/')) {
        match cw.wf.steps.iter().find(|st| st.id.value == base_id(&s.value)) {
            None => out.push(unknown_step(base_id(&s.value), s.span, what)),
            Some(st) => {
                let waits = st
                    .wait
                    .as_ref()
                    .is_some_and(|w| !asks || matches!(w.kind, crate::ir::WaitKind::Answer { .. }));
                if !waits {
                    let kind = if asks { "an `await:` step" } else { "a wait" };
                    out.push(
                        Diagnostic::new(
                            Code::TestUnknownStep,
                            s.span,
                            format!("{what} `{}`, which is not {kind}", s.value),
                        )
                        .with_help("name a step with `await:` (answers) or any wait (timeouts)"),
                    );
                }
            }
        }
    }
}

fn mock_schema(
    engine: &Engine,
    schema: &SchemaRef,
    id: &str,
    mock: &crate::testing::format::Mock,
    out: &mut Vec<Diagnostic>,
) {
    let schema_value = match schema {
        SchemaRef::Named(n) => Value::String(n.value.to_string()),
        SchemaRef::Inline { schema, .. } => (**schema).clone(),
    };
    for case in &mock.cases {
        let (value, span) = match &case.reply {
            Reply::Result(v) => (v, case.span),
            Reply::Results(list) => match list.last() {
                Some(last) => (&last.value, last.span),
                None => continue,
            },
            Reply::ResultFile(_) | Reply::Error(_) => continue,
        };
        let Ok(Validation::Response { valid: false, errors }) = engine.validate(&schema_value, value) else {
            continue;
        };
        let first = errors.first().map_or_else(String::new, |e| {
            let path = e.get("path").and_then(Value::as_str).unwrap_or("");
            let message = e.get("message").and_then(Value::as_str).unwrap_or("");
            if path.is_empty() { format!(": {message}") } else { format!(": at `{path}`: {message}") }
        });
        let name = match schema {
            SchemaRef::Named(n) => format!("`{}`", n.value),
            SchemaRef::Inline { .. } => "its inline success_schema".to_owned(),
        };
        out.push(
            Diagnostic::new(
                Code::TestMockInvalid,
                span,
                format!("the mock result for `{id}` does not match {name}{first}"),
            )
            .with_help("the engine would refuse it (VALIDATION_FAILED) and ask again; fix the result, or keep it on purpose to test a retry or a failed run"),
        );
    }
}
