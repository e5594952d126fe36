//! The engine's tool table: every tool's name, title, description (telling
//! the model what to do next), annotations, typed arguments and reply, and
//! whether MCP serves it. Built once. The input and output schemas are
//! generated from the argument and reply types (`runtime::args`,
//! `runtime::reply`; descriptions from their doc comments). The MCP tool
//! list, the agent's tool offers and argument checks, `call`, and the
//! dispatcher all come from here: there is no other list of tools.

use crate::runtime::args::*;
use crate::runtime::reply::*;
use crate::runtime::{Engine, EngineError, EngineResult, ErrorCode};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::sync::{Arc, LazyLock, OnceLock};

/// MCP tool annotations (hints for a client).
#[derive(Clone, Copy, Debug)]
pub struct Annotations {
    /// The tool changes nothing.
    pub read_only: bool,
    /// The tool may discard what was recorded (a reset with force, a delete).
    pub destructive: bool,
    /// Calling it twice with the same arguments does what calling it once does.
    pub idempotent: bool,
}

/// What a tool is, apart from its types.
struct Meta {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    annotations: Annotations,
    mcp: bool,
    pure: bool,
}

type Call = Box<dyn Fn(&Engine, Value) -> EngineResult + Send + Sync>;

/// One engine tool as a client sees it, and how it is called.
pub struct ToolDef {
    /// The canonical name (`think_plan`).
    pub name: &'static str,
    /// A title for people.
    pub title: &'static str,
    /// What it does and when to call it, for a model.
    pub description: &'static str,
    /// Hints for a client.
    pub annotations: Annotations,
    /// The arguments' JSON Schema, generated from the argument type.
    pub input: Value,
    /// The reply's JSON Schema, generated from the reply type, plus the
    /// `{error, details}` of an `isError` result.
    pub output: Value,
    /// Served over MCP (`think_state_delete` is CLI only: a model should not
    /// delete runs).
    pub mcp: bool,
    /// Touches no file and no state (`prompt_say`): a server may answer it
    /// without a trip to a blocking thread.
    pub pure: bool,
    /// The input schema, compiled when first needed (shared with `call`, for
    /// its messages): a command that only reads the schemas, like `check`,
    /// compiles none of them.
    validator: Arc<OnceLock<Option<jsonschema::Validator>>>,
    call: Call,
}

impl ToolDef {
    /// Whether the tool changes nothing.
    pub fn read_only(&self) -> bool {
        self.annotations.read_only
    }

    /// Calls the tool: the arguments are read into the tool's type (a
    /// mismatch is `INVALID_INPUT` saying which), the reply made JSON.
    pub fn call(&self, engine: &Engine, args: Value) -> EngineResult {
        (self.call)(engine, args)
    }

    /// The compiled input schema (it refuses unknown fields, where `call`
    /// ignores them).
    pub fn validator(&self) -> Option<&jsonschema::Validator> {
        compiled(&self.validator, &self.input)
    }
}

/// An engine tool's name, however it was written: `think.plan` (the seeds'
/// dotted names) and `think_plan` are one name, and from a model's output
/// (`ToolName::loose`) so is `think-plan`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ToolName(
    /// The tool's place in the table.
    usize,
);

impl ToolName {
    /// The tool `name` names (`.` or `_` between words).
    pub fn parse(name: &str) -> Option<ToolName> {
        Self::lookup(name, b"._")
    }

    /// Like [`ToolName::parse`], also reading `-` as `_`, and ignoring
    /// surrounding spaces: for names a model wrote.
    pub fn loose(name: &str) -> Option<ToolName> {
        Self::lookup(name.trim(), b"._-")
    }

    fn lookup(name: &str, separators: &[u8]) -> Option<ToolName> {
        let same = |canonical: &str| {
            canonical.len() == name.len()
                && canonical
                    .bytes()
                    .zip(name.bytes())
                    .all(|(c, n)| c == n || (c == b'_' && separators.contains(&n)))
        };
        ALL.iter().position(|t| same(t.name)).map(ToolName)
    }

