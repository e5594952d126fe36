//! Moving a run onto another version of its workflow, checked before it
//! happens. The run's history is replayed onto the new version, with the
//! renames applied to its step ids: every accepted result must land on a
//! step that is ready at that point of the new version, with the same
//! `call`, and still match the new success schema. Whatever does not is an
//! [`UpgradeIssue`] pointing into the new file, and the upgrade is refused
//! as a whole. Results of removed steps are dropped; steps that did not
//! run yet may change freely (a step that was issued but not answered is
//! issued again with its new instruction; a new step whose dependencies
//! are all done is ready).

use crate::ir::SchemaRef;
use crate::runtime::record::{Event, EventKind, RunStatus, StepStatus};
pub use crate::runtime::reply_runs::{RefusalReason, UpgradePlan};
use crate::runtime::run::Machine;
use crate::runtime::work_id::WorkId;
use crate::runtime::workflow::CompiledWorkflow;
use crate::source::Span;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Why an upgrade cannot be made: one place in the new file.
#[derive(Clone, Debug)]
pub struct UpgradeIssue {
    /// The reason, stable.
    pub reason: RefusalReason,
    /// The new version's step it is about (empty for the run as a whole).
    pub step: String,
    /// Where, in the new file.
    pub span: Span,
    /// What is wrong.
    pub message: String,
    /// How to go on.
    pub help: String,
}

/// The outcome of replaying a run onto a new version.
pub struct Upgraded {
    /// The run on the new version (only to be kept when `issues` is empty).
    pub machine: Machine,
    /// What the upgrade does to the steps.
    pub plan: UpgradePlan,
    /// Why it cannot be made (empty when it can).
    pub issues: Vec<UpgradeIssue>,
}

impl Machine {
    /// Replays `old` onto `cw` under `renames` (old step id → new), at
    /// `now`. `valid(i, result)` says whether a kept result still matches
    /// step `i`'s new success schema. `force` allows a finished run.
    pub fn upgrade(
        old: &Machine,
        cw: Arc<CompiledWorkflow>,
        renames: &BTreeMap<String, String>,
        force: bool,
        now: &str,
        valid: &mut dyn FnMut(usize, &Value) -> bool,
    ) -> Upgraded {
        let index = cw.wf.steps.iter().enumerate().map(|(i, s)| (s.id.value.as_str(), i)).collect();
        let mut land = Landing { old, index, renames, issues: Vec::new(), refused: BTreeSet::new() };
        let mut m =
            Machine::start(cw.clone(), &old.state.run_id, old.state.params.clone(), &old.state.created_at);
        if old.state.status != RunStatus::Running && !force {
            land.issues.push(UpgradeIssue {
                reason: RefusalReason::RunFinished,
                step: String::new(),
                span: Span::point(0),
                message: format!("the run is {}; upgrading it would run it again", old.state.status.as_str()),
                help: "pass --force (force: true) to upgrade a finished run: it goes on with the new version's steps".into(),
            });
        }
        for event in &old.state.history {
            let mut event = event.clone();
            if land.event(&m, &mut event.kind, valid) {
                m.apply(event);
            }
        }
        let mut issues = std::mem::take(&mut land.issues);
        let map = |step_id: &str| land.map(step_id);
        parked_waits(old, &m, &map, &mut issues);
        let version = old.state.version + 1;
        let renamed: BTreeMap<String, String> =
            renames.iter().filter(|(a, b)| a != b).map(|(a, b)| (a.clone(), b.clone())).collect();
        m.apply(Event {
            version,
            at: now.to_owned(),
            kind: EventKind::Upgraded {
                from: old.cw.hash.clone(),
                to: cw.hash.clone(),
                renames: renamed.clone(),
            },
        });
        m.state.generation = old.state.generation.clone();
        m.state.source = old.state.source.clone();
        m.state.forked_from = old.state.forked_from.clone();
        // A sub-workflow's run stays linked to its parent.
        m.state.parent = old.state.parent.clone();
        let plan = plan_of(old, &m, &map, renamed);
        Upgraded { machine: m, plan, issues }
    }
}

/// The old run's history as it lands on the new version: each event's
/// step renamed, or why it cannot land.
struct Landing<'a> {
    old: &'a Machine,
    /// The new version's step ids.
    index: BTreeMap<&'a str, usize>,
    renames: &'a BTreeMap<String, String>,
    issues: Vec<UpgradeIssue>,
    /// Steps whose history stops landing (an issue says why).
    refused: BTreeSet<usize>,
}

