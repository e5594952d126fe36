//! What the engine tells an observer of its runs (the binary's OpenTelemetry
//! exporter, `crate::telemetry`): every step attempt once its result is
//! durable (accepted or refused by its success schema), every wait once
//! its end (an answer, an event, its deadline) is durable, and every run
//! once it has finished. The engine knows no tracing library: an observer gets
//! plain values, after the event is in the state store, and never slows the
//! call beyond what it does itself (the exporter only queues).

use super::{Cached, Engine};
use crate::runtime::run::{Event, EventKind, Machine, RunStatus, WorkRef};
use crate::runtime::work_id::WorkId;
use serde_json::Value;

/// Receives the engine's finished step attempts and runs.
pub trait RunObserver: Send + Sync {
    /// A step (or foreach item) attempt whose result was just recorded.
    fn step_attempt(&self, attempt: &StepAttempt<'_>);
    /// A run that just reached `done` or `failed`.
    fn run_finished(&self, run: &RunFinished<'_>);
    /// A wait (a step or foreach item) that just ended. Default: ignored.
    fn wait_ended(&self, _wait: &WaitEnded<'_>) {}
}

/// A wait that ended: from when it started to its answer, its event or
/// its deadline.
#[derive(Clone, Copy, Debug)]
pub struct WaitEnded<'a> {
    /// The run.
    pub run: RunRef<'a>,
    /// The step id, or `id[N]` for a foreach item.
    pub step_id: &'a str,
    /// What it waited for: `answer`, `event` or `timer`.
    pub wait: &'static str,
    /// How it ended: `answered`, `event`, `timed_out` (its `on_timeout`
    /// taken), `failed` (timed out with none: WAIT_TIMED_OUT) or `slept`.
    pub ended: &'static str,
    /// When it started waiting (RFC 3339): when the step became ready.
    pub started_at: &'a str,
    /// When its end was recorded (RFC 3339).
    pub ended_at: &'a str,
}

/// The run an observation is about.
#[derive(Clone, Copy, Debug)]
pub struct RunRef<'a> {
    /// The workflow id.
    pub workflow: &'a str,
    /// The run id.
    pub run_id: &'a str,
    /// The run's incarnation (a run started over under the same id has
    /// another); absent in runs written before it existed.
    pub generation: Option<&'a str>,
    /// When the run started (RFC 3339).
    pub created_at: &'a str,
    /// The workflow version the run is pinned to (`sha256:…`).
    pub workflow_version: &'a str,
    /// The run and `uses:` step that started it, for a sub-workflow's run.
    pub parent: Option<&'a crate::runtime::record::ParentRun>,
}

/// How an attempt ended.
#[derive(Clone, Copy, Debug)]
pub enum AttemptOutcome<'a> {
    /// The result was accepted.
    Accepted,
    /// The result broke the step's success schema: the errors, `[{path, message}]`.
    ValidationFailed {
        /// The schema errors.
        errors: &'a Value,
    },
}

/// One attempt at one step.
#[derive(Clone, Copy, Debug)]
pub struct StepAttempt<'a> {
    /// The run.
    pub run: RunRef<'a>,
    /// The step id, or `id[N]` for a foreach item.
    pub step_id: &'a str,
    /// The tool the step calls, if it names one.
    pub call: Option<&'a str>,
    /// 1 for the first attempt, 2 after one refused result, …
    pub attempt: u32,
    /// When the attempt could start (RFC 3339): the last of the run's start,
    /// its dependencies' results and its previous refused result.
    pub started_at: &'a str,
    /// When its result was recorded (RFC 3339).
    pub ended_at: &'a str,
    /// Accepted or refused.
    pub outcome: AttemptOutcome<'a>,
}