    /// The canonical form (`think_plan`).
    pub fn as_str(self) -> &'static str {
        ALL[self.0].name
    }

    /// The tool's definition.
    pub fn def(self) -> &'static ToolDef {
        &ALL[self.0]
    }
}

impl std::fmt::Display for ToolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

static ALL: LazyLock<Vec<ToolDef>> = LazyLock::new(build);

/// Every engine tool, in a stable order.
pub fn all() -> &'static [ToolDef] {
    &ALL
}

/// The tools served over MCP, in a stable order.
pub fn tools() -> impl Iterator<Item = &'static ToolDef> {
    ALL.iter().filter(|t| t.mcp)
}

/// Every engine tool's name, canonical form (`think_plan`).
pub fn names() -> impl Iterator<Item = &'static str> {
    ALL.iter().map(|t| t.name)
}

/// Looks a tool up by name (dotted names accepted: `think.plan`).
pub fn find(name: &str) -> Option<&'static ToolDef> {
    ToolName::parse(name).map(ToolName::def)
}

/// Compiles every tool's input schema now rather than at its first call.
pub fn compile_validators() {
    for t in all() {
        t.validator();
    }
}

/// The compiled input schema of a tool.
pub fn input_validator(name: &str) -> Option<&'static jsonschema::Validator> {
    find(name)?.validator()
}

/// A type's JSON Schema as a tool schema: subschemas inline, no `$schema`,
/// `title` or top-level `description` (the tool has its own).
fn schema<T: JsonSchema>(settings: SchemaSettings) -> Value {
    let settings = settings.with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let mut v = settings.into_generator().into_root_schema_for::<T>().to_value();
    if let Some(o) = v.as_object_mut() {
        o.remove("title");
        o.remove("description");
    }
    crate::runtime::tool_schema::standard_formats(&mut v);
    v
}

/// Every property a reply may have, from all its shapes (untagged enums
/// and flattened fields become one object): the output schema lists them
/// all and requires none, because an `isError` result has the same schema.
fn properties(schema: &Value, into: &mut Map<String, Value>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            // The same name in two shapes of an untagged answer: either schema.
            match into.get_mut(k) {
                None => {
                    into.insert(k.clone(), v.clone());
                }
                Some(old) if old == v => {}
                Some(old) => {
                    let union = old.as_object().is_some_and(|o| {
                        o.contains_key("anyOf") && o.keys().all(|k| k == "anyOf" || k == "description")
                    });
                    match old.get_mut("anyOf").and_then(Value::as_array_mut) {
                        Some(any) if union => {
                            if !any.contains(v) {
                                any.push(v.clone());
                            }
                        }
                        _ => {
                            let description =
                                old.get("description").or_else(|| v.get("description")).cloned();
                            let mut union = json!({"anyOf": [old.clone(), v.clone()]});
                            if let Some(d) = description {
                                union["description"] = d;
                            }
                            *old = union;
                        }
                    }
                }
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for s in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            properties(s, into);
        }
    }
}

/// The output schema of a reply type: its properties plus the error shape.
fn output<R: JsonSchema>() -> Value {
    let mut props = Map::new();
    properties(&schema::<R>(SchemaSettings::draft2020_12().for_serialize()), &mut props);
    props.insert(
        "error".into(),
        json!({"type": "string", "description": "Only on an isError result: the error code (UNKNOWN_WORKFLOW, INVALID_PARAMS, VALIDATION_FAILED, STATE_CONFLICT, UNKNOWN_STEP, STEP_NOT_READY, UNKNOWN_RUN, …)."}),
    );
    props.insert(
        "details".into(),
        json!({ "description": "Only on an isError result: what went wrong (a message, or a list of {path, message})." }),
    );
    json!({ "type": "object", "properties": props })
}

