//! Helpers shared by the integration tests (`tests/it`, as `crate::support`)
//! and the benches (each with `#[path = "../tests/support/mod.rs"] mod support;`):
//!
//! - [`root`]: a temporary project root (workflows, the crate's schemas and
//!   prompts, an engine on it, the binary run in it), removed on drop;
//! - [`generate`]: generated workflows and their params;
//! - [`drive`]: `next` arguments and driving a run from `plan` to done;
//! - [`serve`]: `serve --http` as a child process;
//! - [`browser`]: headless chromium over the DevTools protocol;
//! - [`peer`]: what a test says when a peer it started dies under it;
//! - [`skip`]: a test skipping itself for a missing tool (a failure in CI).
//!
//! Each bench uses only part of this, so what one of them leaves unused is
//! not dead code of the project (nor an unused re-export).
#![allow(dead_code, unused_imports)]

#[cfg(unix)]
pub mod browser;
pub mod drive;
pub mod generate;
#[cfg(unix)]
pub mod peer;
pub mod root;
pub mod serve;
pub mod skip;

pub use drive::{drive_to_done, next_args, next_json};
pub use root::{Root, copy_dir};
pub use serve::Server;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_savant-think");
/// The crate's directory (its bundled workflows, schemas and prompts).
pub const CRATE: &str = env!("CARGO_MANIFEST_DIR");
