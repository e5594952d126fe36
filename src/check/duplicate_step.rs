//! `DUPLICATE_STEP`
//!
//! *What it does*: reports a step whose `id` another step already has.
//!
//! *Why is this bad?* `deps`, `steps.<id>` and the run state name steps by
//! id: with two, one of them can never be addressed.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let first = cx.step_index[step.id.value.as_str()];
        if first == i {
            continue;
        }
        let id = &step.id.value;
        out.push(
            Diagnostic::new(Code::DuplicateStep, step.id.span, format!("duplicate step id `{id}`"))
                .with_label(cx.wf.steps[first].id.span, "first defined here")
                .with_help("give each step a unique `id`"),
        );
    }
}
