//! The tools around runs: think, say, the driver prompt, and the workflow
//! catalog (list, read, graph).

use super::*;

impl Engine {
    /// The think tool: records a non-empty thought in the run's history when
    /// a run is given, else in `.savant/session.log`.
    pub fn think(&self, thought: &str, run: Option<(&str, &str)>) -> EngineResult {
        let thought = thought.trim();
        if thought.is_empty() {
            return Err(EngineError::new(
                ErrorCode::InvalidInput,
                json!({"message": "a thought must not be empty"}),
            ));
        }
        let at = now();
        match run {
            Some((workflow, run_id)) => self.with_run(workflow, run_id, |engine, key, cached| {
                let event = Event {
                    version: cached.machine.state.version + 1,
                    at: at.clone(),
                    kind: EventKind::Thought { thought: thought.to_owned() },
                };
                engine.commit(key, cached, event)?;
                Ok(json!({ "thought": thought, "recorded_in": "run", "run_id": run_id, "timestamp": at,
                           "formatted": format!("💭 {thought}") }))
            }),
            None => {
                let dir = self.root.join(".savant");
                let line = serde_json::to_string(&json!({"type": "thought", "thought": thought, "at": at}))
                    .unwrap_or_default();
                let written = std::fs::create_dir_all(&dir).and_then(|_| {
                    use std::io::Write;
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(dir.join("session.log"))?;
                    writeln!(f, "{line}")
                });
                written
                    .map_err(|e| EngineError::new(ErrorCode::StateIo, json!({"message": e.to_string()})))?;
                Ok(
                    json!({ "thought": thought, "recorded_in": "session_log", "timestamp": at, "formatted": format!("💭 {thought}") }),
                )
            }
        }
    }

    /// prompt.say: a message for the user.
    pub fn say(&self, message: &str) -> EngineResult {
        Ok(json!({ "message": message, "display": true, "timestamp": now() }))
    }

    pub fn driver_prompt(&self, version: Option<&str>) -> EngineResult {
        prompts::driver_prompt(&self.root, version)
    }

    pub fn workflows_list(&self, filter: Option<&str>) -> EngineResult {
        let mut out = Vec::new();
        for id in workflow::list_ids(&self.root) {
            if filter.is_some_and(|f| !id.to_lowercase().contains(&f.to_lowercase())) {
                continue;
            }
            match self.workflow(&id) {
                Ok(cw) => out.push(json!({ "id": cw.wf.id, "name": cw.wf.name, "description": cw.wf.description,
                                           "version": cw.wf.version, "steps": cw.wf.steps.len(), "valid": true })),
                Err(e) => {
                    // The first error diagnostic names the real problem (e.g. UNKNOWN_SCHEMA);
                    // the name and description are kept when the file could be read that far.
                    let first = e.details["diagnostics"].as_array().and_then(|ds| {
                        ds.iter().find(|d| d["severity"] == "error").and_then(|d| d["code"].as_str())
                    });
                    let mut entry = json!({ "id": id, "valid": false, "error": first.unwrap_or(e.code.as_str()) });
                    for field in ["name", "description"] {
                        if let Some(v) = e.details.get(field).filter(|v| v.is_string()) {
                            entry[field] = v.clone();
                        }
                    }
                    if let Some(m) = e.details.get("message") {
                        entry["message"] = m.clone();
                    }
                    out.push(entry)
                }
            }
        }
        Ok(json!({ "workflows": out }))
    }

    pub fn workflows_read(&self, workflow: &str) -> EngineResult {
        let path = workflow::resolve(&self.root, workflow)?;
        let cap = self.check_config.limits.file_cap() as u64;
        let yaml = crate::fsx::read_capped(&path, cap)
            .and_then(|b| {
                String::from_utf8(b).map_err(|_| std::io::Error::other("the file is not valid UTF-8"))
            })
            .map_err(|e| {
                EngineError::new(
                    ErrorCode::UnknownWorkflow,
                    json!({"workflow": workflow, "message": e.to_string()}),
                )
            })?;
        Ok(json!({ "workflow": workflow, "path": path.display().to_string(), "yaml": yaml }))
    }

    /// The plan as `{workflow, graph, order, v}`, or mermaid / dot text.
    pub fn workflows_graph(&self, workflow: &str, format: &str) -> EngineResult {
        let cw = self.workflow(workflow)?;
        match format {
            "json" => Ok(cw.plan.to_json(cw.wf.version.as_deref())),
            "mermaid" => Ok(json!({ "format": "mermaid", "graph": cw.plan.to_mermaid() })),
            "dot" => Ok(json!({ "format": "dot", "graph": cw.plan.to_dot() })),
            other => Err(EngineError::new(
                ErrorCode::InvalidInput,
                json!({"message": format!("unknown graph format `{other}`; use json, mermaid or dot")}),
            )),
        }
    }
}
