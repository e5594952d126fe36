//! `think_test`'s handler (its row is in the engine's tool table,
//! `runtime::catalog`, its arguments and reply in `runtime::args` and
//! `runtime::reply`; `crate::tools` calls it): runs the project's workflow tests and answers the
//! JSON report of `savant-think test --format json`, so that a client can
//! test a workflow it just edited. Paths are confined to the project root;
//! nothing is written (no `--update` here).

use crate::runtime::args::TestArgs;
use crate::runtime::error_details::BadPath;
use crate::runtime::reply::TestReply;
use crate::runtime::{Engine, EngineError, EngineResult, ErrorCode};
use crate::testing::report::json_value;
use crate::testing::suite::{Options, run};
use serde_json::Value;

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
