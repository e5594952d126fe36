//! Lowering a waiting step: `await:` (a person's answer), `sleep:` /
//! `sleep_until:` (a time) and `wait_for:` (an event), and the duration
//! syntax they share (`30s`, `10m`, `24h`, `7d`, `1h30m`).

use super::*;
use crate::ir::{JsonAt, Wait, WaitKind, WaitTimeout};

/// The keys that make a step a wait, in the order the docs list them.
pub(crate) const WAIT_KEYS: [&str; 4] = ["await", "sleep", "sleep_until", "wait_for"];

/// The longest a wait may last: a sleep, a timeout. Longer is almost
/// always a unit mistake (`365d` is a year; `3650d` is not a wait).
pub const MAX_WAIT_SECS: u64 = 366 * 86_400;

/// The keys of `await:`.
pub(crate) const AWAIT_KEYS: &[KeyDoc] = &[
    required("ask", Shape::Template, "The question a person answers; may interpolate `<<expr>>`."),
    key(
        "schema",
        Shape::SchemaRef,
        "The answer's JSON Schema (a name in schemas/ or inline); types the capture.",
    ),
    key("timeout", Shape::WaitDuration, "How long to wait (`30s`, `10m`, `24h`, `7d`), or `never`."),
    key(
        "on_timeout",
        Shape::TemplateValue,
        "The answer when the wait times out; without it a timeout fails the step.",
    ),
];

/// The keys of `wait_for:`.
pub(crate) const WAIT_FOR_KEYS: &[KeyDoc] = &[
    required(
        "event",
        Shape::String,
        "The event's name, declared in savant-think.toml under `[events.NAME]`.",
    ),
    key("match", Shape::Template, "The correlation key an event must carry; may interpolate `<<expr>>`."),
    key("timeout", Shape::WaitDuration, "How long to wait (`30s`, `10m`, `24h`, `7d`), or `never`."),
    key(
        "on_timeout",
        Shape::TemplateValue,
        "The payload when the wait times out; without it a timeout fails the step.",
    ),
];

/// Keys a waiting step does not take, and what to do instead.
const NOT_ON_A_WAIT: &[(&str, &str)] = &[
    ("call", "a step calls a tool, runs a workflow or waits: keep one"),
    ("uses", "a step calls a tool, runs a workflow or waits: keep one"),
    ("input_template", "a wait has no input: what it shows is its `ask:` or `match:`"),
    ("with", "a wait has no input: what it shows is its `ask:` or `match:`"),
    (
        "success_schema",
        "an answer is typed by `await: {schema: …}`, an event by its `[events.NAME]` payload schema",
    ),
    ("timeout", "give the wait its own timeout: `await: {timeout: 24h}`"),
    ("retry", "a wait is not retried: a wrong answer is refused and the step keeps waiting"),
];

/// Parses a wait's duration: one or more `<whole number><unit>` with units
/// `s`, `m`, `h`, `d`, `w` (`30s`, `10m`, `1h30m`, `7d`). The error says
/// what is wrong, for a person.
pub fn parse_wait_duration(text: &str) -> Result<u64, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err("a duration is empty".into());
    }
    if s.starts_with('-') {
        return Err(format!("`{s}` is negative: a wait cannot go back in time"));
    }
    let mut total: u64 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("`{s}` is not a duration: write a whole number and a unit, like `30s`"));
        }
        let n: u64 = rest[..digits].parse().map_err(|_| format!("`{s}` is too long a wait"))?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let factor = match rest[..unit_len].trim() {
            "s" => 1,
            "m" => 60,
            "h" => 3_600,
            "d" => 86_400,
            "w" => 7 * 86_400,
            "" => return Err(format!("`{s}` has no unit: write `{s}s`, `{s}m`, `{s}h` or `{s}d`")),
            other => {
                return Err(format!(
                    "`{other}` is not a unit of a wait: use `s`, `m`, `h`, `d` or `w` (`30s`, `10m`, `24h`, `7d`)"
                ));
            }
        };
        rest = &rest[unit_len..];
        total = n.checked_mul(factor).and_then(|v| total.checked_add(v)).unwrap_or(u64::MAX);
    }
    if total == 0 {
        return Err(format!("`{s}` waits for nothing: write a positive duration"));
    }
    if total > MAX_WAIT_SECS {
        return Err(format!("`{s}` is longer than the longest wait, 366d"));
    }
    Ok(total)
}

