//! The tools around runs: think, say, the driver prompt, and the workflow
//! catalog (list, read, graph).

use super::*;
use crate::runtime::args::GraphFormat;
use crate::runtime::error_details::ErrorDetails;
use crate::runtime::reply::{
    DriverPrompt, Graph, Said, Thought, WorkflowEntry, WorkflowList, WorkflowSource,
};

impl Engine {
    /// Records `thought` in the run's history unless `recorded(history)`
    /// says it is there already, both under the run's lock (so of two such
    /// calls at once, on any replica, one records it): `true` when this
    /// call recorded it. The MCP tasks' marks (`mcp/tasks.rs`).
    pub fn think_once(
        &self,
        workflow: &str,
        run_id: &str,
        thought: &str,
        recorded: impl FnOnce(&[Event]) -> bool,
    ) -> EngineResult<bool> {
        self.with_run(workflow, run_id, |engine, key, cached| {
            if recorded(&cached.machine.state.history) {
                return Ok(false);
            }
            let version = cached.machine.state.version + 1;
            let event =
                Event { version, at: now(), kind: EventKind::Thought { thought: thought.to_owned() } };
            engine.commit(key, cached, event)?;
            Ok(true)
        })
    }

    /// The think tool: records a non-empty thought in the run's history when
    /// a run is given, else in `.savant/session.log`.
    pub fn think(&self, thought: &str, run: Option<(&str, &str)>) -> EngineResult<Thought> {
        let thought = thought.trim();
        if thought.is_empty() {
            return Err(EngineError::message(ErrorCode::InvalidInput, "a thought must not be empty"));
        }
        let at = now();
        let reply = |recorded_in: &str, run_id: Option<&str>, at: String| Thought {
            thought: thought.to_owned(),
            recorded_in: recorded_in.to_owned(),
            run_id: run_id.map(str::to_owned),
            timestamp: at,
            formatted: format!("💭 {thought}"),
        };
        match run {
            Some((workflow, run_id)) => self.with_run(workflow, run_id, |engine, key, cached| {
                let event = Event {
                    version: cached.machine.state.version + 1,
                    at: at.clone(),
                    kind: EventKind::Thought { thought: thought.to_owned() },
                };
                engine.commit(key, cached, event)?;
                Ok(reply("run", Some(run_id), at.clone()))
            }),
            None => {
                let line = serde_json::to_string(&json!({"type": "thought", "thought": thought, "at": at}))
                    .unwrap_or_default();
                self.append_session_log(&line)?;
                Ok(reply("session_log", None, at))
            }
        }
    }

    /// Appends a line to `.savant/session.log`, rotated by `[state]
    /// thoughts_max_bytes` / `thoughts_keep`; `.savant` may not lead out of
    /// the root (`STATE_OUTSIDE_ROOT`), and the log is never written through
    /// a symlink.
    fn append_session_log(&self, line: &str) -> Result<(), EngineError> {
        let dir = self.root().join(".savant");
        let io = |e: std::io::Error| EngineError::message(ErrorCode::StateIo, e.to_string());
        match crate::fsx::confine(self.root(), Path::new(".savant")) {
            Ok(_) => {}
            Err(e) if e.is_not_found() => std::fs::create_dir_all(&dir).map_err(io)?,
            Err(e) if !e.is_outside() => {
                return Err(EngineError::message(ErrorCode::StateIo, e.to_string()));
            }
            Err(e) => {
                let e = crate::state::StoreError::OutsideRoot { path: dir, message: e.reason() };
                return Err(store_error(e));
            }
        }
        let rotation = self.config.state.thoughts_rotation();
        crate::fsx::append_rotating(&dir.join("session.log"), rotation, format!("{line}\n").as_bytes())
            .map_err(io)
    }

    /// prompt.say: a message for the user.
    pub fn say(&self, message: &str) -> EngineResult<Said> {
        Ok(Said { message: message.to_owned(), display: true, timestamp: now() })
    }

    /// think_driver_prompt: a driver prompt's text, the latest when `version` is `None`.
    pub fn driver_prompt(&self, version: Option<&str>) -> EngineResult<DriverPrompt> {
        self.project.driver_prompt(version)
    }

    /// think_workflows_list: every workflow under `workflows/` (ids containing `filter`, if given), checked.
    pub fn workflows_list(&self, filter: Option<&str>) -> EngineResult<WorkflowList> {
        let mut out = Vec::new();
        for id in self.project.ids() {
            if filter.is_some_and(|f| !id.to_lowercase().contains(&f.to_lowercase())) {
                continue;
            }
            match self.workflow(&id) {
                Ok(cw) => out.push(WorkflowEntry::Valid {
                    id: cw.wf.id.clone(),
                    name: cw.wf.name.clone(),
                    description: cw.wf.description.clone(),
                    version: cw.wf.version.clone(),
                    steps: cw.wf.steps.len(),
                    valid: true,
                }),
                Err(e) => {
                    // The first error diagnostic names the real problem (e.g. UNKNOWN_SCHEMA);
                    // the name and description are kept when the file could be read that far.
                    let (first, name, description) = match e.details.as_ref() {
                        ErrorDetails::WorkflowErrors(w) => (
                            w.diagnostics.as_array().and_then(|ds| {
                                ds.iter().find(|d| d["severity"] == "error").and_then(|d| d["code"].as_str())
                            }),
                            w.name.clone(),
                            w.description.clone(),
                        ),
                        _ => (None, None, None),
                    };
                    out.push(WorkflowEntry::Invalid {
                        error: first.unwrap_or(e.code.as_str()).to_owned(),
                        id,
                        valid: false,
                        name,
                        description,
                        message: e.message_text().map(Value::from),
                    })
                }
            }
        }
        Ok(WorkflowList { workflows: out })
    }

    /// think_workflows_read: a workflow's YAML text.
    pub fn workflows_read(&self, workflow: &str) -> EngineResult<WorkflowSource> {
        let (path, yaml) = self.project.text(workflow)?;
        Ok(WorkflowSource { workflow: workflow.to_owned(), path: path.display().to_string(), yaml })
    }

    /// The plan as `{workflow, graph, order, v}`, or mermaid / dot text.
    pub fn workflows_graph(&self, workflow: &str, format: GraphFormat) -> EngineResult<Graph> {
        let cw = self.workflow(workflow)?;
        let text = |format: &str, graph: String| Graph::Text { format: format.to_owned(), graph };
        Ok(match format {
            GraphFormat::Json => Graph::Plan(cw.plan.to_json(cw.wf.version.as_deref())),
            GraphFormat::Mermaid => text("mermaid", cw.plan.to_mermaid()),
            GraphFormat::Dot => text("dot", cw.plan.to_dot()),
        })
    }
}
