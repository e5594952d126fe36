//! [`Engine`]: plan / next / explain / reset / state over durable run state.
//! Every public method returns JSON (`Ok`) or an [`EngineError`] (`Err`),
//! the same contract for the CLI and the MCP tools.

use crate::check::{self, Config};
use crate::ir::{SchemaRef, TemplateValue};
use crate::runtime::config::EngineConfig;
use crate::runtime::payload;
use crate::runtime::run::{
    Event, EventKind, Machine, RunState, RunStatus, StepStatus, TruncationNote, WorkRef,
};
use crate::runtime::workflow::{self, CompiledWorkflow};
use crate::runtime::{EngineError, EngineResult, prompts};
use crate::state::{RunKey, RunLock, Stamp, StateStore, StoreError};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How many ready ids a response lists (`ready_total` has the full count).
pub const READY_LIST_CAP: usize = 50;

struct Cached {
    stamp: Stamp,
    machine: Machine,
    /// Events in the journal since the last snapshot.
    journal_len: usize,
}

pub struct Engine {
    root: PathBuf,
    config: EngineConfig,
    check_config: Config,
    store: Box<dyn StateStore>,
    workflows: Mutex<HashMap<PathBuf, Arc<CompiledWorkflow>>>,
    runs: Mutex<HashMap<(String, String), Cached>>,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

/// Arguments of `next`.
#[derive(Clone, Debug, Default)]
pub struct NextArgs {
    pub workflow: String,
    pub run_id: String,
    pub step_id: String,
    pub result: Value,
    pub expected_version: Option<u64>,
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// A validation message, cut to at most 400 bytes (on a character boundary).
fn cut_message(mut message: String) -> String {
    const MAX: usize = 400;
    if message.len() > MAX {
        let mut at = MAX;
        while !message.is_char_boundary(at) {
            at -= 1;
        }
        message.truncate(at);
        message.push_str("… (cut)");
    }
    message
}

fn store_error(e: StoreError) -> EngineError {
    match e {
        StoreError::InvalidId { .. } => EngineError::new("INVALID_ID", json!({"message": e.to_string()})),
        StoreError::Corrupt { .. } => EngineError::new("STATE_CORRUPT", json!({"message": e.to_string()})),
        StoreError::Io { .. } => EngineError::new("STATE_IO", json!({"message": e.to_string()})),
    }
}

/// A fresh run id: `r-` and 12 hex digits, unique per process and time.
pub fn new_run_id() -> String {
    format!("r-{}", &unique_hex()[7..19])
}

/// A new run generation (see `RunState::generation`).
fn new_generation() -> String {
    unique_hex()[..16].to_owned()
}

/// A hex string unique to this moment, process and call.
fn unique_hex() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let seed = format!("{nanos}:{}:{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    workflow::sha256_hex(seed.as_bytes())
}

impl Engine {
    /// An engine over `root` (workflows/, schemas/, prompts/, .savant/state/).
    pub fn new(root: impl Into<PathBuf>) -> Result<Engine, EngineError> {
        let root = root.into();
        let config = EngineConfig::load(&root)?;
        let store = config.state.open_store(&root)?;
        Ok(Engine::with_store(root, config, store))
    }

