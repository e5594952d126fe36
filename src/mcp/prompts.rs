//! MCP prompts and completions.
//!
//! Prompts: the driver prompts (one per version, no arguments) and, besides
//! them, one prompt per workflow that compiles, named by the workflow id, with
//! the workflow's params as arguments (clients show these as slash commands).
//! `prompts/get` of a workflow returns a message telling the model to start it
//! with `think_plan` and these params. A workflow whose id is a bundled
//! driver prompt's name wins (the project's own; a warning is logged once);
//! one whose id is a version of the project's `prompts/prompts.yml` is not
//! listed (that prompt keeps the name).
//!
//! Completions (`completion/complete`): workflow ids and run ids for the
//! resource templates, and for prompt arguments the values a param allows
//! (`enum`, booleans), workflow ids, run ids or driver prompt versions for
//! params named like those.
//!
//! `prompts/list` is never an error; in `prompts/get`, unknown names and bad
//! arguments are -32602 (invalid params). A completion for something unknown
//! is an empty list.

use crate::runtime::Engine;
use crate::runtime::ErrorCode;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams, GetPromptResult, Prompt,
    PromptArgument, PromptMessage, Reference, Role,
};
use serde_json::{Map, Value, json};

/// The driver prompt versions MCP serves: every version of the registry
/// but a bundled one whose name a project workflow also has (the project's
/// own wins; the shadowing is logged once per name).
fn driver_versions(engine: &Engine) -> Vec<String> {
    match engine.project().prompts() {
        Ok(r) => {
            let workflows = workflow_ids(engine, true);
            r.entries.into_iter().filter(|e| !shadowed(e, &workflows)).map(|e| e.version).collect()
        }
        Err(e) => {
            tracing::debug!(error = e.code.as_str(), "no driver prompts: the prompt registry cannot be read");
            Vec::new()
        }
    }
}

/// Whether the bundled driver prompt `entry` is shadowed by a project
/// workflow of the same id; warns the first time a name is seen.
fn shadowed(entry: &crate::runtime::prompts::Entry, workflows: &[String]) -> bool {
    use crate::runtime::prompts::Origin;
    let hit = entry.origin == Origin::Bundled && workflows.contains(&entry.version);
    if hit {
        static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let mut warned = WARNED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !warned.contains(&entry.version) {
            warned.push(entry.version.clone());
            tracing::warn!(
                name = entry.version.as_str(),
                "the workflow `{}` shadows the bundled driver prompt of the same name: prompts/get `{}` is the workflow",
                entry.version,
                entry.version
            );
        }
    }
    hit
}

fn workflow_ids(engine: &Engine, valid_only: bool) -> Vec<String> {
    let Ok(list) = engine.workflows_list(None) else { return Vec::new() };
    list.workflows.iter().filter(|w| !valid_only || w.is_valid()).map(|w| w.id().to_owned()).collect()
}

