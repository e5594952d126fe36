//! The engine's side of `savant-think.toml` (loaded by [`crate::config`],
//! re-exported here): opening the state store and the engine it names, and
//! a [`ConfigError`] as the engine's `INVALID_CONFIG`.

pub use crate::config::{
    AgentConfig, ConfigError, EngineConfig, LocalConfig, MAX_CONFIG_BYTES, Overrides, ServerConfig,
    StateConfig,
};
use crate::runtime::error_details::{InvalidConfig, StoreOpen};
use crate::runtime::{EngineError, ErrorCode};
use std::path::{Path, PathBuf};

impl From<ConfigError> for EngineError {
    fn from(e: ConfigError) -> EngineError {
        EngineError::with(
            ErrorCode::InvalidConfig,
            InvalidConfig { path: e.path.display().to_string(), message: e.message, server: e.server },
        )
    }
}

impl StateConfig {
    /// Opens the store these settings name (`root` is the project root).
    pub fn open_store(&self, root: &Path) -> Result<Box<dyn crate::state::StateStore>, EngineError> {
        crate::state::open_in(root, self.dir.as_deref(), self.url.as_deref(), &self.store_options()).map_err(
            |e| {
                let code = crate::runtime::ErrorCode::ALL
                    .iter()
                    .copied()
                    .find(|c| c.as_str() == e.code)
                    .unwrap_or(crate::runtime::ErrorCode::StateUnavailable);
                EngineError::with(code, StoreOpen { message: e.message, hint: e.hint })
            },
        )
    }
}

impl EngineConfig {
    /// An engine over `root` with this configuration and the state store it
    /// names (what `Engine::new` does with [`EngineConfig::load`]).
    pub fn open_engine(self, root: PathBuf) -> Result<crate::runtime::Engine, EngineError> {
        let store = self.state.open_store(&root)?;
        Ok(crate::runtime::Engine::with_store(root, self, store))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_url_picks_the_store() {
        let c = crate::config::tests::load("[state]\nurl = \"mysql://h/db\"\n").unwrap();
        assert_eq!(c.state.url.as_deref(), Some("mysql://h/db"));
        let e = c.state.open_store(Path::new(".")).err().unwrap();
        assert_eq!(e.code, "STATE_URL_INVALID");
        assert!(e.details.to_json()["hint"].as_str().unwrap().contains("SAVANT_STATE_URL"), "{e}");
        let c = crate::config::tests::load("[state]\nfsync = false\n").unwrap();
        assert!(c.state.url.is_none());
    }
}