    pub fn with_store(root: PathBuf, config: EngineConfig, store: Box<dyn StateStore>) -> Engine {
        let check_config =
            Config { schemas: crate::workspace::load_schemas(&root.join("schemas")), ..Config::default() };
        Engine {
            root,
            config,
            check_config,
            store,
            workflows: Mutex::default(),
            runs: Mutex::default(),
            validators: Mutex::default(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The `savant-think.toml` settings this engine was built with.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Resolves, reads and compiles a workflow; cached by path and content hash.
    pub fn workflow(&self, workflow: &str) -> Result<Arc<CompiledWorkflow>, EngineError> {
        let path = workflow::resolve(&self.root, workflow)?;
        let cap = self.check_config.limits.file_cap() as u64;
        let bytes = crate::fsx::read_capped(&path, cap).map_err(|e| {
            EngineError::new("UNKNOWN_WORKFLOW", json!({"workflow": workflow, "message": e.to_string()}))
        })?;
        let hash = workflow::sha256_hex(&bytes);
        if let Some(cw) = self.workflows.lock().unwrap_or_else(|p| p.into_inner()).get(&path)
            && cw.hash == hash
        {
            return Ok(cw.clone());
        }
        let cw = Arc::new(workflow::compile_file(&path, &self.check_config)?);
        self.workflows.lock().unwrap_or_else(|p| p.into_inner()).insert(path, cw.clone());
        Ok(cw)
    }

    fn key(&self, cw: &CompiledWorkflow, run_id: &str) -> Result<RunKey, EngineError> {
        RunKey::new(&cw.wf.id, run_id).map_err(store_error)
    }

    // ---- plan -----------------------------------------------------------

    /// Starts a run (or, with `start_fresh: false`, resumes an existing one)
    /// and returns its first instruction.
    pub fn plan(
        &self,
        workflow: &str,
        params_arg: Value,
        run_id: Option<&str>,
        start_fresh: bool,
    ) -> EngineResult {
        let cw = self.workflow(workflow)?;
        let run_id = run_id.map_or_else(new_run_id, str::to_owned);
        let key = self.key(&cw, &run_id)?;
        let given = !params_arg.is_null();
        let checked = self.check_params(&cw, params_arg);
        // Refused params leave nothing behind (not even a lock file).
        let checked = if start_fresh { Ok(checked?) } else { checked };
        let _lock = self.store.lock(&key).map_err(store_error)?;
        if !start_fresh && let Some(cached) = self.load(&key, &cw)? {
            // Resuming keeps the run's own params; say so rather than
            // silently ignoring different ones.
            let stored = &cached.machine.state.params;
            let ignored = given && !checked.as_ref().is_ok_and(|p| p == stored);
            let mut out = self.progress(&cached.machine);
            self.put(&key, cached);
            if ignored && let Ok(v) = &mut out {
                v["warnings"] = json!([
                    "the params given were ignored: the run exists and is resumed with the params it started with; start it over (start_fresh: true; on the command line, plan without --no-fresh) to use new params"
                ]);
            }
            return out;
        }
        let params = checked?;
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(key.workflow.clone(), key.run_id.clone()));
        let mut machine = Machine::start(cw, &run_id, params, &now());
        machine.state.source = self.source_of(&machine.cw);
        machine.state.generation = Some(new_generation());
        let snapshot = serde_json::to_value(&machine.state).unwrap_or(Value::Null);
        let stamp = self.store.write_snapshot(&key, &snapshot).map_err(store_error)?;
        let out = self.progress(&machine);
        self.put(&key, Cached { stamp, machine, journal_len: 0 });
        out
    }

    /// Applies defaults and validates params against the workflow's schema.
    pub fn check_params(&self, cw: &CompiledWorkflow, params: Value) -> Result<Value, EngineError> {
        let mut params = match params {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            other => {
                return Err(EngineError::new(
                    "INVALID_PARAMS",
                    json!([{"path": "", "message": format!("params must be an object, got {other}")}]),
                ));
            }
        };
        let mut properties = Map::new();
        for p in &cw.wf.params {
            if let Some(d) = p.schema.get("default") {
                params.entry(p.name.value.clone()).or_insert_with(|| d.clone());
            }
            properties.insert(p.name.value.clone(), p.schema.clone());
        }
        let required: Vec<&str> =
            cw.wf.params.iter().filter(|p| p.required).map(|p| p.name.value.as_str()).collect();
        let schema = json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false });
        let params = Value::Object(params);
        let errors = self.schema_errors(&schema.to_string(), &schema, &params)?;
        if !errors.is_empty() {
            return Err(EngineError::new("INVALID_PARAMS", Value::Array(errors)));
        }
        Ok(params)
    }

    // ---- next -----------------------------------------------------------

    /// Submits the result of a ready step and returns the next instruction.
    pub fn next(&self, args: NextArgs) -> EngineResult {
        let cw = self.workflow(&args.workflow)?;
        let key = self.key(&cw, &args.run_id)?;
        let _lock = self.lock_existing(&key)?;
        let mut cached = self.load(&key, &cw)?.ok_or_else(|| self.unknown_run(&key))?;
        let out = self.next_locked(&key, &mut cached, args);
        self.put(&key, cached);
        out
    }

    fn next_locked(&self, key: &RunKey, cached: &mut Cached, args: NextArgs) -> EngineResult {
        let m = &cached.machine;
        if let Some(v) = args.expected_version
            && v != m.state.version
        {
            return Err(EngineError::new(
                "STATE_CONFLICT",
                json!({"message": format!("expected version {v}, but the run is at version {}", m.state.version),
                           "expected_version": v, "version": m.state.version}),
            ));
        }
        let Some(w) = m.resolve(&args.step_id) else {
            return Err(EngineError::new(
                "UNKNOWN_STEP",
                json!({"step_id": args.step_id, "message": format!("no step `{}` in this run", args.step_id),
                       "ready": self.ready_ids(m)}),
            ));
        };
        // The result is validated as sent, and stored within the caps.
        let original = args.result;
        let original_bytes = serde_json::to_string(&original).map_or(0, |t| t.len());
        let mut result = original.clone();
        let truncation =
            payload::truncate(&mut result, self.config.max_string_bytes, self.config.max_snapshot_bytes);
        match m.status_of(w) {
            StepStatus::Done => {
                if m.result_of(w) == Some(&result) {
                    return self.progress(m);
                }
                return Err(EngineError::new(
                    "STATE_CONFLICT",
                    json!({"step_id": args.step_id, "message": format!("`{}` is already done with a different result", args.step_id)}),
                ));
            }
            StepStatus::Ready if m.state.status == RunStatus::Running => {}
            status => {
                if m.state.status == RunStatus::Failed {
                    return Err(self.failed(m));
                }
                return Err(EngineError::new(
                    "STEP_NOT_READY",
                    json!({"step_id": args.step_id, "status": status,
                           "message": format!("`{}` is {}, not ready", args.step_id, serde_json::to_value(status).unwrap_or_default().as_str().unwrap_or("")),
                           "ready": self.ready_ids(m)}),
                ));
            }
        }
        let step = m.step(w.0);
        if let Some(schema) = &step.success_schema {
            let errors = self.validate_result(schema, &original)?;
            if !errors.is_empty() {
                let event = Event {
                    version: m.state.version + 1,
                    at: now(),
                    kind: EventKind::ValidationFailed {
                        step_id: args.step_id.clone(),
                        errors: Value::Array(errors.clone()),
                    },
                };
                self.commit(key, cached, event)?;
                let m = &cached.machine;
                if m.state.status == RunStatus::Failed {
                    return Err(self.failed(m));
                }
                return Err(EngineError::new("VALIDATION_FAILED", Value::Array(errors))
                    .with("instruction", self.instruction(m, w))
                    .with("state", self.state_summary(m)));
            }
        }
        let truncated = truncation.map(|what| TruncationNote { original_bytes, what });
        let event = Event {
            version: cached.machine.state.version + 1,
            at: now(),
            kind: EventKind::Result { step_id: args.step_id, result, truncated },
        };
        self.commit(key, cached, event)?;
        self.progress(&cached.machine)
    }