/// `INVALID_INPUT` for arguments that do not fit the tool's type, naming
/// the argument: the input schema says which one and why (serde's own
/// message does not name a field of the wrong type).
fn invalid(
    tool: &str,
    validator: Option<&jsonschema::Validator>,
    args: &Value,
    e: serde_json::Error,
) -> EngineError {
    use jsonschema::error::ValidationErrorKind;
    // Unknown arguments are refused before (`tool_schema::unknown_arguments`);
    // a nested object's extra field is not the reason serde gave either.
    let first = validator.and_then(|v| {
        v.iter_errors(args).find(|e| !matches!(e.kind(), ValidationErrorKind::AdditionalProperties { .. }))
    });
    let why = match first.as_ref() {
        // A missing argument, named as the schema requires it (not read
        // from serde's text).
        Some(v) if let ValidationErrorKind::Required { property } = v.kind() => {
            let field = property.as_str().map_or_else(|| property.to_string(), str::to_owned);
            let message = format!("missing required argument `{field}`");
            return EngineError::message(ErrorCode::InvalidInput, message);
        }
        Some(v) => format!("`{}`: {v}", v.instance_path().to_string().trim_start_matches('/')),
        None => e.to_string(),
    };
    let message = format!("invalid arguments for `{tool}`: {why}");
    EngineError::message(ErrorCode::InvalidInput, message)
}

/// The validator of `schema` in `cell`, compiled on first use.
fn compiled<'a>(
    cell: &'a OnceLock<Option<jsonschema::Validator>>,
    schema: &Value,
) -> Option<&'a jsonschema::Validator> {
    cell.get_or_init(|| jsonschema::validator_for(schema).ok()).as_ref()
}

