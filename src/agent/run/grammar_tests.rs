use super::*;

fn valid(schema: &Value, instance: &Value) -> bool {
    jsonschema::validator_for(schema).expect("a valid schema").is_valid(instance)
}

#[test]
fn any_json_is_an_explicit_union_of_the_json_types() {
    for free in [json!({}), json!(true), json!({"description": "anything"}), json!({"examples": [1]})] {
        let out = enforceable(&free);
        assert_eq!(out, any_json(), "{free}");
        check(&out).unwrap();
        for v in [json!(1), json!("s"), json!(null), json!([1, {"a": []}]), json!({"k": true})] {
            assert!(valid(&out, &v), "{v}");
        }
    }
}

#[test]
fn description_only_members_become_typed_everywhere() {
    let s = json!({"type": "object", "properties": {
        "result": {"description": "any JSON"},
        "list": {"type": "array", "items": {"description": "an item"}},
        "map": {"type": "object", "additionalProperties": {"description": "a value"}},
    }, "required": ["result"]});
    let out = enforceable(&s);
    check(&out).unwrap();
    assert_eq!(out["properties"]["result"], any_json());
    assert_eq!(out["properties"]["list"]["items"], any_json());
    assert_eq!(
        out["properties"]["map"],
        json!({"type": "object", "properties": {}, "additionalProperties": any_json()})
    );
    assert_eq!(check(&s).unwrap_err(), "/properties/result: no type, const, enum or anyOf");
}

#[test]
fn long_bounds_are_dropped_and_short_ones_kept() {
    let s = json!({"type": "object", "properties": {
        "long": {"type": "string", "maxLength": 4000, "minLength": 1},
        "short": {"type": "string", "maxLength": 8},
        "many": {"type": "array", "items": {"type": "integer"}, "maxItems": 1000, "minItems": 2},
    }});
    let out = enforceable(&s);
    check(&out).unwrap();
    assert_eq!(out["properties"]["long"], json!({"type": "string", "minLength": 1}));
    assert_eq!(out["properties"]["short"], json!({"type": "string", "maxLength": 8}));
    assert_eq!(
        out["properties"]["many"],
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 2})
    );
    assert!(check(&json!({"type": "string", "maxLength": 400})).is_ok(), "the loop's own string bounds");
    assert!(check(&json!({"type": "string", "maxLength": 401})).is_err());
    assert!(check(&json!({"type": "array", "maxItems": 33})).is_err());
}

#[test]
fn unsupported_keywords_are_dropped() {
    let s = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "properties": {"when": {"type": "string", "format": "date-time", "pattern": "^[0-9]+$"},
                       "n": {"type": "integer", "minimum": 0, "not": {"const": 3}}},
        "patternProperties": {"^x-": {"type": "string"}}, "if": {"required": ["n"]}, "then": {}});
    let out = enforceable(&s);
    check(&out).unwrap();
    assert_eq!(
        out,
        json!({"type": "object", "properties": {"when": {"type": "string"}, "n": {"type": "integer"}},
                            "additionalProperties": false})
    );
}

#[test]
fn unions_and_type_lists_are_any_of() {
    let s = json!({"type": "object", "oneOf": [
        {"properties": {"a": {"const": 1}}, "required": ["a"]},
        {"properties": {"b": {"type": ["string", "null"]}}, "required": ["b"]},
    ]});
    let out = enforceable(&s);
    check(&out).unwrap();
    let branches = out["anyOf"].as_array().unwrap();
    assert_eq!(branches.len(), 2);
    assert_eq!(
        branches[0],
        json!({"type": "object", "properties": {"a": {"const": 1}}, "required": ["a"],
                                   "additionalProperties": false})
    );
    assert_eq!(branches[1]["properties"]["b"], json!({"anyOf": [{"type": "string"}, {"type": "null"}]}));
    assert!(valid(&out, &json!({"b": null})) && !valid(&out, &json!({"a": 2})));
}

#[test]
fn refs_are_inlined_and_recursion_is_bounded() {
    let s = json!({"$defs": {"node": {"type": "object", "properties": {
        "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        "$ref": "#/$defs/node"});
    let out = enforceable(&s);
    check(&out).unwrap();
    let mut at = &out;
    let mut depth = 0;
    while let Some(next) = at.pointer("/properties/children/items") {
        at = next;
        depth += 1;
    }
    assert_eq!(depth, MAX_REF_DEPTH, "inlined {MAX_REF_DEPTH} levels deep");
    assert_eq!(*at, any_json());
    assert!(valid(&out, &json!({"name": "a", "children": [{"name": "b", "children": []}]})));
    // A ref to nowhere, an external ref and a self-referencing allOf end too.
    for s in [
        json!({"$ref": "#/nowhere"}),
        json!({"$ref": "https://example.com/s.json"}),
        json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}),
    ] {
        check(&enforceable(&s)).unwrap();
    }
}

#[test]
fn all_of_merges_objects_and_required_names_are_described() {
    let s = json!({"allOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "boolean"}}, "required": ["b", "c"]},
    ]});
    let out = enforceable(&s);
    check(&out).unwrap();
    assert_eq!(out["required"], json!(["a", "b", "c"]));
    assert_eq!(out["properties"]["c"], any_json());
    assert!(valid(&out, &json!({"a": "x", "b": true, "c": [1]})));
    assert!(!valid(&out, &json!({"a": "x", "b": true, "c": 1, "d": 0})));
}

#[test]
fn whatever_comes_in_a_checked_schema_comes_out() {
    for junk in [
        json!(null),
        json!(3),
        json!("s"),
        json!([]),
        json!({"type": "frob"}),
        json!({"enum": []}),
        json!({"anyOf": []}),
        json!({"type": []}),
        json!({"items": 3}),
        json!({"properties": 3}),
    ] {
        let out = enforceable(&junk);
        check(&out).unwrap_or_else(|e| panic!("{junk}: {e}"));
    }
}

#[test]
fn required_alternatives_resolve_to_the_first_and_required_strings_lose_null() {
    let think = json!({"type": "object", "additionalProperties": false, "properties": {
        "thought": {"type": ["string", "null"]}, "thoughts": {"type": ["string", "null"]},
        "workflow": {"type": ["string", "null"]}},
        "anyOf": [{"required": ["thought"]}, {"required": ["thoughts"]}]});
    let out = first_alternative(&think);
    assert_eq!(out["required"], json!(["thought"]));
    assert!(out.get("anyOf").is_none());
    assert_eq!(out["properties"]["thought"]["type"], "string");
    assert_eq!(out["properties"]["workflow"]["type"], json!(["string", "null"]), "optional: unchanged");
    let plain = json!({"type": "object", "anyOf": [{"type": "object"}], "properties": {}});
    assert_eq!(first_alternative(&plain), plain, "an anyOf of other schemas: unchanged");
}
