//! The replies' view of a wait: what a waiting step (or item) waits for,
//! listed by `plan` / `next` (`waiting`) and by `state list`.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// A step (or item) waiting for a person's answer, a time or an event.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct WaitView {
    /// The waiting step: `id`, `id[3]`, or `uses_step/id` inside a
    /// sub-workflow (what think_answer takes).
    pub step_id: String,
    /// What it waits for: `answer`, `timer` or `event`.
    pub wait: String,
    /// The question to put to a person (`answer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ask: Option<String>,
    /// The answer's JSON Schema (`answer`), or its schema's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// The event's name (`event`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The event's correlation key (`event`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// When the wait ends by itself (RFC 3339): a sleep's end, a timeout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// What ends it, for a person or a model.
    pub how: String,
    /// The sub-workflow run the step is in, when it is not this run's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub_run: Option<SubRun>,
}

/// The run of a sub-workflow (`uses:`) an instruction is for.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SubRun {
    /// The child run's workflow id.
    pub workflow: String,
    /// The child run's id (`<parent run>.<step>`).
    pub run_id: String,
}

/// The answer of `signal`: where the event went.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Signalled {
    /// The event's name.
    pub event: String,
    /// Its key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Each run that took it.
    pub delivered: Vec<Delivery>,
}

/// One run that took an event.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Delivery {
    /// The run's workflow.
    pub workflow: String,
    /// The run.
    pub run_id: String,
    /// The waiting step it ended; absent when it went to the run's inbox
    /// (the run will wait for it later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// The run had already received an event with this id: nothing new was recorded.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub duplicate: bool,
}

/// The longest a workflow can wait along any path of its plan (`explain`
/// of a workflow): sleeps and timeouts summed, a foreach's times its items
/// when they are written out.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct LongestWait {
    /// Seconds; `null` when unbounded.
    pub secs: Option<u64>,
    /// In words: `0s`, `1d 2h`, or `unbounded: ` and why (a wait with
    /// `timeout: never` or none, a `sleep_until:`, a foreach of unknown length).
    pub text: String,
}