impl Lower<'_> {
    /// The wait of a step that has one of [`WAIT_KEYS`], with the schema
    /// that types its answer (`await.schema`); reports a second wait key
    /// and the keys a wait does not take.
    pub(super) fn wait(&mut self, node: &Node, id: &Str) -> Option<(Box<Wait>, Option<SchemaRef>)> {
        let entries = node.as_map()?;
        let is_wait = |e: &&Entry| e.key.as_scalar().is_some_and(|k| WAIT_KEYS.contains(&k.value.as_str()));
        let mut waits = entries.iter().filter(is_wait);
        let first = waits.next()?;
        let name = first.key.as_scalar().map_or("", |k| k.value.as_str()).to_owned();
        for extra in waits {
            let other = extra.key.as_scalar().map_or("", |k| k.value.as_str());
            self.violation(
                extra.key.span,
                format!("step `{}` waits twice (`{name}` and `{other}`)", id.value),
                Some("a step waits for one thing: split it into two steps".into()),
            );
        }
        for e in entries {
            let Some(k) = e.key.as_scalar() else { continue };
            if let Some((_, help)) = NOT_ON_A_WAIT.iter().find(|(n, _)| *n == k.value) {
                self.violation(
                    e.key.span,
                    format!("`{}` has no meaning on a `{name}` step", k.value),
                    Some((*help).to_owned()),
                );
            }
        }
        let key = Str { value: name.as_str().into(), span: first.key.span };
        let v = &first.value;
        let (kind, schema) = match name.as_str() {
            "await" => self.await_answer(v)?,
            "sleep" => {
                let text = self.scalar_text(v, "`sleep`")?;
                let secs = self.duration(v, &text)?;
                (WaitKind::Sleep { secs, span: v.span }, None)
            }
            "sleep_until" => {
                let text = self.scalar_text(v, "`sleep_until`")?;
                (WaitKind::SleepUntil { at: self.template_string(v, text) }, None)
            }
            _ => (self.wait_for(v)?, None),
        };
        Some((Box::new(Wait { key, kind }), schema))
    }

    fn await_answer(&mut self, node: &Node) -> Option<(WaitKind, Option<SchemaRef>)> {
        let entries = self.wait_map(node, "await", "`await: {ask: \"Merge?\", timeout: 24h}`")?;
        self.check_keys(entries, AWAIT_KEYS, "await");
        let ask = match node.get("ask") {
            Some(n) => {
                let text = self.scalar_text(n, "`ask`")?;
                self.template_string(n, text)
            }
            None => {
                self.violation(
                    node.span,
                    "`await` is missing required key `ask`",
                    Some("write the question a person answers: `ask: \"Merge MR <<params.mr>>?\"`".into()),
                );
                return None;
            }
        };
        let schema = node.get("schema").and_then(|n| self.schema_ref(n, "`schema`"));
        let timeout = node.get("timeout").and_then(|n| self.wait_timeout(n));
        let on_timeout = node.get("on_timeout").map(|n| JsonAt { value: n.to_json(), span: n.span });
        Some((WaitKind::Answer { ask, timeout, on_timeout }, schema))
    }

    fn wait_for(&mut self, node: &Node) -> Option<WaitKind> {
        let entries =
            self.wait_map(node, "wait_for", "`wait_for: {event: pipeline.finished, match: <<build.id>>}`")?;
        self.check_keys(entries, WAIT_FOR_KEYS, "wait_for");
        let Some(event) = node.get("event").and_then(|n| self.string(n, "`event`")) else {
            if node.get("event").is_none() {
                self.violation(
                    node.span,
                    "`wait_for` is missing required key `event`",
                    Some("name the event, declared in savant-think.toml under `[events.NAME]`".into()),
                );
            }
            return None;
        };
        if !valid_event_name(&event.value) {
            self.violation(
                event.span,
                format!("`{}` is not an event name", event.value),
                Some("use letters, digits, `_`, `.` and `-`, starting with a letter".into()),
            );
        }
        let key = match node.get("match") {
            Some(n) => {
                let text = self.scalar_text(n, "`match`")?;
                Some(self.template_string(n, text))
            }
            None => None,
        };
        let timeout = node.get("timeout").and_then(|n| self.wait_timeout(n));
        let on_timeout = node.get("on_timeout").map(|n| JsonAt { value: n.to_json(), span: n.span });
        Some(WaitKind::Event { event, key, timeout, on_timeout })
    }

    fn wait_map<'n>(&mut self, node: &'n Node, what: &str, example: &str) -> Option<&'n [Entry]> {
        let entries = node.as_map();
        if entries.is_none() {
            self.violation(
                node.span,
                format!("`{what}` must be a mapping, found {}", node.kind_name()),
                Some(format!("write {example}")),
            );
        }
        entries
    }

    /// `timeout:` of a wait: a duration, or `never`.
    fn wait_timeout(&mut self, node: &Node) -> Option<WaitTimeout> {
        let text = self.scalar_text(node, "`timeout`")?;
        if text.trim() == "never" {
            return Some(WaitTimeout::Never(node.span));
        }
        let secs = self.duration(node, &text)?;
        Some(WaitTimeout::After { secs, span: node.span })
    }

    /// A duration at its characters: an error there when it is malformed.
    fn duration(&mut self, node: &Node, text: &str) -> Option<u64> {
        match parse_wait_duration(text) {
            Ok(secs) => Some(secs),
            Err(message) => {
                let numeric = node
                    .as_scalar()
                    .is_some_and(|s| matches!(s.resolve(), ScalarValue::Int(_) | ScalarValue::Float(_)));
                let help = if numeric {
                    format!("a wait's duration has a unit: write `{}s` for seconds", text.trim())
                } else {
                    "write a duration like `30s`, `10m`, `24h` or `7d` (up to 366d)".to_owned()
                };
                self.violation(node.span, message, Some(help));
                None
            }
        }
    }
}

