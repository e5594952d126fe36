//! JSON values built at their exact size: the one parse of a large value a
//! client sends (a result, a response, params).
//!
//! `serde_json`'s own `Value` deserializer grows each object from empty: an
//! object of one key holds room for three (entries of 64 bytes each plus a
//! hash index), and an array doubles as it grows. For a result of many
//! small objects (`[{"k":"b"}, …]`, 10 bytes each) that is about 370 bytes
//! an object, 37× the text. Here each object is read into a scratch list
//! first and built with exactly its length, and each array is trimmed to
//! its length: about 240 bytes for the same object, and the trimmed arrays
//! give their slack back. The same shape also comes out of
//! [`deserialize_option`] when the source is an already parsed value
//! (`serde_json::from_value`), so moving arguments into a typed struct does
//! not expand them again.

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Parses `bytes` as one JSON value (serde_json's grammar and errors), or
/// refuses it, unbuilt, when it would cost more than its bound
/// ([`check_cost`]).
pub fn from_slice(bytes: &[u8]) -> Result<Value, Refused> {
    check_cost(bytes, Layout::Exact).map_err(Refused::TooDense)?;
    parse(bytes).map_err(Refused::Json)
}

/// Why [`from_slice`] gave no value.
#[derive(Debug)]
pub enum Refused {
    /// Not JSON.
    Json(serde_json::Error),
    /// JSON whose parse would cost more than its bound.
    TooDense(TooDense),
}

fn parse(bytes: &[u8]) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Lean.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// For `#[serde(deserialize_with)]` on an `Option<Value>` field: the value
/// built at its exact size, from any deserializer.
pub fn deserialize_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    d.deserialize_option(LeanOption)
}

struct LeanOption;

impl<'de> Visitor<'de> for LeanOption {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<Value>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<Value>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<Value>, D::Error> {
        Lean.deserialize(d).map(Some)
    }
}

/// The seed that builds one value at its exact size.
#[derive(Clone, Copy)]
struct Lean;

impl<'de> DeserializeSeed<'de> for Lean {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Lean {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        // Room for one first (many arrays hold one value), then doubling,
        // then trimmed: a shrunk block leaves a hole behind it.
        let Some(first) = seq.next_element_seed(self)? else { return Ok(Value::Array(Vec::new())) };
        let mut items = Vec::with_capacity(1);
        items.push(first);
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: Vec<(String, Value)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            entries.push((key, value));
        }
        let mut object = Map::with_capacity(entries.len());
        object.extend(entries);
        Ok(Value::Object(object))
    }
}

/// How a parse lays a value out in memory, for [`check_cost`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// [`from_slice`]: every object and array at its exact length.
    Exact,
    /// rmcp's parse of an MCP message: first into serde's buffered
    /// `Content` (an untagged enum), then into a `Value` grown from empty
    /// (objects with room for three members or more, arrays up to twice
    /// their length); both trees are alive at the peak.
    Grown,
}

/// A parse's memory may reach this many bytes per byte of text, plus
/// [`COST_SLACK`]: past it, a value is refused before it is built.
pub const COST_PER_BYTE: u64 = 29;
/// The constant part of the bound: 48 MiB.
pub const COST_SLACK: u64 = 48 << 20;

/// A JSON text whose parse would cost more than the bound.
#[derive(Debug)]
pub struct TooDense {
    /// The estimated bytes of the parsed value.
    pub cost: u64,
    /// `COST_PER_BYTE` × the text's length + `COST_SLACK`.
    pub limit: u64,
}

impl fmt::Display for TooDense {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "it would take about {} MB in memory once parsed, over the {} MB allowed for its size \
             ({COST_PER_BYTE}× its bytes + 48 MB): send the same data in fewer, larger values \
             (strings, or rows as arrays of strings)",
            self.cost >> 20,
            self.limit >> 20
        )
    }
}

/// `Err` when the value in `bytes` would cost more than
/// [`COST_PER_BYTE`] × its length + [`COST_SLACK`] once parsed with
/// `layout`. Reads the text once and builds nothing; invalid JSON passes
/// (the parse that follows says why, as it always has).
pub fn check_cost(bytes: &[u8], layout: Layout) -> Result<(), TooDense> {
    let limit = COST_PER_BYTE.saturating_mul(bytes.len() as u64).saturating_add(COST_SLACK);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    match (Cost { layout }).deserialize(&mut de) {
        Ok(cost) if cost > limit => Err(TooDense { cost, limit }),
        _ => Ok(()),
    }
}

/// A heap block of `n` bytes as glibc's malloc hands it out: 8 bytes of
/// header, 16-byte steps, 32 bytes at least; nothing for `n` = 0.
fn block(n: u64) -> u64 {
    if n == 0 { 0 } else { ((n + 8 + 15) & !15).max(32) }
}

/// The size of one `Value` (an object's map is inline: 72 bytes).
const VALUE: u64 = std::mem::size_of::<Value>() as u64;
/// What the allocator loses around each non-empty array or object beyond
/// its blocks (measured: a dense nest of one-value arrays costs this much
/// more than its blocks).
const SPARE: u64 = 16;
/// One value of serde's `Content` buffer (strings borrowed from the text).
const CONTENT: u64 = 32;
/// One object member: its hash, its key `String` and its `Value`.
const MEMBER: u64 = 8 + 24 + VALUE;