/// A run that finished.
#[derive(Clone, Copy, Debug)]
pub struct RunFinished<'a> {
    /// The run.
    pub run: RunRef<'a>,
    /// `done` or `failed`.
    pub status: RunStatus,
    /// Why it failed (`{error, …}`), when it did.
    pub failure: Option<&'a crate::runtime::failure::RunFailure>,
    /// When it finished (RFC 3339).
    pub ended_at: &'a str,
    /// Steps done or skipped.
    pub completed: usize,
    /// Steps in the run.
    pub steps: usize,
}

/// A run's trace id and its run span's id: derived from the run (workflow,
/// run id, incarnation), so every process that records a part of it
/// agrees; a child run's trace is its parent's (its own run span hangs
/// under its parent's).
pub fn trace_ids(run: &RunRef<'_>) -> ([u8; 16], [u8; 8]) {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [run.workflow, run.run_id, run.generation.unwrap_or(run.created_at)] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let d = h.finalize();
    let mut trace = [0u8; 16];
    trace.copy_from_slice(&d[..16]);
    if let Some(t) = run.parent.and_then(|p| p.trace.as_ref())
        && let Some(parent) = unhex::<16>(&t.trace_id)
    {
        trace = parent;
    }
    let mut span = [0u8; 8];
    span.copy_from_slice(&d[16..24]);
    (trace, span)
}

/// `N` bytes from `2N` hex digits.
pub fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let bytes = text.as_bytes();
    if bytes.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, pair) in bytes.chunks(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

/// Hex digits of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a child of the run `m` joins its trace: `m`'s trace, under `m`'s run span.
pub(super) fn parent_trace(m: &Machine) -> crate::runtime::record::ParentTrace {
    parent_trace_of(&m.state)
}

/// [`parent_trace`] of a run's state (a fork's copy of a child, not loaded).
pub(super) fn parent_trace_of(
    state: &crate::runtime::record::RunState,
) -> crate::runtime::record::ParentTrace {
    let (trace, span) = trace_ids(&state_ref(state));
    crate::runtime::record::ParentTrace { trace_id: hex(&trace), span_id: hex(&span) }
}

fn run_ref(m: &Machine) -> RunRef<'_> {
    state_ref(&m.state)
}

fn state_ref(state: &crate::runtime::record::RunState) -> RunRef<'_> {
    RunRef {
        workflow: &state.workflow,
        run_id: &state.run_id,
        generation: state.generation.as_deref(),
        created_at: &state.created_at,
        workflow_version: &state.workflow_hash,
        parent: state.parent.as_ref(),
    }
}

/// When work `w` (id `work_id`) could start: the latest of the run's start,
/// its dependencies' accepted results and its own refused results, read
/// from the newest event back (the history is in time order).
fn ready_since<'m>(m: &'m Machine, w: WorkRef, work_id: &str) -> &'m str {
    let plan = &m.cw.plan.steps;
    let deps: Vec<&str> = plan
        .get(w.step)
        .map_or(Vec::new(), |s| s.deps.iter().filter_map(|&d| plan.get(d)).map(|d| d.id.as_str()).collect());
    let is_dep = |id: &str| deps.contains(&WorkId::base(id));
    for e in m.state.history.iter().rev() {
        match &e.kind {
            // A dependency's result, or the end of a dependency's wait.
            k if k.result_step().is_some_and(is_dep) => return &e.at,
            EventKind::ValidationFailed { step_id, .. } if step_id == work_id => return &e.at,
            _ => {}
        }
    }
    &m.state.created_at
}

impl Engine {
    /// Has `observer` told of this engine's step attempts and finished runs.
    pub fn set_observer(&mut self, observer: std::sync::Arc<dyn RunObserver>) {
        self.observer = Some(observer);
    }

