//! Dynamic shell completion (clap_complete's `CompleteEnv`): besides
//! subcommands and flags, workflow ids, run ids from the state store and
//! step ids, read from the project the shell is in. Activated by the
//! shell's registration (`source <(COMPLETE=bash savant-think)`); with
//! `COMPLETE` unset it costs nothing.

use clap_complete::engine::CompletionCandidate;
use std::ffi::OsStr;

fn matching(current: &OsStr, names: impl IntoIterator<Item = String>) -> Vec<CompletionCandidate> {
    let current = current.to_str().unwrap_or("");
    let mut names: Vec<String> = names.into_iter().filter(|n| n.starts_with(current)).collect();
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

fn engine() -> Option<savant_think::runtime::Engine> {
    let root = super::env::root(None).ok()?;
    super::env::engine(root).ok()
}

/// Workflow ids of the project.
pub fn workflows(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(engine) = engine() else { return Vec::new() };
    matching(current, engine.project().ids())
}

/// Run ids of every workflow in the project's state store.
pub fn runs(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(engine) = engine() else { return Vec::new() };
    let Ok(list) = engine.state_list(None) else { return Vec::new() };
    matching(current, list.runs.into_iter().map(|r| r.run_id))
}

/// Step ids of the project's workflows (the completer does not see which
/// workflow the command names, so every workflow's steps).
pub fn steps(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(engine) = engine() else { return Vec::new() };
    let ids = engine.project().ids();
    let steps = ids
        .iter()
        .filter_map(|id| engine.workflow(id).ok())
        .flat_map(|cw| cw.wf.steps.iter().map(|s| s.id.value.to_string()).collect::<Vec<_>>());
    matching(current, steps)
}
