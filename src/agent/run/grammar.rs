//! Schemas a grammar can enforce. Servers with structured output (llama.cpp
//! and llama-cpp-python, Ollama, vLLM with llguidance or xgrammar) turn the
//! JSON Schema we send into a grammar that constrains each token. Their
//! converters support a subset of JSON Schema, and outside it they fail
//! quietly: llama-cpp-python falls back to "any JSON" on a schema it cannot
//! convert (a member with only a `description`), and expands `maxLength:
//! 4000` into 4,000 nested grammar rules (which crashed its server).
//!
//! [`enforceable`] rewrites any schema (a tool's input schema from an MCP
//! server, a workflow's `model.generate` schema) into that subset, keeping
//! its meaning or narrowing it, never widening what it accepts beyond "any
//! JSON" where the original cannot be expressed:
//!
//! - every member has a `type`, a `const`, an `enum` or an `anyOf`; "any
//!   JSON" (`{}`, `true`, a description-only member) is [`any_json`], the
//!   explicit union of the six JSON types;
//! - `oneOf` becomes `anyOf`, a list of types an `anyOf` of one branch per
//!   type, `allOf` one merged object;
//! - local `$ref`s are inlined, [`MAX_REF_DEPTH`] deep (a recursive schema
//!   becomes a bounded value: deeper, any JSON);
//! - `minLength`/`maxLength`/`minItems`/`maxItems` are kept up to
//!   [`MAX_REPEAT`] and dropped above (the answer's length is bounded by the
//!   request's token limit instead);
//! - `format`, `pattern`, `patternProperties`, `not`, `if`/`then`/`else`,
//!   numeric bounds and annotations are dropped;
//! - an object with properties allows no others (`additionalProperties:
//!   false` unless it gives a schema for them): a model is held to the
//!   properties it was told about.
//!
//! The loop validates every answer itself, so what a grammar cannot say
//! (a pattern, a long bound) is still checked, after the answer.

use serde_json::{Map, Value, json};

/// The largest length or item-count bound kept from a schema; above it the
/// bound is dropped.
pub const MAX_REPEAT: u64 = 32;
/// The largest string bound a schema we send may have: the loop's own
/// bounds on `final`, `reasoning` and arguments ([`bound`](super::bound)),
/// which llama-cpp-python expands into that many nested rules (measured
/// fine at 400; 4,000 crashed its server).
pub const MAX_STRING_CHARS: u64 = 400;
/// How deep `$ref`s are inlined before the value becomes any JSON.
pub const MAX_REF_DEPTH: usize = 3;
/// How deep schemas nest before the value becomes any JSON.
pub const MAX_DEPTH: usize = 12;

/// "Any JSON value" as a grammar converter understands it: a union of the
/// six JSON types (objects and arrays of any values).
pub fn any_json() -> Value {
    json!({"anyOf": [
        {"type": "string"}, {"type": "number"}, {"type": "boolean"},
        {"type": "null"}, {"type": "object"}, {"type": "array"}
    ]})
}

/// `schema` rewritten into the subset every grammar converter handles (see
/// the module docs). Total: any JSON value in, a schema out.
pub fn enforceable(schema: &Value) -> Value {
    let mut out = Cleaner { root: schema }.clean(schema, 0, 0);
    if let (Value::Object(map), Some(title)) = (&mut out, schema.get("title")) {
        map.insert("title".into(), title.clone());
    }
    out
}

/// `schema` (a tool's input schema) with an `anyOf` of required-argument
/// alternatives (`think`: `thought` or `thoughts`) resolved to the first,
/// and every required argument that may be a string or `null` a string: it
/// narrows what the schema accepts, so a grammar cannot pick none of the
/// alternatives or a `null` the tool refuses. Other schemas unchanged.
pub fn first_alternative(schema: &Value) -> Value {
    let mut out = schema.clone();
    let Some(map) = out.as_object_mut() else { return out };
    let alternatives = map.get("anyOf").and_then(Value::as_array).filter(|alts| {
        !alts.is_empty()
            && alts.iter().all(|a| {
                a.as_object().is_some_and(|o| o.len() == 1 && o.get("required").is_some_and(Value::is_array))
            })
    });
    if let Some(first) = alternatives.map(|alts| alts[0]["required"].clone()) {
        map.remove("anyOf");
        let required = map.entry("required").or_insert_with(|| Value::Array(Vec::new()));
        if let (Some(r), Some(add)) = (required.as_array_mut(), first.as_array()) {
            r.extend(add.iter().filter(|n| !r.contains(n)).cloned().collect::<Vec<_>>());
        }
    }
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    if let Some(props) = map.get_mut("properties").and_then(Value::as_object_mut) {
        for name in required {
            let Some(Value::Object(p)) = props.get_mut(&name) else { continue };
            let types = p.get("type").and_then(Value::as_array);
            let string_or_null = types.is_some_and(|t| {
                t.iter().all(|t| t == "string" || t == "null") && t.iter().any(|t| t == "string")
            });
            if string_or_null {
                p.insert("type".into(), Value::String("string".into()));
            }
        }
    }
    out
}

