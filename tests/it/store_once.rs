//! Each accepted result is stored once: in its history event. The steps'
//! results and the captures are views of it, in memory and on disk, and a
//! snapshot written before they were views still loads.

use crate::common::{Root, j};
use savant_think::runtime::Engine;
use savant_think::runtime::engine::NextArgs;
use serde_json::{Value, json};

/// The support module's foreach (`each`, captured as `out`), then a step
/// that reads the first item's result (the client answers in its own
/// shape, `{mark}`, which the loop's `success_schema` says).
fn workflow() -> String {
    crate::support::generate::foreach("loop")
        .replace("    capture_as: out\n", "    capture_as: out\n    success_schema: { type: object }\n")
        + "  - id: last\n    call: think\n    deps: [each]\n    \
           input_template: { thought: \"<<out[0].mark>>\" }\n    capture_as: final\n"
}

fn next(e: &Engine, step: &str, result: Value) -> Value {
    j(e.next(NextArgs {
        workflow: "loop".into(),
        run_id: "r".into(),
        step_id: step.into(),
        result_snapshot: Some(result),
        ..NextArgs::default()
    })
    .unwrap())
}

fn root(name: &str) -> Root {
    let s = Root::new(name);
    s.write("workflows/loop.yaml", workflow());
    s
}

/// Enough results for the journal to be compacted into the snapshot.
const N: usize = savant_think::runtime::COMPACT_AFTER + 12;

/// Runs the foreach to the end (N results: the journal is compacted into a
/// snapshot on the way); `last` stays ready.
fn run_items(e: &Engine) -> Value {
    let items: Vec<String> = (0..N).map(|i| format!("i{i}")).collect();
    e.plan("loop", json!({ "items": items }), Some("r"), true).unwrap();
    let mut r = Value::Null;
    for i in 0..N {
        r = next(e, &format!("each[{i}]"), json!({ "mark": format!("MARK-{i:03}-") }));
    }
    r
}

#[test]
fn a_snapshot_holds_each_result_once_and_the_views_are_rebuilt_on_load() {
    let s = root("store-once");
    let e = Engine::new(&s.path).unwrap();
    let r = run_items(&e);
    assert_eq!(r["instruction"]["step_id"], "last");
    assert_eq!(
        r["instruction"]["input"],
        json!({"thought": "MARK-000-"}),
        "the capture is read from the history"
    );

    let snapshot = std::fs::read_to_string(s.path.join(".savant/state/loop__r.json")).unwrap();
    let journal = std::fs::read_to_string(s.path.join(".savant/state/loop__r.journal")).unwrap_or_default();
    let stored = format!("{snapshot}{journal}");
    for i in 0..N {
        let mark = format!("MARK-{i:03}-");
        assert_eq!(stored.matches(&mark).count(), 1, "{mark} is stored once, in its event");
    }

    // A fresh engine loads it and shows every result on its item and capture.
    let state = j(Engine::new(&s.path).unwrap().state_get("loop", "r").unwrap());
    assert_eq!(state, j(e.state_get("loop", "r").unwrap()));
    assert_eq!(state["steps"][0]["items"][7]["result"], json!({"mark": "MARK-007-"}));
    assert_eq!(state["captures"]["out"][N - 1], json!({"mark": format!("MARK-{:03}-", N - 1)}));
    let done = next(&Engine::new(&s.path).unwrap(), "last", json!("ok"));
    assert_eq!(done["done"], true);
    assert_eq!(done["artifacts"]["out"].as_array().unwrap().len(), N);
    assert_eq!(done["artifacts"]["final"], "ok");
}

/// A snapshot in the old layout (results on the steps, a `captures` map, no
/// journal) loads, keeps its captures' order, and the run goes on.
#[test]
fn a_snapshot_with_stored_captures_still_loads() {
    let s = root("store-once-legacy");
    let e = Engine::new(&s.path).unwrap();
    run_items(&e);
    let view = j(e.state_get("loop", "r").unwrap());
    let mut legacy = view.clone();
    legacy.as_object_mut().unwrap().remove("capture_order");
    assert!(legacy["captures"]["out"].is_array() && legacy["steps"][0]["items"][0]["result"].is_object());
    drop(e);
    std::fs::write(s.path.join(".savant/state/loop__r.json"), legacy.to_string()).unwrap();
    let _ = std::fs::remove_file(s.path.join(".savant/state/loop__r.journal"));

    let e = Engine::new(&s.path).unwrap();
    assert_eq!(j(e.state_get("loop", "r").unwrap()), view, "the old snapshot reads as it was written");
    let done = next(&e, "last", json!("ok"));
    let keys: Vec<&String> = done["artifacts"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["out", "final"], "captures keep the order they were set in");
}
