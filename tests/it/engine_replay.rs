//! Deterministic replay, as a property: random workflows (a DAG of steps with
//! `deps` on earlier steps, `when:` on params, `foreach: params.list`, inputs
//! that read earlier captures), driven to `done` with results submitted in a
//! random ready order.
//!
//! - Any two orders end in the same captures, step results and done response.
//! - The same order twice gives a byte-identical sequence of responses.
//! - The state on disk (snapshot + journal, read by a fresh engine) equals the
//!   state in memory, and `debug` replays it consistently.

use crate::common::j;
use crate::support::{Root, next_json};
use proptest::prelude::*;
use savant_think::runtime::Engine;
use savant_think::runtime::engine::READY_LIST_CAP;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// A temporary project root holding one workflow, with fsync off.
fn root(name: &str, workflow: &str) -> Root {
    let root = Root::with_workflows(name, &[(name, workflow)]);
    root.write("savant-think.toml", "[state]\nfsync = false\n");
    root
}

/// One generated step.
#[derive(Clone, Debug)]
struct GenStep {
    /// Explicit dependencies, as a bit mask over the earlier steps.
    deps: u16,
    /// 0: no `when`; 1: `params.flag_a`; 2: `!params.flag_b`;
    /// 3: on a foreach step, `it != 'skip'`, else `params.flag_a || params.flag_b`.
    when: u8,
    foreach: bool,
    /// Reads the capture of this earlier step (an inferred dependency).
    reads: Option<u16>,
}

fn step_strategy() -> impl Strategy<Value = GenStep> {
    (any::<u16>(), 0u8..4, prop::bool::weighted(0.3), prop::option::weighted(0.5, any::<u16>()))
        .prop_map(|(deps, when, foreach, reads)| GenStep { deps, when, foreach, reads })
}

/// The workflow text for `steps`; step `i` has id `s<i>` and captures `c<i>`.
fn workflow_yaml(steps: &[GenStep]) -> String {
    let mut y = String::from(
        "id: gen\nparams:\n  flag_a: { type: boolean }\n  flag_b: { type: boolean }\n  \
         list: { type: array, items: { type: string } }\n  n: { type: integer, default: 7 }\n\
         required: [flag_a, flag_b, list]\nsteps:\n",
    );
    for (i, s) in steps.iter().enumerate() {
        writeln!(y, "  - id: s{i}\n    call: tool.t{}", i % 3).unwrap();
        let deps: Vec<String> = (0..i).filter(|j| s.deps & (1 << j) != 0).map(|j| format!("s{j}")).collect();
        if !deps.is_empty() {
            writeln!(y, "    deps: [{}]", deps.join(", ")).unwrap();
        }
        match (s.when, s.foreach) {
            (1, _) => y.push_str("    when: \"params.flag_a\"\n"),
            (2, _) => y.push_str("    when: \"!params.flag_b\"\n"),
            (3, true) => y.push_str("    when: \"it != 'skip'\"\n"),
            (3, false) => y.push_str("    when: \"params.flag_a || params.flag_b\"\n"),
            _ => {}
        }
        if s.foreach {
            y.push_str("    foreach: params.list\n    as: it\n");
        }
        y.push_str("    input_template:\n");
        writeln!(y, "      label: \"s{i} n=<<params.n>>\"").unwrap();
        if let Some(r) = s.reads.filter(|_| i > 0) {
            writeln!(y, "      prev: \"<<c{}>>\"", usize::from(r) % i).unwrap();
        }
        if s.foreach {
            y.push_str("      item: \"<<it>> #<<loop.index>>\"\n      index: \"<<loop.index>>\"\n");
        }
        writeln!(y, "    capture_as: c{i}").unwrap();
    }
    y
}

fn next(e: &Engine, run: &str, step: &str, result: Value) -> Result<Value, Value> {
    next_json(e, "gen", run, step, result)
}

/// The rendered input of a ready step `s3` or foreach item `s3[1]`, from the state.
fn input_in_state(state: &Value, work_id: &str) -> Value {
    let (name, item) = match work_id.strip_suffix(']').and_then(|w| w.split_once('[')) {
        Some((name, j)) => (name, Some(j.parse::<usize>().unwrap())),
        None => (work_id, None),
    };
    let step = state["steps"].as_array().unwrap().iter().find(|s| s["id"] == name).unwrap();
    match item {
        Some(j) => step["items"][j]["input"].clone(),
        None => step["input"].clone(),
    }
}