    /// Appends an event durably, then applies it; compacts the journal into a
    /// snapshot when it has grown to half the history (amortised linear cost).
    fn commit(&self, key: &RunKey, cached: &mut Cached, event: Event) -> Result<(), EngineError> {
        let mut value = serde_json::to_value(&event).unwrap_or(Value::Null);
        if let Some(generation) = &cached.machine.state.generation {
            value["generation"] = json!(generation);
        }
        cached.stamp = self.store.append(key, &value).map_err(store_error)?;
        cached.journal_len += 1;
        cached.machine.apply(event);
        if cached.journal_len > 32 && cached.journal_len * 2 >= cached.machine.state.history.len() {
            self.snapshot(key, cached)?;
        }
        Ok(())
    }

    fn snapshot(&self, key: &RunKey, cached: &mut Cached) -> Result<(), EngineError> {
        let snapshot = serde_json::to_value(&cached.machine.state).unwrap_or(Value::Null);
        cached.stamp = self.store.write_snapshot(key, &snapshot).map_err(store_error)?;
        cached.journal_len = 0;
        Ok(())
    }

    /// The instructions of up to `limit` ready steps, in the engine's order
    /// (what an executor may run at once before submitting with `next`).
    pub fn ready_instructions(
        &self,
        workflow: &str,
        run_id: &str,
        limit: usize,
    ) -> Result<Vec<Value>, EngineError> {
        self.with_run(workflow, run_id, |engine, _, cached| {
            let m = &cached.machine;
            Ok(m.ready().take(limit).map(|w| engine.instruction(m, w)).collect())
        })
    }

    // ---- loading --------------------------------------------------------

    fn unknown_run(&self, key: &RunKey) -> EngineError {
        EngineError::new(
            "UNKNOWN_RUN",
            json!({"workflow": key.workflow, "run_id": key.run_id,
                   "message": format!("no run `{}` of `{}`; start one with plan", key.run_id, key.workflow)}),
        )
    }

    /// Takes the lock of a run that exists. An unknown run is `UNKNOWN_RUN`
    /// before any file is created: reading a run never leaves a lock file
    /// behind for a run that is not there.
    fn lock_existing(&self, key: &RunKey) -> Result<RunLock, EngineError> {
        if self.store.stamp(key).map_err(store_error)?.is_none() {
            return Err(self.unknown_run(key));
        }
        self.store.lock(key).map_err(store_error)
    }

    /// Loads a run (the caller holds its lock): from the in-memory cache when
    /// the files have not changed since, else snapshot + journal replay.
    fn load(&self, key: &RunKey, cw: &Arc<CompiledWorkflow>) -> Result<Option<Cached>, EngineError> {
        let Some(stamp) = self.store.stamp(key).map_err(store_error)? else { return Ok(None) };
        let cache_key = (key.workflow.clone(), key.run_id.clone());
        let cached = self.runs.lock().unwrap_or_else(|p| p.into_inner()).remove(&cache_key);
        if let Some(c) = cached
            && c.stamp == stamp
            && c.machine.cw.hash == cw.hash
        {
            return Ok(Some(c));
        }
        let Some(loaded) = self.store.load(key).map_err(store_error)? else { return Ok(None) };
        let state: RunState = serde_json::from_value(loaded.snapshot).map_err(|e| {
            EngineError::new(
                "STATE_CORRUPT",
                json!({"message": format!("the run state cannot be read: {e}")}),
            )
        })?;
        if state.workflow_hash != cw.hash {
            return Err(EngineError::new(
                "WORKFLOW_CHANGED",
                json!({"workflow": key.workflow, "run_id": key.run_id,
                       "message": "the workflow file changed after this run started",
                       "help": "finish it with the old file, or restart: plan with start_fresh: true (the default; on the command line, plan without --no-fresh) and the same run_id",
                       "run_hash": state.workflow_hash, "file_hash": cw.hash}),
            ));
        }
        let mut machine = Machine::resume(cw.clone(), state);
        let journal_len = loaded.journal.len();
        for e in loaded.journal {
            let event: Event = serde_json::from_value(e).map_err(|e| {
                EngineError::new(
                    "STATE_CORRUPT",
                    json!({"message": format!("a journal event cannot be read: {e}")}),
                )
            })?;
            machine.apply(event);
        }
        Ok(Some(Cached { stamp: loaded.stamp, machine, journal_len }))
    }

