//! Pinned workflow versions: at `plan`, the workflow's bytes and the bytes
//! of every named schema it references are stored content-addressed in the
//! state store (`ObjectStore`), and the run records their hashes
//! (`RunState::workflow_hash`, `RunState::schemas`). A run then executes
//! the version it started with, whatever happens to the files: when the
//! file on disk has other bytes (or is gone, or no longer compiles), the
//! pinned bytes are read back from the store and compiled (once per
//! engine, cached by hash). `WORKFLOW_CHANGED` is left only for a pinned
//! object that is missing or corrupt.
//!
//! A workflow already stored costs no write: the engine remembers the
//! hashes it stored for [`REMEMBER_STORED`], and a store of an object that
//! is there only refreshes its time. `state prune` collects no object
//! stored within `prune::OBJECT_GRACE`, longer than that, so an object an
//! engine remembers as stored is never one the collector may remove.

use super::*;
use std::collections::BTreeMap;

/// How many pinned versions an engine keeps compiled.
const PINNED_CAP: usize = 64;

/// How long an engine trusts that an object it stored is still there.
pub(super) const REMEMBER_STORED: std::time::Duration = std::time::Duration::from_secs(60);

/// What an engine remembers of the objects: which are stored, and the
/// pinned versions and schemas it has read back.
#[derive(Default)]
pub(super) struct Pins {
    stored: HashMap<String, std::time::Instant>,
    workflows: HashMap<String, Arc<CompiledWorkflow>>,
    schemas: HashMap<String, Arc<Value>>,
}

impl Pins {
    /// Forgets that an object is stored (it is being removed).
    pub(super) fn forget_stored(&mut self, hash: &str) {
        self.stored.remove(hash);
    }
}

impl Engine {
    pub(super) fn pins(&self) -> std::sync::MutexGuard<'_, Pins> {
        self.pins.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores an object unless this engine knows it is stored. Every
    /// caller's `hash` is [`workflow::sha256_hex`] of these very bytes,
    /// computed in this process (a [`CompiledWorkflow`]'s is of its text's
    /// bytes, see [`workflow::compile_hashed`]): the store need not hash
    /// them again.
    fn put_object(&self, hash: &str, bytes: &[u8]) -> Result<(), EngineError> {
        if self.pins().stored.get(hash).is_some_and(|at| at.elapsed() < REMEMBER_STORED) {
            return Ok(());
        }
        self.store.put_hashed_object(hash, bytes).map_err(store_error)?;
        let mut pins = self.pins();
        if pins.stored.len() >= 4096 {
            pins.stored.clear();
        }
        pins.stored.insert(hash.to_owned(), std::time::Instant::now());
        Ok(())
    }

    /// Pins `cw` for a new run: stores its bytes and its named schemas'
    /// bytes; returns the schemas' hashes by name.
    pub(super) fn pin(&self, cw: &CompiledWorkflow) -> Result<BTreeMap<String, String>, EngineError> {
        self.put_object(&cw.hash, cw.source.text.as_bytes())?;
        let mut schemas = BTreeMap::new();
        for step in &cw.wf.steps {
            let Some(SchemaRef::Named(name)) = &step.success_schema else { continue };
            if schemas.contains_key(name.value.as_str()) {
                continue;
            }
            // A workflow that compiled has its named schemas.
            let Ok(schema) = self.project.schema(&name.value) else { continue };
            let bytes = serde_json::to_vec(&schema).unwrap_or_default();
            let hash = workflow::sha256_hex(&bytes);
            self.put_object(&hash, &bytes)?;
            schemas.insert(name.value.to_string(), hash);
        }
        Ok(schemas)
    }

