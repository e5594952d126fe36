//! A workflow checked and compiled for the engine (read by
//! [`crate::runtime::project::Project`]).

use crate::check::Config;
use crate::compile::Plan;
use crate::diagnostic::Severity;
use crate::ir::Workflow;
use crate::report::FileReport;
use crate::runtime::EngineError;
use crate::runtime::ErrorCode;
use crate::runtime::error_details::WorkflowErrors;
use crate::source::SourceFile;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A workflow that checked without errors, with its plan.
#[derive(Debug)]
pub struct CompiledWorkflow {
    /// The file it was read from.
    pub path: PathBuf,
    /// `sha256:<hex>` of the file's bytes, which are `source.text`'s (a
    /// file compiles only when it is whole and UTF-8): the engine stores
    /// the text under this name without hashing it again.
    pub hash: String,
    /// The file's text.
    pub source: SourceFile,
    /// The typed IR.
    pub wf: Workflow,
    /// The compiled plan.
    pub plan: Plan,
    /// Capture name → the step that captures it (names are unique in a
    /// workflow that compiles: `DUPLICATE_CAPTURE` is an error).
    pub capture_steps: std::collections::HashMap<String, usize>,
    /// Whether a step is a `uses:` step (runs another workflow as a child).
    pub has_uses: bool,
    /// Whether a step waits (`await:`, `sleep:`, `sleep_until:`, `wait_for:`).
    pub has_waits: bool,
}

/// `sha256:<hex>` of `bytes`: the content address of the state's objects,
/// defined there (below the runtime) and named here for its callers.
pub use crate::state::sha256_hex;

/// Checks and compiles a workflow file's bytes (a non-UTF-8 byte is
/// `YAML_SYNTAX`, as in `check`). A workflow with errors is refused with
/// `YAML_SCHEMA_VIOLATION` and its diagnostics. [`crate::runtime::project::Project`]
/// reads the bytes and caches the result.
pub fn compile_bytes(path: &Path, bytes: Vec<u8>, config: &Config) -> Result<CompiledWorkflow, EngineError> {
    let hash = sha256_hex(&bytes);
    compile_hashed(path, bytes, hash, config)
}

/// [`compile_bytes`] for a caller that has hashed the bytes already
/// (`hash` must be their [`sha256_hex`]: the engine trusts it when it
/// stores the workflow's object): a file is hashed once per read.
pub fn compile_hashed(
    path: &Path,
    bytes: Vec<u8>,
    hash: String,
    config: &Config,
) -> Result<CompiledWorkflow, EngineError> {
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
        return Err(EngineError::with(
            ErrorCode::YamlSchemaViolation,
            WorkflowErrors {
                path: path.display().to_string(),
                message: format!("the workflow has errors; run `savant-think check {}`", path.display()),
                diagnostics: parsed.get("diagnostics").cloned().unwrap_or(Value::Null),
                name: wf.as_ref().and_then(|w| w.name.clone()),
                description: wf.as_ref().and_then(|w| w.description.clone()),
            },
        ));
    }
    let (Some(wf), Some(plan)) = (wf, plan) else {
        return Err(EngineError::message(ErrorCode::YamlSchemaViolation, "the workflow is empty"));
    };
    let capture_steps = wf
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((s.capture_as.as_ref()?.value.as_str().to_owned(), i)))
        .collect();
    let has_uses = wf.steps.iter().any(|s| s.uses.is_some());
    let has_waits = wf.steps.iter().any(|s| s.wait.is_some());
    Ok(CompiledWorkflow {
        path: path.to_path_buf(),
        hash,
        source,
        wf,
        plan,
        capture_steps,
        has_uses,
        has_waits,
    })
}
