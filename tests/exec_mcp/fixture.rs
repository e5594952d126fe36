//! A small MCP server with the tools `workflows/review_v1.yaml` calls (as
//! `gitlab.*`, `context.*` and `ci.*`), plus `sleep` and `fail`. The test
//! binary runs it over stdio when started with `--fixture-server`, and over
//! Streamable HTTP in-process.
//!
//! Every call appends `{"tool", "args"}` to the file in `$FIXTURE_LOG` (if
//! set); at start it appends `{"pid"}`. `flaky` crashes the server the first
//! time it is called.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::io::Write;
use std::sync::Arc;

#[derive(Clone, Default)]
pub struct Fixture;

pub const TOOLS: &[&str] =
    &["get_merge_request", "search", "run_linters", "run_tests", "create_note", "sleep", "fail", "flaky"];

fn log(line: Value) {
    if let Some(path) = std::env::var_os("FIXTURE_LOG") {
        // One write of the whole line: several servers append to the same
        // log, and `writeln!` on a `File` may split a line into many writes.
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
        f.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
}

fn answer(tool: &str, args: &Value) -> Result<Value, String> {
    Ok(match tool {
        "get_merge_request" => json!({
            "iid": 7, "title": "Add dark mode", "source_branch": "dark-mode", "target_branch": "main",
            "changes": [
                {"new_path": "src/theme.rs", "diff": "+dark"},
                {"new_path": "Cargo.lock", "diff": "+lock"},
                {"new_path": "src/ui.rs", "diff": "+ui"}
            ]
        }),
        "search" => {
            let q = args["q"].as_str().unwrap_or_default();
            let path = q.split_whitespace().nth(1).unwrap_or("?");
            json!({"path": path, "findings": [{"line": 1, "severity": "info", "message": format!("looked at {path}")}]})
        }
        "run_linters" => json!({"ok": true, "issues": []}),
        "run_tests" => json!({"passed": 12, "failed": 0}),
        "create_note" => json!({"id": 99, "body": args["body"]}),
        "sleep" => {
            let ms = args["ms"].as_u64().unwrap_or(10_000);
            std::thread::sleep(std::time::Duration::from_millis(ms));
            json!({"slept_ms": ms})
        }
        "fail" => return Err("the fixture was told to fail".into()),
        // The first call (per $FIXTURE_LOG) kills the server mid-call; later ones answer.
        "flaky" => {
            let marker = format!("{}.flaky", std::env::var("FIXTURE_LOG").unwrap_or_default());
            if !std::path::Path::new(&marker).exists() {
                std::fs::write(&marker, "crashed once").unwrap();
                std::process::exit(3);
            }
            json!({"survived": true})
        }
        other => return Err(format!("no tool {other}")),
    })
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("exec-fixture", "1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema: Arc<JsonObject> = Arc::new(json!({"type": "object"}).as_object().unwrap().clone());
        let tools =
            TOOLS.iter().map(|t| Tool::new(*t, format!("fixture tool {t}"), schema.clone())).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        log(json!({"tool": request.name, "args": args}));
        let result = match tokio::task::spawn_blocking(move || answer(&request.name, &args)).await {
            Ok(Ok(v)) => CallToolResult::structured(v),
            Ok(Err(m)) => CallToolResult::structured_error(json!({"message": m})),
            Err(e) => CallToolResult::structured_error(json!({"message": e.to_string()})),
        };
        Ok(result.into())
    }
}

/// Serves the fixture on stdin/stdout until the client goes away.
pub fn serve_stdio() {
    use rmcp::ServiceExt;
    log(json!({"pid": std::process::id()}));
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let running = Fixture.serve(rmcp::transport::stdio()).await.expect("initialize");
        let _ = running.waiting().await;
    });
}

/// Serves the fixture over Streamable HTTP on 127.0.0.1 (a free port) in a
/// background thread; returns the URL of its endpoint.
pub fn serve_http() -> String {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let service: StreamableHttpService<Fixture, LocalSessionManager> = StreamableHttpService::new(
                || Ok(Fixture),
                Default::default(),
                StreamableHttpServerConfig::default(),
            );
            let app = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    let addr = rx.recv().unwrap();
    format!("http://{addr}/mcp")
}
