//! Replaying a recorded run: `savant-think test --replay WORKFLOW --run-id
//! ID` feeds a run's results (accepted and refused), as stored, to the workflow as it is
//! *now* (over an in-memory engine) and reports where it diverges: a step
//! that would now run with no recorded result (`NEW_STEP`), an input that
//! would now render differently (`INPUT_CHANGED`), a recorded result the
//! step's schema now refuses (`RESULT_REFUSED`), a step that ran but would
//! now be skipped or never reached (`NOT_REACHED`), another final status
//! (`STATUS_CHANGED`), a result once refused that would now be accepted
//! (`RESULT_ACCEPTED`). `--from-run` writes the run as a test file instead.
//!
//! The run's results are read from the store as stored (snapshot and
//! journal); its inputs from the engine's `state get` when it can read the
//! run (through the workflow version the run is pinned to, [`add_inputs`]),
//! else from the stored snapshot alone (steps readied after it have none).
//!
//! A run with `uses:` steps is read with its child runs, at any depth: their
//! results and inputs join the parent's under their paths
//! (`review_each[1]/read`), as the engine hands their instructions out, and
//! the parent's own record of a child's outputs is left out (the replay's
//! children produce it again).
//!
//! How the run's waits ended (answers, events, timeouts) is read and given
//! again as the replay waits, and written as the test's `answers:`,
//! `events:` and `timeouts:` ([`replay_waits`](super::replay_waits)).

use crate::migrate::emit::emit;
use crate::runtime::Engine;
use crate::runtime::args::NextArgs;
use crate::runtime::engine::child_run_id;
use crate::runtime::reply::Instruction;
use crate::runtime::workflow::CompiledWorkflow;
use crate::source::Span;
use crate::state::{RunKey, StateStore};
use crate::testing::format::{Mock, MockCase, MockTarget, Reply, Spanned, TestCase};
use crate::testing::replay_waits::{self as waits, Ended, WaitEnd};
use crate::testing::run::{Outcome, TestError, base_id, run_test};
use crate::testing::update::{expect_value, to_yaml};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// One result a recorded run was given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Given {
    /// The step or item (`id[2]`, `each[1]/ask` in a child).
    pub step_id: String,
    /// The result, as stored.
    pub result: Value,
    /// Refused by the step's success schema (a `validation_failed` event).
    pub refused: bool,
}

/// A run as recorded in the store.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// The run id.
    pub run_id: String,
    /// Its params.
    pub params: Value,
    /// `running`, `done` or `failed`.
    pub status: String,
    /// Every result the run was given, in order: accepted, or refused by
    /// the step's schema (runs recorded before refused results were kept
    /// have only the accepted ones).
    pub results: Vec<Given>,
    /// The rendered inputs the stored state has, by step or item id.
    pub inputs: BTreeMap<String, Value>,
    /// How its waits ended, in order (children's under their paths).
    pub waits: Vec<WaitEnd>,
}

fn error(code: &str, message: String) -> TestError {
    TestError { code: code.to_owned(), message, help: None, step_id: None }
}

/// Takes the inputs of a run's full state (`state get` by `engine`, the
/// engine that owns the run: every step's and item's, where the stored
/// snapshot may lack the latest), and its child runs' under their paths.
pub fn add_inputs(rec: &mut Recorded, engine: &Engine, workflow_id: &str, run_id: &str) {
    let Ok(state) = engine.state_get(workflow_id, run_id) else { return };
    // The engine's word on the status too (the stored snapshot's may be
    // older than the journal).
    rec.status = state.status.as_str().to_owned();
    let cw = engine.workflow(workflow_id).ok();
    add_inputs_below(rec, engine, cw.as_ref(), &state, run_id, "", 0);
}

fn add_inputs_below(
    rec: &mut Recorded,
    engine: &Engine,
    cw: Option<&Arc<CompiledWorkflow>>,
    state: &crate::runtime::reply::FullState,
    run_id: &str,
    prefix: &str,
    depth: usize,
) {
    for (n, s) in state.steps.iter().enumerate() {
        if let Some(input) = &s.input {
            rec.inputs.insert(format!("{prefix}{}", s.id), input.clone());
        }
        for (i, item) in s.items.iter().flatten().enumerate() {
            if let Some(input) = &item.input {
                rec.inputs.insert(format!("{prefix}{}[{i}]", s.id), input.clone());
            }
        }
        let uses = cw.and_then(|cw| cw.wf.steps.get(n)).and_then(|st| st.uses.as_ref());
        let Some(callee) = uses.and_then(|u| engine.workflow(u.value.as_str()).ok()) else { continue };
        if depth >= MAX_DEPTH {
            continue;
        }
        for work in s.work_ids() {
            let child_id = child_run_id(run_id, &work);
            if let Ok(child) = engine.state_get(&callee.wf.id, &child_id) {
                let prefix = format!("{prefix}{work}/");
                add_inputs_below(rec, engine, Some(&callee), &child, &child_id, &prefix, depth + 1);
            }
        }
    }
}

