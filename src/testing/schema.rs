//! The JSON Schema (draft-07) of the test-file format (`*.test.yaml`), for
//! editors, generated from the reader's own key tables (`format.rs`) so that
//! a key the reader accepts is a property here (with a description for
//! hover) and any other key is rejected. `editor/test.schema.json` is the
//! committed copy (`savant-think schema --test-file`; a test keeps it in sync).
//! Names (step ids, captures) are the checker's work, not the schema's.

use crate::testing::format::{EVENT_KEYS, EXPECT_KEYS, FILE_KEYS, MOCK_KEYS, STATUSES, TEST_KEYS};
use serde_json::{Map, Value, json};

/// Where the committed copy lives, relative to the repository root.
pub const COMMITTED_PATH: &str = "editor/test.schema.json";

/// The description and schema of each key of the format.
fn key(name: &str) -> (&'static str, Value) {
    let any_map = json!({"type": "object"});
    match name {
        "workflow" => (
            "The workflow under test: an id (`release_notes`) or a path from this file's directory or the root.",
            json!({"type": "string", "minLength": 1}),
        ),
        "tests" => (
            "The tests: each runs the workflow once with mocked tool results.",
            json!({"type": "array", "items": {"$ref": "#/definitions/test"}}),
        ),
        "name" => ("The test's name (what --filter matches).", json!({"type": "string", "minLength": 1})),
        "params" => (
            "The run's params (defaults applied, checked like `plan --params`).",
            json!({"type": ["object", "null"]}),
        ),
        "mocks" => (
            "Per step id (or per tool: `call:TOOL`): what its tool answers. A list is several cases; the first whose `when_input` matches answers.",
            json!({
                "type": ["object", "null"],
                "additionalProperties": {"oneOf": [{"$ref": "#/definitions/mock"}, {"type": "array", "minItems": 1, "items": {"$ref": "#/definitions/mock"}}]},
            }),
        ),
        "expect" => (
            "What must hold after the run. A test with no expectation is an error (TEST_NO_EXPECT).",
            json!({"$ref": "#/definitions/expect"}),
        ),
        "result" => ("The tool's result, the same on every attempt.", json!({})),
        "results" => (
            "One result per attempt: a result that fails success_schema is asked for again.",
            json!({"type": "array", "minItems": 1}),
        ),
        "result_file" => (
            "A JSON or YAML file holding the result, relative to this file (inside the project root).",
            json!({"type": "string", "minLength": 1}),
        ),
        "error" => (
            "The tool failed with this error: nothing is submitted and the run stops there, `waiting`.",
            json!({}),
        ),
        "when_input" => (
            "Answer only when the step's rendered input contains this (subset match): one case per foreach item.",
            any_map,
        ),
        "answers" => (
            "Per waiting step (`approve`, `ask[1]`, `ask` for every item, `child/sure`): a person's answer to its `await:`, given when it waits; checked against its schema.",
            json!({"type": ["object", "null"]}),
        ),
        "timeouts" => (
            "Waits whose deadline passes (a fake clock): they take their `on_timeout`, or fail with WAIT_TIMED_OUT.",
            json!({"type": ["array", "null"], "items": {"type": "string"}}),
        ),
        "events" => (
            "Events, each delivered once to the first `wait_for:` that takes it (same name, and key when the wait has one).",
            json!({"type": ["array", "null"], "items": {"$ref": "#/definitions/event"}}),
        ),
        "event" => (
            "The event's name, as declared in savant-think.toml ([events.NAME]).",
            json!({"type": "string", "minLength": 1}),
        ),
        "key" => ("Its correlation key: what the wait's `match:` rendered.", json!({"type": "string"})),
        "payload" => ("Its payload (default {}), valid against the event's schema.", json!({})),
        "status" => ("The run's status at the end.", json!({"enum": STATUSES})),
        "skipped" => (
            "Steps that must have been skipped (their `when` was false).",
            json!({"type": "array", "items": {"type": "string"}}),
        ),
        "ran" => ("Steps that must have run.", json!({"type": "array", "items": {"type": "string"}})),
        "inputs" => (
            "Rendered inputs by step id (`id[i]` for a foreach item); subset match, `=id` for equality.",
            any_map,
        ),
        "captures" => ("Captures by name; subset match, `=name` for equality.", any_map),
        _ => ("", json!({})),
    }
}

fn object(keys: &[&str], required: &[&str]) -> Value {
    let mut props = Map::new();
    for k in keys {
        let (description, mut schema) = key(k);
        if let Some(m) = schema.as_object_mut() {
            m.insert("description".into(), json!(description));
        }
        props.insert((*k).to_owned(), schema);
    }
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The test-file format's JSON Schema.
pub fn test_file_schema() -> Value {
    let mut mock = object(MOCK_KEYS, &[]);
    let replies: Vec<Value> =
        ["result", "results", "result_file", "error"].iter().map(|k| json!({"required": [k]})).collect();
    mock["oneOf"] = Value::Array(replies);
    let mut root = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "https://savant-think.dev/schemas/test.schema.json",
        "title": "savant-think test file",
        "description": "Unit tests of one workflow (`*.test.yaml`): params, mocked tool results, expectations. Run with `savant-think test`. Generated by `savant-think schema --test-file`.",
    });
    if let (Some(r), Value::Object(o)) = (root.as_object_mut(), object(FILE_KEYS, &["workflow", "tests"])) {
        r.extend(o);
    }
    root["definitions"] = json!({
        "test": object(TEST_KEYS, &["name", "expect"]),
        "mock": mock,
        "expect": object(EXPECT_KEYS, &[]),
        "event": object(EVENT_KEYS, &["event"]),
    });
    root
}

/// The schema, pretty-printed with a trailing newline (the committed form).
pub fn test_file_schema_text() -> String {
    let mut s = serde_json::to_string_pretty(&test_file_schema()).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_the_reader_knows_has_a_description() {
        for k in FILE_KEYS.iter().chain(TEST_KEYS).chain(MOCK_KEYS).chain(EXPECT_KEYS).chain(EVENT_KEYS) {
            assert!(!key(k).0.is_empty(), "no description for `{k}`");
        }
    }
}
