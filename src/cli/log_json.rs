//! `--log-format json`: one JSON object per line on stderr, for a log
//! pipeline to search. Stable field names: `ts` (RFC 3339, UTC,
//! milliseconds), `level` (`error`, `warn`, `info`, `debug`, `trace`),
//! `msg`, `target`, then the fields of the spans the event is in (outermost
//! first: a tool call's `request_id`), then the event's own fields (a
//! call's `tool`, `ms`, `workflow`, `run_id`, `step`, `code`, `cause`).
//! Numbers and booleans stay JSON numbers and booleans; anything else is
//! its text.

use serde_json::{Map, Value};
use std::io::Write;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The layer that writes the lines.
pub struct JsonLines;

/// A span's fields, kept in its extensions.
struct SpanFields(Map<String, Value>);

struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), Value::String(value.to_owned()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), value.into());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for JsonLines {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Map::new();
        attrs.record(&mut Fields(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanFields(fields));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<SpanFields>()
        {
            values.record(&mut Fields(&mut fields.0));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let meta = event.metadata();
        let mut own = Map::new();
        event.record(&mut Fields(&mut own));
        let mut line = Map::new();
        let ts = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        line.insert("ts".into(), Value::String(ts));
        line.insert("level".into(), Value::String(meta.level().as_str().to_ascii_lowercase()));
        line.insert("msg".into(), own.remove("message").unwrap_or_default());
        line.insert("target".into(), Value::String(meta.target().to_owned()));
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope.from_root() {
                if let Some(fields) = span.extensions().get::<SpanFields>() {
                    line.extend(fields.0.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
        }
        line.extend(own);
        let mut text = Value::Object(line).to_string();
        text.push('\n');
        // One write per line, so lines of concurrent calls never interleave.
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}
