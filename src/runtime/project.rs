//! [`Project`]: the one loader for everything the engine reads from a
//! project root — workflow files (resolved from an id or a path, confined to
//! the root, read under the size cap with `check`'s UTF-8 rule), the named
//! schemas in `schemas/`, and the driver prompts in `prompts/`.
//!
//! Compiled workflows are cached by file identity (device, inode, size,
//! modification and change times, [`FileIdentity`]): a hot call does one
//! `stat` and neither reads nor hashes the file. `schemas/` is read again
//! when a file in it is added, removed or changed (looked at no more than
//! once a second), and then every compiled workflow and schema validator
//! is dropped: they were made with the old schemas.

use crate::check::Config;
use crate::diagnostic::Diagnostic;
use crate::fsx::FileIdentity;
use crate::runtime::error_details::{UnknownSchema, UnknownWorkflow};
use crate::runtime::prompts::{self, Registry};
use crate::runtime::reply::{DriverPrompt, PromptList};
use crate::runtime::workflow::{self, CompiledWorkflow};
use crate::runtime::{EngineError, ErrorCode};
use crate::source::Limits;
use crate::source::SourceFile;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A compiled workflow and the identity of the file it was read from.
#[derive(Clone)]
struct CachedWorkflow {
    compiled: Arc<CompiledWorkflow>,
    /// The generation of `schemas/` it was compiled with.
    generation: u64,
    identity: Option<FileIdentity>,
    read_at: std::time::SystemTime,
}

/// A compiled JSON Schema, shared.
type Validator = Arc<jsonschema::Validator>;

/// How often a project looks for changes in `schemas/`.
pub const SCHEMAS_LOOK_EVERY: Duration = Duration::from_secs(1);

/// The checker's settings made from `schemas/`, and what that directory
/// held when it was read.
struct Schemas {
    config: Arc<Config>,
    stamp: SchemaStamp,
    /// `tools.lock.json`'s identity when it was read (`None`: no file).
    lock_stamp: Option<FileIdentity>,
    looked_at: Instant,
    /// Counts the reads of `schemas/`: what was made from one read is
    /// valid while this is unchanged.
    generation: u64,
}

/// The `*.json` entries of a schema directory and their identities.
type SchemaStamp = Vec<(std::ffi::OsString, Option<FileIdentity>)>;

fn schema_stamp(dir: &Path) -> SchemaStamp {
    let mut stamp: SchemaStamp = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let path = e.path();
            (e.file_name(), FileIdentity::of(&path))
        })
        .collect();
    stamp.sort_by(|a, b| a.0.cmp(&b.0));
    stamp
}

/// A project root and what the engine reads from it.
pub struct Project {
    root: PathBuf,
    /// The checker's settings: default limits and the project's schemas.
    schemas: Mutex<Schemas>,
    /// Compiled validators of named schemas, with the generation of
    /// `schemas/` they were made from.
    named_validators: Mutex<HashMap<String, (u64, Arc<jsonschema::Validator>)>>,
    /// Compiled validators of inline schemas, by the schema's text.
    inline_validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
    /// The same, by the address of a compiled workflow's schema value.
    step_validators: Mutex<HashMap<usize, (Arc<Value>, Validator)>>,
    /// Compiled workflows by resolved path.
    workflows: Mutex<HashMap<PathBuf, CachedWorkflow>>,
    /// Where each `workflow` argument last resolved to (see [`Project::workflow`]).
    resolved: Mutex<HashMap<String, PathBuf>>,
}

