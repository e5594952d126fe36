//! Scripted runs (`tests/runs/*.yaml`, see its README): a workflow, params
//! and the results a client would submit, driven through `plan` / `next`;
//! the whole transcript is an insta snapshot, so any change in what the
//! engine instructs, refuses or reports shows up as a reviewed diff.

use crate::common::j;
use crate::common::{CRATE, Root};
use crate::support::next_json;
use savant_think::runtime::Engine;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;

/// The most `next` calls one script may make (a guard against a loop).
const MAX_CALLS: usize = 500;

fn yaml_to_json(text: &str, name: &str) -> Value {
    let src = savant_think::source::SourceFile::new(name, text);
    let parsed = savant_think::syntax::yaml::parse(&src, &savant_think::Limits::default());
    assert!(parsed.diagnostics.is_empty(), "{name}: {:?}", parsed.diagnostics);
    parsed.root.expect("a YAML document").to_json()
}

/// Drives one script and returns its transcript.
fn drive(name: &str, script: &Value) -> String {
    let scratch = Root::new(&format!("run-{name}"));
    let root = &scratch.path;
    let workflows = Path::new(CRATE).join("workflows");
    let id = match (script.get("workflow"), script.get("bundled")) {
        (Some(Value::String(text)), None) => {
            let id = yaml_to_json(text, name)["id"].as_str().unwrap_or(name).to_owned();
            scratch.write(&format!("workflows/{id}.yaml"), text);
            id
        }
        (None, Some(Value::String(id))) => {
            scratch.write(
                &format!("workflows/{id}.yaml"),
                std::fs::read(workflows.join(format!("{id}.yaml"))).unwrap(),
            );
            id.clone()
        }
        _ => panic!("{name}: give `workflow` (text) or `bundled` (an id)"),
    };
    for e in std::fs::read_dir(Path::new(CRATE).join("schemas")).unwrap() {
        let e = e.unwrap();
        if e.path().extension().is_some_and(|x| x == "json") {
            scratch.write(
                &format!("schemas/{}", e.file_name().to_string_lossy()),
                std::fs::read(e.path()).unwrap(),
            );
        }
    }
    let results = script["results"].as_object().cloned().unwrap_or_default();
    let mut attempts: HashMap<String, usize> = HashMap::new();
    let engine = Engine::new(root).unwrap();
    let params = script.get("params").cloned().unwrap_or(json!({}));
    let mut transcript = Vec::new();
    let mut reply = engine.plan(&id, params, Some("r1"), true).map(j).map_err(|e| e.to_json());
    transcript.push(json!({ "plan": shown(&reply) }));
    for _ in 0..MAX_CALLS {
        let current = match &reply {
            Ok(v) if v["done"] == true => break,
            Ok(v) => v.clone(),
            // A refusal that repeats the instruction (a failed validation with retries left).
            Err(e) if e.get("instruction").is_some() => e.clone(),
            Err(_) => break,
        };
        let step = current["instruction"]["step_id"].as_str().expect("an instruction").to_owned();
        let bare = step.split('[').next().unwrap().to_owned();
        let scripted = results.get(&step).or_else(|| results.get(&bare)).cloned().unwrap_or(json!({}));
        let n = attempts.entry(step.clone()).or_default();
        let result = match scripted {
            Value::Array(list) if !list.is_empty() && script_lists_attempts(&results, &step, &bare) => {
                list[(*n).min(list.len() - 1)].clone()
            }
            other => other,
        };
        *n += 1;
        reply = next_json(&engine, &id, "r1", &step, result.clone());
        transcript.push(json!({ "next": step, "result": result, "reply": shown(&reply) }));
    }
    let mut out = format!("# {}\n", script["about"].as_str().unwrap_or(name));
    out.push_str(&serde_json::to_string_pretty(&transcript).unwrap());
    out.push('\n');
    out
}

/// Whether a step's scripted list is one result per attempt: a list of
/// mappings is; any other list (of strings, say) is one array result.
fn script_lists_attempts(results: &serde_json::Map<String, Value>, step: &str, bare: &str) -> bool {
    let list = results.get(step).or_else(|| results.get(bare)).and_then(Value::as_array);
    list.is_some_and(|l| l.iter().all(Value::is_object))
}

/// What a reply shows in the transcript: the instruction (without its
/// repeated rules), the error, or the final summary and artifacts. Run ids
/// and timestamps are fixed or absent, so the transcript is stable.
fn shown(reply: &Result<Value, Value>) -> Value {
    match reply {
        Ok(v) if v["done"] == true => {
            json!({ "done": true, "summary": v["summary"], "artifacts": v["artifacts"] })
        }
        Ok(v) => json!({
            "instruction": brief(&v["instruction"]),
            "ready": v["ready"],
            "status": v["state"]["status"],
        }),
        Err(e) => {
            let mut e = e.clone();
            if let Some(i) = e.get("instruction").cloned() {
                e["instruction"] = brief(&i);
            }
            if let Some(o) = e.as_object_mut() {
                o.remove("state");
            }
            json!({ "error": e })
        }
    }
}

fn brief(i: &Value) -> Value {
    json!({
        "step_id": i["step_id"],
        "call": i["call"],
        "input": i["input"],
        "attempt": i["attempt"],
    })
}

#[test]
fn scripted_runs_match_their_transcripts() {
    let dir = Path::new(CRATE).join("tests/runs");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    for path in names {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let script = yaml_to_json(&std::fs::read_to_string(&path).unwrap(), &name);
        let transcript = drive(&name, &script);
        insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(format!("run_{name}"), transcript);
        });
    }
}
