//! An answer under an enforced schema is never cut off: the step schema's
//! strings and arrays are bounded ([`bounded`]: every string gets a
//! `maxLength`, every array a `maxItems`), and the request's token limit is
//! at least the longest answer the schema admits ([`longest`]), so a server
//! that enforces the schema stops the answer at its closing brace, never at
//! the limit. A free-form value (an object that describes no properties,
//! "any JSON": `think_next`'s `result`, `think_plan`'s `params`) is kept
//! free — narrowing it would make the tool useless — and makes the schema
//! unbounded: a step offering such a tool is bounded by `--answer-tokens`
//! alone, as before.
//!
//! [`longest`] counts bytes as the grammar converters write JSON (one
//! optional space after each value and punctuation, as llama.cpp and
//! llama-cpp-python do), a string's character as up to
//! [`BYTES_PER_CHAR`] bytes (a `\uXXXX` escape), a number as up to
//! [`NUMBER_BYTES`] (the converters allow 16 digits per part). A token is
//! at least one byte, so bytes bound tokens.

use serde_json::{Map, Value, json};

/// The most bytes one string character takes in JSON (`\u00e9`).
pub const BYTES_PER_CHAR: usize = 6;
/// The longest number a grammar admits: `-` 16 digits `.` 16 digits `e-` 16 digits, a space.
pub const NUMBER_BYTES: usize = 53;
/// The longest integer: `-` and 16 digits, a space.
pub const INTEGER_BYTES: usize = 18;
/// The item bound given to an array (or a lower one kept).
pub const ARRAY_ITEMS: u64 = 4;

/// The string bounds of a step schema, in characters (0: no bound).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// `final` of a finish (the answer).
    pub final_chars: u64,
    /// `reasoning` and `final` of an error.
    pub reasoning_chars: u64,
    /// Every string in a tool's arguments without a smaller bound.
    pub arg_chars: u64,
}

/// The bounds a step starts from: room for a paragraph of an answer.
pub const DEFAULT_CAPS: Caps = Caps { final_chars: 320, reasoning_chars: 160, arg_chars: 120 };
/// No bounds at all (0 is none): a step offering so many tools that even
/// the smallest bounds make too large a grammar.
pub const UNBOUNDED: Caps = Caps { final_chars: 0, reasoning_chars: 0, arg_chars: 0 };
/// The smallest bounds [`Caps::halved`] goes to.
const MIN_CHARS: u64 = 16;

impl Caps {
    /// Every bound halved (not below 16 characters; 0 stays 0); `None` when
    /// no bound moves.
    pub fn halved(self) -> Option<Caps> {
        let h = |n: u64| if n == 0 { 0 } else { (n / 2).max(MIN_CHARS) };
        let next = Caps {
            final_chars: h(self.final_chars),
            reasoning_chars: h(self.reasoning_chars),
            arg_chars: h(self.arg_chars),
        };
        (next != self).then_some(next)
    }
}

/// The most [`weight`] a step schema may have: a grammar converter writes
/// a string bound of n as n nested rules (about 8 bytes each) in a rule of
/// its own (about 40 bytes more), and a grammar over 64 KiB is too much.
pub const MAX_WEIGHT: u64 = 6_000;

/// The grammar weight of `schema`'s bounded strings: each one's `maxLength`
/// plus 40.
pub fn weight(schema: &Value) -> u64 {
    match schema {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| if k == "maxLength" { v.as_u64().map_or(0, |n| n + 40) } else { weight(v) })
            .sum(),
        Value::Array(items) => items.iter().map(weight).sum(),
        _ => 0,
    }
}

/// The longest JSON text (bytes) an [enforceable](super::grammar::enforceable)
/// `schema` admits, or `None` when it admits answers of any length.
pub fn longest(schema: &Value) -> Option<usize> {
    let Value::Object(map) = schema else { return None };
    if let Some(branches) = map.get("anyOf").and_then(Value::as_array) {
        return branches.iter().map(longest).try_fold(0, |m, b| Some(m.max(b?)));
    }
    if let Some(c) = map.get("const") {
        return Some(c.to_string().len() + 1);
    }
    if let Some(e) = map.get("enum").and_then(Value::as_array) {
        return e.iter().map(|v| v.to_string().len() + 1).max();
    }
    match map.get("type").and_then(Value::as_str)? {
        "string" => Some(3 + BYTES_PER_CHAR * usize::try_from(map.get("maxLength")?.as_u64()?).ok()?),
        "integer" => Some(INTEGER_BYTES),
        "number" => Some(NUMBER_BYTES),
        "boolean" => Some(6),
        "null" => Some(5),
        "array" => {
            let n = usize::try_from(map.get("maxItems")?.as_u64()?).ok()?;
            Some(4 + n * (longest(map.get("items")?)? + 2))
        }
        "object" => {
            if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                return None;
            }
            let props = map.get("properties")?.as_object()?;
            props.iter().try_fold(4, |sum, (k, v)| Some(sum + k.len() + 8 + longest(v)?))
        }
        _ => None,
    }
}