/// The project's `tools.lock.json` as the checker's table (`None`: no file).
fn load_lock(root: &Path) -> Option<Arc<crate::check::lock::LockTable>> {
    crate::workspace::load_lock(root).map(|(table, _, _)| Arc::new(table))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Project {
    /// The project at `root`: its `schemas/*.json` are read now (a missing
    /// directory is no schema); workflows and prompts when asked for.
    pub fn open(root: impl Into<PathBuf>) -> Project {
        let root = root.into();
        let dir = root.join("schemas");
        let stamp = schema_stamp(&dir);
        let lock_stamp = FileIdentity::of(&root.join(crate::check::lock::FILE_NAME));
        let config = Arc::new(Config {
            schemas: crate::workspace::load_schemas(&dir),
            builtins: crate::runtime::contracts::builtin(),
            // `tools.lock.json`: `plan` checks as `check` does (read again
            // when it changes, as `schemas/` is).
            lock: load_lock(&root),
            ..Config::default()
        });
        Project {
            root,
            schemas: Mutex::new(Schemas {
                config,
                stamp,
                lock_stamp,
                looked_at: Instant::now(),
                generation: 0,
            }),
            named_validators: Mutex::default(),
            inline_validators: Mutex::default(),
            step_validators: Mutex::default(),
            workflows: Mutex::default(),
            resolved: Mutex::default(),
        }
    }

    /// The project, its workflows checked against the events
    /// savant-think.toml declares (`wait_for:`, `UNDECLARED_EVENT`).
    pub fn with_events(self, events: Arc<std::collections::BTreeMap<String, Option<Value>>>) -> Project {
        {
            let mut schemas = lock(&self.schemas);
            let config = Config { events: Some(events), ..Config::clone(&schemas.config) };
            schemas.config = Arc::new(config);
        }
        self
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The settings workflows are checked with (limits and schemas), with
    /// `schemas/` read again if it changed (see the module's docs).
    pub fn check_config(&self) -> Arc<Config> {
        self.current().0
    }

    /// The checker's settings and their generation, `schemas/` looked at
    /// again if it is time.
    fn current(&self) -> (Arc<Config>, u64) {
        let mut schemas = lock(&self.schemas);
        if schemas.looked_at.elapsed() >= SCHEMAS_LOOK_EVERY {
            schemas.looked_at = Instant::now();
            let dir = self.root.join("schemas");
            // The stamp is taken before the files are read: a change made
            // while they are read is seen at the next look.
            let stamp = schema_stamp(&dir);
            let lock_stamp = FileIdentity::of(&self.root.join(crate::check::lock::FILE_NAME));
            if stamp != schemas.stamp || lock_stamp != schemas.lock_stamp {
                let lock_changed = lock_stamp != schemas.lock_stamp;
                schemas.stamp = stamp;
                schemas.lock_stamp = lock_stamp;
                schemas.config = Arc::new(Config {
                    schemas: crate::workspace::load_schemas(&dir),
                    builtins: crate::runtime::contracts::builtin(),
                    lock: if lock_changed { load_lock(&self.root) } else { schemas.config.lock.clone() },
                    events: schemas.config.events.clone(),
                    ..Config::default()
                });
                schemas.generation += 1;
                // Made from the old schemas (entries are checked against
                // the generation too, for a call that raced this one).
                lock(&self.workflows).clear();
                lock(&self.named_validators).clear();
            }
        }
        (schemas.config.clone(), schemas.generation)
    }

    /// The compiled validator of the named schema `schemas/<name>.json`.
    pub fn named_validator(&self, name: &str) -> Result<Arc<jsonschema::Validator>, EngineError> {
        let (config, generation) = self.current();
        if let Some((g, v)) = lock(&self.named_validators).get(name)
            && *g == generation
        {
            return Ok(v.clone());
        }
        let v = Arc::new(compile_schema(name, named(&config, name)?)?);
        bounded_insert(&mut lock(&self.named_validators), name.to_owned(), (generation, v.clone()));
        Ok(v)
    }

    /// The compiled validator of an inline schema (cached by its text).
    pub fn inline_validator(&self, schema: &Value) -> Result<Arc<jsonschema::Validator>, EngineError> {
        let key = schema.to_string();
        if let Some(v) = lock(&self.inline_validators).get(&key) {
            return Ok(v.clone());
        }
        let v = Arc::new(compile_schema(&key, schema)?);
        bounded_insert(&mut lock(&self.inline_validators), key, v.clone());
        Ok(v)
    }

    /// The compiled validator of a workflow's inline schema, cached by the
    /// schema value itself (no text is made on a hit): the entry holds the
    /// `Arc`, so its address is not reused while it is cached.
    pub fn step_validator(&self, schema: &Arc<Value>) -> Result<Arc<jsonschema::Validator>, EngineError> {
        let at = Arc::as_ptr(schema) as usize;
        if let Some((_, v)) = lock(&self.step_validators).get(&at) {
            return Ok(v.clone());
        }
        let v = self.inline_validator(schema)?;
        bounded_insert(&mut lock(&self.step_validators), at, (schema.clone(), v.clone()));
        Ok(v)
    }

    // ---- workflows --------------------------------------------------------

    /// Resolves WORKFLOW: a path to an existing file, or an id looked up as
    /// `<root>/workflows/<id>.yaml` / `.yml`. Either must lie inside the
    /// root once symlinks are resolved.
    pub fn resolve(&self, workflow: &str) -> Result<PathBuf, EngineError> {
        let root = &self.root;
        let as_path = Path::new(workflow);
        let looks_like_path =
            workflow.ends_with(".yaml") || workflow.ends_with(".yml") || workflow.contains('/');
        if looks_like_path {
            // From the root first (an MCP client's paths are the project's),
            // then from the working directory (a shell user's).
            let from_root = (as_path.is_relative()).then(|| root.join(as_path));
            if let Some(p) = from_root.filter(|p| p.is_file()) {
                return confined(root, workflow, &p);
            }
            if as_path.is_file() {
                return confined(root, workflow, as_path);
            }
        }
        if crate::workspace::valid_workflow_id(workflow) {
            for ext in ["yaml", "yml"] {
                let p = root.join("workflows").join(format!("{workflow}.{ext}"));
                if p.is_file() {
                    return confined(root, workflow, &p);
                }
            }
        }
        if looks_like_path {
            let why = if as_path.exists() { "not a regular file" } else { "no such file" };
            return Err(EngineError::with(
                ErrorCode::UnknownWorkflow,
                UnknownWorkflow::new(workflow, format!("{workflow}: {why}")),
            ));
        }
        let known = self.ids();
        let help = crate::diagnostic::suggest(workflow, known.iter().map(String::as_str));
        Err(EngineError::with(
            ErrorCode::UnknownWorkflow,
            UnknownWorkflow {
                help,
                available: Some(known),
                ..UnknownWorkflow::new(
                    workflow,
                    format!("no workflow `{workflow}` in {}", root.join("workflows").display()),
                )
            },
        ))
    }

    /// Ids of every workflow file under `<root>/workflows`, sorted. A file
    /// whose stem is not a valid id (`_draft.yaml`, `my flow.yaml`) cannot be
    /// run by id and is not listed (`check` still reads it).
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.root.join("workflows"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let stem = name.strip_suffix(".yaml").or_else(|| name.strip_suffix(".yml"))?;
                crate::workspace::valid_workflow_id(stem).then(|| stem.to_owned())
            })
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// A workflow file's bytes, by the same rules as `check`: a regular file
    /// (a FIFO is refused, not waited on) under the size cap (one byte over
    /// is read, so the checker reports the limit).
    fn read_bytes(&self, workflow: &str, path: &Path) -> Result<Vec<u8>, EngineError> {
        crate::workspace::read_workflow_bytes(path, &Limits::default()).map_err(|e| {
            EngineError::with(
                ErrorCode::UnknownWorkflow,
                UnknownWorkflow {
                    path: Some(path.display().to_string()),
                    ..UnknownWorkflow::new(workflow, e.to_string())
                },
            )
        })
    }

    /// A workflow's text, decoded as `check` decodes it: a file over the cap
    /// or with a byte that is not UTF-8 is refused (`UNKNOWN_WORKFLOW`, with
    /// the checker's message).
    pub fn text(&self, workflow: &str) -> Result<(PathBuf, String), EngineError> {
        let path = self.resolve(workflow)?;
        let (source, diags) = self.source(workflow, &path)?;
        if let Some(d) = diags.first() {
            return Err(EngineError::with(
                ErrorCode::UnknownWorkflow,
                UnknownWorkflow {
                    help: d.help.clone(),
                    ..UnknownWorkflow::new(workflow, format!("{}: {}", path.display(), d.message))
                },
            ));
        }
        Ok((path, source.text))
    }

    /// A workflow file read and decoded: the source and the decoding
    /// diagnostics (`YAML_LIMIT`, `YAML_SYNTAX` for a non-UTF-8 byte), the
    /// same for `check`, `plan` and `validate`.
    fn source(&self, workflow: &str, path: &Path) -> Result<(SourceFile, Vec<Diagnostic>), EngineError> {
        let bytes = self.read_bytes(workflow, path)?;
        Ok(crate::workspace::decode_source(path.to_string_lossy().into_owned(), bytes, &Limits::default()))
    }

    /// A workflow's diagnostics (all of them, not only errors), for
    /// `validate`. Not cached: it is asked for when the file is being edited.
    pub fn check(&self, workflow: &str) -> Result<(SourceFile, Vec<Diagnostic>), EngineError> {
        let path = self.resolve(workflow)?;
        let (src, read_diags) = self.source(workflow, &path)?;
        Ok(crate::workspace::check_decoded(src, read_diags, &self.check_config()))
    }

    /// Resolves, reads and compiles a workflow; cached by path and content hash.
    ///
    /// A file whose identity is unchanged since it was read, and that had
    /// not been modified in the second before that read (a later write in
    /// the same clock tick would keep its times), is not read again: a hot
    /// call does no I/O but one `stat`. Otherwise it is read once and
    /// hashed; the same bytes keep the compiled workflow. A workflow with
    /// errors is refused with `YAML_SCHEMA_VIOLATION` and its diagnostics.
    ///
    /// The argument's resolution (id → path, symlinks confined to the root)
    /// is remembered too: while the file it found keeps its identity, it
    /// is the same file, so a hot call does not resolve again. A file
    /// replaced by a symlink or another file has another identity and is
    /// resolved (and confined) afresh.
    pub fn workflow(&self, workflow: &str) -> Result<Arc<CompiledWorkflow>, EngineError> {
        // First: a change in `schemas/` drops the compiled workflows.
        let (config, generation) = self.current();
        if let Some(hot) = self.hot_workflow(workflow, generation) {
            return Ok(hot);
        }
        let path = self.resolve(workflow)?;
        lock(&self.resolved).insert(workflow.to_owned(), path.clone());
        let identity = FileIdentity::of(&path);
        let cached = lock(&self.workflows).get(&path).cloned();
        let cached = cached.filter(|c| c.generation == generation);
        if let (Some(c), Some(id)) = (&cached, identity)
            && c.identity == Some(id)
            && id.settled_before(c.read_at)
        {
            return Ok(c.compiled.clone());
        }
        let read_at = std::time::SystemTime::now();
        let bytes = self.read_bytes(workflow, &path)?;
        let hash = workflow::sha256_hex(&bytes);
        let compiled = match cached {
            Some(c) if c.compiled.hash == hash => c.compiled,
            _ => Arc::new(workflow::compile_hashed(&path, bytes, hash, &config)?),
        };
        let entry = CachedWorkflow { compiled: compiled.clone(), generation, identity, read_at };
        lock(&self.workflows).insert(path, entry);
        Ok(compiled)
    }

    /// `plan`'s check of a workflow with `uses:` across the project's
    /// files, as `check` does it (`UNKNOWN_WORKFLOW`, `WORKFLOW_CYCLE`,
    /// a param of the wrong type…): refused with `YAML_SCHEMA_VIOLATION`
    /// and the diagnostics, like a workflow with errors. Not cached: the
    /// other files may have changed; a workflow without `uses:` costs
    /// nothing.
    pub fn check_uses(&self, cw: &CompiledWorkflow) -> Result<(), EngineError> {
        if !cw.wf.steps.iter().any(|s| s.uses.is_some()) {
            return Ok(());
        }
        let mut config = Config::clone(&self.check_config());
        config.workflows = crate::workspace::load_workflows(&self.root, &config, None);
        let bytes = cw.source.text.clone().into_bytes();
        // A parent whose only errors are its callees' (`CALLEE_ERROR`):
        // the walk below names the callee with its own diagnostics.
        let below = match workflow::compile_bytes(&cw.path, bytes, &config) {
            Ok(_) => Ok(()),
            Err(e) if only_callee_errors(&cw.source, &config) => Err(e),
            Err(e) => return Err(e),
        };
        // Every workflow below, at any depth, must compile too: a run would
        // otherwise start and fail at the first child that cannot.
        let mut seen = std::collections::BTreeSet::from([cw.wf.id.clone()]);
        let mut todo: Vec<(String, String, String)> = Vec::new();
        let push = |todo: &mut Vec<(String, String, String)>, at: &CompiledWorkflow| {
            for s in &at.wf.steps {
                if let Some(u) = &s.uses {
                    todo.push((at.wf.id.clone(), s.id.value.to_string(), u.value.to_string()));
                }
            }
        };
        push(&mut todo, cw);
        while let Some((parent, step, uses)) = todo.pop() {
            if !seen.insert(uses.clone()) || seen.len() > 256 {
                continue;
            }
            match self.workflow(&uses) {
                Ok(callee) => push(&mut todo, &callee),
                Err(mut e) => {
                    let message =
                        format!("`{step}` of `{parent}` uses `{uses}`, which cannot run: {}", e.describe());
                    *e.details = e.details.in_callee(message, &uses);
                    return Err(e);
                }
            }
        }
        below
    }

    /// The cached workflow `workflow` resolved to, if its file is unchanged.
    fn hot_workflow(&self, workflow: &str, generation: u64) -> Option<Arc<CompiledWorkflow>> {
        let path = lock(&self.resolved).get(workflow).cloned()?;
        let id = FileIdentity::of(&path)?;
        let cache = lock(&self.workflows);
        let c = cache.get(&path)?;
        (c.generation == generation && c.identity == Some(id) && id.settled_before(c.read_at))
            .then(|| c.compiled.clone())
    }

    /// Whether `cw` is `<root>/workflows/<its id>.y(a)ml` (a run of it can be
    /// found again by id alone).
    pub fn is_by_id(&self, cw: &CompiledWorkflow) -> bool {
        let by_id = self.resolve(&cw.wf.id).ok();
        by_id.is_some_and(|p| crate::fsx::same_file(&p, &cw.path))
    }

    // ---- schemas ----------------------------------------------------------

    /// The named schema `schemas/<name>.json`, or why it cannot be used
    /// (`UNKNOWN_SCHEMA`, listing the names there are).
    pub fn schema(&self, name: &str) -> Result<Value, EngineError> {
        named(&self.check_config(), name).cloned()
    }

    // ---- prompts ----------------------------------------------------------

    /// The bundled driver prompts merged with the project's `prompts/prompts.yml`
    /// (read on each call: editing it takes effect at once).
    pub fn prompts(&self) -> Result<Registry, EngineError> {
        prompts::registry(&self.root)
    }

    /// One driver prompt's text; the latest when `version` is `None`.
    pub fn driver_prompt(&self, version: Option<&str>) -> Result<DriverPrompt, EngineError> {
        prompts::driver_prompt(&self.root, version)
    }

    /// Every driver prompt version and where it comes from (`prompt --list`).
    pub fn prompt_list(&self) -> Result<PromptList, EngineError> {
        prompts::list(&self.root)
    }
}

/// The most validators one cache holds: past it the cache starts again
/// (a long-running server compiles each edit of a workflow anew).
const MAX_CACHED_VALIDATORS: usize = 4096;

fn bounded_insert<K: std::hash::Hash + Eq, V>(map: &mut HashMap<K, V>, key: K, value: V) {
    if map.len() >= MAX_CACHED_VALIDATORS {
        map.clear();
    }
    map.insert(key, value);
}

/// Whether every error of `src` is a `CALLEE_ERROR`.
fn only_callee_errors(src: &SourceFile, config: &Config) -> bool {
    use crate::diagnostic::{Code, Severity};
    let diags = crate::check::check_source(src, config);
    diags.iter().filter(|d| d.severity == Severity::Error).all(|d| d.code == Code::CalleeError)
}

/// The named schema in `config`, or why it cannot be used.
fn named<'c>(config: &'c Config, name: &str) -> Result<&'c Value, EngineError> {
    match config.schemas.get(name) {
        Some(Ok(s)) => Ok(s),
        Some(Err(why)) => Err(EngineError::with(
            ErrorCode::UnknownSchema,
            UnknownSchema { schema: name.to_owned(), message: why.clone(), available: None },
        )),
        None => Err(EngineError::with(
            ErrorCode::UnknownSchema,
            UnknownSchema {
                schema: name.to_owned(),
                message: format!("no schemas/{name}.json"),
                available: Some(config.schemas.keys().cloned().collect()),
            },
        )),
    }
}

fn compile_schema(key: &str, schema: &Value) -> Result<jsonschema::Validator, EngineError> {
    jsonschema::validator_for(schema).map_err(|e| {
        EngineError::with(
            ErrorCode::UnknownSchema,
            UnknownSchema {
                schema: key.to_owned(),
                message: format!("invalid JSON Schema: {e}"),
                available: None,
            },
        )
    })
}

/// `path` if it lies inside the project root once symlinks are resolved
/// (the engine serves workflows to MCP clients: `/etc/passwd` or a symlink
/// out of the root is refused).
fn confined(root: &Path, workflow: &str, path: &Path) -> Result<PathBuf, EngineError> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    crate::fsx::confine_file(root, &absolute)
        .map(|_| path.to_path_buf())
        .map_err(|e| EngineError::workflow_refused(workflow, &e))
}
