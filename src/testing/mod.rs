//! `savant-think test`: unit tests for workflows. A test file
//! (`*.test.yaml`) names a workflow and gives tests: params, mocked tool
//! results per step (or per tool), and what to expect (the run's status,
//! the steps that ran or were skipped, rendered inputs, captures). Each test
//! drives the real engine in memory ([`crate::state::MemStore`]): no server,
//! no model, no network.
//!
//! `format.rs` reads the file format with spans; `check.rs` checks a test
//! file against its workflow (also for `check` and the editor); `run.rs`
//! runs one test; `matching.rs` compares expected and actual values;
//! `suite.rs` finds, loads and runs test files in parallel; `report.rs`
//! renders the results (human, JSON, JUnit); `schema.rs` is the format's
//! JSON Schema for editors (`editor/test.schema.json`); `update.rs` rewrites
//! `expect` blocks from actual results (`--update`); `coverage.rs` says what the tests exercised (`--coverage`,
//! lcov); `replay.rs` re-runs a recorded run against the workflow as it is
//! now (`--replay`) or writes it as a test file (`--from-run`), with
//! `replay_waits.rs` for how the run's waits ended; `tool.rs` is
//! the MCP tool `think_test`; `children.rs` names and reads the steps of
//! `uses:` child runs (mock paths, coverage of called workflows).

pub mod check;
pub mod children;
pub mod coverage;
pub mod format;
pub mod matching;
pub mod replay;
pub mod replay_waits;
pub mod report;
pub mod run;
pub mod schema;
pub mod suite;
pub mod tool;
pub mod update;
