//! The engine's own tools as a [`Tools`]: every `think_*` tool, `think` and
//! `prompt_say`, described as the MCP catalog describes them and called
//! through the engine's dispatcher (`runtime::tools::call`). Real tools, not
//! stubs; external MCP servers and `local_*` come with the multiplexer.

use crate::agent::{ToolInfo, ToolOutcome, Tools};
use crate::mcp::catalog;
use crate::runtime::{Engine, tools};
use serde_json::Value;
use std::time::Instant;

pub struct EngineTools {
    engine: Engine,
}

impl EngineTools {
    pub fn new(engine: Engine) -> EngineTools {
        EngineTools { engine }
    }
}

impl Tools for EngineTools {
    async fn list(&self) -> Vec<ToolInfo> {
        catalog::tools()
            .into_iter()
            .map(|t| ToolInfo {
                name: t.name.into(),
                description: t.description.into(),
                input_schema: t.input,
            })
            .collect()
    }

    async fn call(&self, name: &str, args: Value) -> ToolOutcome {
        let started = Instant::now();
        let result = tools::call(&self.engine, name, &args);
        let duration_ms = started.elapsed().as_millis() as u64;
        match result {
            Ok(output) => ToolOutcome { ok: true, output, duration_ms },
            Err(e) => ToolOutcome { ok: false, output: e.to_json(), duration_ms },
        }
    }
}
