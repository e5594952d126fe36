//! [`Engine`]: plan / next / explain / reset / state over durable run state.
//! Every public method returns a typed reply (`runtime::reply`, `Ok`) or an
//! [`EngineError`] (`Err`), the same contract for the CLI and the MCP tools;
//! JSON is made from them at the edge.

use crate::ir::{SchemaRef, TemplateValue};
use crate::runtime::ErrorCode;
pub use crate::runtime::args::NextArgs;
use crate::runtime::config::EngineConfig;
use crate::runtime::error_details::{Conflict, FieldError, StepNotReady, help_unknown_params};
use crate::runtime::failure::RunFailure;
use crate::runtime::payload;
use crate::runtime::project::Project;
use crate::runtime::reply::{
    EntryStatus, Instruction, Progress, ProgressStatus, RunEntry, StateSummary, Summary,
};
use crate::runtime::run::{
    Event, EventKind, Machine, RunState, RunStatus, StepStatus, TruncationNote, WorkRef,
};
use crate::runtime::workflow::{self, CompiledWorkflow};
use crate::runtime::{EngineError, EngineResult};
use crate::state::{EventJson, Loaded, RunKey, RunLock, Stamp, StateStore, StoreError};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

mod cache;
mod children;
mod explain;
mod fork;
mod info;
mod inspect;
mod locks;
mod longest_wait;
mod next;
mod observe;
mod pins;
mod plan;
mod progress;
mod prune;
mod repair;
mod timers;
pub use locks::{LockWaitHook, observe_lock_waits};
mod upgrade;
mod waits;
pub use children::child_run_id;
pub use inspect::{RunBrief, RunSnapshot};
pub use observe::{
    AttemptOutcome, RunFinished, RunObserver, RunRef, StepAttempt, WaitEnded, trace_ids, unhex,
};
pub use state::StepStatuses;
pub use upgrade::{RunsAgainst, UpgradeFailed};
pub use waits::{Delivery, Signalled};
mod runs;
mod state;
mod unlocked;
mod validate;

/// A run's journal is folded into its snapshot once it holds more than this
/// many events and at least half the history (so the cost stays amortised
/// linear). A run shorter than this never rewrites its snapshot: each
/// compaction creates a file and frees another, which a busy state
/// directory pays for in the file system's inode allocation.
pub const COMPACT_AFTER: usize = 128;

/// How many ready ids a response lists (`ready_total` has the full count).
pub const READY_LIST_CAP: usize = 50;

struct Cached {
    stamp: Stamp,
    machine: Machine,
    /// Events in the journal since the last snapshot.
    journal_len: usize,
    /// Set while a call works on the run without its lock (see
    /// `unlocked.rs`): its writes are then conditional.
    unlocked: Option<unlocked::Writes>,
    /// Someone else wrote the run since this engine last did (it was read
    /// again for that): its next call takes the lock rather than trying
    /// without it, until a call finds the cache current (`unlocked.rs`).
    shared: bool,
}

impl Cached {
    fn new(stamp: Stamp, machine: Machine, journal_len: usize) -> Cached {
        Cached { stamp, machine, journal_len, unlocked: None, shared: false }
    }

    /// Whether the journal is due to be folded into a new snapshot: it holds
    /// more than [`COMPACT_AFTER`] events and at least half the history
    /// (amortised linear cost).
    fn compaction_due(&self) -> bool {
        self.journal_len > COMPACT_AFTER && self.journal_len * 2 >= self.machine.state.history.len()
    }
}

/// The run engine over one project root: `plan`, `next` and the other tools, over durable run state.
/// Safe to share between threads; each run is locked while a call works on it.
pub struct Engine {
    /// Workflows, schemas and prompts: everything read from the root.
    project: Project,
    config: EngineConfig,
    store: Box<dyn StateStore>,
    /// Runs kept between calls, at most `[state] cached_runs` (`cache.rs`).
    runs: Mutex<cache::RunCache<(String, String), Cached>>,
    /// The objects runs are pinned to (see `pins.rs`).
    pins: Mutex<pins::Pins>,
    /// Told of step attempts and finished runs (see `observe.rs`).
    observer: Option<Arc<dyn RunObserver>>,
    /// Runs by their next deadline (see `timers.rs`).
    timers: Mutex<timers::Timers>,
}

