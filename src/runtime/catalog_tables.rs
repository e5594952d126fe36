//! Two groups of the tool table, beside the run tools of `catalog.rs`:
//! the tools that end a wait, and the tools of a session
//! (`think_test` is registered by `catalog.rs`).

use super::*;

/// The tools that end a wait: an answer, an event (after think_next).
pub(super) fn wait_tools() -> Vec<ToolDef> {
    vec![
        tool::<AnswerArgs, Progress>(
            Meta {
                name: "think_answer",
                title: "Answer a waiting step",
                description: "Give a person's answer to a step that waits for one (a response's waiting[] entry with wait: \"answer\": put its ask to the person, then pass their reply as value, valid against its schema) and get the next instruction. Never invent the answer. A wrong answer is VALIDATION_FAILED naming the field, and nothing is recorded; answering the same step again with the same value is harmless.",
                annotations: Annotations { read_only: false, destructive: false, idempotent: true },
                mcp: true,
                pure: false,
            },
            |e, a| e.answer(a),
        ),
        tool::<SignalArgs, crate::runtime::reply_waits::Signalled>(
            Meta {
                name: "think_signal",
                title: "Send an event to waiting runs",
                description: "Deliver an event declared in savant-think.toml ([events.NAME]) to the runs whose wait_for step waits for it with this key (or will: it is kept in the run until the wait starts). Returns the runs it reached. NO_WAITING_RUN when no run waits for it; UNKNOWN_EVENT for an undeclared name; VALIDATION_FAILED when the payload breaks the event's schema.",
                annotations: Annotations { read_only: false, destructive: false, idempotent: false },
                mcp: true,
                pure: false,
            },
            |e, a| e.signal(a),
        ),
    ]
}

/// The tools of a session rather than a run: think, prompt_say.
pub(super) fn session_tools() -> Vec<ToolDef> {
    vec![
        tool::<ThinkArgs, Thought>(
            Meta {
                name: "think",
                title: "Think",
                description: "Record a thought: reason step by step about the current instruction before acting. With workflow and run_id the thought goes into that run's history; otherwise into the session log. When an instruction's call is \"think\", call this with its input, then submit the result with think_next.",
                annotations: Annotations { read_only: false, destructive: false, idempotent: false },
                mcp: true,
                pure: false,
            },
            think_call,
        ),
        tool::<SayArgs, Said>(
            Meta {
                name: "prompt_say",
                title: "Show a message to the user",
                description: "Show a message to the user: display the returned message verbatim. When an instruction's call is \"prompt.say\", call this with its input, then submit the result with think_next.",
                annotations: Annotations { read_only: true, destructive: false, idempotent: true },
                mcp: true,
                pure: true,
            },
            say_call,
        ),
    ]
}
