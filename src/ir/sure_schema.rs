//! A quick, certain "yes" for the plain JSON Schemas most values meet, so
//! a process need not compile them: compiling the first schema builds
//! `jsonschema`'s validator of the 2020-12 meta-schema (about 7 M
//! instructions, more than a dry run's 70 engine calls), and the crate
//! offers no public way to compile a known-good schema without that check.
//!
//! [`compiles`] answers whether `jsonschema::validator_for` surely accepts
//! a schema; [`valid`] whether a value surely meets a schema that
//! [`compiles`]. Both are conservative: `false` means "not sure", and the
//! caller asks the compiled validator, which then gives the same answer and
//! the same messages it always gave. `true` is only ever said of what
//! `jsonschema` (draft 2020-12, its default options) accepts too, so no
//! diagnostic, error or reply changes. Only a subset of the keywords is
//! known (the ones of the engine's tool inputs and of most params):
//! annotations, `type`, `enum`, `const`, `properties`, `required`,
//! `additionalProperties`, `items`, `anyOf`, `allOf`, the bounds of
//! numbers, strings and arrays; any other key (`$ref`, `pattern`,
//! `oneOf`, …) is "not sure".

use serde_json::{Map, Value};

/// The JSON Schema type names (`type:`).
const TYPES: &[&str] = &["string", "number", "integer", "boolean", "array", "object", "null"];

/// The one `$schema` read as the default dialect (2020-12, which
/// `jsonschema` also assumes without one).
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Deeper than this is "not sure" (no stack is spent on a hostile schema).
const MAX_DEPTH: usize = 32;

/// Whether `jsonschema::validator_for(schema)` surely succeeds: `schema` is
/// `true`, `false` or an object written only with the keywords this module
/// knows, each holding what the 2020-12 meta-schema asks of it.
pub fn compiles(schema: &Value) -> bool {
    compiles_at(schema, 0)
}

fn compiles_at(schema: &Value, depth: usize) -> bool {
    let o = match schema {
        Value::Bool(_) => return true,
        Value::Object(o) if depth < MAX_DEPTH => o,
        _ => return false,
    };
    let sub = |s: &Value| compiles_at(s, depth + 1);
    o.iter().all(|(k, v)| match k.as_str() {
        "$schema" => depth == 0 && v.as_str() == Some(DRAFT_2020_12),
        "description" | "title" | "$comment" => v.is_string(),
        "deprecated" | "readOnly" | "writeOnly" => v.is_boolean(),
        "examples" => v.is_array(),
        "default" | "const" => true,
        "type" => type_names(v).is_some(),
        // An empty `enum` is left to the compiler.
        "enum" => v.as_array().is_some_and(|a| !a.is_empty()),
        "properties" => v.as_object().is_some_and(|p| p.values().all(sub)),
        "required" => v.as_array().is_some_and(|a| unique_strings(a)),
        "additionalProperties" | "items" => sub(v),
        "anyOf" | "allOf" => v.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(sub)),
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => v.is_number(),
        "minLength" | "maxLength" | "minItems" | "maxItems" => v.is_u64(),
        _ => false,
    })
}

/// `type:`'s names: one known name, or a non-empty list of distinct ones.
fn type_names(v: &Value) -> Option<Vec<&str>> {
    fn known(v: &Value) -> Option<&str> {
        v.as_str().filter(|s| TYPES.contains(s))
    }
    match v {
        Value::String(_) => Some(vec![known(v)?]),
        Value::Array(a) if !a.is_empty() && unique_strings(a) => a.iter().map(known).collect(),
        _ => None,
    }
}

/// A list of distinct strings.
fn unique_strings(a: &[Value]) -> bool {
    a.iter().enumerate().all(|(i, v)| v.is_string() && !a[..i].contains(v))
}

/// Whether `instance` surely meets `schema`, a schema [`compiles`] said
/// yes of (else "not sure"): every keyword that applies to the value holds.
pub fn valid(schema: &Value, instance: &Value) -> bool {
    valid_at(schema, instance, 0)
}