/// The tool's answer: a function of the step and its input only.
fn result_for(work_id: &str, input: &Value) -> Value {
    json!({ "by": work_id, "input": input })
}

/// Drives a run to done, choosing the ready step to answer with `choices`;
/// an odd choice also resends the same result (which must change nothing).
/// Returns every response, serialized.
fn drive(e: &Engine, run: &str, params: &Value, choices: &[u32]) -> Result<Vec<String>, TestCaseError> {
    let mut r = e
        .plan("gen", params.clone(), Some(run), true)
        .map(j)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut out = vec![serde_json::to_string(&r).unwrap()];
    let mut k = 0usize;
    let mut version = 0u64;
    while r["done"] != true {
        prop_assert_eq!(r["done"].clone(), json!(false), "{}", r);
        let ready: Vec<String> =
            r["ready"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
        let total = r["ready_total"].as_u64().unwrap() as usize;
        prop_assert!(!ready.is_empty(), "a running run with nothing ready: {}", r);
        prop_assert_eq!(ready.len(), total.min(READY_LIST_CAP));
        prop_assert_eq!(
            r["instruction"]["step_id"].as_str(),
            Some(ready[0].as_str()),
            "the first ready step"
        );
        let c = choices.get(k % choices.len().max(1)).copied().unwrap_or(0);
        k += 1;
        prop_assert!(k < 10_000, "the run does not end");
        let pick = &ready[c as usize % ready.len()];
        let state = j(e.state_get("gen", run).unwrap());
        // What `exec --dry-run` counts: the statuses read alone are the state's.
        let direct: Vec<Value> = e
            .step_statuses("gen", run)
            .unwrap()
            .iter()
            .map(|s| json!({"id": s.id, "status": s.status, "items": s.items}))
            .collect();
        let from_state: Vec<Value> = state["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let items = s.get("items").map(|i| i.as_array().unwrap().iter().map(|i| i["status"].clone()));
                json!({"id": s["id"], "status": s["status"], "items": items.map(Vec::from_iter)})
            })
            .collect();
        prop_assert_eq!(direct, from_state);
        let input = input_in_state(&state, pick);
        if pick == &ready[0] {
            prop_assert_eq!(&input, &r["instruction"]["input"]);
        }
        let result = result_for(pick, &input);
        r = next(e, run, pick, result.clone()).map_err(|e| TestCaseError::fail(format!("{pick}: {e}")))?;
        version += 1;
        prop_assert_eq!(r["state"]["version"].as_u64(), Some(version), "one version per accepted result");
        if c % 2 == 1 {
            let again = next(e, run, pick, result).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&again, &r, "resending a result is idempotent");
        }
        out.push(serde_json::to_string(&r).unwrap());
    }
    Ok(out)
}

/// A done response without its run id.
fn without_run_id(done: &str) -> Value {
    let mut v: Value = serde_json::from_str(done).unwrap();
    v.as_object_mut().unwrap().remove("run_id");
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_ready_order_gives_the_same_outcome(
        steps in prop::collection::vec(step_strategy(), 0..10),
        flag_a in any::<bool>(),
        flag_b in any::<bool>(),
        list in prop::collection::vec(prop::sample::select(vec!["a", "b", "skip", "é ü"]), 0..5),
        order_1 in prop::collection::vec(any::<u32>(), 1..40),
        order_2 in prop::collection::vec(any::<u32>(), 1..40),
        last_always_runs in any::<bool>(),
    ) {
        // Liveness: whatever the workflow, params and order, the run ends
        // `done` in a bounded number of calls (`drive` fails on a running
        // run with nothing ready) — a run in which no step runs (every
        // `when:` false, an empty foreach upstream) included: half the
        // cases have no step that always runs.
        let mut steps = steps;
        if last_always_runs || steps.is_empty() {
            steps.push(GenStep { deps: 0, when: 0, foreach: false, reads: Some(0) });
        }
        let yaml = workflow_yaml(&steps);
        let root = root("gen", &yaml);
        let e = root.engine();
        let params = json!({ "flag_a": flag_a, "flag_b": flag_b, "list": list });

        let first = drive(&e, "a", &params, &order_1)?;
        let state_a = j(e.state_get("gen", "a").unwrap());
        let other = drive(&e, "b", &params, &order_2)?;
        let state_b = j(e.state_get("gen", "b").unwrap());

        // Same outcome whatever the order.
        prop_assert_eq!(&state_a["captures"], &state_b["captures"]);
        prop_assert_eq!(&state_a["steps"], &state_b["steps"]);
        prop_assert_eq!(without_run_id(first.last().unwrap()), without_run_id(other.last().unwrap()));
        prop_assert_eq!(state_a["status"].as_str(), Some("done"));
        // Every capture is present: a skipped step's is null, a foreach's an array.
        for (i, s) in steps.iter().enumerate() {
            let c = &state_a["captures"][format!("c{i}")];
            prop_assert!(state_a["captures"].get(format!("c{i}")).is_some(), "c{} missing", i);
            if s.foreach {
                prop_assert_eq!(c.as_array().map(Vec::len), Some(list.len()), "c{} = {}", i, c);
            }
        }

        // The same order again (a fresh start of run `a`): byte-identical responses.
        let again = drive(&e, "a", &params, &order_1)?;
        prop_assert_eq!(&first, &again);

        // What is on disk is what was in memory, and replays consistently.
        let reloaded = j(root.engine().state_get("gen", "a").unwrap());
        let in_memory = j(e.state_get("gen", "a").unwrap());
        prop_assert_eq!(&reloaded, &in_memory);
        let debug = root.engine().debug("gen", "b").unwrap();
        prop_assert!(debug.consistent);
    }
}