fn tool<A, R>(meta: Meta, f: impl Fn(&Engine, A) -> EngineResult<R> + Send + Sync + 'static) -> ToolDef
where
    A: DeserializeOwned + JsonSchema + Payloads,
    R: Serialize + JsonSchema,
{
    let input = schema::<A>(SchemaSettings::draft2020_12().for_deserialize());
    let name = meta.name;
    let validator = Arc::new(OnceLock::new());
    let check = validator.clone();
    let known = input.clone();
    ToolDef {
        name,
        title: meta.title,
        description: meta.description,
        annotations: meta.annotations,
        validator,
        input,
        output: output::<R>(),
        mcp: meta.mcp,
        pure: meta.pure,
        call: Box::new(move |engine, args| {
            if let Some(e) = crate::runtime::tool_schema::unknown_arguments(name, &known, &args) {
                return Err(e);
            }
            // Arguments the schema takes are moved into `A`, not copied (a
            // result can be megabytes); others are read borrowed, for the
            // error's message.
            let validator = compiled(&check, &known);
            let args = if validator.is_none_or(|v| v.is_valid(&args)) {
                // A payload (a result: megabytes, maybe) is moved in whole,
                // not rebuilt value by value by serde.
                let mut args = args;
                let taken: Vec<(&str, Value)> = A::PAYLOADS
                    .iter()
                    .filter_map(|k| Some((*k, args.get_mut(*k).filter(|v| !v.is_null())?.take())))
                    .collect();
                let mut typed =
                    serde_json::from_value::<A>(args).map_err(|e| invalid(name, None, &Value::Null, e))?;
                for (k, v) in taken {
                    typed.put(k, v);
                }
                typed
            } else {
                A::deserialize(&args).map_err(|e| invalid(name, validator, &args, e))?
            };
            let reply = f(engine, args)?;
            Ok(serde_json::to_value(&reply).unwrap_or(Value::Null))
        }),
    }
}

fn bad(message: &str) -> EngineError {
    EngineError::message(ErrorCode::InvalidInput, message)
}

fn state_get_call(e: &Engine, a: StateGetArgs) -> EngineResult<FullState> {
    match (a.archived.unwrap_or(false), a.archive_id.as_deref()) {
        (false, None) => e.state_get(&a.workflow, &a.run_id),
        (_, archive_id) => e.state_get_archived(&a.workflow, &a.run_id, archive_id),
    }
}

fn upgrade_call(e: &Engine, a: UpgradeArgs) -> EngineResult<UpgradeReply> {
    if a.run_id.is_some() == a.all.unwrap_or(false) {
        return Err(bad("give run_id or all: true (one of the two)"));
    }
    let req = crate::runtime::engine::UpgradeRequest {
        run_id: a.run_id,
        renames: a.rename.unwrap_or_default(),
        dry_run: a.dry_run.unwrap_or(false),
        force: a.force.unwrap_or(false),
        expected_version: a.expected_version,
    };
    e.upgrade(&a.workflow, &req)
}

fn plan_call(e: &Engine, a: PlanArgs) -> EngineResult<Progress> {
    let if_exists = a.if_exists().map_err(|m| bad(&m))?;
    e.plan(&a.workflow, a.params.unwrap_or(Value::Null), a.run_id.as_deref(), if_exists)
}

fn validate_call(e: &Engine, a: ValidateArgs) -> EngineResult<Validation> {
    match (a.schema, a.workflow) {
        (Some(schema), _) => e.validate(&schema, a.response.as_ref().unwrap_or(&Value::Null)),
        (None, Some(workflow)) => e.validate_workflow(&workflow),
        (None, None) => Err(bad("give `schema` and `response`, or `workflow`")),
    }
}

fn think_call(e: &Engine, a: ThinkArgs) -> EngineResult<Thought> {
    let thought = a.thought.or(a.thoughts).ok_or_else(|| bad("missing required argument `thought`"))?;
    let run = match (a.workflow.as_deref(), a.run_id.as_deref()) {
        (Some(w), Some(r)) => Some((w, r)),
        _ => None,
    };
    e.think(&thought, run)
}

fn say_call(e: &Engine, a: SayArgs) -> EngineResult<Said> {
    let message = a.message.or(a.text).ok_or_else(|| bad("missing required argument `message`"))?;
    e.say(&message)
}

fn build() -> Vec<ToolDef> {
    let mut all = vec![
        tool::<PlanArgs, Progress>(
            Meta {
                name: "think_plan",
                title: "Start a workflow run",
                description: "Start a run of a workflow and get its first instruction. Then call the tool named in instruction.call with instruction.input, and submit that tool's result with think_next (workflow, run_id, instruction.step_id). Repeat until the response has done: true. Get the workflow ids from think_workflows_list. An existing run_id is RUN_EXISTS unless if_exists says resume (continue it) or replace (archive it and start over).",
                annotations: Annotations { read_only: false, destructive: false, idempotent: false },
                mcp: true,
                pure: false,
            },
            plan_call,
        ),
        tool::<NextArgs, Progress>(
            Meta {
                name: "think_next",
                title: "Submit a step's result",
                description: "Submit the result of the step you just carried out and get the next instruction. Call the tool in the new instruction.call with instruction.input, then think_next again, until done: true. On VALIDATION_FAILED the result did not match the step's success_schema: fix it and resubmit the same step_id (the instruction is repeated). Re-sending the same result for a done step is harmless.",
                annotations: Annotations { read_only: false, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            |e, a| e.next(a),
        ),
        tool::<ExplainArgs, Explanation>(
            Meta {
                name: "think_explain",
                title: "Explain a workflow, run or step",
                description: "Explain a workflow (its steps, order, params), a run (its state, what is ready, why it failed) or one step (what it does, why it is waiting). Use it when an instruction or an error is unclear; then carry on with think_next.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            |e, a| e.explain(&a.workflow, a.run_id.as_deref(), a.step_id.as_deref()),
        ),
        tool::<ResetArgs, Progress>(
            Meta {
                name: "think_reset",
                title: "Reset a run",
                description: "Reset a run to its start or to the state right after a step completed (checkpoint), and get the instruction to carry out from there. Discarding accepted results needs force: true. Then continue with think_next.",
                annotations: Annotations { read_only: false, destructive: true, idempotent: false },
                mcp: true,
                pure: false,
            },
            |e, a| e.reset(&a.workflow, &a.run_id, a.checkpoint.as_deref(), a.force.unwrap_or(false)),
        ),
        tool::<DriverPromptArgs, DriverPrompt>(
            Meta {
                name: "think_driver_prompt",
                title: "Get the driver prompt",
                description: "Get the driver prompt: the instructions for driving savant-think workflows (call this first). Follow prompt_md, then pick a workflow with think_workflows_list and start it with think_plan.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            |e, a| e.driver_prompt(a.version.as_deref()),
        ),
        tool::<ListArgs, WorkflowList>(
            Meta {
                name: "think_workflows_list",
                title: "List workflows",
                description: "List the workflows available, with names, descriptions and whether they check clean. Then read one with think_explain or think_workflows_read, and start it with think_plan.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            |e, a| e.workflows_list(a.filter.as_deref()),
        ),
        tool::<WorkflowArgs, WorkflowSource>(
            Meta {
                name: "think_workflows_read",
                title: "Read a workflow's YAML",
                description: "Read a workflow's YAML source (its params, steps and rules). Then start it with think_plan.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            |e, a| e.workflows_read(&a.workflow),
        ),
        tool::<GraphArgs, Graph>(
            Meta {
                name: "think_workflows_graph",
                title: "Get a workflow's dependency graph",
                description: "Get a workflow's compiled plan: its dependency graph (explicit and inferred edges) and execution order, as JSON, Mermaid or DOT. Use it to understand a workflow before think_plan.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            |e, a| e.workflows_graph(&a.workflow, a.format.unwrap_or_default()),
        ),
        tool::<StateGetArgs, FullState>(
            Meta {
                name: "think_state_get",
                title: "Get a run's full state",
                description: "Get a run's full state: params, per-step status, attempts and results, captures, history and version (with archived: true, an archived copy's). Use think_explain for a readable summary; continue the run with think_next.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            state_get_call,
        ),
        tool::<StateListArgs, RunList>(
            Meta {
                name: "think_state_list",
                title: "List runs",
                description: "List the runs stored (of one workflow, or all) with their status and version; with archived: true, the archived ones (replaced or deleted). Resume one with think_plan (if_exists: resume), inspect it with think_explain, bring an archived one back with think_state_restore.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            |e, a| match a.archived.unwrap_or(false) {
                false => e.state_list_where(a.workflow.as_deref(), a.waiting.unwrap_or(false)),
                true => e.state_list_archived(a.workflow.as_deref()),
            },
        ),
        tool::<DeleteArgs, Deleted>(
            Meta {
                name: "think_state_delete",
                title: "Delete a run",
                description: "Delete a run: it is archived (think_state_restore brings it back until state prune removes it); purge: true removes it at once, which cannot be undone. The CLI's `state delete` and `call` use it, MCP does not offer it.",
                annotations: Annotations { read_only: false, destructive: true, idempotent: false },
                mcp: false,
                pure: false,
            },
            |e, a| e.state_delete(&a.workflow, &a.run_id, a.purge.unwrap_or(false)),
        ),
        tool::<RepairArgs, Repaired>(
            Meta {
                name: "think_state_repair",
                title: "Check and repair a run's stored state",
                description: "Check a run's stored state: each journal line (checksum, sequence, version) and whether the run loads. apply: true cuts a damaged journal back to its last good event, keeping the whole journal in a backup file; nothing else is changed. The CLI's `state repair` and `call` use it, MCP does not offer it.",
                annotations: Annotations { read_only: false, destructive: true, idempotent: true },
                mcp: false,
                pure: false,
            },
            |e, a| e.state_repair(&a.workflow, &a.run_id, a.apply.unwrap_or(false)),
        ),
        tool::<PruneArgs, Pruned>(
            Meta {
                name: "think_state_prune",
                title: "Prune old runs",
                description: "Remove finished runs and archived copies by age, status and count, and the workflow versions no run is pinned to any more. dry_run: true says what would go. Unfinished runs go only when status names running. The CLI's `state prune` and `call` use it, MCP does not offer it.",
                annotations: Annotations { read_only: false, destructive: true, idempotent: true },
                mcp: false,
                pure: false,
            },
            |e, a| {
                let keep = crate::state::Keep {
                    older_than: a.older_than,
                    status: a.status.unwrap_or_default(),
                    keep_last: a.keep_last,
                };
                e.prune(&keep, a.dry_run.unwrap_or(false))
            },
        ),
        tool::<UpgradeArgs, UpgradeReply>(
            Meta {
                name: "think_upgrade",
                title: "Upgrade runs to the workflow as it is now",
                description: "Move a run (or all: true, every unfinished run) of a workflow onto the workflow file as it is now, after a static check: results carry over, steps that did not run may change freely, a step issued but not answered is issued again with its new instruction. An incompatible change is INCOMPATIBLE_UPGRADE with diagnostics pointing into the new file, and nothing changes. Use dry_run: true first; rename moved steps with rename: [\"old=new\"].",
                annotations: Annotations { read_only: false, destructive: false, idempotent: false },
                mcp: true,
                pure: false,
            },
            upgrade_call,
        ),
        tool::<ForkArgs, Progress>(
            Meta {
                name: "think_fork",
                title: "Fork a run from a step",
                description: "Start a new run from an existing one: every result that does not depend on the step `from` is kept, `from` is ready again (and, with new params, every step whose input changes runs again). The source run is not changed. Returns the new run's instruction; continue it with think_next using the new run_id.",
                annotations: Annotations { read_only: false, destructive: false, idempotent: false },
                mcp: true,
                pure: false,
            },
            |e, a| {
                e.fork(&a.workflow, &a.run_id, &a.from, a.new_run_id.as_deref(), a.params, a.expected_version)
            },
        ),
        tool::<RestoreArgs, Restored>(
            Meta {
                name: "think_state_restore",
                title: "Restore an archived run",
                description: "Make an archived run (replaced by think_plan with if_exists: replace, or deleted) the live run again, from its latest archived copy or archive_id. A live run with that id is RUN_EXISTS. Then resume it with think_plan (if_exists: resume).",
                annotations: Annotations { read_only: false, destructive: false, idempotent: false },
                mcp: true,
                pure: false,
            },
            |e, a| e.state_restore(&a.workflow, &a.run_id, a.archive_id.as_deref()),
        ),
        tool::<ValidateArgs, Validation>(
            Meta {
                name: "think_validate",
                title: "Validate a response or a workflow",
                description: "Check a response against a schema before submitting it with think_next (give schema and response), or check a workflow file for errors (give workflow). Fix what the errors list, then continue.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            validate_call,
        ),
        tool::<RunArgs, Replay>(
            Meta {
                name: "think_debug",
                title: "Replay a run",
                description: "Replay a run's history event by event: which steps changed status and which captures were set after each event, and whether the replay matches the stored state. Use it to understand how a run got where it is.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            |e, a| e.debug(&a.workflow, &a.run_id),
        ),
    ];
    all.splice(2..2, wait_tools());
    all.extend(session_tools());
    all.push(test_tool());
    all
}

/// think_test: the project's workflow tests, run in memory.
fn test_tool() -> ToolDef {
    tool::<crate::testing::tool::TestArgs, crate::testing::tool::TestReply>(
        Meta {
            name: "think_test",
            title: "Run the workflows' tests",
            description: "Run the project's workflow tests (tests/**/*.test.yaml: params, mocked tool results, expected status, steps, inputs and captures) in memory, without touching any run, and get the report: each test passed, failed (mismatches with their JSON paths, expected vs actual) or error (a missing mock, a broken test file). Call it after editing a workflow; fix the workflow or the test and call it again until summary.ok is true.",
            annotations: Annotations { read_only: true, destructive: false, idempotent: true },
            mcp: true,
            pure: false,
        },
        crate::testing::tool::think_test,
    )
}

#[path = "catalog_tables.rs"]
mod tables;
use tables::{session_tools, wait_tools};

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