    fn put(&self, key: &RunKey, cached: Cached) {
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((key.workflow.clone(), key.run_id.clone()), cached);
    }

    /// Runs `f` on a loaded run under its lock.
    fn with_run<T>(
        &self,
        workflow: &str,
        run_id: &str,
        f: impl FnOnce(&Self, &RunKey, &mut Cached) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let cw = self.workflow(workflow)?;
        let key = self.key(&cw, run_id)?;
        let _lock = self.lock_existing(&key)?;
        let mut cached = self.load(&key, &cw)?.ok_or_else(|| self.unknown_run(&key))?;
        let out = f(self, &key, &mut cached);
        self.put(&key, cached);
        out
    }

    // ---- responses ------------------------------------------------------

    fn ready_ids(&self, m: &Machine) -> Vec<String> {
        m.ready().take(READY_LIST_CAP).map(|w| m.work_id(w)).collect()
    }

    pub(crate) fn state_summary(&self, m: &Machine) -> Value {
        let completed = m.completed();
        json!({
            "version": m.state.version,
            "status": m.state.status,
            "completed": completed,
            "pending": m.state.steps.len() - completed,
        })
    }

    fn instruction(&self, m: &Machine, w: WorkRef) -> Value {
        let step = m.step(w.0);
        let mut i = json!({
            "step_id": m.work_id(w),
            "call": step.call.as_ref().map(|c| c.value.as_str()),
            "input": m.input_of(w).cloned().unwrap_or(json!({})),
            "input_template": step.input_template.as_ref().map_or(Value::Null, raw_template),
            "capture_as": step.capture_as.as_ref().map(|c| c.value.as_str()),
            "success_schema": match &step.success_schema {
                Some(SchemaRef::Named(n)) => json!(n.value),
                Some(SchemaRef::Inline { schema, .. }) => schema.clone(),
                None => Value::Null,
            },
            "rationale": step.rationale.as_ref().map(|r| r.text.as_str()),
            "timeout": step.timeout,
            "attempt": m.attempts_of(w) + 1,
            "done": false,
        });
        if !m.cw.wf.rules.is_empty() {
            i["rules"] = json!(m.cw.wf.rules);
        }
        i
    }

    fn failed(&self, m: &Machine) -> EngineError {
        let failure = m.state.failure.clone().unwrap_or(json!({"error": "RUN_FAILED"}));
        let code = match failure.get("error").and_then(Value::as_str) {
            Some("TEMPLATE_RENDER_ERROR") => "TEMPLATE_RENDER_ERROR",
            Some("VALIDATION_FAILED") => "VALIDATION_FAILED",
            _ => "RUN_FAILED",
        };
        EngineError::new(code, failure)
            .with("run_id", json!(m.state.run_id))
            .with("state", self.state_summary(m))
    }

    /// The response after plan / next: the next instruction, or done.
    fn progress(&self, m: &Machine) -> EngineResult {
        let base = |extra: Value| {
            let mut v = json!({ "run_id": m.state.run_id, "workflow": m.state.workflow });
            if let (Some(obj), Value::Object(more)) = (v.as_object_mut(), extra) {
                obj.extend(more);
            }
            v
        };
        match m.state.status {
            RunStatus::Failed => Err(self.failed(m)),
            RunStatus::Done => Ok(base(json!({
                "done": true,
                "summary": self.summary(m),
                "artifacts": m.state.captures,
                "state": self.state_summary(m),
            }))),
            RunStatus::Running => {
                let first = m.ready().next();
                Ok(base(json!({
                    "instruction": first.map(|w| self.instruction(m, w)),
                    "ready": self.ready_ids(m),
                    "ready_total": m.ready_len(),
                    "done": false,
                    "state": self.state_summary(m),
                })))
            }
        }
    }

    fn summary(&self, m: &Machine) -> Value {
        let ids = |want: StepStatus| -> Vec<&str> {
            m.state.steps.iter().filter(|s| s.status == want).map(|s| s.id.as_str()).collect()
        };
        let ran = ids(StepStatus::Done);
        let skipped = ids(StepStatus::Skipped);
        let truncated: Vec<&str> = m.state.truncations.iter().map(|t| t.step_id.as_str()).collect();
        let mut message = format!("{} step(s) ran, {} skipped", ran.len(), skipped.len());
        if !truncated.is_empty() {
            message.push_str(&format!(", {} result(s) truncated", truncated.len()));
        }
        json!({ "message": message, "ran": ran, "skipped": skipped, "truncated": truncated })
    }

