//! `next`: a result submitted for a ready step (or item), checked against
//! its success schema and stored within the caps; the same result again
//! for a done step is harmless, a different one `STATE_CONFLICT` (the rule
//! `answer` shares, [`Engine::done_again`]); `USES_STEP/STEP` is routed to
//! the child run.

use super::*;

impl Engine {
    /// Submits the result of a ready step and returns the next instruction.
    pub fn next(&self, args: NextArgs) -> EngineResult<Progress> {
        if let Some(out) = self.next_unlocked(&args) {
            return out;
        }
        let (key, _lock, mut cached) = self.open_run(&args.workflow, &args.run_id)?;
        let out = self.next_locked(&key, &mut cached, args);
        self.put(&key, cached);
        out
    }

    pub(super) fn next_locked(
        &self,
        key: &RunKey,
        cached: &mut Cached,
        mut args: NextArgs,
    ) -> EngineResult<Progress> {
        let m = &cached.machine;
        expect_version(m, args.expected_version)?;
        let Some(w) = m.resolve(&args.step_id) else {
            // `USES_STEP/STEP`: a result for the child of a `uses:` step.
            let step_id = args.step_id.clone();
            let child = |engine: &Engine, to: children::ChildRoute| {
                engine.next(NextArgs {
                    workflow: to.workflow,
                    run_id: to.run_id,
                    step_id: to.rest,
                    result_snapshot: Some(args.take_result()),
                    result: None,
                    expected_version: None,
                })
            };
            if let Some(out) = self.in_child(key, cached, &step_id, true, child) {
                return out;
            }
            let m = &cached.machine;
            return Err(EngineError::unknown_step(
                &step_id,
                format!("no step `{step_id}` in this run"),
                m.cw.wf.steps.iter().map(|s| s.id.value.as_str()),
                Some(self.ready_ids(m)),
            ));
        };
        let original = args.take_result();
        match m.status_of(w) {
            StepStatus::Done => {
                return self.done_again(
                    key,
                    cached,
                    w,
                    original,
                    args.step_id,
                    "done with a different result",
                );
            }
            StepStatus::Ready if m.state.status == RunStatus::Running => {}
            status => {
                if m.state.status == RunStatus::Failed {
                    return Err(self.failed(m));
                }
                let message = format!("`{}` is {}, not ready", args.step_id, status);
                return Err(EngineError::with(
                    ErrorCode::StepNotReady,
                    StepNotReady { step_id: args.step_id, status, message, ready: self.ready_ids(m) },
                ));
            }
        }
        self.accept_result(key, cached, w, args.step_id, original)
    }

    /// A value for work `w`, which is already done: the same value again
    /// (as stored, within the caps) is harmless and the run goes on; a
    /// different one is `STATE_CONFLICT`, "`step_id` is already `what`".
    pub(super) fn done_again(
        &self,
        key: &RunKey,
        cached: &mut Cached,
        w: WorkRef,
        mut value: Value,
        step_id: String,
        what: &str,
    ) -> EngineResult<Progress> {
        let caps = self.caps();
        payload::truncate(&mut value, caps.0, caps.1);
        if cached.machine.result_of(w) == Some(&value) {
            return self.advance(key, cached);
        }
        let message = format!("`{step_id}` is already {what}");
        Err(EngineError::with(
            ErrorCode::StateConflict,
            Conflict { step_id: Some(step_id), message, ..Conflict::default() },
        ))
    }

    /// The size caps results are stored within: (string bytes, snapshot bytes).
    pub(super) fn caps(&self) -> (usize, usize) {
        (self.config.max_string_bytes, self.config.max_snapshot_bytes)
    }

    /// The result `original` for ready work `w` (id `step_id`): checked
    /// against the step's success schema (a failure recorded, within the
    /// caps, and refused with the instruction to retry), else stored
    /// within the caps; then the run goes on.
    fn accept_result(
        &self,
        key: &RunKey,
        cached: &mut Cached,
        w: WorkRef,
        step_id: String,
        original: Value,
    ) -> EngineResult<Progress> {
        let caps = self.caps();
        let m = &cached.machine;
        if let Some(schema) = &m.step(w.step).success_schema {
            let errors = self.validate_pinned(key, m, schema, &original)?;
            if !errors.is_empty() {
                let mut refused = original;
                payload::truncate(&mut refused, caps.0, caps.1);
                let event = Event {
                    version: m.state.version + 1,
                    at: now(),
                    kind: EventKind::ValidationFailed {
                        step_id,
                        errors: serde_json::to_value(&errors).unwrap_or_default(),
                        result: Some(refused),
                    },
                };
                self.commit(key, cached, event)?;
                let m = &cached.machine;
                if m.state.status == RunStatus::Failed {
                    return Err(self.failed(m));
                }
                return Err(EngineError::fields(ErrorCode::ValidationFailed, &errors)
                    .with_instruction(self.instruction(m, w))
                    .with_state(self.state_summary(m)));
            }
        }
        // Validated as sent, then stored within the caps (in place: no copy).
        let original_bytes = payload::json_len(&original);
        let mut result = original;
        let truncation = payload::truncate(&mut result, caps.0, caps.1);
        let truncated = truncation.map(|what| TruncationNote { original_bytes, what });
        let event = Event {
            version: cached.machine.state.version + 1,
            at: now(),
            kind: EventKind::Result { step_id, result, truncated },
        };
        self.commit(key, cached, event)?;
        self.advance(key, cached)
    }
}
