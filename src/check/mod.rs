//! The checker: runs every check over a lowered workflow.
//!
//! `YAML_SYNTAX`, `YAML_LIMIT` (syntax::yaml), `YAML_SCHEMA_VIOLATION` and
//! `EXPR_SYNTAX` (ir::lower) come from reading the file; every other code is
//! one file here, registered in [`CHECKS`].
//!
//! Each check is `fn check(cx: &Cx, out: &mut Vec<Diagnostic>)` in its own
//! file. The shared pieces: `graph.rs` the dependency graph (explicit deps
//! plus edges inferred from reading a capture or `steps.<id>`; reads only
//! `ir`); `scope.rs` what a name refers to; `infer.rs` type inference
//! (`TYPE_MISMATCH`, and `UNRESOLVED_VAR` for undeclared fields); `manifest.rs` the `--tools` manifest;
//! `contract.rs` `Contracts`, a callee's input and output schemas and hints,
//! handed in as `Config::builtins` (the checker never builds the engine's
//! own) and `Config::lock`, looked up once per step by `Cx::contracts`;
//! `tool_input.rs` which input schema a step's tool has; `lock.rs`
//! `tools.lock.json` (its types, its sorted rendering, its reading into
//! contracts, `INVALID_TOOL_LOCK`; read from disk by
//! `workspace::load_lock`); `workflows.rs` the project's workflows as
//! callees of `uses:` (each one's contract and `uses:` edges, from texts the
//! caller read with `workspace::load_workflows`, handed in as
//! `Config::workflows`); `suppress.rs` inline `# savant-think: ignore[…]`
//! comments, `[check]` ignores and `UNUSED_SUPPRESSION`, applied where
//! `check` reports, never inside `check_source`, so the engine refuses a
//! broken workflow whatever its comments say; `rules.rs` each code's
//! docs/checks.md section, built in (`savant-think rule`, SARIF rule help);
//! `fix.rs` the fixes `--fix` and the editor apply. The language server's
//! re-check after an edit inside one step is `incremental.rs` (only that
//! step parsed and lowered again), `recheck.rs` (which steps' diagnostics
//! are kept, by what the edited step shows the others), `rewire.rs` and
//! `rename.rs` (the whole-workflow parts, updated rather than redone);
//! `waits.rs` what the checks of waits share (the schema of an answer or
//! an event's payload, from `Config::events`, the declared
//! `[events.NAME]`); each file's docs give its rule.

mod callee_error;
pub mod contract;
mod cyclic_dependency;
mod destructive_call;
mod duplicate_capture;
mod duplicate_step;
mod duplicate_wait;
mod elicitation_schema;
pub mod fix;
pub mod graph;
pub mod incremental;
pub mod infer;
mod legacy_interpolation;
pub mod lock;
pub mod manifest;
mod missing_input;
mod on_timeout_mismatch;
mod recheck;
mod rename;
mod rewire;
pub mod rules;
pub mod scope;
mod sleep_until;
pub mod suppress;
mod tool_input;
mod type_mismatch;
mod undeclared_event;
mod unguarded_optional;
mod unhandled_timeout;
mod unknown_dep;
mod unknown_function;
mod unknown_input;
mod unknown_schema;
mod unknown_tool;
mod unknown_workflow;
mod unresolved_var;
mod unused_capture;
mod wait_without_timeout;
pub mod waits;
mod workflow_cycle;
pub mod workflows;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, SchemaRef, Type, Workflow};
use crate::source::Limits;
use crate::source::{SourceFile, Span};
use crate::syntax::scalar::ScalarMap;
use crate::syntax::yaml;
pub use contract::{Contracts, ToolContract};
use graph::DepGraph;
pub use manifest::ToolManifest;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// What the checker knows beyond the file itself. Built by the caller (which
/// does the I/O); the checker never reads the disk.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Named success schemas: `schemas/<Name>.json` → its JSON, or why it could not be read.
    pub schemas: BTreeMap<String, Result<Value, String>>,
    /// When given, `call`s and their `input_template` keys are checked against it.
    pub tools: Option<ToolManifest>,
    /// The engine's own tools (`runtime::contracts::builtin()`): always
    /// known, their inputs checked and their results typed.
    pub builtins: Arc<Contracts>,
    /// Opt-in codes to report (`[check] select`).
    pub select: Vec<Code>,
    /// `tools.lock.json`, when the project has one: a call to a locked
    /// server's tool is checked against it, its capture typed from the
    /// tool's `outputSchema`.
    pub lock: Option<Arc<lock::LockTable>>,
    /// The project's workflows, when known: `uses:` is checked against
    /// them (and across files); without, a `uses:` step is untyped.
    pub workflows: Option<Arc<workflows::WorkflowTable>>,
    /// `[events.NAME]` of savant-think.toml: the events a `wait_for:` may
    /// wait for, each with its payload's schema (none: any JSON value),
    /// which types the step's capture. `None` when the caller does not
    /// know the project's events: `UNDECLARED_EVENT` is then not reported.
    pub events: Option<Arc<BTreeMap<String, Option<Value>>>>,
    pub limits: Limits,
}