fn valid_at(schema: &Value, instance: &Value, depth: usize) -> bool {
    let o = match schema {
        Value::Bool(b) => return *b,
        Value::Object(o) if depth < MAX_DEPTH => o,
        _ => return false,
    };
    o.iter().all(|(k, v)| match k.as_str() {
        "$schema" | "description" | "title" | "$comment" | "deprecated" | "readOnly" | "writeOnly"
        | "examples" | "default" => true,
        "type" => type_names(v).is_some_and(|names| names.iter().any(|t| has_type(instance, t))),
        // Equal as serde sees them is equal as JSON Schema does (not the
        // other way round: 1 and 1.0).
        "enum" => v.as_array().is_some_and(|a| a.contains(instance)),
        "const" => v == instance,
        "properties" | "additionalProperties" | "required" => object_valid(o, k, instance, depth),
        "items" => match instance {
            Value::Array(items) => items.iter().all(|i| valid_at(v, i, depth + 1)),
            _ => true,
        },
        "anyOf" => v.as_array().is_some_and(|a| a.iter().any(|s| valid_at(s, instance, depth + 1))),
        "allOf" => v.as_array().is_some_and(|a| a.iter().all(|s| valid_at(s, instance, depth + 1))),
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => bound_holds(k, v, instance),
        "minLength" | "maxLength" => match instance {
            Value::String(s) => length_holds(k == "minLength", v, s.chars().count()),
            _ => true,
        },
        "minItems" | "maxItems" => match instance {
            Value::Array(a) => length_holds(k == "minItems", v, a.len()),
            _ => true,
        },
        _ => false,
    })
}

/// Whether `instance` has JSON Schema type `t` (an integer only when it is
/// written as one: `1.0` is "not sure").
fn has_type(instance: &Value, t: &str) -> bool {
    match (t, instance) {
        ("string", Value::String(_))
        | ("number", Value::Number(_))
        | ("boolean", Value::Bool(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("null", Value::Null) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// `properties`, `additionalProperties` or `required` (key `k` of schema
/// `o`) on an object value; any other value meets them.
fn object_valid(o: &Map<String, Value>, k: &str, instance: &Value, depth: usize) -> bool {
    let Value::Object(fields) = instance else { return true };
    let props = o.get("properties").and_then(Value::as_object);
    match k {
        "properties" => fields
            .iter()
            .all(|(name, v)| props.and_then(|p| p.get(name)).is_none_or(|s| valid_at(s, v, depth + 1))),
        "additionalProperties" => fields
            .iter()
            .filter(|(name, _)| props.is_none_or(|p| !p.contains_key(*name)))
            .all(|(_, v)| o.get(k).is_some_and(|s| valid_at(s, v, depth + 1))),
        _ => o
            .get(k)
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().all(|n| n.as_str().is_some_and(|n| fields.contains_key(n)))),
    }
}

/// A numeric bound, compared only between whole numbers (anything else is
/// "not sure"); a value that is not a number meets it.
fn bound_holds(k: &str, bound: &Value, instance: &Value) -> bool {
    let Value::Number(n) = instance else { return true };
    let (Some(x), Some(b)) = (whole(n), bound.as_number().and_then(whole)) else { return false };
    match k {
        "minimum" => x >= b,
        "maximum" => x <= b,
        "exclusiveMinimum" => x > b,
        _ => x < b,
    }
}

fn whole(n: &serde_json::Number) -> Option<i128> {
    n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
}

/// A length bound (`min` or max) on `len`.
fn length_holds(min: bool, bound: &Value, len: usize) -> bool {
    let Some(b) = bound.as_u64() else { return false };
    let len = len as u64;
    if min { len >= b } else { len <= b }
}

#[cfg(test)]
#[path = "sure_schema_tests.rs"]
mod tests;