/// Parses an RFC 3339 time (`Z`, or an offset `±HH:MM`), or a date
/// (`2026-11-29`, midnight UTC).
pub fn parse_time(text: &str) -> Option<std::time::SystemTime> {
    let s = text.trim();
    if s.len() == 10 {
        return humantime::parse_rfc3339_weak(&format!("{s}T00:00:00")).ok();
    }
    if let Some(base) = s.strip_suffix('Z').or_else(|| s.strip_suffix('z')) {
        return humantime::parse_rfc3339_weak(base).ok();
    }
    // `±HH:MM` at the end, after the time.
    if s.len() > 6 && s.is_char_boundary(s.len() - 6) {
        let (base, offset) = s.split_at(s.len() - 6);
        let b = offset.as_bytes();
        if (b[0] == b'+' || b[0] == b'-') && b[3] == b':' {
            let hours: u64 = offset[1..3].parse().ok()?;
            let minutes: u64 = offset[4..6].parse().ok()?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let shift = std::time::Duration::from_secs(hours * 3600 + minutes * 60);
            let local = humantime::parse_rfc3339_weak(base).ok()?;
            return if b[0] == b'+' { local.checked_sub(shift) } else { local.checked_add(shift) };
        }
    }
    None
}

/// An event name: a letter, then letters, digits, `_`, `.` and `-` (up to 128).
pub fn valid_event_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && s.len() <= 128
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_whole_units() {
        assert_eq!(parse_wait_duration("30s"), Ok(30));
        assert_eq!(parse_wait_duration("10m"), Ok(600));
        assert_eq!(parse_wait_duration("24h"), Ok(86_400));
        assert_eq!(parse_wait_duration("7d"), Ok(604_800));
        assert_eq!(parse_wait_duration("1h30m"), Ok(5_400));
        assert!(parse_wait_duration("-5m").unwrap_err().contains("negative"));
        assert!(parse_wait_duration("30").unwrap_err().contains("no unit"));
        assert!(parse_wait_duration("5y").unwrap_err().contains("not a unit"));
        assert!(parse_wait_duration("400d").unwrap_err().contains("366d"));
        assert!(parse_wait_duration("0s").unwrap_err().contains("nothing"));
        assert!(parse_wait_duration("99999999999999999999999d").is_err());
        assert!(parse_wait_duration("").is_err());
    }
}
