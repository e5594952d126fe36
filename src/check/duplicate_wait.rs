//! `DUPLICATE_WAIT`
//!
//! *What it does*: reports two waits that can be live at once on the same
//! event and key: a `wait_for:` inside a `foreach` whose `match:` does not
//! involve the loop variable (every item waits on one key), and two
//! `wait_for:` steps neither of which depends on the other (directly or
//! through others) on the same event with the same literal `match:` (or
//! none). The first is reported at the step (its `match:`, else its
//! `event:`); the second belongs to no one step and is reported at the
//! later of the two.
//!
//! *Why is this bad?* An event is delivered to the wait whose key it
//! carries: with two waiting on one key, which one it answers is a race,
//! and the other waits until its timeout.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::ast::{ExprKind, Segment, walk};
use crate::ir::{Step, Str, TemplateString, WaitKind};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (_, step) in cx.steps() {
        let Some((event, key)) = event_wait(step) else { continue };
        if step.foreach.is_none() || key.is_some_and(|k| mentions(k, &[step.loop_var_name(), "loop"])) {
            continue;
        }
        let (span, what) = match key {
            Some(k) => (k.loc.span, format!("its `match: {}` is the same for every item", k.text.trim())),
            None => (event.span, "it has no `match:`, so every item waits on the same key".to_owned()),
        };
        out.push(
            Diagnostic::new(
                Code::DuplicateWait,
                span,
                format!(
                    "every item of `{}` waits for event `{}` at once, and {what}",
                    step.id.value, event.value
                ),
            )
            .with_help(format!("make the key involve the item: `match: <<{}.id>>`", step.loop_var_name())),
        );
    }
    if cx.whole() {
        parallel(cx, out);
    }
}

/// Two `wait_for:` steps, neither depending on the other, on one event
/// and the same literal key.
pub(crate) fn parallel(cx: &Cx, out: &mut Vec<Diagnostic>) {
    let waits: Vec<(usize, &Str, Option<&TemplateString>)> = cx
        .wf
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| event_wait(s).map(|(e, k)| (i, e, k)))
        .filter(|(_, _, k)| k.is_none_or(literal))
        .collect();
    for (n, &(j, event, key)) in waits.iter().enumerate() {
        let text = |k: Option<&TemplateString>| k.map(|k| k.text.trim().to_owned());
        let earlier = waits[..n].iter().find(|&&(i, e, k)| {
            e.value == event.value
                && text(k) == text(key)
                && !cx.graph.depends_on(j, i)
                && !cx.graph.depends_on(i, j)
        });
        let Some(&(i, ..)) = earlier else { continue };
        let first = &cx.wf.steps[i];
        let span = key.map_or(event.span, |k| k.loc.span);
        let keyed = key.map_or("no key".to_owned(), |k| format!("key `{}`", k.text.trim()));
        out.push(
            Diagnostic::new(
                Code::DuplicateWait,
                span,
                format!(
                    "`{}` and `{}` can both wait for event `{}` with {keyed} at once",
                    first.id.value, cx.wf.steps[j].id.value, event.value
                ),
            )
            .with_label(first.id.span, format!("`{}` waits on the same event and key", first.id.value))
            .with_help(format!(
                "give them different keys, or order them: `deps: [{}]` on `{}`",
                first.id.value, cx.wf.steps[j].id.value
            )),
        );
    }
}

/// The event and key of a `wait_for:` step.
fn event_wait(step: &Step) -> Option<(&Str, Option<&TemplateString>)> {
    match &step.wait.as_deref()?.kind {
        WaitKind::Event { event, key, .. } => Some((event, key.as_ref())),
        _ => None,
    }
}

/// Whether a template is literal text (no `<<…>>`).
fn literal(t: &TemplateString) -> bool {
    t.template.segments.iter().all(|s| matches!(s, Segment::Text(_)))
}

/// Whether a template reads any of `names`.
fn mentions(t: &TemplateString, names: &[&str]) -> bool {
    t.template.segments.iter().any(|s| match s {
        Segment::Interp { expr, .. } => {
            let mut found = false;
            walk(expr, &mut |e| {
                if let ExprKind::Var(v) = &e.kind {
                    found |= names.contains(&v.as_str());
                }
            });
            found
        }
        Segment::Text(_) => false,
    })
}
