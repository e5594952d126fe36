//! Round trip of MCP tool calls over stdio: rmcp's client in the bench,
//! `savant-think serve` (the real release binary) as a child process.
//!
//! Groups (`mcp_stdio`):
//! - `ping`: the protocol floor — one JSON-RPC request and its empty answer.
//! - `prompt_say`: the trivial tool — JSON-RPC framing, dispatch and the
//!   result's text copy, no state.
//! - `think_next_70`: one accepted result per call on runs of a 70-step
//!   sequential workflow (a new run is planned, untimed, every 70 calls).
//! - `think_next`: one accepted result per call on a 100,000-item `foreach`
//!   run, fsync off (`SAVANT_STATE_FSYNC=0`): journal append, state update,
//!   the next instruction rendered.
//!
//! Group `mcp_http`: `prompt_say` over Streamable HTTP (`serve --http` on
//! 127.0.0.1, rmcp's HTTP client, one session), against the same call over
//! stdio. Target: within 2× of stdio (no Nagle/delayed-ACK stalls).
//!
//! Targets: `think_next` within 2× of `prompt_say`; `prompt_say` within
//! 1.3× of `ping` and `think_next_70` within 2.5× of `ping`, measured back
//! to back in one run.
//! Run with `cargo bench --bench mcp`; figures in `docs/PERFORMANCE.md`
//! (section "MCP round trip"). The root goes under the system temp dir
//! (`SAVANT_BENCH_DIR` to choose another file system).

use criterion::Criterion;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_savant-think");
const ITEMS: usize = 100_000;

const WORKFLOW: &str = r#"
id: bench_loop
params:
  items: { type: array, items: { type: string } }
required: [items]
steps:
  - id: each
    call: think
    foreach: params.items
    as: it
    input_template: { thought: "item <<it>> #<<loop.index>>" }
    capture_as: out
"#;

/// 70 sequential steps, each reading the previous capture.
fn seventy_steps() -> String {
    let mut y = String::from("id: bench_70\nsteps:\n  - id: s0\n    call: think\n    capture_as: c0\n");
    for i in 1..70 {
        y.push_str(&format!(
            "  - id: s{i}\n    call: think\n    input_template: {{ thought: \"after <<c{}.ok>>\" }}\n    capture_as: c{i}\n",
            i - 1
        ));
    }
    y.push_str("  - id: end\n    call: prompt.say\n    input_template: { message: \"<<c69.ok>>\" }\n");
    y
}

type Client = RunningService<RoleClient, ()>;

fn scratch_root() -> PathBuf {
    let base = std::env::var_os("SAVANT_BENCH_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let root = base.join(format!("savant-think-bench-mcp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("workflows")).unwrap();
    std::fs::write(root.join("workflows/bench_loop.yaml"), WORKFLOW).unwrap();
    std::fs::write(root.join("workflows/bench_70.yaml"), seventy_steps()).unwrap();
    root
}

async fn connect(root: &Path) -> Client {
    let transport = TokioChildProcess::new(tokio::process::Command::new(BIN).configure(|c| {
        c.arg("serve").arg("--root").arg(root).env("LOG_LEVEL", "error").env("SAVANT_STATE_FSYNC", "0");
    }))
    .expect("spawn savant-think serve");
    ().serve(transport).await.expect("initialize")
}

async fn call(client: &Client, name: &str, args: Value) -> Value {
    let Value::Object(args) = args else { unreachable!() };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.structured_content);
    r.structured_content.unwrap_or(Value::Null)
}

/// Hands out `think_next` calls over one long run, one accepted item each.
struct Loop {
    next_item: usize,
}

impl Loop {
    async fn start(client: &Client) -> Loop {
        let items: Vec<String> = (0..ITEMS).map(|i| format!("i{i}")).collect();
        let out = call(
            client,
            "think_plan",
            json!({"workflow": "bench_loop", "params": {"items": items}, "run_id": "bench"}),
        )
        .await;
        assert_eq!(out["instruction"]["step_id"], "each[0]", "{out}");
        Loop { next_item: 0 }
    }

    fn args(&mut self) -> Value {
        assert!(self.next_item < ITEMS, "raise ITEMS: the bench ran out of items");
        let step = format!("each[{}]", self.next_item);
        self.next_item += 1;
        json!({"workflow": "bench_loop", "run_id": "bench", "step_id": step,
               "result_snapshot": {"ok": true}})
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let root = scratch_root();
    let client = rt.block_on(connect(&root));
    let mut run = rt.block_on(Loop::start(&client));

    let mut g = c.benchmark_group("mcp_stdio");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    g.bench_function("ping", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    let ping = rmcp::model::ClientRequest::PingRequest(rmcp::model::PingRequest {
                        method: Default::default(),
                        extensions: Default::default(),
                    });
                    client.peer().send_request(ping).await.expect("ping");
                }
                started.elapsed()
            })
        })
    });
    let mut seventy = (0usize, 70usize);
    g.bench_function("think_next_70", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (run, step) = &mut seventy;
                    if *step == 70 {
                        *run += 1;
                        *step = 0;
                        let id = format!("r{run}");
                        call(&client, "think_plan", json!({"workflow": "bench_70", "run_id": id})).await;
                    }
                    let args = json!({"workflow": "bench_70", "run_id": format!("r{run}"),
                                      "step_id": format!("s{step}"), "result_snapshot": {"ok": true}});
                    *step += 1;
                    let started = Instant::now();
                    call(&client, "think_next", args).await;
                    total += started.elapsed();
                }
                total
            })
        })
    });
    g.bench_function("prompt_say", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    call(&client, "prompt_say", json!({"message": "hello"})).await;
                }
                started.elapsed()
            })
        })
    });
    g.bench_function("think_next", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let args = run.args();
                    let started = Instant::now();
                    let out = call(&client, "think_next", args).await;
                    total += started.elapsed();
                    debug_assert!(out.get("instruction").is_some());
                }
                total
            })
        })
    });
    g.finish();
    rt.block_on(async { client.cancel().await.ok() });
    let _ = std::fs::remove_dir_all(&root);
}

/// `serve --http 127.0.0.1:0`: the child and its address (read from stderr).
fn start_http(root: &Path) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0", "--root"])
        .arg(root)
        .env("LOG_LEVEL", "error")
        .env_remove("SAVANT_THINK_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn savant-think serve --http");
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(stderr).lines();
    let addr = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.split("http://").nth(1).map(|r| r.split('/').next().unwrap_or_default().to_owned()))
        .expect("serve prints its address");
    // Keep draining stderr so the child never blocks on it.
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    (child, addr)
}

fn bench_http(c: &mut Criterion) {
    use rmcp::transport::StreamableHttpClientTransport;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let root = scratch_root();
    let (mut child, addr) = start_http(&root);
    let client: Client = rt.block_on(async {
        ().serve(StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp")))
            .await
            .expect("initialize")
    });
    let mut g = c.benchmark_group("mcp_http");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    g.bench_function("prompt_say", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    call(&client, "prompt_say", json!({"message": "hello"})).await;
                }
                started.elapsed()
            })
        })
    });
    g.finish();
    rt.block_on(async { client.cancel().await.ok() });
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&root);
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    bench_http(&mut c);
    c.final_summary();
}