/// Whether `schema` is in the enforceable subset: every schema position
/// says what it accepts (`type`, `const`, `enum` or `anyOf`), with no
/// keyword outside the subset. Returns the JSON pointer of the first
/// member that is not.
pub fn check(schema: &Value) -> Result<(), String> {
    fn walk(v: &Value, at: &str) -> Result<(), String> {
        let Value::Object(map) = v else { return Err(format!("{at}: a schema must be an object")) };
        if !["type", "const", "enum", "anyOf"].iter().any(|k| map.contains_key(*k)) {
            return Err(format!("{at}: no type, const, enum or anyOf"));
        }
        for (key, child) in map {
            let here = format!("{at}/{key}");
            match key.as_str() {
                "type" => match child {
                    Value::String(_) => {}
                    _ => return Err(format!("{here}: one type per member (a list is an anyOf)")),
                },
                "const" | "enum" | "required" | "title" | "description" => {}
                "minLength" | "maxLength" => {
                    if child.as_u64().is_none_or(|n| n > MAX_STRING_CHARS) {
                        return Err(format!(
                            "{here}: string bounds above {MAX_STRING_CHARS} explode a grammar"
                        ));
                    }
                }
                "minItems" | "maxItems" => {
                    if child.as_u64().is_none_or(|n| n > MAX_REPEAT) {
                        return Err(format!("{here}: bounds above {MAX_REPEAT} explode a grammar"));
                    }
                }
                "anyOf" => {
                    let branches = child.as_array().filter(|b| !b.is_empty());
                    let Some(branches) = branches else { return Err(format!("{here}: an empty anyOf")) };
                    for (i, b) in branches.iter().enumerate() {
                        walk(b, &format!("{here}/{i}"))?;
                    }
                }
                "properties" => {
                    for (name, p) in child.as_object().into_iter().flatten() {
                        walk(p, &format!("{here}/{name}"))?;
                    }
                }
                "items" => walk(child, &here)?,
                "additionalProperties" => {
                    if child != &Value::Bool(false) {
                        walk(child, &here)?;
                    }
                }
                other => return Err(format!("{at}: `{other}` is outside the enforceable subset")),
            }
        }
        Ok(())
    }
    walk(schema, "")
}

struct Cleaner<'a> {
    root: &'a Value,
}

