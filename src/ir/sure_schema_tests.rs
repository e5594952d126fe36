use super::*;
use proptest::prelude::*;
use serde_json::json;

/// What `jsonschema` says: does it compile, and is the value valid.
fn truth(schema: &Value, instance: &Value) -> (bool, bool) {
    match jsonschema::validator_for(schema) {
        Ok(v) => (true, v.is_valid(instance)),
        Err(_) => (false, false),
    }
}

/// `compiles` and `valid` never say yes where `jsonschema` says no.
fn agrees(schema: &Value, instance: &Value) {
    let (ok, is_valid) = truth(schema, instance);
    if compiles(schema) {
        assert!(ok, "said to compile, does not: {schema}");
        assert!(!valid(schema, instance) || is_valid, "said valid, is not: {instance} under {schema}");
    }
}

#[test]
fn what_is_not_surely_valid_is_left_to_the_compiler() {
    let unsure = [
        json!({"description": 3}),
        json!({"type": "strnig"}),
        json!({"type": []}),
        json!({"type": ["string", "string"]}),
        json!({"required": ["a", "a"]}),
        json!({"required": [1]}),
        json!({"enum": []}),
        json!({"anyOf": []}),
        json!({"minLength": -1}),
        json!({"minLength": 1.5}),
        json!({"pattern": "["}),
        json!({"$ref": "#/nowhere"}),
        json!({"properties": {"a": {"type": "nope"}}}),
        json!({"items": [{"type": "string"}]}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
        json!({"properties": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}}),
        json!(3),
    ];
    for s in unsure {
        assert!(!compiles(&s), "{s}");
    }
    let sure = [
        json!(true),
        json!({}),
        json!({"description": "Inferred.", "title": "t", "examples": [1], "default": {"a": 1}}),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": ["integer", "null"]}),
        json!({"type": "object", "properties": {"a": {"enum": [1, "x"]}}, "required": ["a"],
               "additionalProperties": false}),
    ];
    for s in sure {
        assert!(compiles(&s), "{s}");
        agrees(&s, &json!({"a": 1}));
    }
}

#[test]
fn bounds_and_integers_are_sure_only_between_whole_numbers() {
    let s = json!({"type": "integer", "minimum": 0, "exclusiveMaximum": 10});
    assert!(valid(&s, &json!(0)) && valid(&s, &json!(9)));
    assert!(!valid(&s, &json!(10)) && !valid(&s, &json!(-1)));
    // 1.0 is an integer to JSON Schema; here it is "not sure".
    assert!(!valid(&s, &json!(1.0)));
    assert!(truth(&s, &json!(1.0)).1);
    let s = json!({"minimum": 0.5});
    assert!(!valid(&s, &json!(1)));
    assert!(valid(&s, &json!("a string meets a number's bound")));
    let s = json!({"minLength": 2, "maxLength": 2});
    assert!(valid(&s, &json!("é✓")) && !valid(&s, &json!("abc")));
    assert!(valid(&json!({"enum": [1]}), &json!(1)) && !valid(&json!({"enum": [1]}), &json!(1.0)));
}

/// A schema of the known keywords, sometimes ill-formed.
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        prop::sample::select(vec![
            "string", "integer", "number", "null", "boolean", "array", "object", "nope"
        ])
        .prop_map(|t| json!({"type": t})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"enum": [1, "a", null]})),
        Just(json!({"const": 1})),
        (-2i64..3).prop_map(|n| json!({"minimum": n, "maxLength": 2})),
        (0u64..3).prop_map(|n| json!({"minItems": n, "exclusiveMaximum": n})),
        Just(json!({"description": "d", "default": 1})),
        Just(json!({"description": 1})),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c"]), inner.clone(), 0..3)
                .prop_map(|p| json!({"type": "object", "properties": p})),
            (inner.clone(), prop::sample::subsequence(vec!["a", "b"], 0..=2)).prop_map(
                |(s, r)| json!({"properties": {"a": s}, "required": r, "additionalProperties": false})
            ),
            inner.clone().prop_map(|s| json!({"items": s})),
            inner.clone().prop_map(|s| json!({"additionalProperties": s})),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| json!({"anyOf": v})),
            prop::collection::vec(inner, 0..3).prop_map(|v| json!({"allOf": v})),
        ]
    })
}

/// A value of any shape.
fn instance() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..4).prop_map(|n| json!(n)),
        Just(json!(1.0)),
        Just(json!(2.5)),
        prop::sample::select(vec!["", "a", "ab", "é✓x"]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c"]), inner, 0..3)
                .prop_map(|m| json!(m)),
        ]
    })
}

proptest! {
    #[test]
    fn a_yes_is_always_jsonschemas_yes(s in schema(), i in instance()) {
        agrees(&s, &i);
    }
}