/// The bytes a map of `n` members holds beyond its `Value`: the entries
/// and the hash index (8 bytes a bucket, a control byte each and 16).
fn map_cost(n: u64, layout: Layout) -> u64 {
    if n == 0 {
        return 0;
    }
    let room = if layout == Layout::Grown { n.max(3) } else { n };
    let buckets = if n < 4 { 4 } else { (n * 8 / 7).next_power_of_two() };
    block(room * MEMBER) + block(buckets * 9 + 16)
}

/// The heap bytes of the value read, beyond its own `Value` slot.
#[derive(Clone, Copy)]
struct Cost {
    layout: Layout,
}

impl<'de> DeserializeSeed<'de> for Cost {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Cost {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_i64<E>(self, _: i64) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_u64<E>(self, _: u64) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_f64<E>(self, _: f64) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_unit<E>(self) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_str<E>(self, v: &str) -> Result<u64, E> {
        Ok(block(v.len() as u64))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        let (mut n, mut inner) = (0u64, 0u64);
        while let Some(cost) = seq.next_element_seed(self)? {
            n += 1;
            inner = inner.saturating_add(cost);
        }
        let own = match self.layout {
            Layout::Exact => block(n * VALUE),
            Layout::Grown => {
                let room = n.next_power_of_two().max(4);
                block(room * VALUE) + block(room * CONTENT) + CONTENT
            }
        };
        Ok(inner.saturating_add(own).saturating_add(SPARE * n.min(1)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let (mut n, mut inner) = (0u64, 0u64);
        while let Some(key) = map.next_key_seed(self)? {
            let value = map.next_value_seed(self)?;
            n += 1;
            inner = inner.saturating_add(key).saturating_add(value);
        }
        let content = match self.layout {
            Layout::Exact => 0,
            Layout::Grown => block(n.next_power_of_two().max(4) * 2 * CONTENT) + CONTENT,
        };
        Ok(inner.saturating_add(map_cost(n, self.layout) + content).saturating_add(SPARE * n.min(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lean_parse_reads_what_serde_json_reads() {
        let text =
            r#"{"a":[1,-2,3.5,"x",null,true,{}],"b":{"c":{"d":[]}},"a2":"é\n","z":18446744073709551615}"#;
        let lean = from_slice(text.as_bytes()).ok();
        assert_eq!(lean.as_ref(), serde_json::from_str::<Value>(text).ok().as_ref());
        let Some(Value::Object(map)) = lean else { panic!("an object") };
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "b", "a2", "z"], "key order kept");
        for bad in ["", "[1,", "{\"a\":1} x", "{1:2}", "[1e400]"] {
            let (ours, theirs) = (parse(bad.as_bytes()), serde_json::from_str::<Value>(bad));
            assert_eq!(ours.is_err(), theirs.is_err(), "{bad}: {ours:?} / {theirs:?}");
        }
    }

    #[test]
    fn an_option_field_is_built_lean_from_a_parsed_value_too() {
        #[derive(serde::Deserialize)]
        struct Args {
            #[serde(default, deserialize_with = "deserialize_option")]
            result: Option<Value>,
        }
        let args: Args = serde_json::from_value(serde_json::json!({"result": [{"k": "b"}]})).unwrap();
        assert_eq!(args.result, Some(serde_json::json!([{"k": "b"}])));
        let args: Args = serde_json::from_value(serde_json::json!({"result": null})).unwrap();
        assert_eq!(args.result, None);
        let args: Args = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(args.result, None);
    }
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    fn cost(text: &str, layout: Layout) -> u64 {
        (Cost { layout }).deserialize(&mut serde_json::Deserializer::from_str(text)).unwrap()
    }

    #[test]
    fn the_cost_follows_values_not_bytes() {
        assert_eq!(cost("0", Layout::Exact), 0);
        assert_eq!(cost(r#""a""#, Layout::Exact), 32);
        assert_eq!(cost("[0,0]", Layout::Exact), block(2 * VALUE) + SPARE);
        assert!(cost("[0,0]", Layout::Grown) > cost("[0,0]", Layout::Exact));
        let one = cost(r#"{"k":"b"}"#, Layout::Exact);
        assert_eq!(one, 64 + map_cost(1, Layout::Exact) + SPARE);
        assert!(cost(r#"{"k":"b"}"#, Layout::Grown) > one);
        // An 8 MB array of zeros costs 40× its text: refused. The same
        // bytes as one string cost their length: accepted.
        let zeros = format!("[{}0]", "0,".repeat(4_000_000));
        let e = check_cost(zeros.as_bytes(), Layout::Exact).unwrap_err();
        assert!(e.cost > e.limit && e.to_string().contains("fewer, larger values"), "{e}");
        assert!(matches!(from_slice(zeros.as_bytes()), Err(Refused::TooDense(_))));
        let text = format!("\"{}\"", "0,".repeat(4_000_000));
        assert!(check_cost(text.as_bytes(), Layout::Exact).is_ok());
        assert!(check_cost(b"[1,", Layout::Exact).is_ok(), "invalid JSON is for the parse to name");
    }
}