    // ---- validation -----------------------------------------------------

    fn validator(&self, cache_key: &str, schema: &Value) -> Result<Arc<jsonschema::Validator>, EngineError> {
        if let Some(v) = self.validators.lock().unwrap_or_else(|p| p.into_inner()).get(cache_key) {
            return Ok(v.clone());
        }
        let v = Arc::new(jsonschema::validator_for(schema).map_err(|e| {
            EngineError::new(
                "UNKNOWN_SCHEMA",
                json!({"schema": cache_key, "message": format!("invalid JSON Schema: {e}")}),
            )
        })?);
        self.validators.lock().unwrap_or_else(|p| p.into_inner()).insert(cache_key.to_owned(), v.clone());
        Ok(v)
    }

    fn schema_errors(
        &self,
        cache_key: &str,
        schema: &Value,
        instance: &Value,
    ) -> Result<Vec<Value>, EngineError> {
        let v = self.validator(cache_key, schema)?;
        // Bounded work and memory per request: at most 50 errors (the
        // iterator is lazy, so validation stops there), each message cut to
        // a few hundred bytes (a message can quote the whole failing value).
        Ok(v.iter_errors(instance)
            .take(50)
            .map(|e| json!({ "path": e.instance_path().to_string(), "message": cut_message(e.to_string()) }))
            .collect())
    }

    fn named_schema(&self, name: &str) -> Result<Value, EngineError> {
        match self.check_config.schemas.get(name) {
            Some(Ok(s)) => Ok(s.clone()),
            Some(Err(why)) => {
                Err(EngineError::new("UNKNOWN_SCHEMA", json!({"schema": name, "message": why})))
            }
            None => Err(EngineError::new(
                "UNKNOWN_SCHEMA",
                json!({"schema": name, "message": format!("no schemas/{name}.json"),
                       "available": self.check_config.schemas.keys().collect::<Vec<_>>()}),
            )),
        }
    }

    fn validate_result(&self, schema: &SchemaRef, result: &Value) -> Result<Vec<Value>, EngineError> {
        match schema {
            SchemaRef::Named(n) => {
                let s = self.named_schema(&n.value)?;
                self.schema_errors(&n.value, &s, result)
            }
            SchemaRef::Inline { schema, .. } => self.schema_errors(&schema.to_string(), schema, result),
        }
    }

    /// `validate`: a named or inline schema against a response → `{valid, errors}`.
    pub fn validate(&self, schema: &Value, response: &Value) -> EngineResult {
        let errors = match schema {
            Value::String(name) => {
                let s = self.named_schema(name)?;
                self.schema_errors(name, &s, response)?
            }
            inline => self.schema_errors(&inline.to_string(), inline, response)?,
        };
        Ok(json!({ "valid": errors.is_empty(), "errors": errors }))
    }

    /// `validate` of a workflow: its diagnostics as JSON.
    pub fn validate_workflow(&self, workflow: &str) -> EngineResult {
        let path = workflow::resolve(&self.root, workflow)?;
        let (src, diags) = crate::workspace::check_file(&path, &self.check_config).map_err(|e| {
            EngineError::new("UNKNOWN_WORKFLOW", json!({"workflow": workflow, "message": e.to_string()}))
        })?;
        let text = crate::report::render(
            crate::report::Format::Json,
            &[crate::report::FileReport { source: &src, diagnostics: &diags }],
            &crate::report::HumanOptions::default(),
        );
        let report: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let errors = report["summary"]["errors"].as_u64().unwrap_or(0);
        Ok(
            json!({ "valid": errors == 0, "workflow": workflow, "diagnostics": report["diagnostics"], "summary": report["summary"] }),
        )
    }

    // ---- the other tools --------------------------------------------------

    pub fn state_get(&self, workflow: &str, run_id: &str) -> EngineResult {
        self.with_run(workflow, run_id, |_, _, c| {
            Ok(serde_json::to_value(&c.machine.state).unwrap_or(Value::Null))
        })
    }

    pub fn state_list(&self, workflow: Option<&str>) -> EngineResult {
        let keys = self.store.list(workflow).map_err(store_error)?;
        let runs: Vec<Value> = keys
            .iter()
            .map(|k| match self.list_entry(k) {
                Ok(Some(entry)) => entry,
                Ok(None) => json!({ "workflow": k.workflow, "run_id": k.run_id, "status": "unreadable" }),
                Err(e) => json!({ "workflow": k.workflow, "run_id": k.run_id, "status": "unreadable",
                                  "error": e.code, "details": e.details }),
            })
            .collect();
        Ok(json!({ "runs": runs }))
    }

