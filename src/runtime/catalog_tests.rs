//! Tests of the tool catalog: schemas from the types, names, descriptions.

use super::*;

#[test]
fn every_tool_is_an_engine_tool_and_every_field_is_described() {
    for t in all() {
        assert!(t.validator().is_some(), "{}'s input schema does not compile", t.name);
        assert_eq!(t.input()["type"], "object");
        assert_eq!(t.input()["additionalProperties"], false, "{}", t.name);
        assert_eq!(t.output()["type"], "object");
        for (field, schema) in t.input()["properties"].as_object().unwrap() {
            assert!(schema.get("description").is_some(), "{}.{field} has no description", t.name);
        }
        for (field, schema) in t.output()["properties"].as_object().unwrap() {
            assert!(schema.get("description").is_some(), "{} output {field} has no description", t.name);
        }
    }
}

#[test]
fn tool_names_are_read_with_any_separator() {
    assert_eq!(ToolName::parse("think.plan").map(ToolName::as_str), Some("think_plan"));
    assert_eq!(ToolName::parse("think_workflows.list").map(ToolName::as_str), Some("think_workflows_list"));
    assert_eq!(ToolName::parse("think-plan"), None);
    assert_eq!(ToolName::loose(" think-plan ").map(ToolName::as_str), Some("think_plan"));
    assert_eq!(ToolName::parse("prompt.say").map(ToolName::as_str), Some("prompt_say"));
    assert_eq!(ToolName::parse("thinkplan"), None);
    assert_eq!(ToolName::parse("think_plann"), None);
}

#[test]
fn schemas_come_from_the_types() {
    let next = find("think_next").unwrap();
    let required: Vec<&str> =
        next.input()["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(required, ["workflow", "run_id", "step_id"]);
    assert!(next.input()["properties"]["result"].is_object(), "the alias is offered");
    let plan = find("think_plan").unwrap();
    assert!(plan.output()["properties"]["instruction"]["properties"]["step_id"].is_object());
    assert!(plan.output()["properties"]["artifacts"].is_object(), "both shapes of a reply are listed");
    assert_eq!(plan.input()["properties"]["if_exists"]["default"], "error");
    assert_eq!(plan.input()["properties"]["if_exists"]["enum"], json!(["error", "resume", "replace", null]));
}

/// `catalog_schemas.json` as the argument and reply types give it: the
/// tools in the table's order, each output stored once.
fn generated() -> String {
    let mut out = Map::new();
    let mut seen: Vec<(&str, Value)> = Vec::new();
    for row in rows::ROWS {
        let output = (row.output)();
        let mut entry = Map::new();
        entry.insert("input".into(), (row.input)());
        match seen.iter().find(|(_, o)| *o == output) {
            Some((first, _)) => {
                entry.insert("output_as".into(), Value::from(*first));
            }
            None => {
                entry.insert("output".into(), output.clone());
                seen.push((row.name, output));
            }
        }
        out.insert(row.name.into(), Value::Object(entry));
    }
    // One tool a line: the table parses a tool's line when it is used.
    let lines: Vec<String> =
        out.iter().map(|(name, entry)| format!("{}: {entry}", Value::from(name.as_str()))).collect();
    format!("{{\n{}\n}}\n", lines.join(",\n"))
}

/// `catalog_schemas.json` is what the types give, and the table read from
/// it has each tool's generated schemas (an `output_as` resolved).
#[test]
fn the_stored_schemas_are_the_types_schemas() {
    let text = generated();
    if std::env::var_os("SAVANT_BLESS_CATALOG").is_some_and(|v| v == "1") {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/runtime/catalog_schemas.json");
        std::fs::write(path, &text).unwrap();
        return;
    }
    assert!(
        STORED == text,
        "src/runtime/catalog_schemas.json is not what the argument and reply types give: \
         run `SAVANT_BLESS_CATALOG=1 cargo test --lib catalog` and commit the file"
    );
    for (t, row) in all().iter().zip(rows::ROWS) {
        assert!(t.stored.is_some(), "{}: no line of its own in the file", t.name);
        assert_eq!(t.input(), &(row.input)(), "{}: input", t.name);
        assert_eq!(t.output(), &(row.output)(), "{}: output", t.name);
    }
}

/// An entry gives both schemas or none (the table then generates them);
/// `output_as` reads an earlier tool's output.
#[test]
fn a_stored_entry_is_read_only_whole() {
    let plan = find("think_plan").unwrap();
    let entry = json!({"input": {"type": "object"}, "output_as": "think_plan"});
    let Value::Object(entry) = entry else { unreachable!() };
    let (input, output) = stored_schemas(entry.clone(), all()).unwrap();
    assert_eq!(input, json!({"type": "object"}));
    assert_eq!(&output, plan.output());
    assert!(stored_schemas(entry.clone(), &[]).is_none(), "output_as names a tool not read yet");
    let mut no_input = entry;
    no_input.remove("input");
    assert!(stored_schemas(no_input, all()).is_none());
}

/// Every tool's input schema is one `ir::sure_schema` reads, so a call with
/// the usual arguments compiles no schema; a wrong one is left to the
/// compiled validator, which refuses it.
#[test]
fn the_usual_arguments_are_surely_valid_without_a_compiled_schema() {
    use crate::ir::sure_schema::compiles;
    for t in all() {
        assert!(compiles(t.input()), "{}: {}", t.name, t.input());
    }
    let say = find("prompt_say").unwrap();
    assert!(say.surely_valid(&json!({"text": "hello"})));
    assert!(say.surely_valid(&json!({"message": "hello", "text": null})));
    for wrong in [json!({}), json!({"text": 3}), json!({"text": "a", "x": 1}), json!("text")] {
        assert!(!say.surely_valid(&wrong), "{wrong}");
        assert!(!say.validator().unwrap().is_valid(&wrong), "{wrong}");
    }
}
