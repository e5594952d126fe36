//! OpenTelemetry traces (docs/runtime.md, "Traces"): `exec` and `serve`
//! export a span per run and a child span per step attempt over OTLP/HTTP
//! (protobuf) to a receiver this test starts on 127.0.0.1, which decodes
//! what arrives with the OpenTelemetry protocol's own message types.

use crate::common::{Root, cmd, run_cmd};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::{Span, status::StatusCode};
use prost::Message;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TRACED: &str = "id: traced
steps:
  - id: fetch
    call: web.fetch
    input_template: { text: \"fetch\" }
    capture_as: page
    success_schema: { type: object, required: [text], properties: { text: { type: string } } }
  - id: summarize
    call: web.fetch
    input_template: { text: \"summarize <<page.text>>\" }
    success_schema: { type: object, required: [text], properties: { text: { type: string } } }
";

/// An OTLP/HTTP receiver: every `POST /v1/traces` body decoded, its spans kept.
struct Receiver {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
    paths: Arc<Mutex<Vec<String>>>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let (s, p) = (spans.clone(), paths.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (s, p) = (s.clone(), p.clone());
                std::thread::spawn(move || serve_connection(conn, &s, &p));
            }
        });
        Receiver { url, spans, paths }
    }

    /// The spans received, once `n` have arrived (or the time is up).
    fn wait_for(&self, n: usize) -> Vec<Span> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let spans = self.spans.lock().unwrap().clone();
            if spans.len() >= n || Instant::now() > deadline {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn serve_connection(conn: std::net::TcpStream, spans: &Mutex<Vec<Span>>, paths: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut conn = conn;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((k, v)) = header.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        paths.lock().unwrap().push(request_line.split_whitespace().nth(1).unwrap_or("").to_owned());
        let request = ExportTraceServiceRequest::decode(body.as_slice()).expect("an OTLP trace export");
        for r in request.resource_spans {
            let service = r.resource.iter().flat_map(|r| &r.attributes).find(|a| a.key == "service.name");
            assert!(service.is_some(), "the resource names the service");
            for scope in r.scope_spans {
                spans.lock().unwrap().extend(scope.spans);
            }
        }
        let reply = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if conn.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

fn attr(span: &Span, key: &str) -> Option<String> {
    let v = span.attributes.iter().find(|a| a.key == key)?.value.as_ref()?.value.as_ref()?;
    Some(match v {
        AnyValue::StringValue(s) => s.clone(),
        AnyValue::IntValue(i) => i.to_string(),
        other => format!("{other:?}"),
    })
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

/// `exec` of a two-step workflow: one trace, a run span, a child per step
/// with the workflow, run id, step id, call, attempt and status.
#[test]
fn exec_exports_a_run_span_with_a_child_per_step() {
    let receiver = Receiver::start();
    let root = Root::with_workflows("otel-exec", &[("traced", TRACED)]);
    let mut c = cmd(&root.path, &["exec", "traced", "--dry-run", "--run-id", "r1", "--json"]);
    c.env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url).env("OTEL_SERVICE_NAME", "otel-test");
    let r = run_cmd(c);
    assert_eq!(r.code, Some(0), "{r:?}");
    let spans = receiver.wait_for(3);
    assert_eq!(spans.len(), 3, "{spans:#?}");
    assert!(receiver.paths.lock().unwrap().iter().all(|p| p == "/v1/traces"));
    let run = named(&spans, "run traced");
    assert_eq!(run.len(), 1, "{spans:#?}");
    let run = run[0];
    assert!(run.parent_span_id.is_empty(), "the run span is the trace's root");
    assert_eq!(attr(run, "savant.run_id").as_deref(), Some("r1"));
    assert_eq!(attr(run, "savant.status").as_deref(), Some("done"));
    assert_eq!(run.status.as_ref().map(|s| s.code), Some(StatusCode::Ok as i32));
    for step in ["fetch", "summarize"] {
        let s = named(&spans, &format!("step {step}"));
        assert_eq!(s.len(), 1, "{step}: {spans:#?}");
        let s = s[0];
        assert_eq!(s.trace_id, run.trace_id, "one trace per run");
        assert_eq!(s.parent_span_id, run.span_id, "{step} hangs under the run span");
        assert_eq!(attr(s, "savant.workflow").as_deref(), Some("traced"));
        assert_eq!(attr(s, "savant.step_id").as_deref(), Some(step));
        assert_eq!(attr(s, "savant.call").as_deref(), Some("web.fetch"));
        assert_eq!(attr(s, "savant.attempt").as_deref(), Some("1"));
        assert_eq!(attr(s, "savant.status").as_deref(), Some("accepted"));
        assert!(s.start_time_unix_nano <= s.end_time_unix_nano);
        assert!(run.start_time_unix_nano <= s.start_time_unix_nano, "{step} starts within the run");
        assert!(s.end_time_unix_nano <= run.end_time_unix_nano, "{step} ends within the run");
    }
    // The second step could start only when the first one's result came.
    let (a, b) = (named(&spans, "step fetch")[0], named(&spans, "step summarize")[0]);
    assert!(b.start_time_unix_nano >= a.end_time_unix_nano);
}

/// Through `serve` (MCP over stdio): a refused result is its own attempt
/// span, with status error and the schema errors; the retry is attempt 2.
/// The spans of one run share its trace whichever process records them.
#[tokio::test(flavor = "multi_thread")]
async fn serve_exports_refused_attempts_and_one_trace_per_run() {
    use rmcp::ServiceExt;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let receiver = Receiver::start();
    let root = Root::with_workflows("otel-serve", &[("traced", TRACED)]);
    root.write("savant-think.toml", format!("[telemetry]\notlp_endpoint = \"{}/\"\n", receiver.url));
    let connect = || async {
        let transport =
            TokioChildProcess::new(tokio::process::Command::new(crate::common::BIN).configure(|c| {
                c.arg("serve").arg("--root").arg(&root.path).env("LOG_LEVEL", "warn");
                c.env_remove("OTEL_EXPORTER_OTLP_ENDPOINT").env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
            }))
            .unwrap();
        tokio::time::timeout(Duration::from_secs(20), ().serve(transport)).await.unwrap().unwrap()
    };
    let call = crate::mcp_support::call;
    let client = connect().await;
    let (e, _) = call(&client, "think_plan", json!({"workflow": "traced", "run_id": "r2"})).await;
    assert!(!e);
    let (e, out) = call(
        &client,
        "think_next",
        json!({"workflow": "traced", "run_id": "r2", "step_id": "fetch", "result": {"text": 7}}),
    )
    .await;
    assert!(e, "a number is not a string: {out}");
    client.cancel().await.unwrap();
    // Another process goes on with the same run.
    let client = connect().await;
    for (step, result) in [("fetch", json!({"text": "page"})), ("summarize", json!({"text": "short"}))] {
        let (e, out) = call(
            &client,
            "think_next",
            json!({"workflow": "traced", "run_id": "r2", "step_id": step, "result": result}),
        )
        .await;
        assert!(!e, "{out}");
    }
    client.cancel().await.unwrap();
    let spans = receiver.wait_for(4);
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let run = named(&spans, "run traced")[0];
    let fetch = named(&spans, "step fetch");
    assert_eq!(fetch.len(), 2, "{spans:#?}");
    let refused = fetch.iter().find(|s| attr(s, "savant.attempt").as_deref() == Some("1")).unwrap();
    let accepted = fetch.iter().find(|s| attr(s, "savant.attempt").as_deref() == Some("2")).unwrap();
    assert_eq!(attr(refused, "savant.status").as_deref(), Some("validation_failed"));
    assert_eq!(refused.status.as_ref().map(|s| s.code), Some(StatusCode::Error as i32));
    let errors = attr(refused, "savant.validation_errors").unwrap();
    assert!(errors.contains("/text"), "{errors}");
    assert_eq!(attr(accepted, "savant.status").as_deref(), Some("accepted"));
    assert!(accepted.start_time_unix_nano >= refused.end_time_unix_nano, "the retry starts at the refusal");
    for s in &spans {
        assert_eq!(s.trace_id, run.trace_id, "{}: one trace across both processes", s.name);
        if s.name != "run traced" {
            assert_eq!(s.parent_span_id, run.span_id, "{}", s.name);
        }
    }
}

/// An endpoint that is not a URL stops the command with a message naming it.
#[test]
fn a_bad_endpoint_is_a_clear_error() {
    let root = Root::with_workflows("otel-bad", &[("traced", TRACED)]);
    let mut c = cmd(&root.path, &["exec", "traced", "--dry-run"]);
    c.env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "not a url");
    let r = run_cmd(c);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("not a url"), "{r:?}");
}

