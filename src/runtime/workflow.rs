//! Finding, reading, checking and compiling workflows for the engine.

use crate::check::Config;
use crate::compile::Plan;
use crate::diagnostic::Severity;
use crate::ir::Workflow;
use crate::report::FileReport;
use crate::runtime::EngineError;
use crate::runtime::ErrorCode;
use crate::source::SourceFile;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A workflow that checked without errors, with its plan.
#[derive(Debug)]
pub struct CompiledWorkflow {
    pub path: PathBuf,
    /// `sha256:<hex>` of the file's bytes.
    pub hash: String,
    pub source: SourceFile,
    pub wf: Workflow,
    pub plan: Plan,
    /// Capture name → the step that captures it (names are unique in a
    /// workflow that compiles: `DUPLICATE_CAPTURE` is an error).
    pub capture_steps: std::collections::HashMap<String, usize>,
}

pub use crate::fsx::FileIdentity;

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Resolves WORKFLOW: a path to an existing file, or an id looked up as
/// `<root>/workflows/<id>.yaml` / `.yml`.
pub fn resolve(root: &Path, workflow: &str) -> Result<PathBuf, EngineError> {
    let as_path = Path::new(workflow);
    let looks_like_path = workflow.ends_with(".yaml") || workflow.ends_with(".yml") || workflow.contains('/');
    if looks_like_path && as_path.is_file() {
        return confined(root, workflow, as_path);
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
        return Err(EngineError::new(
            ErrorCode::UnknownWorkflow,
            json!({"workflow": workflow, "message": format!("{workflow}: {why}")}),
        ));
    }
    let known: Vec<String> = list_ids(root);
    let help = crate::diagnostic::suggest(workflow, known.iter().map(String::as_str));
    Err(EngineError::new(
        ErrorCode::UnknownWorkflow,
        json!({
            "workflow": workflow,
            "message": format!("no workflow `{workflow}` in {}", root.join("workflows").display()),
            "help": help,
            "available": known,
        }),
    ))
}

/// `path` if it lies inside the project root once symlinks are resolved
/// (the engine serves workflows to MCP clients: `/etc/passwd` or a symlink
/// out of the root is refused).
fn confined(root: &Path, workflow: &str, path: &Path) -> Result<PathBuf, EngineError> {
    crate::fsx::confine(root, path).map(|_| path.to_path_buf()).map_err(|e| {
        EngineError::new(
            ErrorCode::UnknownWorkflow,
            json!({"workflow": workflow, "message": format!("{workflow}: {e}"),
                   "help": "workflow files must be inside the project root; pass --root to use another project"}),
        )
    })
}

/// Ids of every workflow file under `<root>/workflows`, sorted. A file whose
/// stem is not a valid id (`_draft.yaml`, `my flow.yaml`) cannot be run by id
/// and is not listed (`check` still reads it).
pub fn list_ids(root: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(root.join("workflows"))
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

/// Reads, checks and compiles. A workflow with errors is refused with
/// `YAML_SCHEMA_VIOLATION` and its diagnostics.
pub fn compile_file(path: &Path, config: &Config) -> Result<CompiledWorkflow, EngineError> {
    let bytes = read_bytes(path, config)?;
    compile_bytes(path, bytes, config)
}

/// Reads a workflow file by the same rules as `check`: a regular file (a
/// FIFO is refused, not waited on) under the size cap (one byte over is
/// read, so the checker reports the limit).
pub fn read_bytes(path: &Path, config: &Config) -> Result<Vec<u8>, EngineError> {
    let cap = config.limits.file_cap() as u64;
    crate::fsx::open_regular(path)
        .and_then(|f| {
            use std::io::Read;
            let mut bytes = Vec::new();
            f.take(cap + 1).read_to_end(&mut bytes)?;
            Ok(bytes)
        })
        .map_err(|e| {
            EngineError::new(
                ErrorCode::UnknownWorkflow,
                json!({"path": path.display().to_string(), "message": e.to_string()}),
            )
        })
}

/// Checks and compiles a workflow file's bytes (a non-UTF-8 byte is
/// `YAML_SYNTAX`, as in `check`).
pub fn compile_bytes(path: &Path, bytes: Vec<u8>, config: &Config) -> Result<CompiledWorkflow, EngineError> {
    let hash = sha256_hex(&bytes);
    let (source, read_diags) =
        crate::workspace::decode_source(path.to_string_lossy().into_owned(), bytes, &config.limits);
    let (wf, diags, plan) = if read_diags.is_empty() {
        let c = crate::compile::compile(&source, config);
        (c.workflow, c.diagnostics, c.plan)
    } else {
        (None, read_diags, None)
    };
    if diags.iter().any(|d| d.severity == Severity::Error) {
        let parsed = crate::report::json_value(&[FileReport { source: &source, diagnostics: &diags }]);
        return Err(EngineError::new(
            ErrorCode::YamlSchemaViolation,
            json!({
                "path": path.display().to_string(),
                "message": format!("the workflow has errors; run `savant-think check {}`", path.display()),
                "diagnostics": parsed.get("diagnostics").cloned().unwrap_or(Value::Null),
                "name": wf.as_ref().and_then(|w| w.name.clone()),
                "description": wf.as_ref().and_then(|w| w.description.clone()),
            }),
        ));
    }
    let (Some(wf), Some(plan)) = (wf, plan) else {
        return Err(EngineError::new(ErrorCode::YamlSchemaViolation, json!("the workflow is empty")));
    };
    let capture_steps = wf
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((s.capture_as.as_ref()?.value.to_string(), i)))
        .collect();
    Ok(CompiledWorkflow { path: path.to_path_buf(), hash, source, wf, plan, capture_steps })
}
