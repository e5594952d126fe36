//! The run's memory, `.savant/session.json`: the goal, the recent steps with
//! their (shortened) tool outputs, one-line summaries of older steps, errors
//! and the loop's state. Rewritten atomically after every step (temp file,
//! fsync, rename, fsync of the directory) and kept under its token budget by
//! summarising the oldest steps — deterministically, without a model call,
//! so the memory never depends on a second model's whims.

use super::tokens::estimate_tokens;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// Tool outputs longer than this (serialized characters) are cut in memory;
/// the transcript in the run's result keeps them whole.
pub const OUTPUT_CHARS: usize = 1_500;

/// One step as memory keeps it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub step: usize,
    /// `tool`, `reason`, `finish` or `error`.
    pub action: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub args: Value,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// The tool's output (cut to [`OUTPUT_CHARS`] in memory).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub output: Value,
    /// Whether the tool call succeeded (tool steps only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    #[serde(rename = "final", default, skip_serializing_if = "String::is_empty")]
    pub final_text: String,
    /// The model that decided this step (`forced` for a forced step).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    pub duration_ms: u64,
    /// Every model answer of the step, raw (the first, a correction, a
    /// narrowed re-ask), with how it was asked for: the run's trace of why
    /// a step went the way it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<ModelAnswer>,
}

/// One raw model answer and its request, as recorded in the trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelAnswer {
    /// `action` (the step's question), `correction` (after a malformed
    /// answer) or `narrowed` (asked again with a narrower schema).
    pub purpose: String,
    /// The answer's text, cut to [`ANSWER_CHARS`].
    pub raw: String,
    /// How the shape was asked for: `json_schema`, `json_object`, `plain`,
    /// `format` (Ollama), or `none` when the backend does not say.
    pub response_format: String,
    /// `sha256:` of the schema sent, and its size in bytes.
    pub schema_hash: String,
    pub schema_bytes: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// The server stopped the answer at the token limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_off: bool,
    /// Wall-clock time of the request, retries included.
    pub duration_ms: u64,
}

/// The most characters of a raw answer kept in the trace.
pub const ANSWER_CHARS: usize = 4_000;
/// The most characters of a raw answer kept in `.savant/session.json`.
pub const ANSWER_MEMORY_CHARS: usize = 300;

impl StepRecord {
    /// One line: `#3 tool think_plan {"workflow":"x"} → ok`.
    pub fn summary(&self) -> String {
        let mut s = format!("#{} {}", self.step, self.action);
        if !self.tool_name.is_empty() {
            s.push_str(&format!(" {}", self.tool_name));
        }
        if let Some(ok) = self.ok {
            s.push_str(if ok { " → ok" } else { " → failed" });
            if let Some(code) = self.output.get("error").and_then(Value::as_str) {
                s.push_str(&format!(" ({code})"));
            }
        }
        let text = if self.final_text.is_empty() { &self.reasoning } else { &self.final_text };
        if !text.is_empty() {
            s.push_str(&format!(": {}", cut(text, 120)));
        }
        s
    }

    /// The record as memory keeps it: the output cut to [`OUTPUT_CHARS`].
    pub fn for_memory(&self) -> StepRecord {
        let mut r = self.clone();
        r.output = cut_value(&self.output, OUTPUT_CHARS);
        for a in &mut r.answers {
            a.raw = cut(&a.raw, ANSWER_MEMORY_CHARS);
        }
        r
    }
}

/// Older steps `from..=to` in one line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub from: usize,
    pub to: usize,
    pub text: String,
}

/// The loop's state, as the last step left it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoopState {
    pub step: usize,
    pub model: String,
    pub last_action: String,
}

/// `.savant/session.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub version: u32,
    pub run_id: String,
    pub goal: String,
    /// `running`, then the run's final status (`ok`, `error`, `canceled`, `cap`).
    pub status: String,
    pub started_at: String,
    pub updated_at: String,
    /// Summarised older steps, oldest first.
    pub summaries: Vec<Summary>,
    /// The recent steps, oldest first.
    pub steps: Vec<StepRecord>,
    pub errors: Vec<String>,
    pub state: LoopState,
    /// The structured-output dialect the backend used (`json_schema`,
    /// `json_object`, `plain`, `format`), as negotiated or remembered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<String>,
    #[serde(rename = "final", default, skip_serializing_if = "Option::is_none")]
    pub final_text: Option<String>,
}

/// `text` cut to `max` characters, with a note of how much was cut.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}… [{} more characters]", &text[..i], text[i..].chars().count()),
        None => text.to_owned(),
    }
}

