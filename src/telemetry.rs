//! OpenTelemetry traces of runs: an engine [`RunObserver`] that exports
//! OTLP over HTTP (protobuf) through the opentelemetry crates' exporter and
//! batch processor (docs/runtime.md, "Traces").
//!
//! A run is one trace: a span for the run, a child span per step attempt,
//! and a child span per wait (`wait STEP`, from when it started waiting to
//! its answer, its event or its deadline).
//! A run lives longer than any process that serves it (it is driven call by
//! call, across restarts and replicas), so no process holds its span open:
//! the trace id and the run span's id are derived from the run (workflow,
//! run id, generation), and every span is exported when what it describes
//! has ended — a step attempt when its result is recorded, a wait when its
//! end is, the run when it finishes. Whichever process records them, the spans of one run share its
//! trace and hang under its run span. A sub-workflow's run is in its
//! parent's trace, its run span under the parent's run span (the ids the
//! child's record carries, `ParentRun.trace`).

use crate::runtime::engine::{
    AttemptOutcome, RunFinished, RunObserver, RunRef, StepAttempt, WaitEnded, trace_ids, unhex,
};
use crate::runtime::record::RunStatus;
use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SpanData, SpanEvents, SpanLinks, SpanProcessor};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::time::{Duration, SystemTime};

/// How long [`Tracer::shutdown`] waits for the last spans to be sent.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Exports the engine's runs as traces. Give it to the engine with
/// `Engine::set_observer`; call [`Tracer::shutdown`] before the process
/// ends, so the spans still queued are sent.
#[derive(Debug)]
pub struct Tracer {
    processor: BatchSpanProcessor,
    scope: InstrumentationScope,
}

/// A tracer that could not be built: the endpoint is not a URL.
#[derive(Debug)]
pub struct TracerError(pub String);

impl std::fmt::Display for TracerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Tracer {
    /// A tracer sending spans to `traces_url` (a full URL, e.g. from
    /// `TelemetryConfig::traces`) as `service_name`. Headers in
    /// `OTEL_EXPORTER_OTLP_HEADERS` / `OTEL_EXPORTER_OTLP_TRACES_HEADERS` are
    /// sent too (the exporter reads them).
    pub fn new(traces_url: &str, service_name: &str) -> Result<Tracer, TracerError> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(traces_url)
            .with_timeout(SHUTDOWN_TIMEOUT)
            .build()
            .map_err(|e| TracerError(format!("cannot export traces to `{traces_url}`: {e}")))?;
        let mut processor = BatchSpanProcessor::builder(exporter).build();
        let resource = Resource::builder_empty()
            .with_service_name(service_name.to_owned())
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        processor.set_resource(&resource);
        let scope =
            InstrumentationScope::builder("savant-think").with_version(env!("CARGO_PKG_VERSION")).build();
        Ok(Tracer { processor, scope })
    }

    /// Sends the spans still queued and stops the exporter's thread.
    pub fn shutdown(&self) {
        let _ = self.processor.shutdown_with_timeout(SHUTDOWN_TIMEOUT);
    }

    fn export(&self, span: SpanData) {
        self.processor.on_end(span);
    }

    fn span(&self, ids: (TraceId, SpanId, SpanId), name: String, times: (&str, &str)) -> SpanData {
        let (trace_id, span_id, parent) = ids;
        let start = time(times.0);
        SpanData {
            span_context: SpanContext::new(
                trace_id,
                span_id,
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: parent,
            parent_span_is_remote: false,
            span_kind: SpanKind::Internal,
            name: Cow::Owned(name),
            start_time: start,
            end_time: time(times.1).max(start),
            attributes: Vec::new(),
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: Status::Unset,
            instrumentation_scope: self.scope.clone(),
        }
    }
}

fn time(rfc3339: &str) -> SystemTime {
    humantime::parse_rfc3339_weak(rfc3339).unwrap_or_else(|_| SystemTime::now())
}

/// The run's trace id and its run span's id ([`trace_ids`]).
pub fn run_ids(run: &RunRef<'_>) -> (TraceId, SpanId) {
    let (trace, span) = trace_ids(run);
    // All-zero ids are invalid; a sha256 that starts with 16 zero bytes is not going to happen.
    (TraceId::from_bytes(trace), SpanId::from_bytes(span))
}

/// The span a run's span hangs under: its parent's run span for a
/// sub-workflow's run, none for a run started with plan.
fn run_parent_span(run: &RunRef<'_>) -> SpanId {
    run.parent
        .and_then(|p| p.trace.as_ref())
        .and_then(|t| unhex::<8>(&t.span_id))
        .map_or(SpanId::INVALID, SpanId::from_bytes)
}

