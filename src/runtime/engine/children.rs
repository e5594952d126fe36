//! Sub-workflows at run time: a `uses:` step runs another workflow of the
//! project as a run of its own (its child), and completes with the child's
//! `outputs:` when the child is done.
//!
//! - The child's run id is the parent's, a `.` and the step's work id
//!   (`.` for the `[`/`]` of a foreach item): `r1.review`, `r1.review.2`.
//!   Deterministic, so the child is found again after a crash, and each
//!   `uses:` step (or item) has at most one child.
//! - The child's state links to its parent ([`ParentRun`]); it is pinned to
//!   its workflow's version when it starts, like any run, and listed by
//!   `state list` and the inspector like any run.
//! - The client drives one loop: when the parent's first ready step is a
//!   `uses:` step, the parent's progress hands out the child's instruction,
//!   its `step_id` prefixed with the step's (`review/summarize`) and tagged
//!   with the child's run ([`SubRun`]); the result comes back through the
//!   parent's `next` with that step id, which routes it to the child. When
//!   the child is done, its outputs are the parent step's result; when it
//!   fails, the parent step fails (`CHILD_FAILED`).

use super::*;
use crate::runtime::record::ParentRun;
use crate::runtime::reply::{SubRun, WaitView};
use crate::runtime::run::RunScope;
use crate::runtime::work_id::WorkId;

/// The deepest a run may be below the run `plan` started (the checker's
/// limit, `check::workflows::MAX_USES_DEPTH`, enforced again at run time
/// for files that were never checked together).
pub const MAX_CHILD_DEPTH: u32 = crate::check::workflows::MAX_USES_DEPTH as u32;

/// How many `uses:` steps a run may complete in one call before handing
/// out an instruction (each completion makes another step ready).
const MAX_COMPLETIONS_PER_CALL: usize = 10_000;

/// What a `uses:` step's child has to say.
enum Child {
    /// Still running: its instruction (already prefixed and tagged).
    Running(Box<Instruction>),
    /// Still running, with nothing to hand out: what it waits for
    /// (prefixed and tagged like an instruction).
    Waiting(Vec<WaitView>),
    /// Done: its outputs, the step's result.
    Done(Value),
    /// Failed, or could not start: why.
    Failed { child_run_id: String, failure: RunFailure },
}

impl Engine {
    /// The run's progress, as `plan` and `next` answer: when its first
    /// ready step is a `uses:` step, the child's instruction, after
    /// completing every `uses:` step whose child is done (see the module).
    pub(super) fn advance(&self, key: &RunKey, cached: &mut Cached) -> EngineResult<Progress> {
        self.settle_waits(key, cached)?;
        for _ in 0..MAX_COMPLETIONS_PER_CALL {
            let m = &cached.machine;
            if m.state.status != RunStatus::Running || !m.cw.has_uses {
                return self.progress(m);
            }
            // The first ready unit that gives an instruction; children that
            // wait are listed with the run's own waits.
            let mut child_waits = Vec::new();
            let mut kind = None;
            for w in m.ready() {
                if m.step(w.step).uses.is_none() {
                    let instruction = Box::new(self.instruction(m, w));
                    return self.progress_at(m, Some(instruction), child_waits);
                }
                let step_id = m.work_id(w);
                match self.child(m, w)? {
                    Child::Running(instruction) => {
                        return self.progress_at(m, Some(instruction), child_waits);
                    }
                    Child::Waiting(waits) => child_waits.extend(waits),
                    Child::Done(outputs) => {
                        kind = Some(self.completion(key, m, w, step_id, outputs)?);
                        break;
                    }
                    Child::Failed { child_run_id, failure } => {
                        kind = Some(EventKind::ChildFailed { step_id, child_run_id, failure });
                        break;
                    }
                }
            }
            let Some(kind) = kind else { return self.progress_at(m, None, child_waits) };
            let event = Event { version: cached.machine.state.version + 1, at: now(), kind };
            self.commit(key, cached, event)?;
        }
        self.progress(&cached.machine)
    }