    /// The absolute path of a workflow file that is not `<root>/workflows/<id>.y(a)ml`.
    fn source_of(&self, cw: &CompiledWorkflow) -> Option<String> {
        let by_id = workflow::resolve(&self.root, &cw.wf.id).ok();
        let same = |a: &std::path::Path, b: &std::path::Path| matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(a), Ok(b)) if a == b);
        if by_id.is_some_and(|p| same(&p, &cw.path)) {
            return None;
        }
        std::fs::canonicalize(&cw.path).ok().map(|p| p.display().to_string())
    }

    /// One run as `state_list` shows it: replayed through its workflow (the
    /// snapshot alone lags behind the journal), or, when the workflow no
    /// longer compiles or has changed, from the stored files as they are.
    fn list_entry(&self, key: &RunKey) -> Result<Option<Value>, EngineError> {
        let _lock = self.store.lock(key).map_err(store_error)?;
        let replayed = self
            .workflow(&key.workflow)
            .or_else(|e| {
                // A run started from a path: its snapshot says where the file is.
                let loaded = self.store.load(key).ok().flatten();
                let source = loaded.as_ref().and_then(|l| l.snapshot.get("source")).and_then(Value::as_str);
                match source {
                    Some(path) => self.workflow(path),
                    None => Err(e),
                }
            })
            .and_then(|cw| self.load(key, &cw));
        if let Ok(Some(cached)) = replayed {
            let st = &cached.machine.state;
            let entry = json!({
                "workflow": key.workflow, "run_id": key.run_id, "status": st.status,
                "version": st.version, "updated_at": st.updated_at,
            });
            self.put(key, cached);
            return Ok(Some(entry));
        }
        let Some(l) = self.store.load(key).map_err(store_error)? else { return Ok(None) };
        let version = l.snapshot.get("version").and_then(Value::as_u64).unwrap_or(0) + l.journal.len() as u64;
        let mut entry = json!({
            "workflow": key.workflow, "run_id": key.run_id,
            "status": l.snapshot.get("status"), "version": version,
            "updated_at": l.snapshot.get("updated_at"),
        });
        if let Err(e) = replayed {
            entry["note"] = json!(format!("status as of the last snapshot: {}", e.code));
        }
        Ok(Some(entry))
    }

