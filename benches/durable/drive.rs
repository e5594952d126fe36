//! savant-think under load: `concurrency` runs of the `load` workflow (a
//! `foreach`), each driven to its end by its own thread, through the
//! engine's library API or through `serve --http` with a keep-alive HTTP
//! client. Every `next` is one durable transition.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use savant_think::runtime::Engine;
use serde_json::{Value, json};

use super::floor::Cell;
use super::support::{generate, next_args};

/// Drives `concurrency` runs of `per_run` transitions through `engine`;
/// plans are made first and not measured.
pub fn engine(engine: &Arc<Engine>, tag: &str, concurrency: usize, per_run: usize) -> Cell {
    race(
        concurrency,
        |i| {
            let run = format!("{tag}-{concurrency}-{i}");
            let progress = engine.plan("load", generate::items(per_run), Some(&run), true).unwrap();
            (run, progress)
        },
        |(run, mut progress)| {
            let mut latencies = Vec::with_capacity(per_run);
            let mut k = 0;
            while !progress.is_done() {
                let step = progress.instruction().expect("an instruction").step_id.clone();
                k += 1;
                let t = Instant::now();
                progress = engine.next(next_args("load", &run, step, json!({"ok": k}))).unwrap();
                latencies.push(t.elapsed());
            }
            latencies
        },
    )
}

/// Drives `concurrency` runs of `per_run` transitions through the
/// `serve --http --stateless` at `addr`, one keep-alive connection per run.
pub fn http(addr: &str, tag: &str, concurrency: usize, per_run: usize) -> Cell {
    race(
        concurrency,
        |i| {
            let run = format!("{tag}-{concurrency}-{i}");
            let mut client = Client::connect(addr);
            let plan = json!({"workflow": "load", "params": generate::items(per_run), "run_id": run,
                              "if_exists": "replace"});
            let out = client.call("think_plan", plan);
            (run, client, out)
        },
        |(run, mut client, mut out)| {
            let mut latencies = Vec::with_capacity(per_run);
            let mut k = 0;
            while out["done"] != true {
                let step = out["instruction"]["step_id"].as_str().expect("a step").to_owned();
                k += 1;
                let args = json!({"workflow": "load", "run_id": run, "step_id": step,
                                  "result_snapshot": {"ok": k}});
                let t = Instant::now();
                out = client.call("think_next", args);
                latencies.push(t.elapsed());
            }
            latencies
        },
    )
}

/// Calls `tool` with `arguments` `per_run` times on each of `concurrency`
/// keep-alive connections to `addr`: the HTTP path with no run behind it.
pub fn http_calls(addr: &str, tool: &str, arguments: &Value, concurrency: usize, per_run: usize) -> Cell {
    race(
        concurrency,
        |_| Client::connect(addr),
        |mut client| {
            (0..per_run)
                .map(|_| {
                    let t = Instant::now();
                    client.call(tool, arguments.clone());
                    t.elapsed()
                })
                .collect()
        },
    )
}

/// Runs `concurrency` threads: each prepares (not measured), all start
/// together, each drives and returns its calls' latencies.
fn race<S>(
    concurrency: usize,
    prepare: impl Fn(usize) -> S + Sync,
    drive: impl Fn(S) -> Vec<Duration> + Sync,
) -> Cell {
    let start = Barrier::new(concurrency + 1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..concurrency)
            .map(|i| {
                let (prepare, drive, start) = (&prepare, &drive, &start);
                scope.spawn(move || {
                    let prepared = prepare(i);
                    start.wait();
                    drive(prepared)
                })
            })
            .collect();
        start.wait();
        let started = Instant::now();
        let latencies = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
        Cell::new(latencies, started.elapsed())
    })
}

/// A minimal HTTP/1.1 client of the MCP endpoint: one keep-alive
/// connection, one JSON-RPC `tools/call` at a time, the answer read from
/// the SSE (or JSON) body.
struct Client {
    addr: String,
    reader: BufReader<TcpStream>,
    id: u64,
}

impl Client {
    fn connect(addr: &str) -> Client {
        let stream = TcpStream::connect(addr).expect("connect to serve --http");
        stream.set_nodelay(true).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Client { addr: addr.to_owned(), reader: BufReader::new(stream), id: 0 }
    }

    /// Calls tool `name`; its structured content (a tool error panics).
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.id += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.id, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}})
        .to_string();
        // Head and body in one write, as hyper's and curl's clients send a
        // small request: one segment, so the server reads it at once.
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        self.reader.get_mut().write_all(request.as_bytes()).expect("send");
        let (status, text) = self.response();
        assert_eq!(status, 200, "{name}: HTTP {status}: {text}");
        let message = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .chain([text.trim()])
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or_else(|| panic!("{name}: no JSON-RPC answer in {text}"));
        let result = &message["result"];
        assert!(result["isError"] != true, "{name}: {message}");
        result.get("structuredContent").cloned().unwrap_or_else(|| panic!("{name}: {message}"))
    }

    /// Reads one response: its status and its body (chunked or sized).
    fn response(&mut self) -> (u16, String) {
        let mut status = 0;
        let mut length = None;
        let mut chunked = false;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("read a header");
            let line = line.trim_end();
            if line.is_empty() {
                if status == 0 {
                    continue;
                }
                break;
            }
            if status == 0 {
                status = line.split(' ').nth(1).and_then(|c| c.parse().ok()).expect("a status line");
                continue;
            }
            let (name, value) = line.split_once(':').unwrap_or((line, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).expect("a chunk size");
                let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                    .expect("a hex chunk size");
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).expect("a chunk");
                body.extend_from_slice(&chunk[..size]);
                if size == 0 {
                    break;
                }
            }
        } else if let Some(length) = length {
            body.resize(length, 0);
            self.reader.read_exact(&mut body).expect("a body");
        }
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}
