//! The dialect cache, `<root>/.savant/dialects.json`: for each backend
//! endpoint (`openai http://127.0.0.1:8080/v1/chat/completions`), the
//! structured-output dialect it accepted (`json_schema`, `json_object`). A
//! run starts from it instead of negotiating again (a refused dialect costs
//! a failed request, and on llama-cpp-python an HTTP 500 in its log). `plain`
//! is not kept: a server that refused both may learn better. A missing or
//! broken file is an empty cache; writing it is best effort.

use crate::agent::backend::Backend;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `<root>/.savant/dialects.json`.
pub fn path(root: &Path) -> PathBuf {
    root.join(".savant").join("dialects.json")
}

/// The cache's key for `backend`: its name and endpoint.
pub fn key(backend: &impl Backend) -> String {
    format!("{} {}", backend.name(), backend.endpoint())
}

/// The cache (empty when absent or unreadable).
pub fn load(root: &Path) -> BTreeMap<String, String> {
    std::fs::read(path(root)).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

/// Records `dialect` for `key`, when it is worth keeping and new.
pub fn remember(root: &Path, key: &str, dialect: &str) -> std::io::Result<bool> {
    if !matches!(dialect, "json_schema" | "json_object") {
        return Ok(false);
    }
    let mut cache = load(root);
    if cache.get(key).map(String::as_str) == Some(dialect) {
        return Ok(false);
    }
    cache.insert(key.to_owned(), dialect.to_owned());
    let mut bytes = serde_json::to_vec_pretty(&cache).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    let file = path(root);
    std::fs::create_dir_all(file.parent().unwrap_or(root))?;
    crate::fsx::replace_file(&file, &bytes, "tmp")?;
    Ok(true)
}
