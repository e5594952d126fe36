//! The run inspector (issue 26): runs as live DAGs, in a browser and in a
//! terminal. One typed model of each view (`view.rs`: the runs list, a
//! run with its laid-out DAG and timeline; `step.rs`: a step's panel and
//! the workflow source with `check`'s diagnostics), two renderers: the
//! terminal (`term.rs`) and the page's JSON API with its embedded page
//! (`http.rs`, feature `mcp`, served at `/ui/` beside `/mcp` and by
//! `savant-think ui`). `layout.rs` lays the DAG out (layered), for both.
//! Everything is read and done through the engine's public calls, so the
//! inspector shows what `state get` says and acts as the CLI does.

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
