//! The run engine: the only place workflow semantics live. The CLI and the
//! MCP server are thin adapters over [`Engine`].
//!
//! # Files
//!
//! - The state machine. `record.rs` is what a run records (`RunState`, step
//!   statuses, the history's `Event`s), below both the machine and the
//!   replies. `run.rs` is the machine: a run is a pure function of the
//!   workflow, its params and the accepted events (`apply` is the only
//!   mutation; the ready set and dependency counters are derived, not
//!   stored). Each accepted result is stored once, in its history event: a
//!   step's result is an index into the history, and the captures are a
//!   view (`Machine::captures`, `Machine::full_state` for `state get`).
//!   `work_id.rs` is the name of a unit of work (`WorkId`: `step`,
//!   `step[i]`, `step[i]/child…`), the one parser and printer of that form.
//!   `run_wait.rs` (a child module of `run.rs`) is waits in the machine:
//!   a wait step starts `waiting`, its input the rendered wait with its
//!   deadline (computed from the recorded time, so a replay agrees), and
//!   ends with an `answered`, `signal` or `timer_fired` event; `clock.rs`
//!   reads and writes the RFC 3339 times runs record, and is the time now
//!   (moved forward by a test clock in the binary's own tests only).
//!   `fork.rs` builds a fork (`Machine::fork`: the source's history
//!   replayed into a fresh start, skipping what depends on the step or
//!   renders differently); `upgrade.rs` checks and builds an upgrade
//!   (`Machine::upgrade`: the history replayed onto the new version under
//!   renames; what does not land cleanly is an `UpgradeIssue` with a span
//!   in the new file); `integrity.rs` checks a snapshot against the
//!   workflow version it is pinned to before it is resumed (its steps, its
//!   version against its history, its indexes: else `STATE_CORRUPT`, on
//!   every store).
//! - Values. `eval.rs` evaluates expressions (total, deterministic);
//!   `render.rs` renders templates; `text.rs` is a value as text (one
//!   `stringify`, `to_json_string` and `number` below both); `payload.rs`
//!   applies the size caps.
//! - The engine, `engine/`: plan / next / explain / reset / state /
//!   validate / debug / think over a `StateStore`, caching each run in
//!   memory while its stamp in the store is unchanged. `mod.rs` the run
//!   cache and replies; `next.rs` next (a result checked and stored; a
//!   done step's same value again is harmless, a different one
//!   `STATE_CONFLICT`: one rule, `answer` shares it); `unlocked.rs` `next`
//!   without the run's lock on a store that appends conditionally (PostgreSQL, memory: one statement
//!   writes only while no one holds the lock and the cached stamp is
//!   current, else the call is made again under the lock); `plan.rs` plan
//!   (an existing run is `RUN_EXISTS` unless resumed or replaced);
//!   `children.rs` sub-workflows (a `uses:` step's child run: its
//!   deterministic id `<run>.<step>`, its `parent` link, started pinned
//!   when the step is reached; `advance` hands out the first ready child's
//!   instruction prefixed `<step>/` and completes the step with the child's
//!   `outputs:` or fails it, `CHILD_FAILED`; `next`, `answer` and a test's
//!   timer route a prefixed step id to the child through one `in_child`);
//!   `pins.rs` pinned versions (a run executes the
//!   workflow and schema bytes it started with, stored as objects; the file
//!   as it is now only when its bytes are the same); `runs.rs` archived
//!   runs (list, get, restore; archive before a replace or delete);
//!   `fork.rs` fork (the source locked, then the new run's id);
//!   `upgrade.rs` upgrade (all runs checked, then each made under its lock
//!   with one snapshot); `prune.rs` retention (`state prune`, `[state]
//!   keep`: runs and archived copies by status, age and count, then objects
//!   no run is pinned to, spared while young); `inspect.rs` what the run
//!   inspector reads (`run_snapshot`, `run_brief`, `run_stored`);
//!   `observe.rs` the `RunObserver` hook (each step attempt once its event
//!   is durable, each run once finished; plain values, no tracing types);
//!   `waits.rs` answers, events and timers (`answer`, `signal`,
//!   `settle_waits`: a due timer and an inbox delivery applied before any
//!   call works on a run), `timers.rs` the engine's side of the store's
//!   index of runs by their next deadline, which `serve`'s timer thread
//!   polls (`fire_timers_due`, `scan_timers` at start); `progress.rs` the
//!   replies after a call (instruction, waits, done, a failed run's error);
//!   `validate.rs` schema validation (validators cached); `state.rs` get /
//!   list / delete / reset; `repair.rs` `state repair` (the store's journal
//!   check, then a load); `explain.rs` explain and debug; `info.rs` think,
//!   say, the driver prompt and the workflow list.
//! - Errors, below the replies. `error_shapes.rs` is each shape of an
//!   error's details as a struct (`Message`, `FieldError`,
//!   `UnknownWorkflow`, `Conflict`, `RunExists`, …: plain data);
//!   `error_details.rs` makes them one enum, `ErrorDetails` (a variant per
//!   shape, field errors, a callee's error, and `Recorded` JSON — only a
//!   run's recorded failure), with the accessors adapters read (`message`,
//!   `help`, `describe`); `error.rs` is `EngineError` (code, boxed details,
//!   the run's context: `reply_next.rs`'s instruction and state summary),
//!   the `ErrorCode` table and the generic constructors; `run_errors.rs`
//!   the errors of runs over time (`RUN_EXISTS`, `UNKNOWN_RUN` with its
//!   did-you-mean, `WORKFLOW_CHANGED` for a missing pinned object, the busy
//!   ones). Details are made JSON once, at the edge (`EngineError::to_json`,
//!   `Display`); `EngineError::human` is `CODE: message` and its help for a
//!   person, what `test`, `ui`, `serve` and `exec` print — never raw JSON
//!   outside a `--json` / `--format json` answer.
//! - The project. `project.rs` is the one loader (`Project`, held by the
//!   engine): it resolves a workflow id or path (confined to the root),
//!   reads the file under the size cap with `check`'s UTF-8 rule (for
//!   `plan`, `validate` and `think_workflows_read` alike), caches compiled
//!   workflows by file identity and content hash, and serves the named
//!   schemas (read again when `schemas/` changes, at most one look a
//!   second; compiled workflows and validators carry the generation they
//!   were made from) and the driver prompts. `workflow.rs` checks and
//!   compiles a file's bytes (`CompiledWorkflow`); `prompts.rs` the driver
//!   prompts (the bundled ones compiled in, merged with the project's
//!   `prompts/prompts.yml`, confined to the root); `config.rs` the engine's
//!   side of `savant-think.toml` (loaded by `src/config.rs`): the store and
//!   engine it names, `INVALID_CONFIG`.
//! - The tools. `args.rs` and `reply.rs` (with `reply_runs.rs`: listing,
//!   deleting, restoring, pruning, upgrading; `reply_next.rs`: the
//!   instruction, state summary and reset note an error carries too;
//!   `reply_waits.rs`: what a wait looks like in a reply, and `signal`'s
//!   answer) are the tools' arguments and answers as
//!   types (`PlanArgs`, `NextArgs`, …; `Progress`, `Instruction`,
//!   `StateSummary`, `Explanation`, …): the `Engine` methods return the
//!   replies, and JSON is made from them once, at the edge. `catalog.rs` is
//!   the schema half of the one tool table, as data (`ToolDef`: name,
//!   title, description, annotations, facts such as what a call announces
//!   or whether a step calling it asks a question, and the input and output
//!   schemas generated from the types with schemars, read from
//!   `catalog_schemas.json` where they are stored as generated (a tool's
//!   line parsed when the tool is first used); its rows in
//!   `catalog_rows.rs`): the MCP tool list, the agent's offers and argument
//!   checks all come from it; `ToolName` reads `think.plan`, `think_plan`
//!   (and from a model, `think-plan`) as one name. The handler half, the
//!   entry point by name for `call`, MCP, the inspector and the executor,
//!   is the room above, `crate::tools`. `contracts.rs` hands the same
//!   schemas to the checker (`contracts::builtin()`), so `check` and the
//!   engine read one schema per tool; `tool_schema.rs` keeps every tool
//!   schema standard JSON Schema and refuses arguments a tool does not take
//!   (`INVALID_PARAMS`, did-you-mean), for every adapter at once.
//!
//! The engine writes run state only through `crate::state`, reads the
//! project's files only through `Project` (and `savant-think.toml` through
//! `crate::config`), and appends a thought given without a run to
//! `.savant/session.log` (capped and rotated, `fsx::RotatingFile`).

pub mod args;
pub mod catalog;
pub mod clock;
pub mod config;
pub mod contracts;
pub mod engine;
mod error;
pub mod error_details;
mod error_shapes;
pub mod eval;
pub mod failure;
mod fork;
mod integrity;
pub mod payload;
pub mod project;
pub mod prompts;
pub mod record;
pub mod render;
pub mod reply;
pub mod reply_next;
pub mod reply_runs;
pub mod reply_waits;
pub mod run;
mod run_errors;
pub mod text;
pub mod tool_schema;
pub mod upgrade;
pub mod work_id;
pub mod workflow;

pub use config::EngineConfig;
pub use engine::{COMPACT_AFTER, Engine};
pub use error::{EngineError, ErrorCode, ErrorContext};
pub use project::Project;

use serde_json::Value;

/// What an engine call returns: a reply (JSON by default) or an [`EngineError`].
pub type EngineResult<T = Value> = Result<T, EngineError>;