/// Everything a check may read.
pub struct Cx<'a> {
    pub src: &'a SourceFile,
    /// Maps spans inside the file's scalars to the file (remembering the
    /// last few decodings).
    pub scalars: ScalarMap<'a>,
    pub wf: &'a Workflow,
    pub config: &'a Config,
    /// Step id → index of its first declaration.
    pub step_index: HashMap<&'a str, usize>,
    /// Capture name → index of the first step that captures it.
    pub captures: HashMap<&'a str, usize>,
    pub graph: DepGraph,
    /// Per step: the type of its capture (`array<…>` for foreach steps).
    /// Steps with the same schema share one type.
    pub capture_types: Vec<Arc<Type>>,
    /// Per step: the contract of the tool whose output schema typed its
    /// capture (no `success_schema` and a known output).
    pub capture_tool: Vec<Option<&'a ToolContract>>,
    /// Per step: the contract of the tool it calls, if known (looked up once).
    pub contracts: Vec<Option<&'a ToolContract>>,
    /// The type of `params` ([`Workflow::params_type`]), built once.
    pub params_type: Type,
    /// What the checks look at: everything unless the language server
    /// re-checks one step ([`incremental`]).
    pub scope: Scope,
}

/// The part of a workflow the checks run over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every step and the whole-workflow parts: what `check` reports.
    All,
    /// One step's own diagnostics: those a check reports while visiting
    /// that step (its expressions, keys, call, deps).
    Step(usize),
    /// Only what belongs to no one step: `outputs:`, dependency cycles,
    /// unused captures.
    Whole,
}