/// How deep child runs are read (a guard against a cycle; the engine's own
/// limit on nesting is lower).
const MAX_DEPTH: usize = 16;

/// Reads run `run_id` of workflow `workflow_id` from `store`, with its child
/// runs (the `uses:` steps of `engine`'s `workflow_id` say which).
pub fn read_run(
    store: &dyn StateStore,
    engine: &Engine,
    workflow_id: &str,
    run_id: &str,
) -> Result<Recorded, TestError> {
    let cw = engine.workflow(workflow_id).ok();
    let mut rec = read_one(store, workflow_id, run_id, cw.as_ref())?;
    if let Some(cw) = &cw {
        add_children(store, engine, cw, run_id, "", &mut rec, 0)?;
    }
    Ok(rec)
}

/// The results and inputs of the child runs below run `run_id` of `cw`,
/// under their paths.
fn add_children(
    store: &dyn StateStore,
    engine: &Engine,
    cw: &Arc<CompiledWorkflow>,
    run_id: &str,
    prefix: &str,
    rec: &mut Recorded,
    depth: usize,
) -> Result<(), TestError> {
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    for step in &cw.wf.steps {
        let Some(uses) = &step.uses else { continue };
        let Ok(callee) = engine.workflow(uses.value.as_str()) else { continue };
        let keys = store.list(Some(&callee.wf.id)).map_err(|e| error("STATE_IO", e.to_string()))?;
        let own = child_run_id(run_id, &step.id.value);
        let mut works: Vec<(Option<usize>, String)> = keys
            .into_iter()
            .filter_map(|k| {
                if k.run_id == own {
                    return Some((None, k.run_id));
                }
                let item = k.run_id.strip_prefix(&own)?.strip_prefix('.')?.parse::<usize>().ok()?;
                Some((Some(item), k.run_id))
            })
            .collect();
        works.sort();
        for (item, child_id) in works {
            let work = match item {
                Some(j) => format!("{prefix}{}[{j}]/", step.id.value),
                None => format!("{prefix}{}/", step.id.value),
            };
            let child = read_one(store, &callee.wf.id, &child_id, Some(&callee))?;
            rec.results.extend(
                child.results.into_iter().map(|g| Given { step_id: format!("{work}{}", g.step_id), ..g }),
            );
            for (s, input) in child.inputs {
                rec.inputs.entry(format!("{work}{s}")).or_insert(input);
            }
            rec.waits.extend(child.waits.into_iter().map(|w| match w {
                WaitEnd::Answered { step_id, value } => {
                    WaitEnd::Answered { step_id: format!("{work}{step_id}"), value }
                }
                WaitEnd::TimedOut { step_id } => WaitEnd::TimedOut { step_id: format!("{work}{step_id}") },
                event => event,
            }));
            add_children(store, engine, &callee, &child_id, &work, rec, depth + 1)?;
        }
    }
    Ok(())
}

