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

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::Criterion;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use support::{BIN, Root, Server, generate};

const ITEMS: usize = 100_000;

type Client = RunningService<RoleClient, ()>;

/// A scratch root with `bench_loop`, a `foreach`, and `bench_70`, 70
/// sequential steps each reading the previous capture.
fn scratch_root(name: &str) -> Root {
    Root::with_workflows(
        name,
        &[
            ("bench_loop", &generate::foreach("bench_loop")),
            ("bench_70", &generate::sequential("bench_70", 70)),
        ],
    )
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

/// One `ping` round trip: the floor of the two processes and the framing.
async fn ping(client: &Client) {
    let ping = rmcp::model::ClientRequest::PingRequest(rmcp::model::PingRequest {
        method: Default::default(),
        extensions: Default::default(),
    });
    client.peer().send_request(ping).await.expect("ping");
}

/// Hands out `think_next` calls on runs of the 70-step workflow, a new
/// run planned (untimed) every 70 calls.
struct Seventy {
    run: usize,
    step: usize,
}

impl Seventy {
    async fn args(&mut self, client: &Client) -> Value {
        if self.step == 70 {
            self.run += 1;
            self.step = 0;
            let id = format!("r{}", self.run);
            call(client, "think_plan", json!({"workflow": "bench_70", "run_id": id})).await;
        }
        let args = json!({"workflow": "bench_70", "run_id": format!("r{}", self.run),
                          "step_id": format!("s{}", self.step), "result_snapshot": {"ok": true}});
        self.step += 1;
        args
    }
}

/// The median and quartiles of `ratios`.
fn quartiles(ratios: &mut [f64]) -> (f64, f64, f64) {
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    (at(0.25), at(0.5), at(0.75))
}

/// Hands out `think_next` calls over one long run, one accepted item each.
struct Loop {
    next_item: usize,
}

impl Loop {
    async fn start(client: &Client) -> Loop {
        let out = call(
            client,
            "think_plan",
            json!({"workflow": "bench_loop", "params": generate::items(ITEMS), "run_id": "bench"}),
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
    let root = scratch_root("stdio");
    let client = rt.block_on(connect(&root.path));
    let mut run = rt.block_on(Loop::start(&client));

    let mut g = c.benchmark_group("mcp_stdio");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    g.bench_function("ping", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    ping(&client).await;
                }
                started.elapsed()
            })
        })
    });
    let mut seventy = Seventy { run: 0, step: 70 };
    g.bench_function("think_next_70", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let args = seventy.args(&client).await;
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

    // The targets are ratios to `ping`, and `ping` alone moves by ±30 %
    // between runs on a shared machine: here each iteration makes one
    // `ping` and one tool call, alternating, so both see the same load. The
    // measurement is the tool's time; each sample's ratio (tool / ping,
    // summed over its iterations) is collected and summarised at the end.
    let mut g = c.benchmark_group("mcp_stdio_vs_ping");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    let mut ratios: Vec<(&str, Vec<f64>)> = Vec::new();
    for tool in ["prompt_say", "think_next_70"] {
        let mut samples = Vec::new();
        g.bench_function(tool, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let (mut floor, mut total) = (Duration::ZERO, Duration::ZERO);
                    for _ in 0..iters {
                        let (name, args) = match tool {
                            "prompt_say" => ("prompt_say", json!({"message": "hello"})),
                            _ => ("think_next", seventy.args(&client).await),
                        };
                        let started = Instant::now();
                        ping(&client).await;
                        floor += started.elapsed();
                        let started = Instant::now();
                        call(&client, name, args).await;
                        total += started.elapsed();
                    }
                    samples.push(total.as_secs_f64() / floor.as_secs_f64().max(1e-12));
                    total
                })
            })
        });
        ratios.push((tool, samples));
    }
    g.finish();
    for (tool, mut samples) in ratios {
        // Criterion's warm-up calls come first: the measured samples are the last 50.
        let measured = samples.len().saturating_sub(50);
        let samples = &mut samples[measured..];
        if samples.len() > 1 {
            let (q1, median, q3) = quartiles(samples);
            println!(
                "mcp_stdio_vs_ping/{tool}: {median:.2}x ping (quartiles {q1:.2}x to {q3:.2}x, {} samples)",
                samples.len()
            );
        }
    }
    rt.block_on(async { client.cancel().await.ok() });
}

fn bench_http(c: &mut Criterion) {
    use rmcp::transport::StreamableHttpClientTransport;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let root = scratch_root("http");
    let mut command = Server::command(&root.path);
    command.env("LOG_LEVEL", "error");
    let server = Server::start(command, false);
    let addr = &server.addr;
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
    drop(server);
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    bench_http(&mut c);
    c.final_summary();
}