/// `schema` (enforceable) with its strings and arrays bounded: a string
/// without `maxLength` gets `max_chars` (a larger bound is lowered to it, a
/// `minLength` above it too), an array without `maxItems` gets
/// [`ARRAY_ITEMS`]. Free-form values stay free (see the module docs). It
/// narrows what the schema accepts, never widens it.
pub fn bounded(schema: &Value, max_chars: u64) -> Value {
    let Value::Object(map) = schema else { return schema.clone() };
    let mut out: Map<String, Value> = map.clone();
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        out.insert("anyOf".into(), Value::Array(branches.iter().map(|b| bounded(b, max_chars)).collect()));
        return Value::Object(out);
    }
    let lower = |out: &mut Map<String, Value>, min: &str, max: &str, bound: u64| {
        let m = map.get(max).and_then(Value::as_u64).map_or(bound, |m| m.min(bound));
        out.insert(max.into(), json!(m));
        if map.get(min).and_then(Value::as_u64).is_some_and(|n| n > m) {
            out.insert(min.into(), json!(m));
        }
    };
    match map.get("type").and_then(Value::as_str) {
        Some("string") => lower(&mut out, "minLength", "maxLength", max_chars),
        Some("array") => {
            lower(&mut out, "minItems", "maxItems", ARRAY_ITEMS);
            if let Some(items) = map.get("items") {
                out.insert("items".into(), bounded(items, max_chars));
            }
        }
        Some("object") => {
            for key in ["properties", "additionalProperties"] {
                if let Some(Value::Object(props)) = map.get(key) {
                    let b = if key == "properties" {
                        Value::Object(props.iter().map(|(k, v)| (k.clone(), bounded(v, max_chars))).collect())
                    } else {
                        bounded(&Value::Object(props.clone()), max_chars)
                    };
                    out.insert(key.into(), b);
                }
            }
        }
        _ => {}
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_counts_the_worst_case_bytes() {
        assert_eq!(longest(&json!({"type": "string", "maxLength": 10})), Some(63));
        assert_eq!(longest(&json!({"type": "string"})), None, "an unbounded string");
        assert_eq!(longest(&json!({"const": "tool"})), Some(7));
        assert_eq!(longest(&json!({"enum": ["a", "long one"]})), Some(11));
        let obj = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": false});
        assert_eq!(longest(&obj), Some(4 + 1 + 8 + INTEGER_BYTES));
        assert_eq!(longest(&json!({"type": "object"})), None, "a free-form object");
        assert_eq!(longest(&json!({"type": "array", "items": {"type": "null"}})), None);
        assert_eq!(
            longest(&json!({"type": "array", "items": {"type": "null"}, "maxItems": 2})),
            Some(4 + 2 * 7)
        );
        let any = json!({"anyOf": [{"type": "boolean"}, {"type": "string", "maxLength": 1}]});
        assert_eq!(longest(&any), Some(9));
    }

    #[test]
    fn bounded_makes_a_described_schema_finite_and_only_narrows() {
        let wide =
            super::super::grammar::enforceable(&json!({"type": "object", "required": ["q"], "properties": {
            "q": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string", "maxLength": 30}},
            "n": {"type": "integer"}}}));
        assert_eq!(longest(&wide), None);
        let b = bounded(&wide, 20);
        let n = longest(&b).expect("finite");
        assert!(n > 3 + 20 * BYTES_PER_CHAR, "{n}");
        let v = jsonschema::validator_for(&b).unwrap();
        let w = jsonschema::validator_for(&wide).unwrap();
        for ok in [json!({"q": "short"}), json!({"q": "x", "tags": ["a", "b"], "n": 3})] {
            assert!(v.is_valid(&ok) && w.is_valid(&ok), "{ok}");
        }
        for narrowed in [json!({"q": "y".repeat(21)}), json!({"q": "x", "tags": ["1", "2", "3", "4", "5"]})] {
            assert!(!v.is_valid(&narrowed) && w.is_valid(&narrowed), "{narrowed}");
        }
        // Its longest valid answer is within the count.
        let tags = vec!["\u{1}".repeat(20); 4];
        let long = json!({"q": "\u{1}".repeat(20), "tags": tags, "n": -1234567890123456_i64});
        assert!(v.is_valid(&long));
        assert!(long.to_string().len() <= n, "{} > {n}", long.to_string().len());
        // A free-form value stays free: the schema stays unbounded.
        let free = bounded(
            &super::super::grammar::enforceable(&json!({"type": "object", "properties": {
            "result": {}}})),
            20,
        );
        assert_eq!(longest(&free), None);
        assert!(
            jsonschema::validator_for(&free).unwrap().is_valid(&json!({"result": {"any": [1, {"x": "y"}]}}))
        );
    }

    #[test]
    fn caps_halve_down_to_a_floor() {
        let c = DEFAULT_CAPS.halved().unwrap();
        assert_eq!(c, Caps { final_chars: 160, reasoning_chars: 80, arg_chars: 60 });
        let mut c = DEFAULT_CAPS;
        while let Some(next) = c.halved() {
            c = next;
        }
        assert_eq!(c, Caps { final_chars: 16, reasoning_chars: 16, arg_chars: 16 });
        let unbounded_args = Caps { arg_chars: 0, ..c };
        assert_eq!(unbounded_args.halved(), None);
    }
}
