//! The stable error codes of the agent runtime (`run`, its backends): one
//! enum, serialized as the code string users and scripts match on
//! (`{"error": "BACKEND_UNREACHABLE", "details": {…}}`). docs/agent.md,
//! "Errors", says when each happens and what to check.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// Connection refused, DNS, TLS: the server is not there.
    BackendUnreachable,
    /// No answer within the timeout.
    BackendTimeout,
    /// A non-2xx status (5xx and 429 retried first).
    BackendHttpError,
    /// The body is not JSON or lacks the answer field.
    BackendBadResponse,
    /// Malformed again after the one correction round.
    InvalidAction,
    /// Cut off at `--answer-tokens`, again after the correction round.
    AnswerCutOff,
    /// A second tool in a row that is not offered.
    UnknownTool,
    /// The model answered `action: error`.
    ModelGaveUp,
    /// The `--force-tool` call failed under `--force-finish`.
    ToolFailed,
    /// `.savant/` or `logs/` cannot be written.
    AgentIo,
    /// The same action three times in a row, or the same call returning the
    /// same output three times in a run.
    Stuck,
    /// A final answer to a goal that needs a tool's output does not use it,
    /// again after one re-ask.
    UngroundedAnswer,
}

impl ErrorCode {
    /// Every code, for tests and docs.
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::BackendUnreachable,
        ErrorCode::BackendTimeout,
        ErrorCode::BackendHttpError,
        ErrorCode::BackendBadResponse,
        ErrorCode::InvalidAction,
        ErrorCode::AnswerCutOff,
        ErrorCode::UnknownTool,
        ErrorCode::ModelGaveUp,
        ErrorCode::ToolFailed,
        ErrorCode::AgentIo,
        ErrorCode::Stuck,
        ErrorCode::UngroundedAnswer,
    ];

    /// The code as users see it: `BACKEND_UNREACHABLE`, `STUCK`, …
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BackendUnreachable => "BACKEND_UNREACHABLE",
            ErrorCode::BackendTimeout => "BACKEND_TIMEOUT",
            ErrorCode::BackendHttpError => "BACKEND_HTTP_ERROR",
            ErrorCode::BackendBadResponse => "BACKEND_BAD_RESPONSE",
            ErrorCode::InvalidAction => "INVALID_ACTION",
            ErrorCode::AnswerCutOff => "ANSWER_CUT_OFF",
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::ModelGaveUp => "MODEL_GAVE_UP",
            ErrorCode::ToolFailed => "TOOL_FAILED",
            ErrorCode::AgentIo => "AGENT_IO",
            ErrorCode::Stuck => "STUCK",
            ErrorCode::UngroundedAnswer => "UNGROUNDED_ANSWER",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn codes_serialize_as_their_names_and_each_is_documented() {
        let doc = include_str!("../../docs/agent.md");
        for code in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
            assert!(doc.contains(&format!("| `{code}` |")), "docs/agent.md's error table lacks {code}");
        }
    }
}
