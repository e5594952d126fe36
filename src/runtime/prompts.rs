//! Driver prompts: `prompts/prompts.yml` maps a version to a markdown file.

use crate::runtime::EngineError;
use crate::runtime::workflow::sha256_hex;
use crate::source::SourceFile;
use serde_json::{Value, json};
use std::path::Path;

/// The prompt registry: `(version, file)` pairs in file order, and the
/// `latest:` version if the file names one.
pub struct Registry {
    pub versions: Vec<(String, String)>,
    pub latest: Option<String>,
}

/// Reads `prompts/prompts.yml`. Without `latest:`, the last version is the latest.
pub fn registry(root: &Path) -> Result<Registry, EngineError> {
    let path = root.join("prompts/prompts.yml");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        EngineError::new(
            "PROMPT_NOT_FOUND",
            json!({"message": format!("cannot read {}: {e}", path.display())}),
        )
    })?;
    let src = SourceFile::new(path.to_string_lossy(), text);
    let parsed = crate::syntax::yaml::parse(&src, &crate::Limits::default());
    let root_node = parsed.root.map(|r| r.to_json()).unwrap_or(Value::Null);
    let versions = root_node.get("versions").and_then(Value::as_object).cloned().unwrap_or_default();
    let list = versions.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect();
    let latest = root_node.get("latest").and_then(Value::as_str).map(str::to_owned);
    Ok(Registry { versions: list, latest })
}

/// `{version, hash: "sha256:…", prompt_md}`; default the latest.
pub fn driver_prompt(root: &Path, version: Option<&str>) -> Result<Value, EngineError> {
    let Registry { versions: list, latest } = registry(root)?;
    let want = version.map(str::to_owned).or(latest).or_else(|| list.last().map(|(v, _)| v.clone()));
    let versions: Vec<&str> = list.iter().map(|(v, _)| v.as_str()).collect();
    let not_found = |v: &str| {
        EngineError::new(
            "PROMPT_NOT_FOUND",
            json!({"version": v, "message": format!("no driver prompt `{v}`"), "available": versions}),
        )
    };
    let Some(want) = want else { return Err(not_found("")) };
    let Some((_, file)) = list.iter().find(|(v, _)| *v == want) else { return Err(not_found(&want)) };
    let path = root.join("prompts").join(file);
    let md = std::fs::read_to_string(&path).map_err(|_| not_found(&want))?;
    Ok(json!({ "version": want, "hash": sha256_hex(md.as_bytes()), "prompt_md": md }))
}
