//! How the MCP handler makes engine calls: off the async runtime
//! ([`blocking`]) or on the request's task ([`inline`]), a panic an
//! `INTERNAL` error either way (both from `crate::tools`); a reply made a tool result
//! ([`structured`]); and the check of a workflow argument given as a path
//! ([`check_workflow_arg`]). Shared by the handler (`server.rs`),
//! `think_exec` and the tasks.

use crate::runtime::EngineError;
pub(crate) use crate::tools::{blocking, inline};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;
use std::path::Path;

/// A tool's reply as its result: the value as `structuredContent` and its
/// text copy, as `CallToolResult::structured` makes them, the text written
/// once from the typed reply (`tools::call_made`). A reply made only as
/// text (for the stdio transport, which writes the text in the value's
/// place) has the stand-in `stdio_wire::text_twin` as `structuredContent`.
pub(crate) fn structured(reply: crate::tools::Reply) -> CallToolResult {
    let Some(text) = reply.text else {
        return CallToolResult::structured(reply.value.unwrap_or(Value::Null));
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(reply.value.unwrap_or_else(super::stdio_wire::text_twin));
    result
}

/// A workflow given as a path (not an id) must be inside the project root:
/// over MCP, a client names workflows, it does not read arbitrary files. A
/// relative path is taken from the root, not the server's working directory.
pub(crate) fn check_workflow_arg(root: &Path, args: &Value) -> Result<(), EngineError> {
    let Some(w) = args.get("workflow").and_then(Value::as_str) else { return Ok(()) };
    let looks_like_path = w.ends_with(".yaml") || w.ends_with(".yml") || w.contains('/') || w.contains('\\');
    if !looks_like_path || !(root.join(w).is_file() || Path::new(w).is_file()) {
        return Ok(());
    }
    match crate::fsx::confine_file(root, Path::new(w)) {
        Ok(_) => Ok(()),
        // The same answer as the CLI's and exec's to the same mistake.
        Err(e) => Err(EngineError::workflow_refused(w, &e)),
    }
}