impl<'a> Cx<'a> {
    pub fn new(src: &'a SourceFile, wf: &'a Workflow, config: &'a Config) -> Cx<'a> {
        let mut step_index = HashMap::with_capacity(wf.steps.len());
        let mut captures = HashMap::new();
        for (i, s) in wf.steps.iter().enumerate() {
            step_index.entry(s.id.value.as_str()).or_insert(i);
            if let Some(c) = &s.capture_as {
                captures.entry(c.value.as_str()).or_insert(i);
            }
        }
        let contracts: Vec<Option<&ToolContract>> = wf
            .steps
            .iter()
            .map(|s| match (&s.call, &s.uses) {
                (Some(call), _) => config.contract(&call.value),
                (None, Some(uses)) => config.workflows.as_ref()?.contract(&uses.value),
                (None, None) => None,
            })
            .collect();
        let (capture_types, capture_tool) = capture_types(wf, config, &contracts);
        let graph = DepGraph::build(wf, &step_index, &captures);
        let scalars = ScalarMap::new(&src.text);
        let params_type = wf.params_type();
        Cx {
            src,
            scalars,
            wf,
            config,
            step_index,
            captures,
            graph,
            capture_types,
            capture_tool,
            contracts,
            params_type,
            scope: Scope::All,
        }
    }

    /// The steps a check visits, with their indices: every step, or the
    /// one of [`Scope::Step`].
    pub fn steps(&self) -> impl Iterator<Item = (usize, &'a ir::Step)> + 'a {
        let n = self.wf.steps.len();
        let range = match self.scope {
            Scope::All => 0..n,
            Scope::Step(k) => k.min(n)..(k + 1).min(n),
            Scope::Whole => 0..0,
        };
        let wf = self.wf;
        range.map(move |i| (i, &wf.steps[i]))
    }

    /// Whether the whole-workflow parts run (`outputs:`, cycles, unused
    /// captures): not when one step is re-checked.
    pub fn whole(&self) -> bool {
        !matches!(self.scope, Scope::Step(_))
    }

    /// [`Workflow::expressions`] of the steps a check visits, and
    /// `outputs:`'s when [`Cx::whole`].
    pub fn expressions(&self) -> Vec<(usize, &'a ir::ast::Expr, &'a str, &'a ir::ScalarLoc, ir::ExprSite)> {
        if self.scope == Scope::All {
            return self.wf.expressions();
        }
        let mut out: Vec<_> = self
            .steps()
            .flat_map(|(i, step)| step.expressions().into_iter().map(move |(e, t, l, s)| (i, e, t, l, s)))
            .collect();
        if self.whole() {
            let outputs = self.wf.output_expressions().into_iter();
            out.extend(outputs.map(|(e, t, l)| (0, e, t, l, ir::ExprSite::Output)));
        }
        out
    }

    /// The contract of the tool a step calls, if known.
    pub fn contract(&self, step: usize) -> Option<&'a ToolContract> {
        self.contracts.get(step).copied().flatten()
    }

    /// Maps a span inside an expression's scalar to a file span.
    pub fn file_span(&self, loc: &ir::ScalarLoc, text: &str, inner: Span) -> Span {
        loc.file_span(&self.scalars, text, inner)
    }
}

impl Config {
    /// The contract of a tool the checker knows in detail: the engine's
    /// own, else the lock's.
    pub fn contract(&self, name: &str) -> Option<&ToolContract> {
        self.builtins.get(name).or_else(|| self.lock.as_ref()?.contracts.get(name))
    }
}

/// The type of each step's capture; one shared value per distinct schema
/// (generated workflows repeat one inline schema thousands of times); and
/// the tool contract that typed it, if one did.
#[allow(clippy::type_complexity)]
fn capture_types<'a>(
    wf: &Workflow,
    config: &Config,
    contracts: &[Option<&'a ToolContract>],
) -> (Vec<Arc<Type>>, Vec<Option<&'a ToolContract>>) {
    let mut seen: HashMap<(bool, Option<SchemaKey>), Arc<Type>, rustc_hash::FxBuildHasher> =
        HashMap::default();
    let mut by_tool: HashMap<(bool, *const ToolContract), Arc<Type>> = HashMap::new();
    let mut out = Vec::with_capacity(wf.steps.len());
    let mut tools = Vec::with_capacity(wf.steps.len());
    for (step, known) in wf.steps.iter().zip(contracts) {
        // A tool with a known output schema, when the step has no success schema.
        let contract = match &step.success_schema {
            None => known.filter(|c| c.types_capture && c.output.is_some()),
            _ => None,
        };
        tools.push(contract);
        if let Some(c) = contract {
            let ty = by_tool.entry((step.foreach.is_some(), c as *const _)).or_insert_with(|| {
                let item = c.output_type();
                Arc::new(if step.foreach.is_some() { Type::array(item) } else { item })
            });
            out.push(Arc::clone(ty));
            continue;
        }
        let schema = match &step.success_schema {
            Some(SchemaRef::Inline { schema, .. }) => Some(&**schema),
            Some(SchemaRef::Named(n)) => match config.schemas.get(n.value.as_str()) {
                Some(Ok(schema)) => Some(schema),
                _ => None,
            },
            // A `wait_for:` step: its event's payload schema.
            None => waits::event_schema(step, config),
        };
        // A `model.generate` step without a success schema: its result has the input's `schema`.
        let generated = if schema.is_none() { manifest::model_generate_output(step) } else { None };
        let schema = match (schema, generated) {
            (Some(s), _) => Some(std::borrow::Cow::Borrowed(s)),
            (None, g) => g.map(std::borrow::Cow::Owned),
        };
        let key = (step.foreach.is_some(), schema.map(SchemaKey));
        let ty = seen.entry(key).or_insert_with_key(|(_, schema)| {
            let item = schema.as_ref().map_or(Type::Any, |s| Type::from_schema(&s.0));
            Arc::new(if step.foreach.is_some() { Type::array(item) } else { item })
        });
        out.push(Arc::clone(ty));
    }
    (out, tools)
}

/// A schema as a map key: two are the same exactly when their JSON texts
/// are (keys in order, numbers as written), without writing the text.
struct SchemaKey<'v>(std::borrow::Cow<'v, Value>);

