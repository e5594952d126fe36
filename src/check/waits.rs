//! What the checks of waits share: the schema that types what a wait
//! receives (an `await:` answer's `schema`, a `wait_for:` event's payload
//! schema from `[events.NAME]`), and the fields a capture of it may read.

use crate::check::{Config, Cx};
use crate::diagnostic::suggest;
use crate::ir::{SchemaRef, Step, WaitKind};
use serde_json::Value;

/// The payload schema of the event a `wait_for:` step waits for, when
/// the project declares it with one.
pub fn event_schema<'c>(step: &Step, config: &'c Config) -> Option<&'c Value> {
    let WaitKind::Event { event, .. } = &step.wait.as_deref()?.kind else { return None };
    config.events.as_ref()?.get(event.value.as_str())?.as_ref()
}

/// The schema of what waiting step `step` receives, and what that is in
/// words (``the answer to `approve` ``, ``the payload of event `x` ``): `await:`'s schema (inline
/// or a readable name in schemas/), or the event's payload schema.
pub fn received_schema<'a>(cx: &Cx<'a>, step: &'a Step) -> Option<(&'a Value, String)> {
    match &step.wait.as_deref()?.kind {
        WaitKind::Answer { .. } => {
            let schema = match step.success_schema.as_ref()? {
                SchemaRef::Inline { schema, .. } => &**schema,
                SchemaRef::Named(n) => cx.config.schemas.get(n.value.as_str())?.as_ref().ok()?,
            };
            Some((schema, format!("the answer to `{}`", step.id.value)))
        }
        WaitKind::Event { event, .. } => {
            Some((event_schema(step, cx.config)?, format!("the payload of event `{}`", event.value)))
        }
        _ => None,
    }
}

/// A field read from the capture of waiting step `step` that its schema
/// does not declare: an answer or a payload has only the properties its
/// schema lists, unless it says `additionalProperties` (a message and a
/// did-you-mean, for `UNRESOLVED_VAR`).
pub fn unknown_field(cx: &Cx, step: usize, root: &str, name: &str) -> Option<(String, Option<String>)> {
    let s = &cx.wf.steps[step];
    if s.foreach.is_some() {
        return None;
    }
    let (schema, what) = received_schema(cx, s)?;
    let properties = schema.get("properties")?.as_object()?;
    let extra = schema.get("additionalProperties").is_some_and(|a| a != &Value::Bool(false))
        || schema.get("patternProperties").is_some();
    if properties.is_empty() || extra || properties.contains_key(name) {
        return None;
    }
    let names = || properties.keys().map(String::as_str);
    let help = suggest(name, names())
        .unwrap_or_else(|| format!("its fields are: {}", names().collect::<Vec<_>>().join(", ")));
    Some((format!("`{root}.{name}`: {what} has no field `{name}`"), Some(help)))
}