/// One run as stored, without its children; the results of `cw`'s `uses:`
/// steps (a child's outputs, which a replay produces again) are left out.
fn read_one(
    store: &dyn StateStore,
    workflow_id: &str,
    run_id: &str,
    cw: Option<&Arc<CompiledWorkflow>>,
) -> Result<Recorded, TestError> {
    let is_uses = |step: &str| {
        cw.is_some_and(|cw| cw.wf.steps.iter().any(|s| s.uses.is_some() && s.id.value == base_id(step)))
    };
    let key = RunKey::new(workflow_id, run_id).map_err(|e| error("INVALID_ID", e.to_string()))?;
    let loaded = store.load(&key).map_err(|e| error("STATE_IO", e.to_string()))?.ok_or_else(|| {
        error("UNKNOWN_RUN", format!("no run `{run_id}` of `{workflow_id}` in the state store"))
    })?;
    let s = &loaded.snapshot;
    let mut rec = Recorded {
        run_id: run_id.to_owned(),
        params: s.get("params").cloned().unwrap_or(Value::Null),
        status: s.get("status").and_then(Value::as_str).unwrap_or("running").to_owned(),
        ..Recorded::default()
    };
    let history = s.get("history").and_then(Value::as_array).into_iter().flatten();
    for e in history.chain(&loaded.journal) {
        if let Some(end) = WaitEnd::of_event(e, "") {
            rec.waits.push(end);
            continue;
        }
        let refused = match e.get("type").and_then(Value::as_str) {
            Some("result") => false,
            // A refused result, where the run kept it.
            Some("validation_failed") if e.get("result").is_some() => true,
            _ => continue,
        };
        if let Some(step) = e.get("step_id").and_then(Value::as_str)
            && !is_uses(step)
        {
            let result = e.get("result").cloned().unwrap_or(Value::Null);
            rec.results.push(Given { step_id: step.to_owned(), result, refused });
        }
    }
    for step in s.get("steps").and_then(Value::as_array).into_iter().flatten() {
        let Some(id) = step.get("id").and_then(Value::as_str) else { continue };
        if let Some(input) = step.get("input") {
            rec.inputs.insert(id.to_owned(), input.clone());
        }
        for (i, item) in step.get("items").and_then(Value::as_array).into_iter().flatten().enumerate() {
            if let Some(input) = item.get("input") {
                rec.inputs.insert(format!("{id}[{i}]"), input.clone());
            }
        }
    }
    if !loaded.journal.is_empty() {
        // The journal's events change the status too: the last word is the replay's.
        rec.status = String::new();
    }
    Ok(rec)
}

/// Where a replay parts from the recorded run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Divergence {
    /// `NEW_STEP`, `INPUT_CHANGED`, `RESULT_REFUSED`, `RESULT_ACCEPTED`, `NOT_REACHED` or `STATUS_CHANGED`.
    pub code: &'static str,
    /// The step or item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// What differs.
    pub message: String,
    /// As recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Value>,
    /// As it would be now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now: Option<Value>,
}

/// A replay's findings.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayReport {
    /// The workflow id.
    pub workflow: String,
    /// The run replayed.
    pub run_id: String,
    /// Recorded results submitted.
    pub replayed: usize,
    /// Every divergence, the first first.
    pub divergences: Vec<Divergence>,
    /// Of a run still running: the step the replay reached where the
    /// recording ends (no result yet). Not a divergence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_at: Option<String>,
}

fn divergence(
    code: &'static str,
    step: &str,
    message: String,
    recorded: Option<Value>,
    now: Option<Value>,
) -> Divergence {
    Divergence { code, step_id: Some(step.to_owned()), message, recorded, now }
}

/// Replays `rec` against `workflow` (an id or path `engine` resolves; a
/// memory engine: the replay leaves nothing behind).
pub fn replay(engine: &Engine, workflow: &str, rec: &Recorded) -> Result<ReplayReport, TestError> {
    let cw = engine.workflow(workflow).map_err(|e| TestError::engine(&e))?;
    let mut queue: BTreeMap<&str, VecDeque<&Given>> = BTreeMap::new();
    for g in &rec.results {
        queue.entry(g.step_id.as_str()).or_default().push_back(g);
    }
    let run_id = format!("replay-{}", rec.run_id);
    let mut out = ReplayReport {
        workflow: cw.wf.id.clone(),
        run_id: rec.run_id.clone(),
        replayed: 0,
        divergences: Vec::new(),
        open_at: None,
    };
    let first = engine.plan(workflow, rec.params.clone(), Some(&run_id), true);
    let mut current: Option<Instruction> = match first {
        Ok(p) => p.instruction().cloned(),
        Err(e) if e.run_failed() => None,
        Err(e) => return Err(TestError::engine(&e)),
    };
    let mut used = vec![false; rec.waits.len()];
    loop {
        let Some(i) = current.take() else {
            // No instruction: the run may wait; end a wait as the run's was.
            match waits::end_recorded(engine, workflow, &run_id, &rec.waits, &mut used)? {
                Ended::Next(next) => {
                    current = next.map(|i| *i);
                    continue;
                }
                Ended::Nothing => break,
            }
        };
        if let Some(recorded) = rec.inputs.get(&i.step_id)
            && recorded != &i.input
        {
            let message = format!("the input of `{}` would now render differently", i.step_id);
            out.divergences.push(divergence(
                "INPUT_CHANGED",
                &i.step_id,
                message,
                Some(recorded.clone()),
                Some(i.input.clone()),
            ));
        }
        let Some(given) = queue.get_mut(i.step_id.as_str()).and_then(VecDeque::pop_front) else {
            if rec.status == "running" && queue.values().all(VecDeque::is_empty) {
                // The recording ends here: the run is still waiting for this step.
                out.open_at = Some(i.step_id.clone());
                break;
            }
            let message = format!("`{}` would now run, but the recorded run has no result for it", i.step_id);
            out.divergences.push(divergence("NEW_STEP", &i.step_id, message, None, Some(i.input.clone())));
            break;
        };
        out.replayed += 1;
        current = submit(engine, workflow, &run_id, &i, given, &mut out)?;
    }
    closing(engine, workflow, &run_id, rec, &queue, &used, &mut out)?;
    Ok(out)
}

