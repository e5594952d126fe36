//! The replies after a call works on a run: the next instruction, the
//! run's waits, or done with its summary; a failed run's error.

use super::*;

impl Engine {
    pub(super) fn failed(&self, m: &Machine) -> EngineError {
        let (code, failure) = match &m.state.failure {
            Some(f @ RunFailure::TemplateRender { .. }) => (ErrorCode::TemplateRenderError, f.to_json()),
            Some(f @ RunFailure::Validation { .. }) => (ErrorCode::ValidationFailed, f.to_json()),
            Some(f @ RunFailure::WaitTimedOut { .. }) => (ErrorCode::WaitTimedOut, f.to_json()),
            Some(f) => (ErrorCode::RunFailed, f.to_json()),
            None => (ErrorCode::RunFailed, json!({"error": "RUN_FAILED"})),
        };
        EngineError::recorded(code, failure).with_run_id(&m.state.run_id).with_state(self.state_summary(m))
    }

    /// The response after plan / next: the next instruction, or done.
    pub(super) fn progress(&self, m: &Machine) -> EngineResult<Progress> {
        let instruction = m.ready().next().map(|w| Box::new(self.instruction(m, w)));
        self.progress_at(m, instruction, Vec::new())
    }

    /// [`Engine::progress`] with the instruction to hand out, and the waits
    /// of children beside the run's own.
    pub(super) fn progress_at(
        &self,
        m: &Machine,
        instruction: Option<Box<Instruction>>,
        child_waits: Vec<crate::runtime::reply::WaitView>,
    ) -> EngineResult<Progress> {
        let status = match m.state.status {
            RunStatus::Failed => return Err(self.failed(m)),
            RunStatus::Done => ProgressStatus::Done {
                done: true,
                summary: self.summary(m),
                artifacts: m.captures(),
                state: self.state_summary(m),
            },
            RunStatus::Running => ProgressStatus::Running {
                instruction,
                ready: self.ready_ids(m),
                ready_total: m.ready_len(),
                done: false,
                state: self.state_summary(m),
                waiting: {
                    let mut waits = self.wait_views(m);
                    waits.extend(child_waits);
                    waits
                },
            },
        };
        Ok(Progress {
            run_id: m.state.run_id.clone(),
            workflow: m.state.workflow.clone(),
            status,
            warnings: Vec::new(),
            reset: None,
        })
    }

    pub(super) fn summary(&self, m: &Machine) -> Summary {
        let ids = |want: StepStatus| -> Vec<String> {
            m.state.steps.iter().filter(|s| s.status == want).map(|s| s.id.clone()).collect()
        };
        let ran = ids(StepStatus::Done);
        let skipped = ids(StepStatus::Skipped);
        let truncated: Vec<String> = m.state.truncations.iter().map(|t| t.step_id.clone()).collect();
        let mut message = format!("{} step(s) ran, {} skipped", ran.len(), skipped.len());
        if !truncated.is_empty() {
            message.push_str(&format!(", {} result(s) truncated", truncated.len()));
        }
        Summary { message, ran, skipped, truncated }
    }
}