/// A sub-workflow's run is in its parent's trace: its run span hangs under
/// the parent's run span, its step spans under its own, and its spans name
/// the run and `uses:` step that started it.
#[test]
fn a_child_runs_spans_name_its_parent() {
    const CHILD: &str = "params:\n  q: { type: string }\nrequired: [q]\nsteps:\n  - id: ask\n    call: web.fetch\n    input_template: { text: \"<<params.q>>\" }\n    capture_as: a\n    success_schema: { type: object, required: [text], properties: { text: { type: string } } }\noutputs:\n  text: <<a.text>>\n";
    const PARENT: &str = "steps:\n  - id: sub\n    uses: child\n    with: { q: hi }\n    capture_as: got\n";
    let receiver = Receiver::start();
    let root = Root::with_workflows("otel-child", &[("child", CHILD), ("parent", PARENT)]);
    let mut c = cmd(&root.path, &["exec", "parent", "--dry-run", "--run-id", "p1", "--json"]);
    c.env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url);
    let r = run_cmd(c);
    assert_eq!(r.code, Some(0), "{r:?}");
    let spans = receiver.wait_for(4);
    let child_run = named(&spans, "run child");
    assert_eq!(child_run.len(), 1, "{spans:#?}");
    let child_run = child_run[0];
    assert_eq!(attr(child_run, "savant.parent_run_id").as_deref(), Some("p1"), "{child_run:#?}");
    assert_eq!(attr(child_run, "savant.parent_step_id").as_deref(), Some("sub"));
    assert_eq!(attr(child_run, "savant.parent_workflow").as_deref(), Some("parent"));
    let parent_run = named(&spans, "run parent")[0];
    assert_eq!(attr(parent_run, "savant.status").as_deref(), Some("done"));
    assert!(attr(parent_run, "savant.parent_run_id").is_none());
    assert_eq!(child_run.trace_id, parent_run.trace_id, "one trace for the parent and its child");
    assert_eq!(child_run.parent_span_id, parent_run.span_id, "the child's run span hangs under its parent's");
    assert!(parent_run.parent_span_id.is_empty(), "the parent's run span is the trace's root");
    let ask = named(&spans, "step ask")[0];
    assert_eq!((&ask.trace_id, &ask.parent_span_id), (&parent_run.trace_id, &child_run.span_id), "{ask:#?}");
}