fn run_ids(engine: &Engine, workflow: Option<&str>) -> Vec<String> {
    let workflow = workflow.filter(|w| crate::workspace::valid_workflow_id(w));
    let Ok(list) = engine.state_list(workflow) else { return Vec::new() };
    let mut ids: Vec<String> = list.runs.into_iter().map(|r| r.run_id).collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Every prompt: driver prompts first, then one per valid workflow.
pub fn list(engine: &Engine) -> Vec<Prompt> {
    let mut out = Vec::new();
    let workflows = workflow_ids(engine, true);
    let versions = match engine.project().prompts() {
        Ok(registry) => {
            let latest = registry.latest().map(str::to_owned);
            let entries: Vec<_> = registry.entries.into_iter().filter(|e| !shadowed(e, &workflows)).collect();
            for entry in &entries {
                let version = &entry.version;
                let mut d = format!("savant-think driver prompt `{version}` ({})", entry.location());
                if latest.as_deref() == Some(version) {
                    d.push_str(", the latest");
                }
                d.push_str(": how to drive workflows with think_plan / think_next.");
                out.push(
                    Prompt::new(version.clone(), Some(d), None::<Vec<PromptArgument>>)
                        .with_title(format!("Driver prompt: {version}")),
                );
            }
            entries.into_iter().map(|e| e.version).collect()
        }
        Err(e) => {
            tracing::debug!(error = e.code.as_str(), "no driver prompts: the prompt registry cannot be read");
            Vec::new()
        }
    };
    for id in workflows {
        if versions.contains(&id) {
            continue;
        }
        let Ok(cw) = engine.workflow(&id) else { continue };
        let wf = &cw.wf;
        let args: Vec<PromptArgument> = wf
            .params
            .iter()
            .map(|p| {
                let ty = p.schema.get("type").map(|t| t.to_string().replace('"', "")).unwrap_or_default();
                let mut d = p.schema.get("description").and_then(Value::as_str).unwrap_or("").to_owned();
                if !ty.is_empty() && ty != "string" {
                    d = format!("{d} ({ty}, as JSON)").trim().to_owned();
                }
                let mut a = PromptArgument::new(p.name.value.clone()).with_required(p.required);
                if !d.is_empty() {
                    a = a.with_description(d);
                }
                a
            })
            .collect();
        let description = wf
            .description
            .clone()
            .or_else(|| wf.name.clone())
            .unwrap_or_else(|| format!("Run the workflow `{id}`."));
        let title = format!("Run workflow: {}", wf.name.as_deref().unwrap_or(&id));
        out.push(Prompt::new(id.clone(), Some(description), Some(args)).with_title(title));
    }
    out
}

fn no_prompt(engine: &Engine, name: &str) -> McpError {
    let mut available = driver_versions(engine);
    available.extend(workflow_ids(engine, true));
    let help = crate::diagnostic::suggest(name, available.iter().map(String::as_str));
    McpError::invalid_params(
        format!("no prompt `{name}`"),
        Some(json!({"error": "PROMPT_NOT_FOUND", "prompt": name, "available": available, "help": help})),
    )
}

/// `prompts/get`: a driver prompt, or the message that starts a workflow.
pub fn get(engine: &Engine, request: &GetPromptRequestParams) -> Result<GetPromptResult, McpError> {
    let name = request.name.as_str();
    if driver_versions(engine).iter().any(|v| v == name) {
        let v = engine.driver_prompt(Some(name)).map_err(|e| {
            McpError::invalid_params(format!("the driver prompt `{name}` cannot be read"), Some(e.to_json()))
        })?;
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, v.prompt_md)]);
        result.description = Some(format!("savant-think driver prompt `{name}` ({})", v.hash));
        return Ok(result);
    }
    if !crate::workspace::valid_workflow_id(name) {
        return Err(no_prompt(engine, name));
    }
    let cw = match engine.workflow(name) {
        Ok(cw) => cw,
        Err(e) if e.code == ErrorCode::UnknownWorkflow => return Err(no_prompt(engine, name)),
        Err(e) => {
            return Err(McpError::invalid_params(
                format!("the workflow `{name}` has errors and cannot be run; run `savant-think check` on it"),
                Some(e.to_json()),
            ));
        }
    };
    let given = request.arguments.clone().unwrap_or_default();
    let mut params = Map::new();
    for (key, value) in &given {
        let Some(p) = cw.wf.params.iter().find(|p| p.name.value == *key) else {
            let names: Vec<&str> = cw.wf.params.iter().map(|p| p.name.value.as_str()).collect();
            return Err(McpError::invalid_params(
                format!("the workflow `{name}` has no param `{key}`"),
                Some(json!({"error": "INVALID_PARAMS", "param": key, "params": names})),
            ));
        };
        let is_string = p.schema.get("type").and_then(Value::as_str) == Some("string");
        let value = match value {
            Value::String(s) if !is_string => serde_json::from_str(s).unwrap_or_else(|_| value.clone()),
            other => other.clone(),
        };
        params.insert(key.clone(), value);
    }
    let missing: Vec<&str> = cw
        .wf
        .params
        .iter()
        .filter(|p| {
            p.required && p.schema.get("default").is_none() && !params.contains_key(p.name.value.as_str())
        })
        .map(|p| p.name.value.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(McpError::invalid_params(
            format!("the workflow `{name}` needs the argument(s) {}", missing.join(", ")),
            Some(json!({"error": "INVALID_PARAMS", "missing": missing})),
        ));
    }
    let wf = &cw.wf;
    let call = json!({"workflow": name, "params": params});
    let mut text = format!("Run the savant-think workflow `{name}`");
    if let Some(n) = &wf.name {
        text.push_str(&format!(" ({n})"));
    }
    text.push('.');
    if let Some(d) = &wf.description {
        text.push_str(&format!("\n\n{}", d.trim()));
    }
    text.push_str(&format!(
        "\n\nStart it by calling the tool think_plan with these arguments:\n\n```json\n{}\n```\n\n\
         Then carry out each instruction: call the tool named in instruction.call with instruction.input, \
         submit that tool's result with think_next (workflow, run_id, instruction.step_id), and repeat until \
         the response has done: true. A result with isError: true carries {{error, details}}: read it, fix \
         the problem and retry. For the full driving rules, call think_driver_prompt first.",
        serde_json::to_string_pretty(&call).unwrap_or_default()
    ));
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    result.description = Some(wf.description.clone().or_else(|| wf.name.clone()).unwrap_or_default());
    Ok(result)
}

