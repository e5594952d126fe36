//! [`SavantServer::call`]: one tool call of the handler — the engine call
//! (on this task, in place, or handed off; see `server.rs`), its log line
//! and count, the result, and the resource notifications of the run it
//! changed ([`SavantServer::changed`]). The reply is made a value only when
//! something reads it: always over HTTP (rmcp serialises
//! `structuredContent` from it), and over stdio only when the client may be
//! asked a person's answer afterwards (elicitation reads the progress);
//! otherwise only its text is made, which the stdio transport writes in
//! the value's place (`stdio_wire`).

use super::SavantServer;
use crate::mcp::call_log::{self, Named};
use crate::mcp::calls::{blocking, check_workflow_arg, inline};
use crate::runtime::EngineError;
use crate::runtime::catalog::{self, Announce, ToolDef};
use crate::tools::{self, Made, Reply};
use rmcp::model::CallToolResult;
use serde_json::Value;

impl SavantServer {
    /// Calls a tool by name: the result, or an `isError` result with
    /// `{error, details}`. Its `structuredContent` is the reply's value.
    pub async fn call(&self, name: &str, args: Value) -> CallToolResult {
        self.call_made(name, args, true).await
    }

    /// [`SavantServer::call`]; unless `value` asks for it, a transport
    /// that writes the text in the value's place gets no value made.
    pub(super) async fn call_made(&self, name: &str, args: Value, value: bool) -> CallToolResult {
        let started = std::time::Instant::now();
        let Some(spec) = catalog::find(name).filter(|t| t.mcp) else {
            tracing::info!(tool = name, "unknown tool");
            return super::error_result(&EngineError::unknown_tool(name, catalog::tools().map(|t| t.name)));
        };
        let tool = spec.name;
        let made = if value || !self.text_replies { Made::Both } else { Made::Text };
        // What the log line and `changed` need, instead of a copy of the whole arguments.
        let named = Named::of(&args);
        let out = if spec.pure {
            // No file or state to touch: answered on this task.
            tools::call_made(&self.engine, tool, args, made)
        } else if self.inline {
            inline(|| {
                check_workflow_arg(&self.root, &args)?;
                tools::call_made(&self.engine, tool, args, made)
            })
        } else {
            let (engine, root) = (self.engine.clone(), self.root.clone());
            blocking(move || {
                check_workflow_arg(&root, &args)?;
                tools::call_made(&engine, tool, args, made)
            })
            .await
        };
        call_log::finished(tool, spec.annotations.read_only, &named, started.elapsed(), out.as_ref());
        match out {
            Ok(reply) => {
                self.changed(spec, &named, &reply).await;
                crate::mcp::calls::structured(reply)
            }
            Err(e) => super::error_result(&e),
        }
    }

    /// After a tool changed a run (its row's [`Announce`]):
    /// `resources/updated` to the sessions subscribed to its `run://`, and
    /// `resources/list_changed` when the call may have created it.
    async fn changed(&self, tool: &ToolDef, args: &Named, out: &Reply) {
        if tool.announce == Announce::Nothing {
            return;
        }
        // The run the call named (a `think` without one recorded nothing in a run).
        let ids = out.ids();
        let workflow = ids.workflow.as_deref().or(args.workflow());
        let run_id = ids.run_id.as_deref().or(args.run_id());
        let (Some(workflow), Some(run_id)) = (workflow, run_id) else { return };
        let uri = format!("run://{workflow}/{run_id}");
        if self.hub.has_subscriber(&uri) {
            // Whoever records the new stamp first (this call or the watcher)
            // sends the update: one notification per change.
            let stamp = self.run_stamp(&uri).await;
            if self.hub.record(&uri, stamp) {
                self.hub.resource_updated(&uri).await;
            }
        }
        if tool.announce == Announce::RunStarted {
            self.hub.resource_list_changed().await;
        }
    }
}
