//! The engine's `next` with arbitrary results: any bytes, read as JSON when
//! they parse (else as a JSON string), submitted to whichever step is ready
//! in a run of a workflow with a success schema, a foreach over a capture,
//! conditions and interpolation. The engine never panics, every reply is
//! an instruction, `done`, or a coded error, and the stored run always
//! loads again. One engine and one scratch root per process; a run that
//! ends (done or failed) is planned afresh.
#![no_main]

use libfuzzer_sys::fuzz_target;
use savant_think::runtime::Engine;
use savant_think::runtime::engine::NextArgs;
use serde_json::{Value, json};
use std::sync::{LazyLock, Mutex};

const WORKFLOW: &str = r#"
id: fuzz
steps:
  - id: fetch
    call: t.fetch
    capture_as: data
    success_schema:
      type: object
      properties: { items: { type: array, maxItems: 20 }, title: { type: string } }
      required: [items]
    retry: { max: 2 }
  - id: each
    call: t.each
    foreach: data.items
    when: "item != null"
    input_template: { x: "<<item>>", t: "<<data.title ?? 'none'>>", n: "<<loop.index>>" }
    capture_as: outs
  - id: say
    call: prompt.say
    when: "len(outs) > 0"
    input_template: { text: "<<to_json(outs)>> <<data.title>>" }
"#;

struct State {
    engine: Engine,
    ready: Option<String>,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| {
    let root = std::env::temp_dir().join(format!("savant-fuzz-next-{}", std::process::id()));
    std::fs::create_dir_all(root.join("workflows")).unwrap();
    std::fs::write(root.join("workflows/fuzz.yaml"), WORKFLOW).unwrap();
    std::fs::write(root.join("savant-think.toml"), "[state]\nfsync = false\n").unwrap();
    let engine = Engine::new(&root).expect("engine");
    Mutex::new(State { engine, ready: None })
});

fn plan(state: &mut State) {
    let reply = state.engine.plan("fuzz", json!({}), Some("r"), true).expect("plan");
    state.ready = reply.instruction().map(|i| i.step_id.clone());
}

fuzz_target!(|data: &[u8]| {
    let mut state = STATE.lock().unwrap();
    if state.ready.is_none() {
        plan(&mut state);
    }
    let result: Value = serde_json::from_slice(data)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(data).into_owned()));
    let step = state.ready.clone().expect("a ready step");
    let reply = state.engine.next(NextArgs {
        workflow: "fuzz".into(),
        run_id: "r".into(),
        step_id: step,
        result_snapshot: Some(result),
        ..NextArgs::default()
    });
    state.ready = match reply {
        Ok(v) if v.is_done() => None,
        Ok(v) => Some(v.instruction().expect("a running run has an instruction").step_id.clone()),
        Err(e) => {
            // A coded error; a retryable validation failure repeats the instruction.
            assert!(!e.code.as_str().is_empty());
            e.to_json()["instruction"]["step_id"].as_str().map(str::to_owned)
        }
    };
    // The stored run loads again, whatever was submitted.
    state.engine.state_get("fuzz", "r").expect("the run loads");
});