/// A wait is a span from when it started waiting to its end, under the run
/// span: `wait approve` answered, `wait nap` slept; the step after a wait
/// starts when the wait ended.
#[test]
fn a_wait_is_a_span_from_its_start_to_its_end() {
    const WAITS: &str = "steps:\n  - id: fetch\n    call: web.fetch\n    input_template: { text: \"fetch\" }\n    success_schema: { type: object, required: [text], properties: { text: { type: string } } }\n  - id: approve\n    await:\n      ask: \"Go on?\"\n      schema: { type: object, properties: { approved: { type: boolean } }, required: [approved] }\n      timeout: 1h\n    capture_as: approval\n    deps: [fetch]\n  - id: nap\n    sleep: 10m\n    deps: [approve]\n  - id: summarize\n    call: web.fetch\n    input_template: { text: \"done\" }\n    deps: [nap]\n    success_schema: { type: object, required: [text], properties: { text: { type: string } } }\n";
    let receiver = Receiver::start();
    let root = Root::with_workflows("otel-waits", &[("waits", WAITS)]);
    let mut c = cmd(&root.path, &["exec", "waits", "--dry-run", "--run-id", "w1", "--json"]);
    c.env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url);
    let r = run_cmd(c);
    assert_eq!(r.code, Some(0), "{r:?}");
    let spans = receiver.wait_for(5);
    assert_eq!(spans.len(), 5, "{spans:#?}");
    let run = named(&spans, "run waits")[0];
    let fetch = named(&spans, "step fetch")[0];
    let summarize = named(&spans, "step summarize")[0];
    let mut previous_end = fetch.end_time_unix_nano;
    for (step, wait, ended) in [("approve", "answer", "answered"), ("nap", "timer", "slept")] {
        let s = named(&spans, &format!("wait {step}"));
        assert_eq!(s.len(), 1, "{step}: {spans:#?}");
        let s = s[0];
        assert_eq!((&s.trace_id, &s.parent_span_id), (&run.trace_id, &run.span_id), "{s:#?}");
        assert_eq!(attr(s, "savant.step_id").as_deref(), Some(step));
        assert_eq!(attr(s, "savant.wait").as_deref(), Some(wait));
        assert_eq!(attr(s, "savant.wait_ended").as_deref(), Some(ended));
        assert_eq!(attr(s, "savant.run_id").as_deref(), Some("w1"));
        assert_eq!(s.status.as_ref().map(|st| st.code), Some(StatusCode::Ok as i32));
        assert!(s.start_time_unix_nano >= previous_end, "{step} starts when the step before it ended");
        assert!(s.start_time_unix_nano <= s.end_time_unix_nano);
        previous_end = s.end_time_unix_nano;
    }
    assert!(summarize.start_time_unix_nano >= previous_end, "the step after the nap starts at its end");
    assert!(previous_end <= run.end_time_unix_nano);
}