impl Cleaner<'_> {
    fn clean(&self, schema: &Value, depth: usize, refs: usize) -> Value {
        let Value::Object(map) = schema else { return any_json() };
        if depth > MAX_DEPTH {
            return any_json();
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            return match self.resolve(reference) {
                Some(target) if refs < MAX_REF_DEPTH => {
                    let mut merged = map.clone();
                    merged.remove("$ref");
                    merge_into(&mut merged, target);
                    self.clean(&Value::Object(merged), depth, refs + 1)
                }
                _ => any_json(),
            };
        }
        if let Some(parts) = map.get("allOf").and_then(Value::as_array) {
            let mut merged = map.clone();
            merged.remove("allOf");
            for part in parts {
                let part = match part.get("$ref").and_then(Value::as_str).and_then(|r| self.resolve(r)) {
                    Some(target) => target,
                    None => part,
                };
                merge_into(&mut merged, part);
            }
            return self.clean(&Value::Object(merged), depth + 1, refs);
        }
        if let Some(branches) = map.get("anyOf").or_else(|| map.get("oneOf")).and_then(Value::as_array) {
            let mut base = map.clone();
            base.remove("anyOf");
            base.remove("oneOf");
            let cleaned: Vec<Value> = branches
                .iter()
                .map(|b| {
                    // What the branch shares with its parent (a type, properties) goes into each branch.
                    let mut merged = base.clone();
                    merge_into(&mut merged, b);
                    self.clean(&Value::Object(merged), depth + 1, refs)
                })
                .collect();
            return union(cleaned);
        }
        if let Some(c) = map.get("const") {
            return json!({"const": c});
        }
        if let Some(e) = map.get("enum").and_then(Value::as_array) {
            return if e.is_empty() { any_json() } else { json!({"enum": e}) };
        }
        match map.get("type") {
            Some(Value::String(t)) => self.typed(t, map, depth, refs),
            Some(Value::Array(types)) => {
                let branches = types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.typed(t, map, depth + 1, refs))
                    .collect();
                union(branches)
            }
            _ if map.contains_key("properties") => self.typed("object", map, depth, refs),
            _ if map.contains_key("items") => self.typed("array", map, depth, refs),
            _ => any_json(),
        }
    }

    /// One member of type `t`, keeping the keywords of `t` in the subset.
    fn typed(&self, t: &str, map: &Map<String, Value>, depth: usize, refs: usize) -> Value {
        let mut out = Map::new();
        out.insert("type".into(), json!(t));
        match t {
            "string" => {
                copy_small(map, &mut out, &["minLength", "maxLength"]);
            }
            "array" => {
                if let Some(items) = map.get("items").filter(|i| i.is_object()) {
                    out.insert("items".into(), self.clean(items, depth + 1, refs));
                }
                copy_small(map, &mut out, &["minItems", "maxItems"]);
            }
            "object" => self.object(map, &mut out, depth, refs),
            "integer" | "number" | "boolean" | "null" => {}
            _ => return any_json(),
        }
        Value::Object(out)
    }

    fn object(&self, map: &Map<String, Value>, out: &mut Map<String, Value>, depth: usize, refs: usize) {
        let properties = map.get("properties").and_then(Value::as_object);
        let mut props = Map::new();
        for (name, p) in properties.into_iter().flatten() {
            props.insert(name.clone(), self.clean(p, depth + 1, refs));
        }
        let required: Vec<Value> = map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|name| {
                // A required property the schema does not describe may be any JSON.
                if !props.contains_key(name) {
                    props.insert(name.to_owned(), any_json());
                }
                json!(name)
            })
            .collect();
        let extra = map.get("additionalProperties").filter(|a| a.is_object());
        if props.is_empty() && extra.is_none() {
            // A free-form object: the converters' own "any object".
            if map.get("additionalProperties") == Some(&Value::Bool(false)) {
                out.insert("properties".into(), json!({}));
                out.insert("additionalProperties".into(), json!(false));
            }
            return;
        }
        out.insert("properties".into(), Value::Object(props));
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
        let additional = match extra {
            Some(schema) => self.clean(schema, depth + 1, refs),
            None => json!(false),
        };
        out.insert("additionalProperties".into(), additional);
    }

    /// The schema at a local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`).
    fn resolve(&self, reference: &str) -> Option<&Value> {
        let pointer = reference.strip_prefix('#')?;
        let pointer = pointer.replace("~1", "/").replace("~0", "~");
        self.root.pointer(&pointer).filter(|v| v.is_object() || v.is_boolean())
    }
}

/// `{anyOf: branches}`, or the one branch; duplicate branches once.
fn union(mut branches: Vec<Value>) -> Value {
    let mut seen = Vec::new();
    branches.retain(|b| {
        if seen.contains(b) {
            return false;
        }
        seen.push(b.clone());
        true
    });
    match branches.len() {
        0 => any_json(),
        1 => branches.pop().unwrap_or_else(any_json),
        _ => json!({"anyOf": branches}),
    }
}

/// Copies the bounds in `keys` that are at most [`MAX_REPEAT`].
fn copy_small(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(n) = from.get(*key).and_then(Value::as_u64).filter(|n| *n <= MAX_REPEAT) {
            to.insert((*key).into(), json!(n));
        }
    }
}

/// Merges `part` into `base` as `allOf` does for objects: properties and
/// `required` are united, other keywords of `part` win.
fn merge_into(base: &mut Map<String, Value>, part: &Value) {
    let Value::Object(part) = part else { return };
    for (key, value) in part {
        match (key.as_str(), base.get_mut(key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (k, v) in theirs {
                    mine.insert(k.clone(), v.clone());
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for v in theirs {
                    if !mine.contains(v) {
                        mine.push(v.clone());
                    }
                }
            }
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
#[path = "grammar_tests.rs"]
mod tests;
