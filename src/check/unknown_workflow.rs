//! `UNKNOWN_WORKFLOW`
//!
//! *What it does*: reports a `uses:` that names no workflow of the project
//! (with a did-you-mean). A `with:` key the called workflow does not declare
//! under `params:` is an `UNKNOWN_INPUT`, a param it requires that `with:`
//! does not give a `MISSING_INPUT`, a value of the wrong type for a param a
//! `TYPE_MISMATCH`; reading an output the workflow does not declare under
//! `outputs:` an `UNRESOLVED_VAR`.
//!
//! *Why is this bad?* The run would stop at this step: the engine cannot
//! start a workflow that does not exist, nor one with params it refuses.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, suggest};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    let Some(table) = &cx.config.workflows else { return };
    let me = crate::check::workflow_cycle::self_id(cx, table);
    for (_, step) in cx.steps() {
        let Some(uses) = &step.uses else { continue };
        // Using itself is a `WORKFLOW_CYCLE`, wherever the file is.
        if table.get(&uses.value).is_none() && uses.value != me {
            let ids: Vec<&str> = table.ids().collect();
            let help = suggest(&uses.value, ids.iter().copied()).unwrap_or_else(|| {
                if ids.is_empty() {
                    "the project has no workflows under `workflows/`".to_owned()
                } else {
                    format!("the project's workflows (under `workflows/`): {}", ids.join(", "))
                }
            });
            out.push(
                Diagnostic::new(
                    Code::UnknownWorkflow,
                    uses.span,
                    format!("no workflow `{}` in the project", uses.value),
                )
                .with_help(help),
            );
        }
    }
}