/// A step attempt's span id: from the run, the step and the attempt, so the
/// same attempt reported twice (a retried call) is one span. A wait's is
/// attempt 0 (no attempt is numbered 0).
fn attempt_span_id(run: &RunRef<'_>, step_id: &str, attempt: u32) -> SpanId {
    let d = Sha256::new()
        .chain_update(run_ids(run).1.to_bytes())
        .chain_update(step_id.as_bytes())
        .chain_update(attempt.to_le_bytes())
        .finalize();
    let mut span = [0u8; 8];
    span.copy_from_slice(&d[..8]);
    SpanId::from_bytes(span)
}

fn run_attributes(run: &RunRef<'_>) -> Vec<KeyValue> {
    let mut attributes = vec![
        KeyValue::new("savant.workflow", run.workflow.to_owned()),
        KeyValue::new("savant.run_id", run.run_id.to_owned()),
        KeyValue::new("savant.workflow_version", run.workflow_version.to_owned()),
    ];
    if let Some(p) = run.parent {
        attributes.push(KeyValue::new("savant.parent_workflow", p.workflow.clone()));
        attributes.push(KeyValue::new("savant.parent_run_id", p.run_id.clone()));
        attributes.push(KeyValue::new("savant.parent_step_id", p.step_id.clone()));
    }
    attributes
}

impl RunObserver for Tracer {
    fn step_attempt(&self, a: &StepAttempt<'_>) {
        let (trace_id, run_span) = run_ids(&a.run);
        let ids = (trace_id, attempt_span_id(&a.run, a.step_id, a.attempt), run_span);
        let mut span = self.span(ids, format!("step {}", a.step_id), (a.started_at, a.ended_at));
        span.attributes = run_attributes(&a.run);
        span.attributes.push(KeyValue::new("savant.step_id", a.step_id.to_owned()));
        if let Some(call) = a.call {
            span.attributes.push(KeyValue::new("savant.call", call.to_owned()));
        }
        span.attributes.push(KeyValue::new("savant.attempt", i64::from(a.attempt)));
        match a.outcome {
            AttemptOutcome::Accepted => {
                span.attributes.push(KeyValue::new("savant.status", "accepted"));
                span.status = Status::Ok;
            }
            AttemptOutcome::ValidationFailed { errors } => {
                span.attributes.push(KeyValue::new("savant.status", "validation_failed"));
                span.attributes.push(KeyValue::new("savant.validation_errors", errors.to_string()));
                let n = errors.as_array().map_or(1, Vec::len);
                span.status =
                    Status::error(format!("the result broke the step's success schema ({n} error(s))"));
            }
        }
        self.export(span);
    }

    fn wait_ended(&self, w: &WaitEnded<'_>) {
        let (trace_id, run_span) = run_ids(&w.run);
        let ids = (trace_id, attempt_span_id(&w.run, w.step_id, 0), run_span);
        let mut span = self.span(ids, format!("wait {}", w.step_id), (w.started_at, w.ended_at));
        span.attributes = run_attributes(&w.run);
        span.attributes.push(KeyValue::new("savant.step_id", w.step_id.to_owned()));
        span.attributes.push(KeyValue::new("savant.wait", w.wait));
        span.attributes.push(KeyValue::new("savant.wait_ended", w.ended));
        span.status = match w.ended {
            "failed" => Status::error("the wait timed out with no on_timeout: WAIT_TIMED_OUT"),
            _ => Status::Ok,
        };
        self.export(span);
    }

    fn run_finished(&self, r: &RunFinished<'_>) {
        let (trace_id, run_span) = run_ids(&r.run);
        let ids = (trace_id, run_span, run_parent_span(&r.run));
        let mut span = self.span(ids, format!("run {}", r.run.workflow), (r.run.created_at, r.ended_at));
        span.attributes = run_attributes(&r.run);
        span.attributes.push(KeyValue::new("savant.status", r.status.as_str()));
        span.attributes.push(KeyValue::new("savant.steps", r.steps as i64));
        span.attributes.push(KeyValue::new("savant.completed", r.completed as i64));
        span.status = match r.status {
            RunStatus::Failed => {
                let why = r.failure.and_then(|f| f.code()).unwrap_or("RUN_FAILED");
                span.attributes.push(KeyValue::new(
                    "savant.failure",
                    r.failure.map(|f| f.to_json().to_string()).unwrap_or_default(),
                ));
                Status::error(format!("the run failed: {why}"))
            }
            _ => Status::Ok,
        };
        self.export(span);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_runs_own() {
        let run = |g: Option<&'static str>| RunRef {
            workflow: "wf",
            run_id: "r1",
            generation: g,
            created_at: "2026-11-27T10:00:00Z",
            workflow_version: "sha256:0",
            parent: None,
        };
        assert_eq!(run_ids(&run(Some("g1"))), run_ids(&run(Some("g1"))));
        assert_ne!(
            run_ids(&run(Some("g1"))).0,
            run_ids(&run(Some("g2"))).0,
            "a run started over is another trace"
        );
        let (_, span) = run_ids(&run(None));
        assert_ne!(span, SpanId::INVALID);
        assert_ne!(attempt_span_id(&run(None), "a", 1), attempt_span_id(&run(None), "a", 2));
    }
}