    /// Tells the observer, if any, what `event` (just made durable, not yet
    /// applied to `cached`) is about to do; call [`Engine::observe_after`] once applied.
    pub(super) fn observe_before(&self, cached: &Cached, event: &Event) -> Option<Pending> {
        self.observer.as_ref()?;
        let m = &cached.machine;
        let was_running = m.state.status == RunStatus::Running;
        let (step_id, errors) = match &event.kind {
            EventKind::Result { step_id, .. } => (step_id, None),
            EventKind::ValidationFailed { step_id, errors, .. } => (step_id, Some(errors.clone())),
            _ => return Some(Pending { was_running, attempt: None, wait: pending_wait(m, &event.kind) }),
        };
        let attempt = m.resolve(step_id).map(|w| PendingAttempt {
            step_id: step_id.clone(),
            call: m.step(w.step).call.as_ref().map(|c| c.value.to_string()),
            attempt: m.attempts_of(w) + 1,
            started_at: ready_since(m, w, step_id).to_owned(),
            errors,
        });
        Some(Pending { was_running, attempt, wait: None })
    }

    /// Reports what [`Engine::observe_before`] saw, now that `event` is applied.
    pub(super) fn observe_after(&self, pending: Option<Pending>, m: &Machine, at: &str) {
        let (Some(observer), Some(pending)) = (&self.observer, pending) else { return };
        if let Some(a) = &pending.attempt {
            let outcome = match &a.errors {
                Some(errors) => AttemptOutcome::ValidationFailed { errors },
                None => AttemptOutcome::Accepted,
            };
            observer.step_attempt(&StepAttempt {
                run: run_ref(m),
                step_id: &a.step_id,
                call: a.call.as_deref(),
                attempt: a.attempt,
                started_at: &a.started_at,
                ended_at: at,
                outcome,
            });
        }
        if let Some(w) = &pending.wait {
            observer.wait_ended(&WaitEnded {
                run: run_ref(m),
                step_id: &w.step_id,
                wait: w.wait,
                ended: w.ended,
                started_at: &w.started_at,
                ended_at: at,
            });
        }
        if pending.was_running && m.state.status != RunStatus::Running {
            self.observe_finished(m, at);
        }
    }

    /// Reports a finished run (also one that finished as it started: every
    /// step skipped, or a render error at `plan`).
    pub(super) fn observe_finished(&self, m: &Machine, at: &str) {
        let Some(observer) = &self.observer else { return };
        if m.state.status == RunStatus::Running {
            return;
        }
        observer.run_finished(&RunFinished {
            run: run_ref(m),
            status: m.state.status,
            failure: m.state.failure.as_ref(),
            ended_at: at,
            completed: m.completed(),
            steps: m.state.steps.len(),
        });
    }
}

/// What an event will report, taken before it is applied.
pub(super) struct Pending {
    was_running: bool,
    attempt: Option<PendingAttempt>,
    wait: Option<PendingWait>,
}

struct PendingWait {
    step_id: String,
    wait: &'static str,
    ended: &'static str,
    started_at: String,
}

/// The wait `kind` ends, if it ends one (an event kept in the inbox ends none).
fn pending_wait(m: &Machine, kind: &EventKind) -> Option<PendingWait> {
    use crate::ir::WaitKind;
    let step_id = kind.result_step()?;
    let w = m.resolve(step_id)?;
    let wait = match m.wait_of(w.step)?.kind {
        WaitKind::Answer { .. } => "answer",
        WaitKind::Event { .. } => "event",
        WaitKind::Sleep { .. } | WaitKind::SleepUntil { .. } => "timer",
    };
    let ended = match kind {
        EventKind::Answered { .. } => "answered",
        EventKind::Signal { .. } => "event",
        EventKind::TimerFired { .. } if wait == "timer" => "slept",
        EventKind::TimerFired { value: Some(_), .. } => "timed_out",
        EventKind::TimerFired { value: None, .. } => "failed",
        _ => return None,
    };
    Some(PendingWait {
        step_id: step_id.to_owned(),
        wait,
        ended,
        started_at: ready_since(m, w, step_id).to_owned(),
    })
}

struct PendingAttempt {
    step_id: String,
    call: Option<String>,
    attempt: u32,
    started_at: String,
    errors: Option<Value>,
}