    /// The event that completes `uses:` work `w` with its child's outputs:
    /// its result (within the payload caps), or — when the step's
    /// `success_schema` refuses the outputs — its failure (running the same
    /// child again would give the same outputs).
    fn completion(
        &self,
        key: &RunKey,
        m: &Machine,
        w: WorkRef,
        step_id: String,
        mut outputs: Value,
    ) -> Result<EventKind, EngineError> {
        if let Some(schema) = &m.step(w.step).success_schema {
            let errors = self.validate_pinned(key, m, schema, &outputs)?;
            if !errors.is_empty() {
                let child_run_id = Self::child_run_id(m, w);
                let failure = RunFailure::Other(json!({
                    "error": "VALIDATION_FAILED",
                    "message": "the sub-workflow's outputs do not match the step's success_schema",
                    "errors": errors,
                }));
                return Ok(EventKind::ChildFailed { step_id, child_run_id, failure });
            }
        }
        let original_bytes = payload::json_len(&outputs);
        let caps = self.caps();
        let truncated = payload::truncate(&mut outputs, caps.0, caps.1)
            .map(|what| TruncationNote { original_bytes, what });
        Ok(EventKind::Result { step_id, result: outputs, truncated })
    }

    /// After a reset of a run from `old` to `new`: archives the child runs
    /// (and theirs) of `uses:` work that `new` has not finished, so that
    /// the work starts a fresh child when it is reached again rather than
    /// finding the old one by its id. The old child is archived, not lost:
    /// `state restore` brings it back.
    pub(super) fn archive_discarded_children(&self, old: &Machine, new: &Machine) -> Result<(), EngineError> {
        for (w, uses) in uses_work(old) {
            let kept = match w.item {
                Some(j) => {
                    new.state.steps[w.step].items.as_ref().and_then(|it| it.get(j)).map(|it| it.status)
                }
                None => Some(new.state.steps[w.step].status),
            };
            if !kept.is_some_and(|s| s.is_finished()) {
                self.archive_child_tree(uses, &Self::child_run_id(old, w), 0)?;
            }
        }
        Ok(())
    }

    /// Archives a child run and its own children, deepest first.
    fn archive_child_tree(&self, workflow: &str, run_id: &str, depth: u32) -> Result<(), EngineError> {
        if depth > MAX_CHILD_DEPTH {
            return Ok(());
        }
        let Ok(cw) = self.workflow(workflow) else { return Ok(()) };
        let key = self.key(&cw, run_id)?;
        let _lock = self.lock_run(&key)?;
        let Some(cached) = self.load(&key, Some(&cw))? else { return Ok(()) };
        for (w, uses) in uses_work(&cached.machine) {
            self.archive_child_tree(uses, &Self::child_run_id(&cached.machine, w), depth + 1)?;
        }
        drop(cached);
        self.forget(&key);
        // Archived first (as `state delete` does): a crash before the
        // delete leaves the run whole.
        self.archive_before_discard(&key)?.map_err(|m| EngineError::message(ErrorCode::StateIo, m))?;
        self.store.delete(&key).map_err(store_error)?;
        Ok(())
    }

    /// The instruction of `uses:` work `w`'s child (started if need be),
    /// as the parent hands it out; `None` when the child has none to give
    /// (done or failed: the parent's next `advance` records it).
    pub(super) fn child_instruction(
        &self,
        m: &Machine,
        w: WorkRef,
    ) -> Result<Option<Instruction>, EngineError> {
        Ok(match self.child(m, w)? {
            Child::Running(i) => Some(*i),
            Child::Waiting(_) | Child::Done(_) | Child::Failed { .. } => None,
        })
    }

    /// The child run id of `uses:` work `w` of run `m`.
    pub(super) fn child_run_id(m: &Machine, w: WorkRef) -> String {
        child_run_id(&m.state.run_id, &m.work_id(w))
    }