/// Submits the recorded result `given` of the step `i` asked for, as the
/// recorded run did: the next instruction (`None`: none, or the run
/// failed), a divergence in `out` when the step now takes or refuses the
/// result differently.
fn submit(
    engine: &Engine,
    workflow: &str,
    run_id: &str,
    i: &Instruction,
    given: &Given,
    out: &mut ReplayReport,
) -> Result<Option<Instruction>, TestError> {
    let args = NextArgs {
        workflow: workflow.to_owned(),
        run_id: run_id.to_owned(),
        step_id: i.step_id.clone(),
        result_snapshot: Some(given.result.clone()),
        result: None,
        expected_version: None,
    };
    let result = &given.result;
    let now = match engine.next(args) {
        Ok(p) if given.refused => {
            let message = format!(
                "the recorded result of `{}` was refused by its success_schema, and would now be accepted",
                i.step_id
            );
            out.divergences.push(divergence(
                "RESULT_ACCEPTED",
                &i.step_id,
                message,
                Some(result.clone()),
                None,
            ));
            p.instruction().cloned()
        }
        Ok(p) => p.instruction().cloned(),
        // Refused again, as it was: the step is asked again (or the run fails, as it did).
        Err(e) if given.refused && e.run_failed() => None,
        Err(e) if given.refused && e.code == crate::runtime::ErrorCode::ValidationFailed => {
            e.context.and_then(|c| c.instruction).or_else(|| Some(i.clone()))
        }
        Err(e) if e.code == crate::runtime::ErrorCode::ValidationFailed => {
            let message =
                format!("the recorded result of `{}` is now refused by its success_schema", i.step_id);
            out.divergences.push(divergence(
                "RESULT_REFUSED",
                &i.step_id,
                message,
                Some(result.clone()),
                Some(e.details.to_json()),
            ));
            None
        }
        Err(e) if e.run_failed() => None,
        Err(e) => return Err(TestError::engine(&e)),
    };
    Ok(now)
}

/// The divergences found at the replay's end (its run `run_id` then
/// deleted): recorded wait ends no wait took, recorded results no step
/// took, another final status.
fn closing(
    engine: &Engine,
    workflow: &str,
    run_id: &str,
    rec: &Recorded,
    queue: &BTreeMap<&str, VecDeque<&Given>>,
    used: &[bool],
    out: &mut ReplayReport,
) -> Result<(), TestError> {
    let state = engine.state_get(workflow, run_id).map_err(|e| TestError::engine(&e));
    let _ = engine.state_delete(workflow, run_id, true);
    let state = state?;
    for (end, _) in rec.waits.iter().zip(used).filter(|(_, used)| !**used) {
        let step = end.step();
        let message =
            format!("the recorded run's wait `{step}` ended, but the replay never waited for it so");
        out.divergences.push(divergence("NOT_REACHED", step, message, None, None));
    }
    for (step, left) in queue {
        if left.is_empty() {
            continue;
        }
        let now = state.steps.iter().find(|s| s.id == base_id(step)).map(|s| json!(s.status));
        let message = format!("`{step}` ran in the recorded run, but would now be skipped or not reached");
        out.divergences.push(divergence("NOT_REACHED", step, message, None, now));
    }
    let status = state.status.as_str();
    if !rec.status.is_empty() && rec.status != status {
        out.divergences.push(Divergence {
            code: "STATUS_CHANGED",
            step_id: None,
            message: format!("the run would now end {status}, not {}", rec.status),
            recorded: Some(json!(rec.status)),
            now: Some(json!(status)),
        });
    }
    Ok(())
}

fn reply_of(results: &[&Value]) -> Reply {
    match results {
        [one] => Reply::Result((*one).clone()),
        many => Reply::Results(
            many.iter().map(|r| Spanned { value: (*r).clone(), span: Span::point(0) }).collect(),
        ),
    }
}

