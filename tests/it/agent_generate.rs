//! `model.generate` steps in `exec`: the step asks the configured model (a
//! fake OpenAI-compatible server here) for a value of the input's `schema`,
//! sent grammar-enforceable; the result is validated by `success_schema`
//! like any step's; a model that cannot answer the schema, and exec with no
//! model, stop with a stable error.

use crate::agent_support::*;
use crate::common::Root;
use savant_think::agent::backend::AnyBackend;
use savant_think::agent::backend::ollama::{Ollama, OllamaConfig};
use savant_think::agent::backend::openai::{OpenAi, OpenAiConfig};
use savant_think::agent::exec::{self, ExecOptions, ExecStatus};
use savant_think::agent::mux::{Multiplexer, MuxOptions};
use savant_think::agent::run::grammar;
use serde_json::{Value, json};
use std::sync::Arc;

const WORKFLOW: &str = r#"
steps:
  - id: pick
    call: model.generate
    input_template:
      prompt: "Name a colour for <<params.thing>>."
      schema: {type: object, properties: {colour: {type: string}}, required: [colour], additionalProperties: false}
    capture_as: pick
    success_schema: {type: object, properties: {colour: {type: string, minLength: 3}}, required: [colour]}
  - id: say
    call: prompt.say
    deps: [pick]
    input_template: {text: "The colour is <<pick.colour>>."}
params:
  thing: {type: string}
required: [thing]
"#;

fn mux(root: &Root, fake: Option<&FakeModel>) -> Arc<Multiplexer> {
    let engine = Arc::new(savant_think::runtime::Engine::new(&root.path).unwrap());
    let mux = Multiplexer::new(engine, MuxOptions::default());
    let Some(fake) = fake else { return Arc::new(mux) };
    let backend =
        OpenAi::new(OpenAiConfig { base_url: fake.url(), model: "fake".into(), ..OpenAiConfig::default() })
            .unwrap();
    Arc::new(mux.with_model(Arc::new(AnyBackend::OpenAi(backend))))
}

fn options() -> ExecOptions {
    ExecOptions {
        workflow: "colour".into(),
        params: json!({"thing": "the sky"}),
        jobs: 1,
        ..ExecOptions::default()
    }
}