impl PartialEq for SchemaKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        fn same(a: &Value, b: &Value) -> bool {
            match (a, b) {
                (Value::Null, Value::Null) => true,
                (Value::Bool(x), Value::Bool(y)) => x == y,
                // `1` and `1.0`, `0.0` and `-0.0` are written differently.
                (Value::Number(x), Value::Number(y)) => {
                    x.as_u64() == y.as_u64()
                        && x.as_i64() == y.as_i64()
                        && x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
                        && x.is_f64() == y.is_f64()
                }
                (Value::String(x), Value::String(y)) => x == y,
                (Value::Array(x), Value::Array(y)) => {
                    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
                }
                (Value::Object(x), Value::Object(y)) => {
                    x.len() == y.len() && x.iter().zip(y).all(|((k, a), (l, b))| k == l && same(a, b))
                }
                _ => false,
            }
        }
        same(&self.0, &other.0)
    }
}

impl Eq for SchemaKey<'_> {}

impl Hash for SchemaKey<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        fn walk<H: Hasher>(v: &Value, h: &mut H) {
            std::mem::discriminant(v).hash(h);
            match v {
                Value::Null => {}
                Value::Bool(b) => b.hash(h),
                Value::Number(n) => n.as_f64().map(f64::to_bits).hash(h),
                Value::String(s) => s.hash(h),
                Value::Array(items) => {
                    items.len().hash(h);
                    items.iter().for_each(|i| walk(i, h));
                }
                Value::Object(map) => {
                    map.len().hash(h);
                    for (k, v) in map {
                        k.hash(h);
                        walk(v, h);
                    }
                }
            }
        }
        walk(&self.0, h)
    }
}

/// A check: reads the context, pushes diagnostics. It visits the steps
/// of [`Cx::steps`] (or [`Cx::expressions`]), each diagnostic inside the
/// step being visited, and reports what belongs to no one step only when
/// [`Cx::whole`]: the language server checks one step at a time
/// ([`Scope`]).
pub type CheckFn = fn(&Cx, &mut Vec<Diagnostic>);

