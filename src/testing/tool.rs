//! `think_test`, the MCP tool (in the engine's tool table,
//! `runtime::catalog`): runs the project's workflow tests and answers the
//! JSON report of `savant-think test --format json`, so that a client can
//! test a workflow it just edited. Paths are confined to the project root;
//! nothing is written (no `--update` here).

use crate::runtime::error_details::BadPath;
use crate::runtime::{Engine, EngineError, EngineResult, ErrorCode};
use crate::testing::report::json_value;
use crate::testing::suite::{Options, run};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// think_test's arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TestArgs {
    /// Optional: test files or directories inside the project root (e.g. "tests/release_notes.test.yaml"). Default: every tests/**/*.test.yaml.
    pub paths: Option<Vec<String>>,
    /// Optional: only tests whose name contains this text (case-insensitive).
    pub filter: Option<String>,
}

impl crate::runtime::args::Payloads for TestArgs {}

/// think_test's reply: the test report.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TestReply {
    /// The test files read: {file, workflow, tests}.
    pub files: Value,
    /// Problems in the test files: {file, code, severity, message, line, column, help, …}.
    pub diagnostics: Value,
    /// Paths that could not be read: {path, message}.
    pub io_errors: Value,
    /// Each test: {file, name, line, verdict (passed | failed | error), mismatches [{path, expected, actual, message}], error {code, message, help, step_id}, outcome {status, ran, skipped, inputs, captures, …}}.
    pub tests: Value,
    /// {total, passed, failed, errors, ok, unmatched_filter?}: ok is false when the filter selected no test.
    pub summary: Value,
}

/// Runs the tests of `engine`'s project.
pub fn think_test(engine: &Engine, args: TestArgs) -> EngineResult<TestReply> {
    let root = engine.root().to_path_buf();
    let mut paths = Vec::new();
    for p in args.paths.unwrap_or_default() {
        let confined = crate::fsx::confine(&root, std::path::Path::new(&p)).map_err(|e| {
            EngineError::with(
                ErrorCode::InvalidInput,
                BadPath { message: format!("`{p}`: {}", e.reason()), path: p.to_owned() },
            )
        })?;
        paths.push(confined);
    }
    let report = run(&Options { root, paths, filter: args.filter, jobs: 0 })?;
    let mut v = json_value(&report);
    let mut take = |k: &str| v.get_mut(k).map(Value::take).unwrap_or(Value::Null);
    Ok(TestReply {
        files: take("files"),
        diagnostics: take("diagnostics"),
        io_errors: take("io_errors"),
        tests: take("tests"),
        summary: take("summary"),
    })
}
