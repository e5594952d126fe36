//! Tests of the dispatcher: every row has its handler, of its own types;
//! arguments are read as the schemas say; answers fit the output schemas.

use super::*;

/// Every row of the catalog has exactly one handler and every handler a
/// row, and the handler's argument and reply types are the row's: the
/// schemas generated from them are equal.
#[test]
fn every_row_has_one_handler_of_its_own_types() {
    let handlers = handlers::all();
    for t in catalog::all() {
        let mine: Vec<&Handler> = handlers.iter().filter(|h| h.name == t.name).collect();
        assert_eq!(mine.len(), 1, "{} has {} handlers", t.name, mine.len());
        assert_eq!((mine[0].input)(), *t.input(), "{}: the handler reads another argument type", t.name);
        assert_eq!((mine[0].output)(), *t.output(), "{}: the handler answers another reply type", t.name);
    }
    for h in &handlers {
        assert!(catalog::find(h.name).is_some_and(|t| t.name == h.name), "{} has no row", h.name);
    }
    assert!(HANDLERS.iter().all(Option::is_some));
}

/// Every tool of the table is called (bad arguments, never
/// UNKNOWN_TOOL), and a name outside it is UNKNOWN_TOOL listing the
/// table's names.
#[test]
fn the_dispatcher_serves_exactly_the_tool_table() {
    let dir = std::env::temp_dir().join(format!("savant-tools-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    let engine = Engine::new(&dir).unwrap();
    for name in catalog::names() {
        if let Err(e) = call(&engine, name, json!({"workflow": 1})) {
            assert_ne!(e.code, ErrorCode::UnknownTool, "{name} is in the table but not dispatched");
        }
    }
    let e = call(&engine, "think_plann", json!({})).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownTool);
    assert_eq!(e.details.to_json()["help"], "did you mean `think_plan`?");
    let listed = e.details.to_json()["tools"].as_array().unwrap().len();
    assert_eq!(listed, catalog::all().len());
    let e = call(&engine, "think_plan", json!({})).unwrap_err();
    assert_eq!(e.details.to_json()["message"], "missing required argument `workflow`");
    let e = call(&engine, "think_plan", json!({"workflow": 1})).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert_eq!(
        e.details.to_json()["message"],
        "invalid arguments for `think_plan`: `workflow`: 1 is not of type \"string\"",
        "the message names the argument"
    );
    let args = json!({"workflow": "w", "run_id": "r", "step_id": "a", "expected_version": -1});
    let e = call(&engine, "think_next", args).unwrap_err();
    assert!(e.details.to_json()["message"].as_str().unwrap().contains("`expected_version`"), "{e:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the tool list says is what the tool answers: answers of every
/// shape (the graph as JSON and as text, a plan and its done reply, an
/// explanation, an error) validate against the published output schema,
/// as a client checking structured content does.
#[test]
fn answers_validate_against_the_published_output_schemas() {
    let dir = std::env::temp_dir().join(format!("savant-catalog-out-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(
        dir.join("workflows/w.yaml"),
        "id: w\nsteps:\n  - id: a\n    call: prompt.say\n  - id: b\n    call: think\n    deps: [a]\n",
    )
    .unwrap();
    let engine = crate::runtime::Engine::new(&dir).unwrap();
    let calls = [
        ("think_workflows_graph", json!({"workflow": "w"})),
        ("think_workflows_graph", json!({"workflow": "w", "format": "mermaid"})),
        ("think_workflows_list", json!({})),
        ("think_plan", json!({"workflow": "w", "run_id": "r1"})),
        ("think_next", json!({"workflow": "w", "run_id": "r1", "step_id": "a", "result": {}})),
        ("think_next", json!({"workflow": "w", "run_id": "r1", "step_id": "b", "result": {}})),
        ("think_explain", json!({"workflow": "w", "run_id": "r1"})),
        ("think_state_get", json!({"workflow": "w", "run_id": "r1"})),
        ("think_state_list", json!({})),
        ("think_validate", json!({"schema": {"type": "object"}, "response": {}})),
        ("think_validate", json!({"workflow": "w"})),
    ];
    for (name, args) in calls {
        let t = catalog::find(name).unwrap();
        let validator = jsonschema::validator_for(t.output()).unwrap();
        let answer = match call(&engine, name, args.clone()) {
            Ok(v) => v,
            Err(e) => e.to_json(),
        };
        let errors: Vec<String> = validator.iter_errors(&answer).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name} {args}: {errors:?}\n{answer}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
