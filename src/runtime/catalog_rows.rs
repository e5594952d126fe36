//! The rows of the engine's tool table, in the order clients see them: the
//! run tools, the tools that end a wait, the tools of a session and
//! `think_test`. One row per tool, data only; its handler is in
//! `crate::tools`.

use super::*;
use crate::runtime::reply_waits::Signalled;

/// What most rows share: served over MCP, touches files or state, announces
/// nothing, asks nothing, its result types a capture.
const ROW: Row = Row {
    name: "",
    title: "",
    description: "",
    annotations: Annotations { read_only: false, destructive: false, idempotent: false },
    mcp: true,
    pure: false,
    announce: Announce::Nothing,
    asks: false,
    types_capture: true,
    input: input::<RunArgs>,
    output: output::<Progress>,
};

/// Every engine tool.
pub(super) const ROWS: &[Row] = &[
    Row {
        name: "think_plan",
        title: "Start a workflow run",
        description: "Start a run of a workflow and get its first instruction. Then call the tool named in instruction.call with instruction.input, and submit that tool's result with think_next (workflow, run_id, instruction.step_id). Repeat until the response has done: true. Get the workflow ids from think_workflows_list. An existing run_id is RUN_EXISTS unless if_exists says resume (continue it) or replace (archive it and start over).",
        annotations: Annotations { read_only: false, destructive: false, idempotent: false },
        announce: Announce::RunStarted,
        input: input::<PlanArgs>,
        output: output::<Progress>,
        ..ROW
    },
    Row {
        name: "think_next",
        title: "Submit a step's result",
        description: "Submit the result of the step you just carried out and get the next instruction. Call the tool in the new instruction.call with instruction.input, then think_next again, until done: true. On VALIDATION_FAILED the result did not match the step's success_schema: fix it and resubmit the same step_id (the instruction is repeated). Re-sending the same result for a done step is harmless.",
        annotations: Annotations { read_only: false, destructive: false, idempotent: true },
        announce: Announce::RunChanged,
        input: input::<NextArgs>,
        output: output::<Progress>,
        ..ROW
    },
    Row {
        name: "think_answer",
        title: "Answer a waiting step",
        description: "Give a person's answer to a step that waits for one (a response's waiting[] entry with wait: \"answer\": put its ask to the person, then pass their reply as value, valid against its schema) and get the next instruction. Never invent the answer. A wrong answer is VALIDATION_FAILED naming the field, and nothing is recorded; answering the same step again with the same value is harmless.",
        annotations: Annotations { read_only: false, destructive: false, idempotent: true },
        input: input::<AnswerArgs>,
        output: output::<Progress>,
        ..ROW
    },
    Row {
        name: "think_signal",
        title: "Send an event to waiting runs",
        description: "Deliver an event declared in savant-think.toml ([events.NAME]) to the runs whose wait_for step waits for it with this key (or will: it is kept in the run until the wait starts). Returns the runs it reached. NO_WAITING_RUN when no run waits for it; UNKNOWN_EVENT for an undeclared name; VALIDATION_FAILED when the payload breaks the event's schema.",
        annotations: Annotations { read_only: false, destructive: false, idempotent: false },
        input: input::<SignalArgs>,
        output: output::<Signalled>,
        ..ROW
    },
    Row {
        name: "think_explain",
        title: "Explain a workflow, run or step",
        description: "Explain a workflow (its steps, order, params), a run (its state, what is ready, why it failed) or one step (what it does, why it is waiting). Use it when an instruction or an error is unclear; then carry on with think_next.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<ExplainArgs>,
        output: output::<Explanation>,
        ..ROW
    },
    Row {
        name: "think_reset",
        title: "Reset a run",
        description: "Reset a run to its start or to the state right after a step completed (checkpoint), and get the instruction to carry out from there. Discarding accepted results needs force: true. Then continue with think_next.",
        annotations: Annotations { read_only: false, destructive: true, idempotent: false },
        announce: Announce::RunChanged,
        input: input::<ResetArgs>,
        output: output::<Progress>,
        ..ROW
    },
    Row {
        name: "think_driver_prompt",
        title: "Get the driver prompt",
        description: "Get the driver prompt: the instructions for driving savant-think workflows (call this first). Follow prompt_md, then pick a workflow with think_workflows_list and start it with think_plan.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<DriverPromptArgs>,
        output: output::<DriverPrompt>,
        ..ROW
    },
    Row {
        name: "think_workflows_list",
        title: "List workflows",
        description: "List the workflows available, with names, descriptions and whether they check clean. Then read one with think_explain or think_workflows_read, and start it with think_plan.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<ListArgs>,
        output: output::<WorkflowList>,
        ..ROW
    },
    Row {
        name: "think_workflows_read",
        title: "Read a workflow's YAML",
        description: "Read a workflow's YAML source (its params, steps and rules). Then start it with think_plan.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<WorkflowArgs>,
        output: output::<WorkflowSource>,
        ..ROW
    },
    Row {
        name: "think_workflows_graph",
        title: "Get a workflow's dependency graph",
        description: "Get a workflow's compiled plan: its dependency graph (explicit and inferred edges) and execution order, as JSON, Mermaid or DOT. Use it to understand a workflow before think_plan.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<GraphArgs>,
        output: output::<Graph>,
        ..ROW
    },
    Row {
        name: "think_state_get",
        title: "Get a run's full state",
        description: "Get a run's full state: params, per-step status, attempts and results, captures, history and version (with archived: true, an archived copy's). Use think_explain for a readable summary; continue the run with think_next.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<StateGetArgs>,
        output: output::<FullState>,
        ..ROW
    },
    Row {
        name: "think_state_list",
        title: "List runs",
        description: "List the runs stored (of one workflow, or all) with their status and version; with archived: true, the archived ones (replaced or deleted). Resume one with think_plan (if_exists: resume), inspect it with think_explain, bring an archived one back with think_state_restore.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<StateListArgs>,
        output: output::<RunList>,
        ..ROW
    },
    Row {
        name: "think_state_delete",
        title: "Delete a run",
        description: "Delete a run: it is archived (think_state_restore brings it back until state prune removes it); purge: true removes it at once, which cannot be undone. The CLI's `state delete` and `call` use it, MCP does not offer it.",
        annotations: Annotations { read_only: false, destructive: true, idempotent: false },
        mcp: false,
        input: input::<DeleteArgs>,
        output: output::<Deleted>,
        ..ROW
    },
    Row {
        name: "think_state_repair",
        title: "Check and repair a run's stored state",
        description: "Check a run's stored state: each journal line (checksum, sequence, version) and whether the run loads. apply: true cuts a damaged journal back to its last good event, keeping the whole journal in a backup file; nothing else is changed. The CLI's `state repair` and `call` use it, MCP does not offer it.",
        annotations: Annotations { read_only: false, destructive: true, idempotent: true },
        mcp: false,
        input: input::<RepairArgs>,
        output: output::<Repaired>,
        ..ROW
    },
    Row {
        name: "think_state_prune",
        title: "Prune old runs",
        description: "Remove finished runs and archived copies by age, status and count, and the workflow versions no run is pinned to any more. dry_run: true says what would go. Unfinished runs go only when status names running. The CLI's `state prune` and `call` use it, MCP does not offer it.",
        annotations: Annotations { read_only: false, destructive: true, idempotent: true },
        mcp: false,
        input: input::<PruneArgs>,
        output: output::<Pruned>,
        ..ROW
    },
    Row {
        name: "think_upgrade",
        title: "Upgrade runs to the workflow as it is now",
        description: "Move a run (or all: true, every unfinished run) of a workflow onto the workflow file as it is now, after a static check: results carry over, steps that did not run may change freely, a step issued but not answered is issued again with its new instruction. An incompatible change is INCOMPATIBLE_UPGRADE with diagnostics pointing into the new file, and nothing changes. Use dry_run: true first; rename moved steps with rename: [\"old=new\"].",
        annotations: Annotations { read_only: false, destructive: false, idempotent: false },
        input: input::<UpgradeArgs>,
        output: output::<UpgradeReply>,
        ..ROW
    },
    Row {
        name: "think_fork",
        title: "Fork a run from a step",
        description: "Start a new run from an existing one: every result that does not depend on the step `from` is kept, `from` is ready again (and, with new params, every step whose input changes runs again). The source run is not changed. Returns the new run's instruction; continue it with think_next using the new run_id.",
        annotations: Annotations { read_only: false, destructive: false, idempotent: false },
        input: input::<ForkArgs>,
        output: output::<Progress>,
        ..ROW
    },
    Row {
        name: "think_state_restore",
        title: "Restore an archived run",
        description: "Make an archived run (replaced by think_plan with if_exists: replace, or deleted) the live run again, from its latest archived copy or archive_id. A live run with that id is RUN_EXISTS. Then resume it with think_plan (if_exists: resume).",
        annotations: Annotations { read_only: false, destructive: false, idempotent: false },
        input: input::<RestoreArgs>,
        output: output::<Restored>,
        ..ROW
    },
    Row {
        name: "think_validate",
        title: "Validate a response or a workflow",
        description: "Check a response against a schema before submitting it with think_next (give schema and response), or check a workflow file for errors (give workflow). Fix what the errors list, then continue.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<ValidateArgs>,
        output: output::<Validation>,
        ..ROW
    },
    Row {
        name: "think_debug",
        title: "Replay a run",
        description: "Replay a run's history event by event: which steps changed status and which captures were set after each event, and whether the replay matches the stored state. Use it to understand how a run got where it is.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<RunArgs>,
        output: output::<Replay>,
        ..ROW
    },
    Row {
        name: "think",
        title: "Think",
        description: "Record a thought: reason step by step about the current instruction before acting. With workflow and run_id the thought goes into that run's history; otherwise into the session log. When an instruction's call is \"think\", call this with its input, then submit the result with think_next.",
        annotations: Annotations { read_only: false, destructive: false, idempotent: false },
        announce: Announce::RunChanged,
        asks: true,
        input: input::<ThinkArgs>,
        output: output::<Thought>,
        ..ROW
    },
    Row {
        name: "prompt_say",
        title: "Show a message to the user",
        description: "Show a message to the user: display the returned message verbatim. When an instruction's call is \"prompt.say\", call this with its input, then submit the result with think_next.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        pure: true,
        asks: true,
        types_capture: false,
        input: input::<SayArgs>,
        output: output::<Said>,
        ..ROW
    },
    Row {
        name: "think_test",
        title: "Run the workflows' tests",
        description: "Run the project's workflow tests (tests/**/*.test.yaml: params, mocked tool results, expected status, steps, inputs and captures) in memory, without touching any run, and get the report: each test passed, failed (mismatches with their JSON paths, expected vs actual) or error (a missing mock, a broken test file). Call it after editing a workflow; fix the workflow or the test and call it again until summary.ok is true.",
        annotations: Annotations { read_only: true, destructive: false, idempotent: true },
        input: input::<TestArgs>,
        output: output::<TestReply>,
        ..ROW
    },
];
