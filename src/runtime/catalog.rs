//! The engine's tool table, its schema half: every tool's name, title,
//! description (telling the model what to do next), annotations, the facts
//! an adapter needs about it (served over MCP, pure, what it announces,
//! whether a step calling it asks a question) and the JSON Schemas of its
//! typed arguments and reply. It is data: one `Row` per tool in
//! `catalog_rows.rs`, read once into [`ToolDef`]s. The input and output
//! schemas are generated from the argument and reply types
//! (`runtime::args`, `runtime::reply`; descriptions from their doc
//! comments) and stored as generated in `catalog_schemas.json`, which the
//! table reads instead of running `schemars` in every process (a test keeps
//! the file equal to what the types give). The MCP tool list, the agent's tool offers and argument
//! checks, the checker's contracts (`contracts.rs`), `call` and the
//! dispatcher all come from here: there is no other list of tools.
//!
//! The handler half (typed arguments in, the engine call, the typed reply
//! serialized once) is the room above both the engine and the test runner,
//! `crate::tools`. Adding a tool: its argument and reply types
//! (`runtime/args.rs`, `runtime/reply*.rs`), its handler (a line in
//! `tools/handlers.rs`), one `Row` here, and its line in docs/runtime.md
//! and docs/mcp.md; the tests fail until the row and the handler agree.

use crate::runtime::args::*;
use crate::runtime::reply::*;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};
use std::sync::{LazyLock, OnceLock};

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

/// What a successful call announces to those who follow the run its
/// arguments name (MCP's `run://` subscribers; a watcher tells them of
/// every other change).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Announce {
    /// Nothing at once.
    Nothing,
    /// The named run changed (`think_next`, `think_reset`, `think` with a
    /// run: the call records an event in it).
    RunChanged,
    /// The named run changed and may be new, so the list of runs changed
    /// too (`think_plan`).
    RunStarted,
}

/// One engine tool as data: what it is, apart from its handler.
#[derive(Clone, Copy)]
struct Row {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    annotations: Annotations,
    mcp: bool,
    pure: bool,
    announce: Announce,
    asks: bool,
    types_capture: bool,
    input: fn() -> Value,
    output: fn() -> Value,
}

/// One engine tool as a client sees it.
pub struct ToolDef {
    /// The canonical name (`think_plan`).
    pub name: &'static str,
    /// A title for people.
    pub title: &'static str,
    /// What it does and when to call it, for a model.
    pub description: &'static str,
    /// Hints for a client.
    pub annotations: Annotations,
    /// Its place in the table.
    index: usize,
    /// The tool's entry in `catalog_schemas.json` (its line), read when
    /// its schemas are first needed.
    stored: Option<&'static str>,
    /// The arguments' and the reply's JSON Schemas ([`ToolDef::input`],
    /// [`ToolDef::output`]), read on first use.
    schemas: OnceLock<(Value, Value)>,
    /// The input schema from the argument type, for a tool the file does
    /// not hold.
    generated_input: fn() -> Value,
    /// The output schema from the reply type, likewise.
    generated_output: fn() -> Value,
    /// Served over MCP (`think_state_delete` is CLI only: a model should not
    /// delete runs).
    pub mcp: bool,
    /// Touches no file and no state (`prompt_say`): a server may answer it
    /// without a trip to a blocking thread.
    pub pure: bool,
    /// What a successful call announces about the run it names.
    pub announce: Announce,
    /// A step calling it with a success schema asks a question (of a model
    /// or a person: `think`, `prompt_say`) rather than records something:
    /// an executor has it answered, and a dry run answers it from the schema.
    pub asks: bool,
    /// A step's capture of its result has the reply's type (the checker's
    /// contract); not for `prompt_say`, often a question the client answers
    /// in its own shape.
    pub types_capture: bool,
    /// The input schema, compiled when first needed (shared with `call`, for
    /// its messages): a command that only reads the schemas, like `check`,
    /// compiles none of them.
    validator: OnceLock<Option<jsonschema::Validator>>,
    /// Whether the input schema is one `ir::sure_schema` reads (decided
    /// when first needed).
    plain: OnceLock<bool>,
}

impl ToolDef {
    /// The tool of row `r`, at `index` in the table, with its stored entry.
    fn new(index: usize, r: &Row, stored: Option<&'static str>) -> ToolDef {
        ToolDef {
            name: r.name,
            title: r.title,
            description: r.description,
            annotations: r.annotations,
            index,
            stored,
            schemas: OnceLock::new(),
            generated_input: r.input,
            generated_output: r.output,
            mcp: r.mcp,
            pure: r.pure,
            announce: r.announce,
            asks: r.asks,
            types_capture: r.types_capture,
            validator: OnceLock::new(),
            plain: OnceLock::new(),
        }
    }
}

