//! A minimal instance of a JSON Schema: what `exec --dry-run` answers for an
//! external call. Required properties only, the first `enum` value or the
//! `const`, `minItems` items, `minLength` characters, the smallest number in
//! range, the first branch of `anyOf` / `oneOf`, `allOf` branches merged,
//! local `$ref`s (`#/…`) followed. No schema (or `true`) gives `{}`.
//!
//! Not attempted: `pattern`, `not`, `if`/`then`, `uniqueItems`,
//! `dependentRequired`; a schema built on them may reject the sample, and the
//! step then fails validation like any other wrong result.

use serde_json::{Map, Value, json};

/// Deeper than this, `$ref` cycles and nesting stop with `null`.
const MAX_DEPTH: usize = 32;

/// A minimal value valid against `schema` (as far as the rules above go).
pub fn sample(schema: &Value) -> Value {
    Sampler { root: schema, exercise: false }.value(schema, 0)
}

/// A value valid against `schema` that exercises what reads it: as
/// [`sample`], but a list has at least one item (unless `maxItems` is 0)
/// and an object has its optional properties too, so a `foreach` over it
/// runs an item and a template reading an optional field finds one.
pub fn exercise(schema: &Value) -> Value {
    Sampler { root: schema, exercise: true }.value(schema, 0)
}

struct Sampler<'a> {
    root: &'a Value,
    /// Lists with an item and optional properties filled ([`exercise`]).
    exercise: bool,
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

impl Sampler<'_> {
    fn value(&self, schema: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        let Value::Object(s) = schema else {
            // `true`, or anything that is not a schema object.
            return json!({});
        };
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let target = r.strip_prefix('#').and_then(|p| self.root.pointer(p));
            return target.map_or(json!({}), |t| self.value(t, depth + 1));
        }
        if let Some(c) = s.get("const") {
            return c.clone();
        }
        if let Some(first) = s.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
            return first.clone();
        }
        if let Some(all) = s.get("allOf").and_then(Value::as_array) {
            let mut merged = Map::new();
            for branch in all {
                match self.value(branch, depth + 1) {
                    Value::Object(m) => merged.extend(m),
                    other if all.len() == 1 => return other,
                    _ => {}
                }
            }
            let own = self.typed(s, depth);
            if let Value::Object(m) = own {
                merged.extend(m);
            }
            return Value::Object(merged);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(first) = s.get(key).and_then(Value::as_array).and_then(|b| b.first()) {
                return self.value(first, depth + 1);
            }
        }
        self.typed(s, depth)
    }

    fn typed(&self, s: &Map<String, Value>, depth: usize) -> Value {
        let ty = match s.get("type") {
            Some(Value::String(t)) => t.as_str(),
            // A list of types: the first one.
            Some(Value::Array(ts)) => ts.first().and_then(Value::as_str).unwrap_or("object"),
            _ if s.contains_key("properties") || s.contains_key("required") => "object",
            _ if s.contains_key("items") || s.contains_key("prefixItems") => "array",
            _ => return json!({}),
        };
        match ty {
            "object" => {
                let props = s.get("properties").and_then(Value::as_object);
                let mut out = Map::new();
                let required = s.get("required").and_then(Value::as_array).into_iter().flatten();
                let optional = props.filter(|_| self.exercise).into_iter().flat_map(|p| p.keys());
                let names: Vec<&str> =
                    required.filter_map(Value::as_str).chain(optional.map(String::as_str)).collect();
                for name in names {
                    if out.contains_key(name) {
                        continue;
                    }
                    let v = match props.and_then(|p| p.get(name)) {
                        Some(p) => self.value(p, depth + 1),
                        None => Value::Null,
                    };
                    out.insert(name.to_owned(), v);
                }
                Value::Object(out)
            }
            "array" => {
                let mut min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
                if self.exercise && s.get("maxItems").and_then(Value::as_u64) != Some(0) {
                    min = min.max(1);
                }
                let prefix = s.get("prefixItems").and_then(Value::as_array);
                let items = s.get("items");
                let mut out = Vec::new();
                for i in 0..min.min(1000) {
                    let item_schema = prefix.and_then(|p| p.get(i)).or(items);
                    out.push(item_schema.map_or(json!({}), |sc| self.value(sc, depth + 1)));
                }
                Value::Array(out)
            }
            "string" => string(s),
            "integer" | "number" => number(s, ty == "integer"),
            "boolean" => json!(false),
            "null" => Value::Null,
            _ => json!({}),
        }
    }
}