#[tokio::test]
async fn a_model_step_runs_with_an_enforceable_schema_and_its_result_is_validated() {
    let root = Root::with_workflows("generate-ok", &[("colour", WORKFLOW)]);
    let fake =
        FakeModel::start(Flavor::OpenAi, vec![openai_answer(r#"{"result": {"colour": "blue"}}"#, "stop")])
            .await;
    let report = exec::exec(mux(&root, Some(&fake)), &options(), &mut |_| {}).await.unwrap();
    assert_eq!(report.status, ExecStatus::Done, "{report:?}");
    let seen = fake.seen();
    assert_eq!(seen.len(), 1);
    let body = &seen[0].body;
    assert!(body["messages"][1]["content"].as_str().unwrap().contains("Name a colour for the sky."));
    let schema = &body["response_format"]["json_schema"]["schema"];
    grammar::check(schema).unwrap();
    assert_eq!(schema["properties"]["result"]["required"], json!(["colour"]));
    // The captured result is the `result`, as the next step shows.
    let state = savant_think::runtime::Engine::new(&root.path).unwrap();
    let full = state.state_get("colour", &report.run_id).unwrap();
    let text = serde_json::to_string(&full).unwrap();
    assert!(text.contains("The colour is blue."), "{text}");
}

#[tokio::test]
async fn a_model_step_runs_on_ollama_with_the_schema_as_format() {
    let root = Root::with_workflows("generate-ollama", &[("colour", WORKFLOW)]);
    let fake =
        FakeModel::start(Flavor::Ollama, vec![ollama_answer(r#"{"result": {"colour": "grey"}}"#, "stop")])
            .await;
    let engine = Arc::new(savant_think::runtime::Engine::new(&root.path).unwrap());
    let backend = Ollama::new(OllamaConfig { host: fake.url(), ..OllamaConfig::default() }).unwrap();
    let mux =
        Multiplexer::new(engine, MuxOptions::default()).with_model(Arc::new(AnyBackend::Ollama(backend)));
    let report = exec::exec(Arc::new(mux), &options(), &mut |_| {}).await.unwrap();
    assert_eq!(report.status, ExecStatus::Done, "{report:?}");
    let format = &fake.seen()[0].body["format"];
    grammar::check(format).unwrap();
    assert_eq!(format["required"], json!(["result"]));
}

#[tokio::test]
async fn a_result_that_fails_success_schema_is_retried_like_any_step() {
    let root = Root::with_workflows("generate-retry", &[("colour", WORKFLOW)]);
    // "re" matches the input schema but not the success schema (minLength 3): the engine refuses
    // it and the step runs again.
    let fake = FakeModel::start(
        Flavor::OpenAi,
        vec![
            openai_answer(r#"{"result": {"colour": "re"}}"#, "stop"),
            openai_answer(r#"{"result": {"colour": "red"}}"#, "stop"),
        ],
    )
    .await;
    let report = exec::exec(mux(&root, Some(&fake)), &options(), &mut |_| {}).await.unwrap();
    assert_eq!(report.status, ExecStatus::Done, "{report:?}");
    assert_eq!(fake.seen().len(), 2);
}

#[tokio::test]
async fn a_model_that_cannot_answer_the_schema_stops_exec_with_model_invalid_output() {
    let root = Root::with_workflows("generate-bad", &[("colour", WORKFLOW)]);
    let fake = FakeModel::start_with(
        Flavor::OpenAi,
        vec![],
        Some(Box::new(|_| openai_answer("I like turtles.", "stop"))),
    )
    .await;
    let report = exec::exec(mux(&root, Some(&fake)), &options(), &mut |_| {}).await.unwrap();
    assert_eq!(report.status, ExecStatus::Stopped, "{report:?}");
    let reason = report.reason.clone().unwrap_or(Value::Null).to_string();
    assert!(reason.contains("MODEL_INVALID_OUTPUT"), "{reason}");
    assert_eq!(fake.seen().len(), 2, "one correction round, then the error");
}

/// Without a model, a workflow with a step that needs one is refused before
/// its first step, every such step named (a callee's too), nothing run.
#[tokio::test]
async fn without_a_model_exec_refuses_before_the_first_step() {
    let judge = "steps:\n  - id: judge\n    call: think\n    input_template: {thought: ok?}\n    \
                 success_schema: {type: object, required: [ok]}\n";
    let top = "steps:\n  - id: first\n    call: prompt.say\n    input_template: {text: hi}\n  \
               - id: sub\n    uses: judge\n    deps: [first]\n";
    let root = Root::with_workflows("generate-none", &[("colour", WORKFLOW), ("judge", judge), ("top", top)]);
    let err = exec::exec(mux(&root, None), &options(), &mut |_| {}).await.unwrap_err().0;
    assert_eq!(err.code.as_str(), "MODEL_NOT_CONFIGURED", "{err:?}");
    assert!(err.describe().contains("`pick` (model.generate)"), "{}", err.describe());
    assert!(err.help_text().is_some_and(|h| h.contains("--backend")), "{err:?}");
    let mut o = options();
    o.workflow = "top".into();
    o.params = Value::Null;
    let err = exec::exec(mux(&root, None), &o, &mut |_| {}).await.unwrap_err().0;
    assert!(
        err.describe().contains("`judge` of `judge` (think with a success schema)"),
        "{}",
        err.describe()
    );
    let engine = savant_think::runtime::Engine::new(&root.path).unwrap();
    assert!(engine.state_list(None).unwrap().runs.is_empty(), "nothing ran");
    // A dry run needs no model: it answers them from their schemas.
    o.dry_run = true;
    let report = exec::exec(mux(&root, None), &o, &mut |_| {}).await.unwrap();
    assert_eq!(report.status, ExecStatus::Done, "{report:?}");
}

/// A `think` step with a success schema is a question for a model: with
/// one configured, exec asks it (the thought as the prompt, the success
/// schema as the answer's) and the answer is validated as any result.
#[tokio::test]
async fn a_think_step_with_a_schema_is_answered_by_the_model() {
    let judge = "steps:\n  - id: judge\n    call: think\n    input_template: {thought: \"Is the sky blue?\"}\n    \
                 capture_as: verdict\n    success_schema: {type: object, required: [yes], properties: {yes: {type: boolean}}}\n  \
                 - id: say\n    call: prompt.say\n    input_template: {text: \"yes: <<verdict.yes>>\"}\n";
    let root = Root::with_workflows("generate-think", &[("judge", judge)]);
    let fake =
        FakeModel::start(Flavor::OpenAi, vec![openai_answer(r#"{"result": {"yes": true}}"#, "stop")]).await;
    let o = ExecOptions { workflow: "judge".into(), jobs: 1, ..ExecOptions::default() };
    let report = exec::exec(mux(&root, Some(&fake)), &o, &mut |_| {}).await.unwrap();
    assert_eq!(report.status, ExecStatus::Done, "{report:?}");
    let body = &fake.seen()[0].body;
    assert!(body["messages"][1]["content"].as_str().unwrap().contains("Is the sky blue?"), "{body}");
    let engine = savant_think::runtime::Engine::new(&root.path).unwrap();
    let full = serde_json::to_value(engine.state_get("judge", &report.run_id).unwrap()).unwrap();
    assert_eq!(full["captures"]["verdict"], json!({"yes": true}), "{full}");
}

#[test]
fn check_knows_model_generate_its_inputs_and_the_type_of_its_result() {
    // Without a success schema the capture is typed from the input's (closed) schema.
    let untyped = WORKFLOW.replace("    success_schema: {type: object, properties: {colour: {type: string, minLength: 3}}, required: [colour]}\n", "");
    let bad = untyped.replace("<<pick.colour>>", "<<pick.color>>").replace("prompt:", "promt:");
    let root = Root::with_workflows("generate-check", &[("colour", &untyped), ("broken", &bad)]);
    let out = std::process::Command::new(crate::common::BIN)
        .args(["check", "--format", "json", "--root"])
        .arg(&root.path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let all: Vec<String> = report["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| format!("{} {} {}", d["file"].as_str().unwrap_or(""), d["code"], d["message"]))
        .collect();
    let all = all.join("\n");
    assert!(!all.contains("colour.yaml"), "the good workflow is clean: {all}");
    assert!(
        all.contains("broken.yaml \"UNKNOWN_INPUT\" \"tool `model.generate` has no input `promt`"),
        "{all}"
    );
    assert!(!all.contains("requires input `prompt`"), "a misspelled key is one mistake, not two: {all}");
    assert!(all.contains("`pick` has no field `color`"), "{all}");
}