impl Landing<'_> {
    /// `step_id` (`id` or `id[i]`) renamed, when the new version has it.
    fn map(&self, step_id: &str) -> Option<String> {
        let mut id: WorkId = step_id.parse().ok()?;
        id.step = self.renames.get(&id.step).cloned().unwrap_or(id.step);
        self.index.contains_key(id.step.as_str()).then(|| id.to_string())
    }

    /// Whether an old event is applied to `m` (its step id renamed in
    /// place); what does not land is skipped, with an issue when it matters.
    fn event(
        &mut self,
        m: &Machine,
        kind: &mut EventKind,
        valid: &mut dyn FnMut(usize, &Value) -> bool,
    ) -> bool {
        match kind {
            EventKind::Result { step_id, result, .. } => return self.result(m, step_id, result, valid),
            EventKind::ValidationFailed { step_id, .. } => {
                let Some(new_id) = self.map(step_id) else { return false };
                match m.resolve(&new_id) {
                    Some(w) if m.status_of(w) == StepStatus::Ready && !self.refused.contains(&w.step) => {
                        *step_id = new_id
                    }
                    _ => return false,
                }
            }
            EventKind::ChildFailed { step_id, .. } => {
                let Some(new_id) = self.map(step_id) else { return false };
                *step_id = new_id;
            }
            EventKind::Answered { step_id, .. }
            | EventKind::TimerFired { step_id, .. }
            | EventKind::Signal { step_id: Some(step_id), .. } => {
                let Some(new_id) = self.map(step_id) else { return false };
                if !wait_lands(m, step_id, &new_id, &mut self.refused, &mut self.issues) {
                    return false;
                }
                *step_id = new_id;
            }
            EventKind::Signal { step_id: None, .. }
            | EventKind::Thought { .. }
            | EventKind::Upgraded { .. } => {}
        }
        true
    }

    /// A result lands on a ready step (or item) of the new version that
    /// calls the same tool and whose schema it still matches.
    fn result(
        &mut self,
        m: &Machine,
        step_id: &mut String,
        result: &Value,
        valid: &mut dyn FnMut(usize, &Value) -> bool,
    ) -> bool {
        let old = self.old;
        let Some(new_id) = self.map(step_id) else { return false };
        let Some(w) = m.resolve(&new_id) else {
            let i = self.index[WorkId::base(&new_id)];
            self.issues.push(issue(
                m,
                i,
                RefusalReason::ItemGone,
                format!("`{step_id}` has a result, but the new version does not expand `{new_id}`"),
                "keep the foreach over the same items, or fork the run from this step".into(),
            ));
            self.refused.insert(i);
            return false;
        };
        if self.refused.contains(&w.step) {
            return false;
        }
        let refusal = match m.status_of(w) {
            _ if call_changed(old, m, step_id, w).is_some() => call_changed(old, m, step_id, w),
            StepStatus::Ready => None,
            _ => Some(unrun_dependency(m, w)),
        };
        if let Some(refusal) = refusal {
            self.issues.push(refusal);
            self.refused.insert(w.step);
            return false;
        }
        if !valid(w.step, result) {
            let span = match &m.step(w.step).success_schema {
                Some(SchemaRef::Named(n)) => n.span,
                Some(SchemaRef::Inline { span, .. }) => *span,
                None => m.step(w.step).id.span,
            };
            self.issues.push(issue_at(m, w.step, span, RefusalReason::ResultNoLongerValid, format!("the result of `{}` no longer matches its new success_schema", m.work_id(w)), "keep the schema compatible with the results already accepted, or fork the run from this step".into()));
            self.refused.insert(w.step);
            return false;
        }
        *step_id = new_id;
        true
    }
}

/// `CALL_CHANGED` when the step that ran `step_id` calls another tool at
/// `w` in the new version.
fn call_changed(
    old: &Machine,
    m: &Machine,
    step_id: &str,
    w: crate::runtime::run::WorkRef,
) -> Option<UpgradeIssue> {
    let old_step = old.resolve(step_id).map(|o| old.step(o.step));
    let (old_call, new_call) = (old_step.and_then(|s| s.call.as_ref()), m.step(w.step).call.as_ref());
    if old_call.map(|c| &c.value) == new_call.map(|c| &c.value) {
        return None;
    }
    let span = new_call.map_or(m.step(w.step).id.span, |c| c.span);
    let (was, now) = (
        old_call.map_or("none".into(), |c| c.value.to_string()),
        new_call.map_or("none".into(), |c| c.value.to_string()),
    );
    let message = format!("`{}` ran `{was}`; the new version calls `{now}`", m.work_id(w));
    let help =
        "keep the call of a step that ran, or give the changed step a new id (it then runs as a new step)";
    Some(issue_at(m, w.step, span, RefusalReason::CallChanged, message, help.into()))
}