fn now() -> String {
    humantime::format_rfc3339_millis(crate::runtime::clock::now()).to_string()
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
        StoreError::InvalidId { .. } => EngineError::message(ErrorCode::InvalidId, e.to_string()),
        StoreError::Corrupt { .. } => EngineError::state_corrupt(e.to_string()),
        StoreError::Io { .. } => EngineError::message(ErrorCode::StateIo, e.to_string()),
        StoreError::Busy { ref run, .. } => EngineError::run_busy(run, &e.to_string()),
        StoreError::Unavailable { .. } => EngineError::state_unavailable(&e.to_string()),
        StoreError::OutsideRoot { .. } => EngineError::message(ErrorCode::StateOutsideRoot, e.to_string()),
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

    /// An engine over `root` with the given settings and state store.
    pub fn with_store(root: PathBuf, config: EngineConfig, store: Box<dyn StateStore>) -> Engine {
        let cached_runs = config.state.cached_runs;
        Engine {
            project: Project::open(root).with_events(crate::workspace::declared_events(&config)),
            config,
            store,
            runs: Mutex::new(cache::RunCache::new(cached_runs)),
            pins: Mutex::default(),
            observer: None,
            timers: Mutex::default(),
        }
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        self.project.root()
    }

    /// The project this engine serves: its workflows, schemas and prompts.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The `savant-think.toml` settings this engine was built with.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Resolves, reads and compiles a workflow, cached by file identity
    /// (see [`Project::workflow`]).
    pub fn workflow(&self, workflow: &str) -> Result<Arc<CompiledWorkflow>, EngineError> {
        self.project.workflow(workflow)
    }

    fn key(&self, cw: &CompiledWorkflow, run_id: &str) -> Result<RunKey, EngineError> {
        RunKey::new(&cw.wf.id, run_id).map_err(store_error)
    }

    // ---- plan (see plan.rs) ------------------------------------------------

    /// Applies defaults and validates params against the workflow's schema.
    pub fn check_params(&self, cw: &CompiledWorkflow, params: Value) -> Result<Value, EngineError> {
        let mut params = match params {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            other => {
                // A JSON-encoded string (what many MCP clients send): the help
                // is the exact fix, the object itself.
                let decoded = other
                    .as_str()
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    .filter(Value::is_object);
                let help = match decoded {
                    Some(object) => format!(
                        "params is a JSON-encoded string; pass the object itself instead: \"params\": {object}"
                    ),
                    None => "pass params as a JSON object, e.g. \"params\": {\"name\": \"Ada\"}".to_owned(),
                };
                return Err(EngineError::fields(
                    ErrorCode::InvalidParams,
                    &[FieldError {
                        path: String::new(),
                        message: format!("params must be an object, got {other}"),
                        help: Some(help),
                    }],
                ));
            }
        };
        let mut properties = Map::new();
        for p in &cw.wf.params {
            if let Some(d) = p.schema.get("default") {
                params.entry(p.name.value.clone()).or_insert_with(|| d.clone());
            }
            properties.insert(p.name.value.as_str().to_owned(), p.schema.clone());
        }
        let required: Vec<&str> =
            cw.wf.params.iter().filter(|p| p.required).map(|p| p.name.value.as_str()).collect();
        let schema = json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false });
        let params = Value::Object(params);
        let mut errors = self.inline_errors(&schema, &params)?;
        if !errors.is_empty() {
            let declared: Vec<&str> = cw.wf.params.iter().map(|p| p.name.value.as_str()).collect();
            help_unknown_params(&mut errors, &params, &cw.wf.id, &declared);
            return Err(EngineError::fields(ErrorCode::InvalidParams, &errors));
        }
        Ok(params)
    }

    /// Appends an event durably, then applies it; compacts the journal into a
    /// snapshot when it has grown to half the history (amortised linear cost).
    fn commit(&self, key: &RunKey, cached: &mut Cached, event: Event) -> Result<(), EngineError> {
        // An event that finishes a step may start waits: their intent first.
        if cached.machine.cw.has_waits && event.kind.result_step().is_some() {
            let at = cached.machine.earliest_new_deadline(&event.at);
            self.intend_timer(key, at, !cached.shared)?;
        }
        let generation = cached.machine.state.generation.as_deref();
        cached.stamp = match &mut cached.unlocked {
            // Serialised once, straight into the journal's text.
            None if self.store.takes_json() => {
                let json = EventJson::new(&event, event.version, generation)
                    .map_err(|m| EngineError::message(ErrorCode::Internal, m))?;
                self.store.append_json_after(key, &json, &cached.stamp).map_err(store_error)?
            }
            unlocked => {
                let mut value = serde_json::to_value(&event).unwrap_or(Value::Null);
                if let Some(generation) = generation {
                    value["generation"] = json!(generation);
                }
                match unlocked {
                    None => self.store.append_after(key, &value, &cached.stamp).map_err(store_error)?,
                    Some(writes) => self.append_unlocked(key, &value, &cached.stamp, writes)?,
                }
            }
        };
        #[cfg(test)]
        timers::tests::maybe_crash();
        cached.journal_len += 1;
        let observed = self.observe_before(cached, &event);
        let at = observed.as_ref().map(|_| event.at.clone());
        cached.machine.apply(event);
        if let Some(at) = at {
            self.observe_after(observed, &cached.machine, &at);
        }
        // (Without the lock, after the call: see `unlocked.rs`.)
        if cached.unlocked.is_none() && cached.compaction_due() {
            self.snapshot(key, cached)?;
        }
        Ok(())
    }

    fn snapshot(&self, key: &RunKey, cached: &mut Cached) -> Result<(), EngineError> {
        self.intend_timer(key, timers::deadline_of(&cached.machine), !cached.shared)?;
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
    ) -> Result<Vec<Instruction>, EngineError> {
        self.with_run(workflow, run_id, |engine, key, cached| {
            // `uses:` steps whose children are done complete first.
            engine.advance(key, cached)?;
            let m = &cached.machine;
            let ready: Vec<WorkRef> = m.ready().take(limit).collect();
            let mut out = Vec::with_capacity(ready.len());
            for w in ready {
                // A `uses:` step: its child's instruction, as `next` hands it out.
                match m.step(w.step).uses {
                    Some(_) => out.extend(engine.child_instruction(m, w)?),
                    None => out.push(engine.instruction(m, w)),
                }
            }
            Ok(out)
        })
    }

    // ---- loading --------------------------------------------------------

    /// `UNKNOWN_RUN` for `key`, with a did-you-mean among the workflow's runs.
    fn unknown_run(&self, key: &RunKey) -> EngineError {
        let known = self.store.list(Some(&key.workflow)).unwrap_or_default();
        EngineError::unknown_run(key, known.iter().map(|k| k.run_id.as_str()))
    }

    /// Takes the lock of a run that exists. An unknown run is `UNKNOWN_RUN`
    /// before any file is created: reading a run never leaves a lock file
    /// behind for a run that is not there.
    fn lock_existing(&self, key: &RunKey) -> Result<RunLock, EngineError> {
        self.lock_run_existing(key).map_err(store_error)?.ok_or_else(|| self.unknown_run(key))
    }

    /// Loads a run (the caller holds its lock): from the in-memory cache when
    /// the files have not changed since, else snapshot + journal replay.
    fn load(
        &self,
        key: &RunKey,
        current: Option<&Arc<CompiledWorkflow>>,
    ) -> Result<Option<Cached>, EngineError> {
        self.load_stamped(key, current, None)
    }

    /// [`Engine::load`] with the run's stamp when the lock already read it
    /// ([`RunLock::stamp`]), so that it is not read again.
    fn load_stamped(
        &self,
        key: &RunKey,
        current: Option<&Arc<CompiledWorkflow>>,
        known: Option<Stamp>,
    ) -> Result<Option<Cached>, EngineError> {
        let stamp = match known {
            Some(stamp) => stamp,
            None => match self.store.stamp(key).map_err(store_error)? {
                Some(stamp) => stamp,
                None => return Ok(None),
            },
        };
        // The run holds the version it is pinned to: the stamp alone says
        // whether the cached machine is still the stored run.
        let shared = match self.take_cached(key) {
            Some(mut c) if c.stamp == stamp => {
                c.shared = false;
                return Ok(Some(c));
            }
            // Written by someone else since this engine last did.
            Some(_) => true,
            None => false,
        };
        let Some(loaded) = self.store.load(key).map_err(store_error)? else { return Ok(None) };
        let stamp = loaded.stamp;
        let journal_len = loaded.journal.len();
        let machine = self.replay(key, current, loaded)?;
        Ok(Some(Cached { shared, ..Cached::new(stamp, machine, journal_len) }))
    }

    /// A stored run (live or archived) rebuilt: its snapshot, then its
    /// journal applied.
    fn replay(
        &self,
        key: &RunKey,
        current: Option<&Arc<CompiledWorkflow>>,
        loaded: Loaded,
    ) -> Result<Machine, EngineError> {
        let state: RunState = serde_json::from_value(loaded.snapshot)
            .map_err(|e| EngineError::state_corrupt(format!("the run state of {key} cannot be read: {e}")))?;
        let cw = self.pinned_workflow(key, &state, current)?;
        crate::runtime::integrity::check_snapshot(&cw, &state)
            .map_err(|m| EngineError::state_corrupt(format!("the run state of {key}: {m}")))?;
        let mut machine = Machine::resume(cw.clone(), state);
        for e in loaded.journal {
            let event: Event = serde_json::from_value(e).map_err(|e| {
                EngineError::state_corrupt(format!("a journal event of {key} cannot be read: {e}"))
            })?;
            if let Some(step) = crate::runtime::integrity::event_step(&event.kind)
                && machine.resolve(step).is_none()
            {
                return Err(EngineError::state_corrupt(format!(
                    "the journal event at version {} of {key} is for step `{step}`, which the run does not have",
                    event.version
                )));
            }
            machine.apply(event);
        }
        Ok(machine)
    }

    /// How many runs are kept in memory now (at most `[state] cached_runs`;
    /// `/metrics`).
    pub fn runs_cached(&self) -> usize {
        self.runs.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Takes the run out of the cache: no other call of this process
    /// works on it until it is [put](Engine::put) back.
    fn take_cached(&self, key: &RunKey) -> Option<Cached> {
        let cache_key = (key.workflow.clone(), key.run_id.clone());
        self.runs.lock().unwrap_or_else(|p| p.into_inner()).remove(&cache_key)
    }

    fn put(&self, key: &RunKey, cached: Cached) {
        self.note_timers(key, &cached);
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
        let (key, _lock, mut cached) = self.open_run(workflow, run_id)?;
        // A due timer is applied before anything reads the run.
        let out = self.settle_waits(&key, &mut cached).and_then(|()| f(self, &key, &mut cached));
        self.put(&key, cached);
        out
    }

    // ---- responses ------------------------------------------------------

    fn ready_ids(&self, m: &Machine) -> Vec<String> {
        m.ready().take(READY_LIST_CAP).map(|w| m.work_id(w)).collect()
    }

    pub(crate) fn state_summary(&self, m: &Machine) -> StateSummary {
        let completed = m.completed();
        StateSummary {
            version: m.state.version,
            status: m.state.status,
            completed,
            pending: m.state.steps.len() - completed,
        }
    }

    fn instruction(&self, m: &Machine, w: WorkRef) -> Instruction {
        let step = m.step(w.step);
        Instruction {
            step_id: m.work_id(w),
            call: step.call.as_ref().map(|c| c.value.as_str().to_owned()),
            input: m.input_of(w).cloned().unwrap_or_else(|| Value::Object(Map::new())),
            input_template: step.input_template.as_ref().map_or(Value::Null, raw_template),
            capture_as: step.capture_as.as_ref().map(|c| c.value.as_str().to_owned()),
            success_schema: match &step.success_schema {
                Some(SchemaRef::Named(n)) => Value::String(n.value.as_str().to_owned()),
                Some(SchemaRef::Inline { schema, .. }) => Value::clone(schema),
                None => Value::Null,
            },
            rationale: step.rationale.as_ref().map(|r| r.text.clone()),
            timeout: step.timeout,
            attempt: m.attempts_of(w) + 1,
            done: false,
            rules: m.cw.wf.rules.clone(),
            sub_run: None,
        }
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

/// `STATE_CONFLICT` unless the run is at `expected` (when given).
fn expect_version(m: &Machine, expected: Option<u64>) -> Result<(), EngineError> {
    match expected {
        Some(v) if v != m.state.version => Err(EngineError::with(
            ErrorCode::StateConflict,
            Conflict {
                message: format!("expected version {v}, but the run is at version {}", m.state.version),
                expected_version: Some(v),
                version: Some(m.state.version),
                ..Conflict::default()
            },
        )),
        _ => Ok(()),
    }
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
        TemplateValue::Object(entries, _) => Value::Object(
            entries.iter().map(|(k, v)| (k.value.as_str().to_owned(), raw_template(v))).collect(),
        ),
    }
}