/// The registry: one row per code a check produces.
pub const CHECKS: &[(Code, CheckFn)] = &[
    (Code::DuplicateStep, duplicate_step::check),
    (Code::DuplicateCapture, duplicate_capture::check),
    (Code::UnknownDep, unknown_dep::check),
    (Code::CyclicDependency, cyclic_dependency::check),
    (Code::UnresolvedVar, unresolved_var::check),
    (Code::UnknownFunction, unknown_function::check),
    (Code::TypeMismatch, type_mismatch::check),
    (Code::UnknownSchema, unknown_schema::check),
    (Code::UnknownTool, unknown_tool::check),
    (Code::LegacyInterpolation, legacy_interpolation::check),
    (Code::UnusedCapture, unused_capture::check),
    (Code::DestructiveCall, destructive_call::check),
    (Code::UnknownWorkflow, unknown_workflow::check),
    (Code::WorkflowCycle, workflow_cycle::check),
    (Code::UnknownInput, unknown_input::check),
    (Code::MissingInput, missing_input::check),
    // `sleep_until:` that is not a timestamp: a TYPE_MISMATCH of its own file.
    (Code::TypeMismatch, sleep_until::check),
    (Code::ElicitationSchema, elicitation_schema::check),
    (Code::OnTimeoutMismatch, on_timeout_mismatch::check),
    (Code::WaitWithoutTimeout, wait_without_timeout::check),
    (Code::UndeclaredEvent, undeclared_event::check),
    (Code::DuplicateWait, duplicate_wait::check),
    (Code::UnhandledTimeout, unhandled_timeout::check),
    (Code::UnguardedOptional, unguarded_optional::check),
];

/// Checks one file's text: parse, lower, run every check. Never panics on
/// any input; diagnostics come back sorted by position.
pub fn check_source(src: &SourceFile, config: &Config) -> Vec<Diagnostic> {
    analyze(src, config).1
}

/// Like [`check_source`], and also returns the lowered workflow (when the
/// file was a YAML document).
pub fn analyze(src: &SourceFile, config: &Config) -> (Option<Workflow>, Vec<Diagnostic>) {
    let (wf, diags, _) = analyze_with(src, config, |_, _| ());
    (wf, diags)
}

/// [`analyze`], and `then` is called with the checker's context and the
/// sorted diagnostics before the context is dropped, so that a caller (the
/// compiler) reads the dependency graph the checks used instead of building
/// it again. `then` is not called when the file has no YAML document (the
/// third value is then `None`).
pub fn analyze_with<R>(
    src: &SourceFile,
    config: &Config,
    then: impl FnOnce(&Cx, &[Diagnostic]) -> R,
) -> (Option<Workflow>, Vec<Diagnostic>, Option<R>) {
    let parsed = yaml::parse(src, &config.limits);
    let mut diags = parsed.diagnostics;
    let Some(root) = parsed.root else {
        return (None, no_document(diags), None);
    };
    let (wf, lower_diags) = ir::lower(src, root, &default_id(&src.path));
    diags.extend(lower_diags);
    let cx = Cx::new(src, &wf, config);
    run_checks(&cx, &mut diags);
    let out = then(&cx, &diags);
    drop(cx);
    (Some(wf), diags, Some(out))
}

/// Runs every check on a workflow already read (`read`: the parser's and
/// the lowering's diagnostics): what [`check_source`] gives for its text.
pub fn check_lowered(
    src: &SourceFile,
    wf: &Workflow,
    mut read: Vec<Diagnostic>,
    config: &Config,
) -> Vec<Diagnostic> {
    let cx = Cx::new(src, wf, config);
    run_checks(&cx, &mut read);
    read
}

/// The diagnostics of a file without a YAML document: the parser's, or
/// that the file is empty.
fn no_document(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    if diags.is_empty() {
        diags.push(
            Diagnostic::new(Code::YamlSchemaViolation, Span::point(0), "the file is empty")
                .with_help("a workflow needs at least `steps:` with one `{id, call}` step"),
        );
    }
    diags
}

/// Runs every check after the reading diagnostics `diags`, and sorts.
fn run_checks(cx: &Cx, diags: &mut Vec<Diagnostic>) {
    for (_, check) in CHECKS {
        check(cx, diags);
    }
    sort(diags);
}

/// The file stem, the workflow's id when it declares none.
pub fn default_id(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = name.strip_suffix(".yaml").or_else(|| name.strip_suffix(".yml")).unwrap_or(name);
    stem.to_owned()
}

/// Sorts by position, then code, and drops exact duplicates.
pub fn sort(diags: &mut Vec<Diagnostic>) {
    diags.sort_by_key(|a| (a.span.start, a.span.end, a.code));
    diags.dedup();
}
