//! `UNKNOWN_DEP`
//!
//! *What it does*: reports an entry of `deps` that names no step.
//!
//! *Why is this bad?* The step would wait forever for a step that never runs.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, suggest};

/// Distinct unknown deps per file that get a "did you mean" (each compares
/// against every step id: past a few hundred, a file is not a typo).
const MAX_SUGGESTIONS: usize = 256;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    let mut memo: std::collections::HashMap<&str, Option<String>> = Default::default();
    for (_, step) in cx.steps() {
        for dep in &step.deps {
            if cx.step_index.contains_key(dep.value.as_str()) {
                continue;
            }
            let help = cx
                .captures
                .get(dep.value.as_str())
                .map(|&j| {
                    format!("`{}` is a capture name; the step is `{}`", dep.value, cx.wf.steps[j].id.value)
                })
                .or_else(|| {
                    if let Some(known) = memo.get(dep.value.as_str()) {
                        return known.clone();
                    }
                    let help = (memo.len() < MAX_SUGGESTIONS)
                        .then(|| suggest(&dep.value, cx.step_index.keys().copied()))
                        .flatten();
                    memo.insert(dep.value.as_str(), help.clone());
                    help
                });
            out.push(
                Diagnostic::new(
                    Code::UnknownDep,
                    dep.span,
                    format!("step `{}` depends on unknown step `{}`", step.id.value, dep.value),
                )
                .with_help_opt(help),
            );
        }
    }
}
