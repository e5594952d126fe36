//! `savant-think.toml` at the root: every key optional (docs/config.md).

use crate::runtime::EngineError;
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    /// A result larger than this (serialized JSON bytes) is truncated.
    pub max_snapshot_bytes: usize,
    /// Any string in a result longer than this many bytes is truncated.
    pub max_string_bytes: usize,
    pub state: StateConfig,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StateConfig {
    /// fsync state writes (default true); env `SAVANT_STATE_FSYNC=0|1` overrides.
    pub fsync: bool,
}

impl Default for StateConfig {
    fn default() -> StateConfig {
        StateConfig { fsync: true }
    }
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig { max_snapshot_bytes: 50_000, max_string_bytes: 5_000, state: StateConfig::default() }
    }
}

impl EngineConfig {
    /// Reads `<root>/savant-think.toml` if present, then applies the env override.
    pub fn load(root: &Path) -> Result<EngineConfig, EngineError> {
        let path = root.join("savant-think.toml");
        let mut config = match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str::<EngineConfig>(&text).map_err(|e| {
                EngineError::new(
                    "INVALID_CONFIG",
                    json!({"path": path.display().to_string(), "message": e.to_string()}),
                )
            })?,
            Err(_) => EngineConfig::default(),
        };
        match std::env::var("SAVANT_STATE_FSYNC").as_deref() {
            Ok("0") | Ok("false") => config.state.fsync = false,
            Ok("1") | Ok("true") => config.state.fsync = true,
            _ => {}
        }
        Ok(config)
    }
}