    pub fn state_delete(&self, workflow: &str, run_id: &str) -> EngineResult {
        let key = RunKey::new(workflow, run_id).map_err(store_error)?;
        let _lock = self.lock_existing(&key)?;
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(key.workflow.clone(), key.run_id.clone()));
        let deleted = self.store.delete(&key).map_err(store_error)?;
        if !deleted {
            return Err(self.unknown_run(&key));
        }
        Ok(json!({ "deleted": true, "workflow": workflow, "run_id": run_id }))
    }

    /// Resets a run to a checkpoint (the state right after that step
    /// completed) or to the start. Discarding completed steps needs `force`.
    pub fn reset(&self, workflow: &str, run_id: &str, checkpoint: Option<&str>, force: bool) -> EngineResult {
        self.with_run(workflow, run_id, |engine, key, cached| {
            let state = &cached.machine.state;
            let keep = match checkpoint {
                None => 0,
                Some(step) => state
                    .checkpoints
                    .iter()
                    .rev()
                    .find(|c| c.step_id == step)
                    .map(|c| c.history_len)
                    .ok_or_else(|| {
                        EngineError::new(
                            "CHECKPOINT_NOT_FOUND",
                            json!({"checkpoint": step, "message": format!("no checkpoint for step `{step}`"),
                                   "available": state.checkpoints.iter().map(|c| c.step_id.as_str()).collect::<Vec<_>>()}),
                        )
                    })?,
            };
            let discarded = state.history[keep..]
                .iter()
                .filter(|e| matches!(e.kind, EventKind::Result { .. }))
                .count();
            if discarded > 0 && !force {
                return Err(EngineError::new(
                    "RESET_NOT_ALLOWED",
                    json!({"message": format!("the reset would discard {discarded} accepted result(s); pass force: true (on the command line, --force)"),
                           "discarded": discarded}),
                ));
            }
            let old_version = state.version;
            let history: Vec<Event> = state.history[..keep].to_vec();
            let mut machine = Machine::start(cached.machine.cw.clone(), &state.run_id, state.params.clone(), &state.created_at);
            for e in history {
                machine.apply(e);
            }
            machine.state.version = old_version + 1;
            machine.state.generation = state.generation.clone();
            machine.state.updated_at = now();
            machine.state.source = state.source.clone();
            cached.machine = machine;
            engine.snapshot(key, cached)?;
            // The reset is done either way; a run whose next instruction
            // cannot be rendered answers with that error (and the reset).
            let reset = json!({ "checkpoint": checkpoint, "discarded": discarded });
            match engine.progress(&cached.machine) {
                Ok(mut out) => {
                    out["reset"] = reset;
                    Ok(out)
                }
                Err(e) => Err(e.with("reset", reset)),
            }
        })
    }

    /// Explains a workflow, a run, or one step of either.
    pub fn explain(&self, workflow: &str, run_id: Option<&str>, step_id: Option<&str>) -> EngineResult {
        let cw = self.workflow(workflow)?;
        let describe = |i: usize| {
            let s = &cw.wf.steps[i];
            let p = &cw.plan.steps[i];
            json!({
                "step_id": s.id.value,
                "call": p.call,
                "deps": p.deps.iter().map(|&d| cw.plan.steps[d].id.as_str()).collect::<Vec<_>>(),
                "inferred_deps": p.inferred.iter().map(|&d| cw.plan.steps[d].id.as_str()).collect::<Vec<_>>(),
                "when": s.when.as_ref().map(|w| w.text.as_str()),
                "foreach": s.foreach.as_ref().map(|f| f.text.as_str()),
                "capture_as": s.capture_as.as_ref().map(|c| c.value.as_str()),
                "success_schema": s.success_schema.as_ref().map(|sc| match sc { SchemaRef::Named(n) => json!(n.value), SchemaRef::Inline { schema, .. } => schema.clone() }),
                "rationale": s.rationale.as_ref().map(|r| r.text.as_str()),
                "retry_max": s.retry_max.unwrap_or(3),
            })
        };
        let unknown = |id: &str, message: String| {
            EngineError::new("UNKNOWN_STEP", json!({"step_id": id, "message": message}))
        };
        // `id` or `id[N]`: the step's index and the item's, if any. An item
        // index needs a foreach step (its range is checked against the run).
        let find = |id: &str| -> Result<(usize, Option<usize>), EngineError> {
            let (base, item) = match id.strip_suffix(']').and_then(|s| s.split_once('[')) {
                Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    (base, Some(n.parse::<usize>().unwrap_or(usize::MAX)))
                }
                Some(_) => return Err(unknown(id, format!("`{id}` is not a step id or `id[N]` item"))),
                None if id.contains('[') || id.contains(']') => {
                    return Err(unknown(id, format!("`{id}` is not a step id or `id[N]` item")));
                }
                None => (id, None),
            };
            let i = cw
                .wf
                .steps
                .iter()
                .position(|s| s.id.value == base)
                .ok_or_else(|| unknown(id, format!("no step `{base}` in `{}`", cw.wf.id)))?;
            if item.is_some() && cw.wf.steps[i].foreach.is_none() {
                return Err(unknown(
                    id,
                    format!("`{base}` has no `foreach`, so it has no items; explain `{base}`"),
                ));
            }
            Ok((i, item))
        };
        let Some(run_id) = run_id else {
            return match step_id {
                Some(id) => {
                    let (i, item) = find(id)?;
                    let mut d = describe(i);
                    if let Some(n) = item {
                        d["item"] = json!(n);
                    }
                    Ok(d)
                }
                None => Ok(json!({
                    "workflow": cw.wf.id, "name": cw.wf.name, "description": cw.wf.description, "rules": cw.wf.rules,
                    "order": cw.plan.order.iter().map(|&i| cw.plan.steps[i].id.as_str()).collect::<Vec<_>>(),
                    "steps": (0..cw.wf.steps.len()).map(describe).collect::<Vec<_>>(),
                })),
            };
        };
        self.with_run(workflow, run_id, |engine, _, cached| {
            let m = &cached.machine;
            let mut out = json!({
                "workflow": cw.wf.id, "run_id": run_id, "state": engine.state_summary(m),
                "failure": m.state.failure, "ready": engine.ready_ids(m),
            });
            if let Some(id) = step_id {
                let (i, item) = find(id)?;
                let mut d = describe(i);
                let s = &m.state.steps[i];
                let (status, attempts) = match item {
                    None => (s.status, s.attempts),
                    Some(n) => match s.items.as_ref().and_then(|items| items.get(n)) {
                        Some(it) => (it.status, it.attempts),
                        None => {
                            let message = match &s.items {
                                Some(items) => format!(
                                    "`{}` has {} item(s) in this run; items are numbered from 0",
                                    s.id,
                                    items.len()
                                ),
                                None => format!("`{}` has not been expanded into items yet", s.id),
                            };
                            return Err(unknown(id, message));
                        }
                    },
                };
                if let Some(n) = item {
                    d["step_id"] = json!(id);
                    d["item"] = json!(n);
                }
                d["status"] = json!(status);
                d["attempts"] = json!(attempts);
                let waiting: Vec<&str> = cw.plan.steps[i]
                    .deps
                    .iter()
                    .filter(|&&p| !m.state.steps[p].status.is_finished())
                    .map(|&p| cw.plan.steps[p].id.as_str())
                    .collect();
                let failure = m.state.failure.as_ref();
                // The run's failure concerns this step (or one of its items).
                let concerns_step = failure.is_some_and(|f| {
                    f.get("step_id").and_then(Value::as_str).is_some_and(|f| f.split('[').next() == Some(&s.id))
                });
                let failed = m.state.status == RunStatus::Failed;
                let failure_message =
                    failure.and_then(|f| f.get("message")).and_then(Value::as_str).unwrap_or("the run failed");
                d["why"] = json!(match status {
                    _ if failed && concerns_step => format!(
                        "the run failed at this step: {failure_message}; reset the run (reset, with force to discard results) or start it again with plan"
                    ),
                    StepStatus::Pending | StepStatus::Ready | StepStatus::Running if failed => format!(
                        "the run has failed ({failure_message}), so no step runs any more; reset it or start it again with plan"
                    ),
                    StepStatus::Pending if waiting.is_empty() =>
                        "its dependencies are finished; it becomes ready when the run next advances".to_owned(),
                    StepStatus::Pending => format!("waiting for {}", waiting.join(", ")),
                    StepStatus::Ready =>
                        "ready: its dependencies are done; submit its result with next".to_owned(),
                    StepStatus::Running => "its foreach items are being worked on".to_owned(),
                    StepStatus::Done => "done".to_owned(),
                    StepStatus::Skipped => "skipped: its `when` was false".to_owned(),
                    StepStatus::Failed => "failed".to_owned(),
                });
                if let Some(f) = failure
                    && concerns_step
                {
                    d["failure"] = f.clone();
                }
                // A ready step (or foreach item `id[i]`) comes with its
                // rendered instruction, so a client can run every id of
                // `ready` in parallel, not only the one `plan`/`next` gave.
                if m.state.status == RunStatus::Running
                    && let Some(w) = m.resolve(id)
                    && m.status_of(w) == StepStatus::Ready
                {
                    d["instruction"] = engine.instruction(m, w);
                }
                out["step"] = d;
            }
            Ok(out)
        })
    }

    /// Replays a run's history: the state changes after each event.
    pub fn debug(&self, workflow: &str, run_id: &str) -> EngineResult {
        self.with_run(workflow, run_id, |_, _, cached| {
            let state = &cached.machine.state;
            let mut replay =
                Machine::start(cached.machine.cw.clone(), &state.run_id, state.params.clone(), &state.created_at);
            let mut steps = Vec::new();
            for e in &state.history {
                let before = statuses(&replay);
                let captures_before = replay.state.captures.clone();
                replay.apply(e.clone());
                let after = statuses(&replay);
                let changed: Map<String, Value> = after
                    .iter()
                    .filter(|(k, v)| before.get(*k) != Some(v))
                    .map(|(k, v)| (k.clone(), json!({"from": before.get(k), "to": v})))
                    .collect();
                let captures: Map<String, Value> = replay
                    .state
                    .captures
                    .iter()
                    .filter(|(k, v)| captures_before.get(*k) != Some(v))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                steps.push(json!({ "event": e, "status_changes": changed, "captures_set": captures, "run_status": replay.state.status }));
            }
            Ok(json!({ "workflow": state.workflow, "run_id": state.run_id, "events": steps.len(), "replay": steps,
                       "consistent": replay.state.steps == state.steps && replay.state.captures == state.captures }))
        })
    }

    /// The think tool: records a non-empty thought in the run's history when
    /// a run is given, else in `.savant/session.log`.
    pub fn think(&self, thought: &str, run: Option<(&str, &str)>) -> EngineResult {
        let thought = thought.trim();
        if thought.is_empty() {
            return Err(EngineError::new("INVALID_INPUT", json!({"message": "a thought must not be empty"})));
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
                written.map_err(|e| EngineError::new("STATE_IO", json!({"message": e.to_string()})))?;
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
                    let mut entry = json!({ "id": id, "valid": false, "error": first.unwrap_or(e.code) });
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
                EngineError::new("UNKNOWN_WORKFLOW", json!({"workflow": workflow, "message": e.to_string()}))
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
                "INVALID_INPUT",
                json!({"message": format!("unknown graph format `{other}`; use json, mermaid or dot")}),
            )),
        }
    }

    /// The check configuration the engine uses (schemas under the root).
    pub fn check_config(&self) -> &check::Config {
        &self.check_config
    }
}

fn statuses(m: &Machine) -> Map<String, Value> {
    let mut out = Map::new();
    for s in &m.state.steps {
        out.insert(s.id.clone(), json!(s.status));
        for (j, it) in s.items.iter().flatten().enumerate() {
            out.insert(format!("{}[{j}]", s.id), json!(it.status));
        }
    }
    out
}

/// The raw `input_template` as JSON: strings exactly as written (decoded).
pub fn raw_template(t: &TemplateValue) -> Value {
    match t {
        TemplateValue::Null(_) => Value::Null,
        TemplateValue::Bool(b, _) => json!(b),
        TemplateValue::Number(n, _) => {
            if n.fract() == 0.0 && n.abs() < 9.0e15 {
                json!(*n as i64)
            } else {
                json!(n)
            }
        }
        TemplateValue::String(s) => json!(s.text),
        TemplateValue::Array(items, _) => Value::Array(items.iter().map(raw_template).collect()),
        TemplateValue::Object(entries, _) => {
            Value::Object(entries.iter().map(|(k, v)| (k.value.clone(), raw_template(v))).collect())
        }
    }
}