/// A fork keeps the `uses:` results of its source with copies of their
/// child runs, and of those children's own children: every copy is in the
/// fork's trace, its run span under its (copied) parent's — the
/// grandchild's under the child copy's, as the child copy's under the fork's.
#[test]
fn a_forks_copied_grandchild_hangs_under_its_copied_parent() {
    const LEAF: &str = "steps:\n  - id: ask\n    call: web.fetch\n    input_template: { text: leaf }\n    capture_as: a\n    success_schema: { type: object, required: [text], properties: { text: { type: string } } }\n";
    const MID: &str = "steps:\n  - id: deeper\n    uses: leaf\n";
    const TOP: &str = "steps:\n  - id: sub\n    uses: mid\n  - id: last\n    call: web.fetch\n    input_template: { text: last }\n    success_schema: { type: object, required: [text], properties: { text: { type: string } } }\n";
    let receiver = Receiver::start();
    let root = Root::with_workflows("otel-fork", &[("leaf", LEAF), ("mid", MID), ("top", TOP)]);
    let r = run_cmd(cmd(&root.path, &["exec", "top", "--dry-run", "--run-id", "t1", "--json"]));
    assert_eq!(r.code, Some(0), "{r:?}");
    let r =
        run_cmd(cmd(&root.path, &["fork", "top", "--run-id", "t1", "--from", "last", "--new-run-id", "t2"]));
    assert_eq!(r.code, Some(0), "{r:?}");
    // The fork runs `last` again and finishes: its run span is exported.
    let mut c = cmd(&root.path, &["exec", "top", "--dry-run", "--run-id", "t2", "--json"]);
    c.env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url);
    let r = run_cmd(c);
    assert_eq!(r.code, Some(0), "{r:?}");
    let spans = receiver.wait_for(2);
    let fork_span = named(&spans, "run top");
    assert_eq!(fork_span.len(), 1, "{spans:#?}");
    assert_eq!(attr(fork_span[0], "savant.run_id").as_deref(), Some("t2"), "{spans:#?}");
    let (trace, span) = (hex(&fork_span[0].trace_id), hex(&fork_span[0].span_id));
    let state = |workflow: &str, run_id: &str| {
        let out = run_cmd(cmd(&root.path, &["state", "get", workflow, "--run-id", run_id]));
        serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap()
    };
    let child = state("mid", "t2.sub");
    assert_eq!(child["parent"]["run_id"], "t2");
    assert_eq!(child["parent"]["trace"], json!({"trace_id": trace, "span_id": span}), "{child}");
    // The child copy's run span, as every process derives it.
    let parent: savant_think::runtime::record::ParentRun =
        serde_json::from_value(child["parent"].clone()).unwrap();
    let (_, child_span) = savant_think::runtime::engine::trace_ids(&savant_think::runtime::engine::RunRef {
        workflow: "mid",
        run_id: "t2.sub",
        generation: child["generation"].as_str(),
        created_at: child["created_at"].as_str().unwrap(),
        workflow_version: child["workflow_hash"].as_str().unwrap(),
        parent: Some(&parent),
    });
    let grandchild = state("leaf", "t2.sub.deeper");
    assert_eq!(grandchild["parent"]["run_id"], "t2.sub", "{grandchild}");
    assert_eq!(grandchild["parent"]["depth"], 2, "{grandchild}");
    assert_eq!(
        grandchild["parent"]["trace"],
        json!({"trace_id": trace, "span_id": hex(&child_span)}),
        "the grandchild copy hangs under the child copy's run span, in the fork's trace: {grandchild}"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