    /// The child of `uses:` work `w`: started when it does not exist yet,
    /// then advanced (its own `uses:` steps too).
    fn child(&self, m: &Machine, w: WorkRef) -> Result<Child, EngineError> {
        let Some(uses) = m.step(w.step).uses.as_ref().map(|u| u.value.to_string()) else {
            let failure = RunFailure::Other(json!({"message": "not a `uses:` step"}));
            return Ok(Child::Failed { child_run_id: String::new(), failure });
        };
        let child_run_id = Self::child_run_id(m, w);
        let failed = |failure: Value| {
            Ok(Child::Failed { child_run_id: child_run_id.clone(), failure: RunFailure::Other(failure) })
        };
        let refused = |e: EngineError| failed(refusal(&e));
        let depth = m.state.parent.as_ref().map_or(0, |p| p.depth) + 1;
        if depth > MAX_CHILD_DEPTH {
            return failed(json!({
                "error": "WORKFLOW_TOO_DEEP",
                "message": format!("`{uses}` would run {depth} sub-workflows deep; the limit is {MAX_CHILD_DEPTH} (a cycle of `uses:`?)"),
            }));
        }
        let cw = match self.workflow(&uses) {
            Ok(cw) => cw,
            Err(e) => return refused(e),
        };
        let key = self.key(&cw, &child_run_id)?;
        let lock = self.lock_run(&key)?;
        let mut cached = match self.load(&key, Some(&cw))? {
            Some(cached) => cached,
            None => {
                let params = m.input_of(w).cloned().unwrap_or(Value::Null);
                let params = match self.check_params(&cw, params) {
                    Ok(p) => p,
                    Err(e) => return refused(e),
                };
                self.start_run(&key, cw, params, Some(parent_of(m, w, depth)))?
            }
        };
        let out = self.advance(&key, &mut cached);
        let child = &cached.machine;
        let answer = match (out, child.state.status) {
            (_, RunStatus::Failed) => Child::Failed {
                child_run_id: child_run_id.clone(),
                failure: child.state.failure.clone().unwrap_or(RunFailure::Other(Value::Null)),
            },
            (_, RunStatus::Done) => match outputs(child) {
                Ok(v) => Child::Done(v),
                Err(failure) => {
                    Child::Failed { child_run_id: child_run_id.clone(), failure: RunFailure::Other(failure) }
                }
            },
            (Ok(progress), RunStatus::Running) => match progress.status {
                ProgressStatus::Running { instruction: Some(mut i), .. } => {
                    i.step_id = format!("{}/{}", m.work_id(w), i.step_id);
                    // The innermost run is the one the instruction is for.
                    i.sub_run.get_or_insert(SubRun {
                        workflow: child.state.workflow.clone(),
                        run_id: child.state.run_id.clone(),
                    });
                    Child::Running(i)
                }
                ProgressStatus::Running { waiting, .. } if !waiting.is_empty() => {
                    Child::Waiting(from_child(&m.work_id(w), child, waiting))
                }
                _ => Child::Failed {
                    child_run_id: child_run_id.clone(),
                    failure: RunFailure::Other(
                        json!({"message": "the sub-workflow's run has no ready step"}),
                    ),
                },
            },
            (Err(e), RunStatus::Running) => {
                self.put(&key, cached);
                return Err(e);
            }
        };
        self.put(&key, cached);
        drop(lock);
        Ok(answer)
    }

    /// A call for a step id the run does not have, `USES_STEP/REST`
    /// (`next`, `answer`, a test's timer), routed to the child of the
    /// `uses:` work `USES_STEP` as `call` makes it (step `REST` of the
    /// child); `ready_only`: only while that work is ready in a running
    /// run. Whatever the child says, the parent goes on from there; a
    /// refusal is returned with its instruction's step id as the parent
    /// hands it out. `None` when the id is not of that form.
    pub(super) fn in_child(
        &self,
        key: &RunKey,
        cached: &mut Cached,
        step_id: &str,
        ready_only: bool,
        call: impl FnOnce(&Engine, ChildRoute) -> EngineResult<Progress>,
    ) -> Option<EngineResult<Progress>> {
        let m = &cached.machine;
        let route = Self::child_route(m, step_id)?;
        if ready_only
            && (m.status_of(route.work) != StepStatus::Ready || m.state.status != RunStatus::Running)
        {
            return None;
        }
        let prefix = m.work_id(route.work);
        Some(match call(self, route) {
            // Done, failed or still running, the parent takes it from here.
            Ok(_) => self.advance(key, cached),
            Err(e) if e.run_failed() => self.advance(key, cached),
            // Refused (a validation failure to retry, a step not ready): as
            // the child says, its instruction's step id as the parent hands it out.
            Err(mut e) => {
                if let Some(i) = e.context.as_mut().and_then(|c| c.instruction.as_mut()) {
                    i.step_id = format!("{prefix}/{}", i.step_id);
                }
                Err(e)
            }
        })
    }

