//! The run inspector (issue 26): runs as live DAGs, in a browser and in a
//! terminal. One typed model of each view (`view.rs`: the runs list, a
//! run with its laid-out DAG and timeline; `step.rs`: a step's panel and
//! the workflow source with `check`'s diagnostics), two renderers: the
//! terminal (`term.rs`) and the page's JSON API with its embedded page
//! (`http.rs`, feature `mcp`, served at `/ui/` beside `/mcp` and by
//! `savant-think ui`). `layout.rs` lays the DAG out (layered), for both.
//! Everything is read and done through the engine's public calls, so the
//! inspector shows what `state get` says and acts as the CLI does.
//!
//! In more detail (docs/inspector.md for the user's side): `view.rs` the
//! runs page (filtered, counted and paged from the `state list` listing;
//! only the page's runs opened), a run with its laid-out DAG (edges
//! labelled from `check::graph`, foreach items counted), its timeline, and
//! the statuses the live updates send; `step.rs` a step's panel (through
//! `explain`: why, the rendered instruction; its attempts from the history;
//! its YAML with `check`'s diagnostics) and the pinned source with the diff
//! to the file on disk; `layout.rs` the layered layout (longest-path
//! layers, a virtual point per layer a long edge crosses, barycenter
//! sweeps, least-squares placement under the order; deterministic);
//! `term.rs` the terminal: the runs table, a run's summary, the DAG in
//! Unicode boxes. Feature `mcp`: `http.rs` the routes under `/ui` (merged
//! beside `/mcp` by `mcp/http.rs`, or served alone for `savant-think ui`);
//! `guard.rs` Host / Origin / token (bearer or the cookie set from
//! `?token=`, read through `crate::web_guard`) and the action rule (token,
//! not read-only, CSRF token and same Origin for a cookie); `api.rs` the
//! JSON API and the embedded page (`assets/`: one HTML file, one vanilla JS
//! file that builds the DOM with text nodes only, one stylesheet; ETags, a
//! strict CSP), actions as `tools::call`, errors with did-you-mean
//! and a run's stored history; `live.rs` server-sent events, a task per
//! open page polling the run's stamp. The engine's side is
//! `runtime/engine/inspect.rs`.

#[cfg(feature = "mcp")]
mod api;
#[cfg(feature = "mcp")]
mod guard;
#[cfg(feature = "mcp")]
pub mod http;
pub mod layout;
#[cfg(feature = "mcp")]
mod live;
pub mod step;
pub mod term;
pub mod view;
