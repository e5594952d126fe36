//! What the loop does for a small model without its help (issue 46): the
//! tools ranked for the goal, a hopeless call refused without spending a
//! step, a loop that repeats itself stopped, a final answer that must be
//! grounded in the tools' outputs, and a token limit that covers the
//! longest answer the step schema admits. Scripted fake model on
//! 127.0.0.1, fake tools; no model needed.

use crate::agent_support::*;
use crate::common::Root;
use savant_think::agent::backend::ollama::{Ollama, OllamaConfig};
use savant_think::agent::run::{RunOptions, RunResult, RunStatus, StopReason, bound, run};
use savant_think::agent::{ToolInfo, ToolOutcome, Tools};
use serde_json::{Value, json};
use std::sync::Mutex;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Tools with described arguments: a plan that needs a workflow id, a file
/// reader, a lister and a few that no goal here needs.
#[derive(Default)]
struct Described {
    calls: Mutex<Vec<(String, Value)>>,
}

fn described(name: &str, description: &str, required: &[&str]) -> ToolInfo {
    let props: serde_json::Map<String, Value> = required
        .iter()
        .map(|p| ((*p).to_owned(), json!({"type": "string", "description": format!("The {p}.")})))
        .collect();
    ToolInfo {
        name: name.into(),
        description: description.into(),
        input_schema: json!({"type": "object", "required": required, "properties": props}),
    }
}

impl Tools for Described {
    async fn list(&self) -> Vec<ToolInfo> {
        vec![
            described("plan", "Start a run of a workflow.", &["workflow"]),
            described("state_get", "Get a run's full state.", &["run_id"]),
            described("delete", "Delete a run.", &["run_id"]),
            described("graph", "Get a workflow's dependency graph.", &["workflow"]),
            ToolInfo {
                name: "workflows_list".into(),
                description: "List the workflows available.".into(),
                input_schema: json!({"type": "object", "properties": {"filter": {"type": "string"}}}),
            },
            described("read_file", "Read a text file under the project root.", &["path"]),
        ]
    }

    async fn call(&self, name: &str, args: Value) -> ToolOutcome {
        self.calls.lock().unwrap().push((name.into(), args.clone()));
        let output = match name {
            "read_file" => json!({"path": args["path"], "content": "The checker now reports unknown tools."}),
            "workflows_list" => json!({"workflows": [{"id": "release_notes"}, {"id": "review_v1"}]}),
            "graph" => json!({"order": "draft then review then merge"}),
            _ => json!({"started": args}),
        };
        ToolOutcome { ok: true, output, duration_ms: 1 }
    }
}

async fn go(goal: &str, answers: Vec<Answer>, max_steps: usize) -> (RunResult, Described, FakeModel, Root) {
    let tmp = Root::new("agent-guard");
    let fake = FakeModel::start(Flavor::Ollama, answers).await;
    let backend = Ollama::new(OllamaConfig { host: fake.url(), ..OllamaConfig::default() }).unwrap();
    let mut o = RunOptions::new(&tmp.path);
    o.backoff = Duration::from_millis(1);
    o.max_steps = max_steps;
    o.context_tokens = Some(4096);
    let tools = Described::default();
    let result = run(goal, &o, &backend, &tools, &CancellationToken::new()).await;
    (result, tools, fake, tmp)
}

fn last_user(seen: &Seen) -> String {
    let messages = seen.body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"].as_str().unwrap().to_owned()
}