/// The candidate values for one completion request (before filtering).
fn candidates(engine: &Engine, request: &CompleteRequestParams) -> Result<Vec<String>, McpError> {
    let arg = request.argument.name.as_str();
    let context = |k: &str| {
        request.context.as_ref().and_then(|c| c.arguments.as_ref()).and_then(|a| a.get(k)).map(String::as_str)
    };
    let unknown = |what: String| {
        McpError::invalid_params(
            what,
            Some(
                json!({"help": "complete the arguments of a prompt from prompts/list, or of the templates workflow://{id} and run://{workflow}/{run_id}"}),
            ),
        )
    };
    match &request.r#ref {
        Reference::Resource(r) => match (r.uri.as_str(), arg) {
            ("workflow://{id}", "id") | ("run://{workflow}/{run_id}", "workflow") => {
                Ok(workflow_ids(engine, false))
            }
            ("run://{workflow}/{run_id}", "run_id") => Ok(run_ids(engine, context("workflow"))),
            (uri, _) => Err(unknown(format!("no argument `{arg}` in the resource template `{uri}`"))),
        },
        Reference::Prompt(p) => {
            let name = p.name.as_str();
            if driver_versions(engine).iter().any(|v| v == name) {
                return Err(unknown(format!("the driver prompt `{name}` has no arguments")));
            }
            let cw = match engine.workflow(name) {
                Ok(cw) if crate::workspace::valid_workflow_id(name) => cw,
                _ => return Err(no_prompt(engine, name)),
            };
            let Some(param) = cw.wf.params.iter().find(|p| p.name.value == arg) else {
                return Err(unknown(format!("the prompt `{name}` has no argument `{arg}`")));
            };
            if let Some(values) = param.schema.get("enum").and_then(Value::as_array) {
                return Ok(values
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()))
                    .collect());
            }
            if param.schema.get("type").and_then(Value::as_str) == Some("boolean") {
                return Ok(vec!["true".into(), "false".into()]);
            }
            Ok(match arg {
                "workflow" | "workflow_id" => workflow_ids(engine, false),
                "run_id" | "run" => run_ids(engine, context("workflow")),
                "version" | "driver_version" | "prompt_version" | "driver" => driver_versions(engine),
                _ => Vec::new(),
            })
        }
        _ => Err(unknown("unknown completion reference".to_owned())),
    }
}

/// `completion/complete`: the candidates that start with what was typed
/// (case-insensitive), at most 100, with `total` and `hasMore`. A prompt,
/// template or argument the server does not have gets no suggestions rather
/// than an error: a completion is a typing hint, and an error there would
/// only interrupt the user (the spec's -32602 for an unknown prompt is a SHOULD).
pub fn complete(engine: &Engine, request: &CompleteRequestParams) -> Result<CompleteResult, McpError> {
    let typed = request.argument.value.to_lowercase();
    let candidates = candidates(engine, request).unwrap_or_else(|e| {
        tracing::debug!("no completions: {}", e.message);
        Vec::new()
    });
    let mut values: Vec<String> =
        candidates.into_iter().filter(|v| v.to_lowercase().starts_with(&typed)).collect();
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let has_more = total > values.len();
    let info = CompletionInfo::with_pagination(values, Some(total.min(u32::MAX as usize) as u32), has_more)
        .map_err(|e| McpError::internal_error(e, None))?;
    Ok(CompleteResult::new(info))
}