/// `DEPENDS_ON_UNRUN_STEP`: `w` has a result, but in the new version it
/// depends on steps that had not finished when it ran.
fn unrun_dependency(m: &Machine, w: crate::runtime::run::WorkRef) -> UpgradeIssue {
    let waiting: Vec<String> = m.cw.plan.steps[w.step]
        .deps
        .iter()
        .filter(|&&d| !m.state.steps[d].status.is_finished())
        .map(|&d| format!("`{}`", m.state.steps[d].id))
        .collect();
    let message = format!(
        "`{}` has a result, but in the new version it depends on {}, which had not finished when it ran",
        m.work_id(w),
        waiting.join(", ")
    );
    let help = "drop the new dependency, or fork the run from the dependency";
    issue(m, w.step, RefusalReason::DependsOnUnrunStep, message, help.into())
}

/// Whether the end of a wait at `step_id` lands on `new_id`, still a
/// waiting unit in the new version; else a `WAIT_CHANGED` issue (once per step).
fn wait_lands(
    m: &Machine,
    step_id: &str,
    new_id: &str,
    refused: &mut BTreeSet<usize>,
    issues: &mut Vec<UpgradeIssue>,
) -> bool {
    let Some(w) = m.resolve(new_id) else { return false };
    if refused.contains(&w.step) {
        return false;
    }
    if m.status_of(w) != StepStatus::Waiting {
        let message =
            format!("`{step_id}` ended its wait, but in the new version `{new_id}` does not wait there");
        issues.push(issue(m, w.step, RefusalReason::WaitChanged, message, WAIT_HELP.into()));
        refused.insert(w.step);
        return false;
    }
    true
}

const WAIT_HELP: &str = "keep the wait (its kind and its schema) while runs wait there, or answer them first; a new wait needs a new step id";

/// Every unit the old run waits at must still be the same wait in the new
/// version: not removed (`WAIT_REMOVED`), still a wait for the same thing,
/// its answer typed the same (`WAIT_CHANGED`).
fn parked_waits(
    old: &Machine,
    new: &Machine,
    map: &dyn Fn(&str) -> Option<String>,
    issues: &mut Vec<UpgradeIssue>,
) {
    for w in old.waiting() {
        let id = old.work_id(w);
        let Some(new_id) = map(&id) else {
            issues.push(UpgradeIssue {
                reason: RefusalReason::WaitRemoved,
                step: String::new(),
                span: Span::point(0),
                message: format!("the run waits at `{id}`, which the new version removes"),
                help: WAIT_HELP.into(),
            });
            continue;
        };
        let Some(nw) = new.resolve(&new_id) else { continue };
        let (was, now) = (old.step(w.step), new.step(nw.step));
        let same_kind = match (&was.wait, &now.wait) {
            (Some(a), Some(b)) => a.reason() == b.reason(),
            _ => false,
        };
        let schema = |s: &crate::ir::Step| match &s.success_schema {
            Some(SchemaRef::Named(n)) => Some(Value::String(n.value.to_string())),
            Some(SchemaRef::Inline { schema, .. }) => Some(Value::clone(schema)),
            None => None,
        };
        if !same_kind || schema(was) != schema(now) {
            let what =
                if same_kind { "types its answer otherwise" } else { "does not wait there the same way" };
            let message = format!("the run waits at `{id}`; the new version {what}");
            issues.push(issue(new, nw.step, RefusalReason::WaitChanged, message, WAIT_HELP.into()));
        }
    }
}

fn issue(m: &Machine, i: usize, reason: RefusalReason, message: String, help: String) -> UpgradeIssue {
    issue_at(m, i, m.step(i).id.span, reason, message, help)
}

fn issue_at(
    m: &Machine,
    i: usize,
    span: Span,
    reason: RefusalReason,
    message: String,
    help: String,
) -> UpgradeIssue {
    UpgradeIssue { reason, step: m.state.steps[i].id.clone(), span, message, help }
}

fn plan_of(
    old: &Machine,
    new: &Machine,
    map: &dyn Fn(&str) -> Option<String>,
    renames: BTreeMap<String, String>,
) -> UpgradePlan {
    let mut plan = UpgradePlan { renames, ..UpgradePlan::default() };
    let mut images = BTreeSet::new();
    for s in &old.state.steps {
        match map(&s.id) {
            None => plan.removed.push(s.id.clone()),
            Some(id) => {
                images.insert(id.clone());
                let finished = new.resolve(&id).is_some_and(|w| new.status_of(w).is_finished());
                if s.status.is_finished() && finished {
                    plan.kept.push(id.clone());
                }
                let was_issued = matches!(s.status, StepStatus::Ready | StepStatus::Running);
                let issued = new
                    .resolve(&id)
                    .is_some_and(|w| matches!(new.status_of(w), StepStatus::Ready | StepStatus::Running));
                if was_issued && issued {
                    plan.reissued.push(id);
                }
            }
        }
    }
    plan.added = new.state.steps.iter().map(|s| s.id.clone()).filter(|id| !images.contains(id)).collect();
    plan.ready = new.ready().map(|w| new.work_id(w)).collect();
    for list in [&mut plan.kept, &mut plan.added, &mut plan.removed, &mut plan.reissued] {
        list.sort();
    }
    plan
}