/// A string the schema accepts: a sample of its `format`, else `minLength` × `x`.
fn string(s: &Map<String, Value>) -> Value {
    if let Some(f) = s.get("format").and_then(Value::as_str) {
        let v = match f {
            "date-time" => Some("1970-01-01T00:00:00Z"),
            "date" => Some("1970-01-01"),
            "time" => Some("00:00:00Z"),
            "email" => Some("dry-run@example.com"),
            "uri" | "url" | "iri" => Some("https://example.com/"),
            "uuid" => Some("00000000-0000-0000-0000-000000000000"),
            "ipv4" => Some("127.0.0.1"),
            "ipv6" => Some("::1"),
            "hostname" => Some("example.com"),
            _ => None,
        };
        if let Some(v) = v {
            return json!(v);
        }
    }
    let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    json!("x".repeat(min.min(10_000)))
}

/// The least number (an integer when `integer`) the schema's bounds and
/// `multipleOf` accept, from 0.
fn number(s: &Map<String, Value>, integer: bool) -> Value {
    let mut v = 0.0_f64;
    if let Some(m) = num(s.get("minimum")) {
        v = v.max(m);
    }
    if let Some(m) = num(s.get("exclusiveMinimum")) {
        v = v.max(if integer { m.floor() + 1.0 } else { m + 1.0 });
    }
    if let Some(m) = num(s.get("maximum"))
        && v > m
    {
        v = m;
    }
    if let Some(m) = num(s.get("exclusiveMaximum"))
        && v >= m
    {
        v = if integer { m.ceil() - 1.0 } else { m - 1.0 };
    }
    if let Some(k) = num(s.get("multipleOf"))
        && k > 0.0
    {
        v = (v / k).ceil() * k;
    }
    if integer {
        json!(v.ceil() as i64)
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(schema: &Value) -> Value {
        let v = sample(schema);
        let validator = jsonschema::validator_for(schema).unwrap();
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{v} is not valid against {schema}: {errors:?}");
        v
    }

    #[test]
    fn samples_are_minimal_and_valid() {
        assert_eq!(sample(&Value::Null), json!({}));
        assert_eq!(valid(&json!(true)), json!({}));
        let mr = valid(&json!({
            "type": "object", "required": ["iid", "title", "changes", "state", "tags", "score"],
            "properties": {
                "iid": {"type": "integer", "minimum": 1},
                "title": {"type": "string", "minLength": 3},
                "changes": {"type": "array", "minItems": 2, "items": {"type": "object", "required": ["path"],
                            "properties": {"path": {"type": ["string", "null"]}}}},
                "state": {"enum": ["merged", "open"]},
                "tags": {"type": "array"},
                "score": {"type": "number", "exclusiveMinimum": 0.5, "maximum": 10},
                "optional": {"type": "string"}
            }
        }));
        assert_eq!(
            mr,
            json!({"iid": 1, "title": "xxx", "changes": [{"path": ""}, {"path": ""}], "state": "merged", "tags": [], "score": 1.5})
        );
    }

    #[test]
    fn refs_branches_and_formats() {
        let v = valid(&json!({
            "$defs": {"item": {"type": "object", "required": ["at"], "properties": {"at": {"type": "string", "format": "date-time"}}}},
            "type": "object", "required": ["a", "b", "c", "d"],
            "properties": {
                "a": {"$ref": "#/$defs/item"},
                "b": {"anyOf": [{"type": "integer", "multipleOf": 7, "minimum": 1}, {"type": "string"}]},
                "c": {"allOf": [{"type": "object", "required": ["x"], "properties": {"x": {"const": 1}}},
                                {"type": "object", "required": ["y"], "properties": {"y": {"type": "boolean"}}}]},
                "d": {"type": "null"}
            }
        }));
        assert_eq!(v["a"]["at"], "1970-01-01T00:00:00Z");
        assert_eq!(v["b"], 7);
        assert_eq!(v["c"], json!({"x": 1, "y": false}));
    }

    #[test]
    fn a_ref_cycle_ends() {
        let schema = json!({"$defs": {"n": {"type": "object", "required": ["next"], "properties": {"next": {"$ref": "#/$defs/n"}}}},
                            "$ref": "#/$defs/n"});
        let v = sample(&schema);
        assert!(v.is_object());
    }
}