    /// The workflow version `state` is pinned to: `current` (the file as it
    /// is now) when it has the same bytes, else the stored object.
    pub(super) fn pinned_workflow(
        &self,
        key: &RunKey,
        state: &RunState,
        current: Option<&Arc<CompiledWorkflow>>,
    ) -> Result<Arc<CompiledWorkflow>, EngineError> {
        let hash = &state.workflow_hash;
        if let Some(cw) = current
            && cw.hash == *hash
        {
            // A run from before pinning gets its object now, while the
            // file still has its bytes.
            self.put_object(hash, cw.source.text.as_bytes())?;
            return Ok(cw.clone());
        }
        if let Some(cw) = self.pins().workflows.get(hash) {
            return Ok(cw.clone());
        }
        let file_hash = current.map(|c| c.hash.as_str());
        let bytes = match self.store.get_object(hash) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Err(EngineError::pinned_missing(key, hash, file_hash, None)),
            Err(e @ StoreError::Corrupt { .. }) => {
                return Err(EngineError::pinned_missing(key, hash, file_hash, Some(e.to_string())));
            }
            Err(e) => return Err(store_error(e)),
        };
        let mut config = (*self.project.check_config()).clone();
        for (name, schema_hash) in &state.schemas {
            let schema = self.pinned_schema(key, schema_hash)?;
            config.schemas.insert(name.clone(), Ok(Value::clone(&schema)));
        }
        let path = match (current, &state.source) {
            (Some(cw), _) => cw.path.clone(),
            (None, Some(source)) => PathBuf::from(source),
            (None, None) => self.root().join("workflows").join(format!("{}.yaml", key.workflow)),
        };
        let cw = Arc::new(workflow::compile_bytes(&path, bytes, &config)?);
        let mut pins = self.pins();
        if pins.workflows.len() >= PINNED_CAP {
            pins.workflows.clear();
        }
        pins.workflows.insert(hash.clone(), cw.clone());
        Ok(cw)
    }

    /// A pinned schema, read back from the store once.
    pub(super) fn pinned_schema(&self, key: &RunKey, hash: &str) -> Result<Arc<Value>, EngineError> {
        if let Some(schema) = self.pins().schemas.get(hash) {
            return Ok(schema.clone());
        }
        let bytes = match self.store.get_object(hash) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Err(EngineError::pinned_missing(key, hash, None, None)),
            Err(e @ StoreError::Corrupt { .. }) => {
                return Err(EngineError::pinned_missing(key, hash, None, Some(e.to_string())));
            }
            Err(e) => return Err(store_error(e)),
        };
        let schema: Value = serde_json::from_slice(&bytes).map_err(|e| {
            EngineError::pinned_missing(key, hash, None, Some(format!("the pinned schema is not JSON: {e}")))
        })?;
        let schema = Arc::new(schema);
        let mut pins = self.pins();
        if pins.schemas.len() >= PINNED_CAP {
            pins.schemas.clear();
        }
        pins.schemas.insert(hash.to_owned(), schema.clone());
        Ok(schema)
    }

    /// Validates a result against a step's success schema as the run pinned
    /// it (a named schema by its pinned bytes; runs from before pinning, and
    /// inline schemas, as the workflow has them).
    pub(super) fn validate_pinned(
        &self,
        key: &RunKey,
        m: &Machine,
        schema: &SchemaRef,
        result: &Value,
    ) -> Result<Vec<crate::runtime::error_details::FieldError>, EngineError> {
        if let SchemaRef::Named(name) = schema
            && let Some(hash) = m.state.schemas.get(name.value.as_str())
        {
            let schema = self.pinned_schema(key, hash)?;
            return Ok(Self::schema_errors(&*self.project.step_validator(&schema)?, result));
        }
        self.validate_result(schema, result)
    }

    /// The current file for `workflow` and the run's key. When the file is
    /// gone or no longer compiles and `workflow` is an id, the key comes
    /// from the id alone: a run carries its own version.
    pub(super) fn run_key(
        &self,
        workflow: &str,
        run_id: &str,
    ) -> Result<(RunKey, Result<Arc<CompiledWorkflow>, EngineError>), EngineError> {
        let current = self.workflow(workflow);
        let id = match &current {
            Ok(cw) => cw.wf.id.clone(),
            Err(e)
                if crate::workspace::valid_workflow_id(workflow)
                    && matches!(e.code, ErrorCode::UnknownWorkflow | ErrorCode::YamlSchemaViolation) =>
            {
                workflow.to_owned()
            }
            Err(e) => return Err(e.clone()),
        };
        let key = RunKey::new(id, run_id).map_err(store_error)?;
        Ok((key, current))
    }

    /// Locks and loads the run `run_id` of `workflow` (see [`Engine::run_key`]):
    /// `UNKNOWN_RUN`, or the file's own error when there is no such run and
    /// the file cannot be read either.
    pub(super) fn open_run(
        &self,
        workflow: &str,
        run_id: &str,
    ) -> Result<(RunKey, RunLock, Cached), EngineError> {
        let (key, current) = self.run_key(workflow, run_id)?;
        let lock = match self.lock_existing(&key) {
            Ok(lock) => lock,
            Err(e) => return Err(current.err().unwrap_or(e)),
        };
        match self.load_stamped(&key, current.as_ref().ok(), lock.stamp())? {
            Some(cached) => Ok((key, lock, cached)),
            None => Err(current.err().unwrap_or_else(|| self.unknown_run(&key))),
        }
    }
}