    /// Where `USES_STEP/REST` leads in run `m`: the `uses:` work, the
    /// child's workflow and run, and `REST`.
    fn child_route(m: &Machine, step_id: &str) -> Option<ChildRoute> {
        let id: WorkId = step_id.parse().ok()?;
        let rest = id.child.as_deref()?.to_string();
        let work = m.resolve_id(&id.head())?;
        let workflow = m.step(work.step).uses.as_ref()?.value.to_string();
        Some(ChildRoute { work, workflow, run_id: Self::child_run_id(m, work), rest })
    }
}

/// Where a `USES_STEP/REST` step id leads ([`Engine::in_child`]).
pub(super) struct ChildRoute {
    /// The parent's `uses:` work.
    pub work: WorkRef,
    /// The child's workflow.
    pub workflow: String,
    /// The child's run id.
    pub run_id: String,
    /// The step id in the child: `REST`.
    pub rest: String,
}

/// A child's waits as its parent lists them: each step id prefixed with
/// the `uses:` work's (`prefix/…`), tagged with the innermost run.
fn from_child(prefix: &str, child: &Machine, waiting: Vec<WaitView>) -> Vec<WaitView> {
    waiting
        .into_iter()
        .map(|mut v| {
            v.step_id = format!("{prefix}/{}", v.step_id);
            v.sub_run.get_or_insert(SubRun {
                workflow: child.state.workflow.clone(),
                run_id: child.state.run_id.clone(),
            });
            v
        })
        .collect()
}

/// Every unit of `uses:` work a run has (a step, or each item of a
/// foreach step), with the workflow it uses.
pub(super) fn uses_work(m: &Machine) -> Vec<(WorkRef, &str)> {
    let mut out = Vec::new();
    for (i, step) in m.cw.wf.steps.iter().enumerate() {
        let Some(uses) = &step.uses else { continue };
        match m.state.steps[i].items.as_ref().map(Vec::len) {
            Some(n) => out.extend((0..n).map(|j| (WorkRef::new(i, Some(j)), uses.value.as_str()))),
            None => out.push((WorkRef::new(i, None), uses.value.as_str())),
        }
    }
    out
}

/// A done run's `outputs:`, rendered in its final scope: `{}` when it
/// declares none.
fn outputs(m: &Machine) -> Result<Value, Value> {
    let scope = RunScope::new(m, None);
    let mut out = Map::new();
    for o in &m.cw.wf.outputs {
        let value = crate::runtime::render::render_string(&o.value, &scope).map_err(|e| {
            json!({
                "error": "TEMPLATE_RENDER_ERROR",
                "message": format!("output `{}`: {}", o.name.value, e.message),
                "expression": e.expr,
            })
        })?;
        out.insert(o.name.value.to_string(), value);
    }
    Ok(Value::Object(out))
}

/// A child that cannot start fails its parent with the reason, for a
/// person (`message`), beside the error's code and details.
fn refusal(e: &EngineError) -> Value {
    let mut failure = e.to_json();
    failure["message"] = json!(e.describe());
    failure
}

/// The parent record of the child that `uses:` work `w` of run `m` starts.
pub(super) fn parent_of(m: &Machine, w: WorkRef, depth: u32) -> ParentRun {
    ParentRun {
        workflow: m.state.workflow.clone(),
        run_id: m.state.run_id.clone(),
        step_id: m.work_id(w),
        depth,
        trace: Some(super::observe::parent_trace(m)),
    }
}

/// The run id of the child that `uses:` work `work` (`step` or `step[3]`)
/// of run `parent_run` starts: `PARENT.step` or `PARENT.step.3`.
pub fn child_run_id(parent_run: &str, work: &str) -> String {
    format!("{parent_run}.{}", work.replace('[', ".").replace(']', ""))
}

impl Engine {
    /// `cw` and every workflow its `uses:` steps run, at any depth, each
    /// once (a cycle stops; a callee that cannot be loaded is left out:
    /// `plan` and `check` say why).
    pub fn with_callees(&self, cw: &Arc<CompiledWorkflow>) -> Vec<Arc<CompiledWorkflow>> {
        let mut out: Vec<Arc<CompiledWorkflow>> = Vec::new();
        let mut todo = vec![cw.clone()];
        while let Some(at) = todo.pop() {
            if out.iter().any(|w| w.wf.id == at.wf.id) || out.len() >= 256 {
                continue;
            }
            for s in &at.wf.steps {
                if let Some(uses) = &s.uses
                    && let Ok(callee) = self.workflow(uses.value.as_str())
                {
                    todo.push(callee);
                }
            }
            out.push(at);
        }
        out
    }
}
