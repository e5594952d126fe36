//! Tests of the tool catalog: schemas from the types, names, descriptions.

use super::*;

#[test]
fn every_tool_is_an_engine_tool_and_every_field_is_described() {
    for t in all() {
        assert!(t.validator().is_some(), "{}'s input schema does not compile", t.name);
        assert_eq!(t.input["type"], "object");
        assert_eq!(t.input["additionalProperties"], false, "{}", t.name);
        assert_eq!(t.output["type"], "object");
        for (field, schema) in t.input["properties"].as_object().unwrap() {
            assert!(schema.get("description").is_some(), "{}.{field} has no description", t.name);
        }
        for (field, schema) in t.output["properties"].as_object().unwrap() {
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
        next.input["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(required, ["workflow", "run_id", "step_id"]);
    assert!(next.input["properties"]["result"].is_object(), "the alias is offered");
    let plan = find("think_plan").unwrap();
    assert!(plan.output["properties"]["instruction"]["properties"]["step_id"].is_object());
    assert!(plan.output["properties"]["artifacts"].is_object(), "both shapes of a reply are listed");
    assert_eq!(plan.input["properties"]["if_exists"]["default"], "error");
    assert_eq!(plan.input["properties"]["if_exists"]["enum"], json!(["error", "resume", "replace", null]));
}