fn tool_branches(schema: &Value) -> Vec<String> {
    schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["properties"]["action"]["const"] == "tool")
        .map(|b| b["properties"]["tool_name"]["const"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_step_offers_the_tools_ranked_for_the_goal_and_accepts_any_allowed() {
    // `graph` is not offered for this goal, yet a call of it is accepted.
    let answers = vec![tool("graph", json!({"workflow": "w1"})), finish("graphed w1"), finish("graphed it")];
    let (result, tools, fake, _tmp) = go("Summarise the file notes.txt", answers, 3).await;
    let seen = fake.seen();
    // One clear match: offered alone (the others score under half of it).
    let offered = tool_branches(&seen[0].body["format"]);
    assert_eq!(offered, ["read_file"]);
    let prompt = seen[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("- read_file:") && !prompt.contains("- graph:"), "{prompt}");
    assert_eq!(tools.calls.lock().unwrap()[0].0, "graph");
    // The goal asked for a file's summary: "graphed w1" is not grounded in
    // what was read (nothing was), twice: the run is not ok.
    assert_eq!(result.status, RunStatus::Error, "{result:?}");
    assert_eq!(result.error.unwrap()["error"], "UNGROUNDED_ANSWER");
}

#[tokio::test]
async fn a_hopeless_call_is_refused_with_a_hint_and_asked_again_without_spending_a_step() {
    let answers = vec![
        tool("plan", json!({"workflow": ""})),
        tool("plan", json!({"workflow": "release_notes"})),
        finish("started release_notes"),
    ];
    let (result, tools, fake, tmp) = go("Start the release_notes workflow", answers, 2).await;
    assert_eq!(result.status, RunStatus::Ok, "{result:?}");
    assert_eq!(result.steps, 2, "the refusal spent no step");
    assert_eq!(
        tools.calls.lock().unwrap().clone(),
        [("plan".to_owned(), json!({"workflow": "release_notes"}))]
    );
    let seen = fake.seen();
    assert_eq!(seen.len(), 3);
    let note = last_user(&seen[1]);
    assert!(
        note.contains("was not made: the required argument `workflow` (The workflow) is empty"),
        "{note}"
    );
    let step1 = events(&trace(&tmp.path), "reasoning_step")[0].clone();
    assert_eq!(step1["metadata"]["hopeless"]["outcome"], "tool");
    assert_eq!(step1["tool_name"], "plan");
}

#[tokio::test]
async fn a_second_hopeless_call_in_a_step_is_refused_as_its_output() {
    let answers =
        vec![tool("plan", json!({"workflow": " "})), tool("plan", json!({})), finish("no workflow to start")];
    let (result, tools, _fake, _tmp) = go("Start a workflow", answers, 3).await;
    assert!(tools.calls.lock().unwrap().is_empty(), "nothing called");
    let step1 = &result.transcript[0];
    assert_eq!(step1.ok, Some(false));
    assert_eq!(step1.output["error"], "INVALID_INPUT");
    assert!(
        step1.output["details"]["message"].as_str().unwrap().contains("`workflow` (The workflow) is missing")
    );
    assert!(step1.output["details"]["hint"].as_str().unwrap().contains("workflow id"));
    assert_eq!((result.status, result.steps), (RunStatus::Ok, 2), "{result:?}");
}

#[tokio::test]
async fn the_same_call_returning_the_same_output_three_times_stops_the_loop() {
    let g = || tool("graph", json!({"workflow": "w"}));
    let answers = vec![g(), reason("hmm"), g(), reason("again"), g(), finish("never reached")];
    let (result, tools, _fake, _tmp) = go("Explain the graph of w", answers, 10).await;
    assert_eq!(tools.calls.lock().unwrap().len(), 3);
    assert_eq!((result.status, result.stop_reason, result.steps), (RunStatus::Error, StopReason::Stuck, 5));
    let error = result.error.unwrap();
    assert_eq!(error["error"], "STUCK");
    assert_eq!(error["details"]["same_output"], true);
    assert!(result.final_text.contains("returned the same output 3 times"), "{}", result.final_text);
}

#[tokio::test]
async fn an_ungrounded_final_answer_is_asked_again_quoting_the_output() {
    let answers = vec![
        tool("read_file", json!({"path": "notes.txt"})),
        finish("This is a summary of the result."),
        finish("The checker now reports unknown tools."),
    ];
    let (result, _tools, fake, tmp) = go("Summarise the file notes.txt", answers, 2).await;
    assert_eq!((result.status, result.steps), (RunStatus::Ok, 2), "{result:?}");
    assert_eq!(result.final_text, "The checker now reports unknown tools.");
    let seen = fake.seen();
    // The short answer request: a fresh prompt of the goal and the output.
    let messages = seen[2].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(!messages[0]["content"].as_str().unwrap().contains("savant-think agent"), "not the persona");
    let note = last_user(&seen[2]);
    assert!(
        note.contains("Goal: Summarise the file notes.txt")
            && note
                .contains("The tool `read_file` returned:\npath: notes.txt; content: The checker now reports unknown tools."),
        "{note}"
    );
    assert!(!note.contains("This is a summary"), "the bad answer is not echoed: {note}");
    assert_eq!(seen[2].body["format"]["type"], "string", "the answer alone, as a JSON string");
    assert!(!note.contains("\"content\""), "the output quoted as plain text: {note}");
    let step2 = events(&trace(&tmp.path), "reasoning_step")[1].clone();
    assert_eq!(step2["metadata"]["grounding"]["outcome"], "finish");
}

#[tokio::test]
async fn the_grounding_re_ask_takes_the_answer_as_a_bare_json_string() {
    let answers = vec![
        tool("workflows_list", json!({})),
        finish("Here they are."),
        Answer::Text("\"The workflows are release_notes and review_v1.\"".into()),
    ];
    let (result, _tools, _fake, _tmp) = go("List the available workflows", answers, 3).await;
    assert_eq!((result.status, result.steps), (RunStatus::Ok, 2), "{result:?}");
    assert_eq!(result.final_text, "The workflows are release_notes and review_v1.");
}

#[tokio::test]
async fn a_grounding_goal_must_call_a_tool_until_one_has_worked() {
    let answers = vec![tool("workflows_list", json!({})), finish("release_notes and review_v1")];
    let (result, _tools, fake, _tmp) = go("List the available workflows", answers, 2).await;
    assert_eq!((result.status, result.steps), (RunStatus::Ok, 2), "{result:?}");
    let seen = fake.seen();
    let kinds = |schema: &Value| -> Vec<String> {
        schema["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["properties"]["action"]["const"].to_string())
            .collect()
    };
    let first = kinds(&seen[0].body["format"]);
    assert!(
        !first.contains(&"\"finish\"".to_owned()) && !first.contains(&"\"reason\"".to_owned()),
        "{first:?}"
    );
    assert!(first.contains(&"\"error\"".to_owned()) && first.contains(&"\"tool\"".to_owned()), "{first:?}");
    assert!(seen[0].body["messages"][1]["content"].as_str().unwrap().contains("call a tool now"));
    let second = kinds(&seen[1].body["format"]);
    assert!(
        second.contains(&"\"finish\"".to_owned()) && second.contains(&"\"reason\"".to_owned()),
        "{second:?}"
    );
    assert!(!seen[1].body["messages"][1]["content"].as_str().unwrap().contains("call a tool now"));
    // A goal that needs no tool's output keeps every branch from the start.
    let (result, _tools, fake, _tmp) =
        go("Think about workflows, then finish", vec![finish("Plans.")], 1).await;
    assert_eq!(result.status, RunStatus::Ok, "{result:?}");
    assert!(kinds(&fake.seen()[0].body["format"]).contains(&"\"finish\"".to_owned()));
}

#[tokio::test]
async fn a_repeated_call_that_worked_gets_the_short_answer_request() {
    let answers = vec![
        tool("read_file", json!({"path": "notes.txt"})),
        tool("read_file", json!({"path": "notes.txt"})),
        Answer::Text("\"The checker now\nreports unknown tools.\"".into()),
    ];
    let (result, tools, fake, tmp) = go("Summarise the file notes.txt", answers, 2).await;
    assert_eq!((result.status, result.steps), (RunStatus::Ok, 2), "{result:?}");
    // A raw newline in the string (invalid JSON) is read as meant.
    assert_eq!(result.final_text, "The checker now\nreports unknown tools.");
    assert_eq!(tools.calls.lock().unwrap().len(), 1, "the repeat was not made");
    let seen = fake.seen();
    assert_eq!(seen[2].body["messages"].as_array().unwrap().len(), 2);
    assert_eq!(seen[2].body["format"]["type"], "string");
    let step2 = events(&trace(&tmp.path), "reasoning_step")[1].clone();
    assert_eq!(step2["metadata"]["narrowed"]["outcome"], "finish");
}

#[tokio::test]
async fn a_list_goal_answers_with_the_ids_the_output_lists() {
    let answers = vec![
        tool("workflows_list", json!({})),
        tool("workflows_list", json!({})),
        Answer::Text("[\"release_notes\", \"review_v1\"]".into()),
    ];
    let (result, _tools, fake, _tmp) = go("List the available workflows", answers, 2).await;
    assert_eq!((result.status, result.steps), (RunStatus::Ok, 2), "{result:?}");
    assert_eq!(result.final_text, "- release_notes\n- review_v1");
    let seen = fake.seen();
    let schema = &seen[2].body["format"];
    assert_eq!(
        schema,
        &json!({"type": "array", "items": {"type": "string", "enum": ["release_notes", "review_v1"]},
                "minItems": 1, "maxItems": 2})
    );
    let note = last_user(&seen[2]);
    assert!(
        note.contains("returned:\nworkflows:\n- id: release_notes\n- id: review_v1\n"),
        "one line per listed item: {note}"
    );
    assert!(note.ends_with("Answer with a JSON array of the ids of the items the goal asks for."), "{note}");
}

#[tokio::test]
async fn a_final_answer_ungrounded_again_ends_the_run_not_ok() {
    let answers = vec![
        tool("workflows_list", json!({})),
        finish("Here are the available workflows."),
        finish("The workflows are listed above."),
    ];
    let (result, _tools, _fake, _tmp) = go("List the available workflows", answers, 3).await;
    assert_eq!((result.status, result.stop_reason), (RunStatus::Error, StopReason::Error), "{result:?}");
    let error = result.error.unwrap();
    assert_eq!(error["error"], "UNGROUNDED_ANSWER");
    assert_eq!(error["details"]["final"], "The workflows are listed above.");
    assert!(error["details"]["hint"].as_str().is_some());
}

#[tokio::test]
async fn the_token_limit_covers_the_longest_answer_the_step_schema_admits() {
    let answers = vec![finish("A workflow is a plan of steps.")];
    let (result, _tools, fake, _tmp) = go("Think about workflows, then finish", answers, 1).await;
    assert_eq!(result.status, RunStatus::Ok, "{result:?}");
    let body = &fake.seen()[0].body;
    let schema = &body["format"];
    let longest = bound::longest(schema).expect("every offered tool describes its args: finite");
    assert_eq!(body["options"]["num_predict"], json!(longest), "the limit is the longest answer");
    assert!(longest > 512, "more than --answer-tokens: {longest}");
    // A 4,096-token context: the bounds were halved until the answer fits 55% of it.
    assert!(longest <= (4096 - 409) * 55 / 100, "{longest}");
    let finish_branch =
        schema["anyOf"].as_array().unwrap().iter().find(|b| b["properties"]["action"]["const"] == "finish");
    assert_eq!(finish_branch.unwrap()["properties"]["final"]["maxLength"], 160);
    assert!(body["options"]["num_ctx"].as_u64().unwrap() as usize >= longest);
}