impl ToolDef {
    /// Whether the tool changes nothing.
    pub fn read_only(&self) -> bool {
        self.annotations.read_only
    }

    /// The arguments' JSON Schema, generated from the argument type.
    pub fn input(&self) -> &Value {
        &self.schemas().0
    }

    /// The reply's JSON Schema, generated from the reply type, plus the
    /// `{error, details}` of an `isError` result.
    pub fn output(&self) -> &Value {
        &self.schemas().1
    }

    /// Both schemas: the stored entry read (a process parses only the
    /// entries of the tools it uses), else generated.
    fn schemas(&self) -> &(Value, Value) {
        self.schemas.get_or_init(|| {
            let entry = self.stored.and_then(|raw| serde_json::from_str::<Map<String, Value>>(raw).ok());
            entry
                .and_then(|entry| stored_schemas(entry, &all()[..self.index]))
                .unwrap_or_else(|| ((self.generated_input)(), (self.generated_output)()))
        })
    }

    /// The compiled input schema (it refuses unknown fields, where `call`
    /// ignores them).
    pub fn validator(&self) -> Option<&jsonschema::Validator> {
        compiled(&self.validator, self.input())
    }

    /// Whether `args` surely meet the input schema, known without compiling
    /// it (`ir::sure_schema`); `false` is "ask [`ToolDef::validator`]".
    pub fn surely_valid(&self, args: &Value) -> bool {
        use crate::ir::sure_schema;
        *self.plain.get_or_init(|| sure_schema::compiles(self.input()))
            && sure_schema::valid(self.input(), args)
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

    /// The tool's place in the table ([`all`]), for tables kept beside it.
    pub fn index(self) -> usize {
        self.0
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

/// `catalog_schemas.json`: every tool's input and output schema exactly as
/// its argument and reply types give them (an output another tool already
/// has is stored once, as `"output_as": "<that tool>"`), one tool a line.
/// Reading it is several times cheaper than generating them with
/// `schemars`, which every process that builds the table (each `exec`,
/// `check`, `serve`) would do, and a tool's line is parsed only when its
/// schemas are first needed. A tool the file does not hold gets its
/// generated schemas; the test `the_stored_schemas_are_the_types_schemas`
/// keeps the file current (`SAVANT_BLESS_CATALOG=1 cargo test --lib
/// catalog` rewrites it).
const STORED: &str = include_str!("catalog_schemas.json");

static ALL: LazyLock<Vec<ToolDef>> = LazyLock::new(|| {
    let stored = stored_lines(STORED);
    let line = |name: &str| stored.iter().find(|(n, _)| *n == name).map(|(_, raw)| *raw);
    rows::ROWS.iter().enumerate().map(|(i, row)| ToolDef::new(i, row, line(row.name))).collect()
});

/// The `"name": {entry}` lines of `catalog_schemas.json`: each tool's name
/// and its entry's JSON text.
fn stored_lines(text: &'static str) -> Vec<(&'static str, &'static str)> {
    text.lines()
        .filter_map(|line| {
            let line = line.strip_suffix(',').unwrap_or(line);
            line.strip_prefix('"')?.split_once("\": ")
        })
        .collect()
}

/// A tool's `(input, output)` from its entry in `catalog_schemas.json`
/// (`before`: the tools before it, for an `output_as`).
fn stored_schemas(mut entry: Map<String, Value>, before: &[ToolDef]) -> Option<(Value, Value)> {
    let output = match entry.remove("output") {
        Some(output) => output,
        None => {
            let first = entry.get("output_as")?.as_str()?;
            before.iter().find(|t| t.name == first)?.output().clone()
        }
    };
    Some((entry.remove("input")?, output))
}

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

/// The input schema of an argument type, as a tool lists it.
pub fn input<A: JsonSchema>() -> Value {
    schema::<A>(SchemaSettings::draft2020_12().for_deserialize())
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
pub fn output<R: JsonSchema>() -> Value {
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

/// The validator of `schema` in `cell`, compiled on first use.
fn compiled<'a>(
    cell: &'a OnceLock<Option<jsonschema::Validator>>,
    schema: &Value,
) -> Option<&'a jsonschema::Validator> {
    cell.get_or_init(|| jsonschema::validator_for(schema).ok()).as_ref()
}

#[path = "catalog_rows.rs"]
mod rows;

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