/// The mocks that give back a recorded run's results: per step (per foreach
/// item, `id[i]`) its result, or its successive ones when it was given several.
pub fn mocks_of(rec: &Recorded) -> Result<Vec<Mock>, TestError> {
    let mut by_step: BTreeMap<String, Vec<(&str, &Value)>> = BTreeMap::new();
    let mut order = Vec::new();
    for Given { step_id: step, result, .. } in &rec.results {
        let base = base_id(step).to_owned();
        if !by_step.contains_key(&base) {
            order.push(base.clone());
        }
        by_step.entry(base).or_default().push((step.as_str(), result));
    }
    let span = Span::point(0);
    let mut mocks = Vec::new();
    for base in order {
        let entries = &by_step[&base];
        if entries.iter().any(|(s, _)| s.contains('[')) {
            // A foreach step: a mock per item (`id[i]`), its results in order.
            let mut items: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
            for (item, result) in entries {
                items.entry(item).or_default().push(result);
            }
            for (item, results) in items {
                let cases = vec![MockCase { when_input: None, reply: reply_of(&results), span }];
                mocks.push(Mock { target: MockTarget::Step(item.to_owned()), span, cases });
            }
            continue;
        }
        let results: Vec<&Value> = entries.iter().map(|(_, r)| *r).collect();
        let cases = vec![MockCase { when_input: None, reply: reply_of(&results), span }];
        mocks.push(Mock { target: MockTarget::Step(base), span, cases });
    }
    Ok(mocks)
}

fn mock_yaml(m: &Mock) -> Value {
    let case = |c: &MockCase| {
        let mut o = Map::new();
        if let Some(w) = &c.when_input {
            o.insert("when_input".into(), w.clone());
        }
        match &c.reply {
            Reply::Result(v) => o.insert("result".into(), v.clone()),
            Reply::Results(list) => {
                o.insert("results".into(), list.iter().map(|r| r.value.clone()).collect())
            }
            Reply::Error(e) => o.insert("error".into(), e.clone()),
            Reply::ResultFile(f) => o.insert("result_file".into(), json!(f.value)),
        };
        Value::Object(o)
    };
    match m.cases.as_slice() {
        [one] => case(one),
        many => many.iter().map(case).collect(),
    }
}

/// A test file reproducing a recorded run: its params, its results as mocks,
/// and as `expect` what the workflow as it is now does with them.
pub fn test_file_from_run(
    engine: &Engine,
    workflow: &str,
    rec: &Recorded,
) -> Result<(String, Outcome), TestError> {
    let cw = engine.workflow(workflow).map_err(|e| TestError::engine(&e))?;
    if rec.status == "running" {
        return Err(TestError {
            help: Some(format!(
                "finish the run first, or replay it without --from-run \
                 (`savant-think test --replay {} --run-id {}`) to compare what it did so far",
                cw.wf.id, rec.run_id
            )),
            ..error(
                "RUN_NOT_FINISHED",
                format!(
                    "run `{}` of `{}` is still running: a test needs a finished run",
                    rec.run_id, cw.wf.id
                ),
            )
        });
    }
    let mocks = mocks_of(rec)?;
    let name = format!("replays run {}", rec.run_id);
    let mut test = TestCase {
        name: Spanned { value: name.clone(), span: Span::point(0) },
        span: Span::point(0),
        params: rec.params.clone(),
        mocks,
        expect: None,
        waits: waits::test_waits(&rec.waits),
    };
    let outcome = run_test(engine, workflow, &test, &format!("from-{}", rec.run_id))?;
    let mocks: Map<String, Value> = test
        .mocks
        .drain(..)
        .map(|m| match &m.target {
            MockTarget::Step(s) | MockTarget::Call(s) => (s.clone(), mock_yaml(&m)),
        })
        .collect();
    let mut t = json!({"name": name});
    if !rec.params.is_null() {
        t["params"] = rec.params.clone();
    }
    t["mocks"] = Value::Object(mocks);
    if let Some(t) = t.as_object_mut() {
        waits::write_waits(&rec.waits, t);
    }
    // Every input too: the test then says when one would render differently.
    let mut expect = expect_value(None, &outcome);
    let inputs: Map<String, Value> =
        outcome.inputs.iter().map(|(k, v)| (k.clone(), waits::without_deadline(v))).collect();
    if !inputs.is_empty() {
        expect["inputs"] = Value::Object(inputs);
    }
    t["expect"] = expect;
    let doc = json!({"workflow": cw.wf.id, "tests": [t]});
    let header = format!(
        "# Generated by `savant-think test --replay {} --run-id {} --from-run`.\n",
        cw.wf.id, rec.run_id
    );
    Ok((header + &emit(&to_yaml(&doc)), outcome))
}
