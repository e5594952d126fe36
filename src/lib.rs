//! savant-think: a compiler, static checker and deterministic run engine for
//! declarative LLM workflows.
//!
//! Check a workflow held in memory and print what `check` would:
//!
//! ```
//! use savant_think::{Code, Format, check_str};
//!
//! let checked = check_str(
//!     "review.yaml",
//!     "steps:\n  - id: fetch\n    call: gitlab.get_mr\n    capture_as: mr_data\n  \
//!      - id: say\n    call: prompt.say\n    input_template: { text: \"<<mr_dta.title>>\" }\n",
//! );
//! assert!(checked.has_errors());
//! let d = &checked.diagnostics[0];
//! assert_eq!(d.code, Code::UnresolvedVar);
//! assert_eq!(d.help.as_deref(), Some("did you mean `mr_data`?"));
//! assert!(checked.render(Format::Concise).starts_with("review.yaml:7:32: error[UNRESOLVED_VAR]"));
//! ```
//!
//! Run one with the engine (state under `<root>/.savant/state`): `plan`,
//! then carry out each instruction and submit its result with `next`, until
//! done. The binary's `plan` / `next` commands and MCP tools call the same
//! engine; its replies are types (`runtime::reply`), made JSON at the edge.
//!
//! The API is what this page shows: the re-exports at the root, the engine
//! ([`runtime`]: [`Engine`], [`runtime::Project`], the tools' arguments in
//! [`runtime::args`] and replies in [`runtime::reply`]), the tools by name
//! with JSON arguments ([`tools::call`]), and the diagnostics with their rendering ([`diagnostic`], [`report`]). The
//! binary's own modules (the checker's passes, the MCP server, the agent
//! loop, the language server, the state stores) are reachable for it but
//! hidden from these docs, and may change in any release.
//!
//! ```
//! use savant_think::Engine;
//! use savant_think::runtime::engine::NextArgs;
//! use serde_json::json;
//!
//! let root = std::env::temp_dir().join(format!("savant-doc-{}", std::process::id()));
//! std::fs::create_dir_all(root.join("workflows")).unwrap();
//! std::fs::write(
//!     root.join("workflows/hello.yaml"),
//!     "id: hello\nsteps:\n  - id: greet\n    call: prompt.say\n    \
//!      input_template: { message: \"hello\" }\n    capture_as: greeting\n",
//! )
//! .unwrap();
//! let engine = Engine::new(&root).unwrap();
//! let progress = engine.plan("hello", json!({}), Some("r1"), true).unwrap();
//! let instruction = progress.instruction().unwrap();
//! assert_eq!(instruction.call.as_deref(), Some("prompt.say"));
//! assert_eq!(instruction.input, json!({ "message": "hello" }));
//! let done = engine
//!     .next(NextArgs {
//!         workflow: "hello".into(),
//!         run_id: "r1".into(),
//!         step_id: instruction.step_id.clone(),
//!         result_snapshot: Some(json!({ "shown": true })),
//!         ..NextArgs::default()
//!     })
//!     .unwrap();
//! assert!(done.is_done());
//! # std::fs::remove_dir_all(&root).unwrap();
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod api;
pub use api::{Checked, check_str, check_str_with};
pub use compile::Plan;
pub use diagnostic::{Code, Diagnostic, Severity};
pub use report::Format;
pub use runtime::{Engine, EngineError, ErrorCode};
pub use source::Limits;

// The API: the re-exports above, the engine (`runtime`: `Engine`,
// `Project`, the tools' argument and reply types, `EngineConfig`), the
// tools by name (`tools::call`), and the diagnostics and their rendering
// (`diagnostic`, `report`).
pub mod diagnostic;
pub mod report;
pub mod runtime;
pub mod tools;

pub(crate) mod compile;

// The binary's modules. `src/main.rs` is another crate, so what it uses
// must be `pub`; these are hidden from the documentation and are not a
// stable API (the binary, the tests and the benches use them).
#[cfg(feature = "agent")]
#[doc(hidden)]
pub mod agent;
#[doc(hidden)]
pub mod check;
#[doc(hidden)]
pub mod clock;
#[doc(hidden)]
pub mod config;
#[doc(hidden)]
pub mod fsx;
#[doc(hidden)]
pub mod inspect;
#[doc(hidden)]
pub mod ir;
#[doc(hidden)]
pub mod lean_json;
#[doc(hidden)]
pub mod lsp;
#[cfg(feature = "mcp")]
#[doc(hidden)]
pub mod mcp;
#[doc(hidden)]
pub mod migrate;
#[doc(hidden)]
pub mod parallel;
#[doc(hidden)]
pub mod root;
#[doc(hidden)]
pub mod schema;
#[doc(hidden)]
pub mod source;
#[doc(hidden)]
pub mod state;
#[doc(hidden)]
pub mod syntax;
#[cfg(feature = "telemetry")]
#[doc(hidden)]
pub mod telemetry;
#[doc(hidden)]
pub mod testing;
#[cfg(feature = "mcp")]
#[doc(hidden)]
pub mod web_guard;
#[doc(hidden)]
pub mod workspace;