/// A JSON value whose serialization is at most about `max` characters: small
/// values as they are, larger ones as their cut JSON text.
pub fn cut_value(value: &Value, max: usize) -> Value {
    if value.is_null() {
        return Value::Null;
    }
    let text = value.to_string();
    if text.chars().count() <= max { value.clone() } else { Value::String(cut(&text, max)) }
}

impl Session {
    pub fn new(run_id: &str, goal: &str, now: String) -> Session {
        Session {
            version: 1,
            run_id: run_id.into(),
            goal: goal.into(),
            status: "running".into(),
            started_at: now.clone(),
            updated_at: now,
            ..Session::default()
        }
    }

    /// Appends a step (its output cut for memory) and keeps the session under
    /// `budget_tokens` by summarising the oldest steps.
    pub fn push(&mut self, record: &StepRecord, budget_tokens: usize) {
        self.state =
            LoopState { step: record.step, model: record.model.clone(), last_action: record.action.clone() };
        if record.action == "error" || record.ok == Some(false) {
            self.errors.push(record.summary());
        }
        self.steps.push(record.for_memory());
        self.compact(budget_tokens);
    }

    /// The estimated size of the session as written.
    pub fn tokens(&self) -> usize {
        estimate_tokens(&serde_json::to_string(self).unwrap_or_default())
    }

    /// Summarises the oldest steps (a step becomes its one-line summary)
    /// until the session fits `budget_tokens`, always keeping the last step
    /// whole; then, if summaries alone are too many, merges the oldest ones
    /// into a count, and keeps only the last errors.
    pub fn compact(&mut self, budget_tokens: usize) {
        while self.tokens() > budget_tokens && self.steps.len() > 1 {
            let old = self.steps.remove(0);
            self.summaries.push(Summary { from: old.step, to: old.step, text: old.summary() });
        }
        while self.tokens() > budget_tokens && self.errors.len() > 3 {
            self.errors.remove(0);
        }
        while self.tokens() > budget_tokens && self.summaries.len() > 1 {
            // Merge the older half (at least two) into one line.
            let n = self.summaries.len().div_ceil(2).max(2);
            let (from, to) = (self.summaries[0].from, self.summaries[n - 1].to);
            let first = cut(&self.summaries[0].text, 60);
            let last = cut(&self.summaries[n - 1].text, 60);
            let text = format!("steps #{from}–#{to} summarised; first [{first}], last [{last}]");
            self.summaries.splice(0..n, [Summary { from, to, text }]);
        }
        if self.tokens() > budget_tokens
            && let Some(last) = self.steps.last_mut()
        {
            last.output = cut_value(&last.output, 200);
        }
    }

    /// Writes the session to `path` atomically: a temp file next to it,
    /// fsync, rename over `path`, fsync of the directory. A reader sees the
    /// old file or the new one, never a mix.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut bytes = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        crate::fsx::replace_file(path, &bytes, "tmp")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(n: usize, output_len: usize) -> StepRecord {
        StepRecord {
            step: n,
            action: "tool".into(),
            tool_name: "think_plan".into(),
            args: json!({"workflow": "w"}),
            output: json!({"text": "x".repeat(output_len)}),
            ok: Some(true),
            model: "m".into(),
            ..StepRecord::default()
        }
    }

    #[test]
    fn memory_stays_under_budget_and_keeps_the_newest_step_whole() {
        let mut s = Session::new("r-1", "goal", "t".into());
        for n in 1..=200 {
            s.push(&step(n, 1_000), 1_500);
            assert!(s.tokens() <= 1_500, "step {n}: {} tokens", s.tokens());
            assert_eq!(s.steps.last().unwrap().step, n);
        }
        assert!(!s.summaries.is_empty());
        assert!(s.summaries.iter().any(|l| l.text.contains("summarised")), "{:?}", s.summaries);
        assert_eq!(s.summaries[0].from, 1);
        assert_eq!(s.summaries.last().unwrap().to + 1, s.steps[0].step);
    }

    #[test]
    fn outputs_are_cut_in_memory() {
        let mut s = Session::new("r-1", "goal", "t".into());
        s.push(&step(1, 10_000), 100_000);
        let out = s.steps[0].output.as_str().unwrap();
        assert!(out.len() < 2_000 && out.contains("more characters"));
    }

    #[test]
    fn save_replaces_the_file_atomically() {
        let dir = std::env::temp_dir().join(format!("savant-memory-test-{}", std::process::id()));
        let path = dir.join(".savant/session.json");
        let mut s = Session::new("r-1", "goal", "t".into());
        s.save(&path).unwrap();
        s.push(&step(1, 10), 4_000);
        s.save(&path).unwrap();
        let back: Session = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back, s);
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