#[test]
fn the_generated_workflows_are_what_they_claim() {
    // A hand-picked case: a foreach with a `when` on the item, a step skipped
    // by a param, a step reading a skipped step's capture (null), explicit deps.
    let steps = [
        GenStep { deps: 0, when: 3, foreach: true, reads: None },
        GenStep { deps: 0, when: 2, foreach: false, reads: Some(0) },
        GenStep { deps: 0b11, when: 0, foreach: false, reads: Some(1) },
    ];
    let yaml = workflow_yaml(&steps);
    let root = root("gen", &yaml);
    let e = root.engine();
    let explain = j(e.explain("gen", None, None).unwrap());
    assert_eq!(explain["order"], json!(["s0", "s1", "s2"]), "{yaml}");
    assert_eq!(explain["steps"][1]["inferred_deps"], json!(["s0"]), "{explain}");
    let params = json!({ "flag_a": true, "flag_b": true, "list": ["a", "skip", "b"] });
    let r = j(e.plan("gen", params, Some("r"), true).unwrap());
    assert_eq!(r["ready"], json!(["s0[0]", "s0[2]"]));
    assert_eq!(r["instruction"]["input"], json!({"label": "s0 n=7", "item": "a #0", "index": 0}));
    next(&e, "r", "s0[2]", json!("B")).unwrap();
    let r = next(&e, "r", "s0[0]", json!("A")).unwrap();
    // s1 is skipped (`!params.flag_b`), so s2 reads null.
    assert_eq!(r["ready"], json!(["s2"]));
    assert_eq!(r["instruction"]["input"], json!({"label": "s2 n=7", "prev": null}));
    let r = next(&e, "r", "s2", json!(1)).unwrap();
    assert_eq!(r["done"], true);
    assert_eq!(r["artifacts"], json!({"c0": ["A", null, "B"], "c1": null, "c2": 1}));
    assert_eq!(r["summary"]["ran"], json!(["s0", "s2"]));
    assert_eq!(r["summary"]["skipped"], json!(["s1"]));
}

#[test]
fn the_ready_list_is_capped_but_ready_total_is_not() {
    let steps = [GenStep { deps: 0, when: 0, foreach: true, reads: None }];
    let root = root("gen", &workflow_yaml(&steps));
    let e = root.engine();
    let list: Vec<String> = (0..60).map(|i| format!("i{i}")).collect();
    let r =
        j(e.plan("gen", json!({ "flag_a": true, "flag_b": false, "list": list }), Some("r"), true).unwrap());
    assert_eq!(r["ready_total"], 60);
    let ready = r["ready"].as_array().unwrap();
    assert_eq!(ready.len(), READY_LIST_CAP);
    assert_eq!(ready[0], "s0[0]");
    assert_eq!(ready[49], "s0[49]");
    // An item beyond the listed ones is ready all the same.
    let r = next(&e, "r", "s0[59]", json!(59)).unwrap();
    assert_eq!(r["ready_total"], 59);
    assert_eq!(r["ready"].as_array().unwrap().len(), READY_LIST_CAP);
}
