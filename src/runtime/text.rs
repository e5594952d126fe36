//! JSON values as text, one way for the whole engine: a value inside a
//! string (`stringify`), compact JSON in map order (`to_json_string`), and
//! floats as JSON numbers (`number`). Below both `eval` (which stringifies
//! in `+` and `format`) and `render` (which interpolates).

use serde_json::Value;

/// A number as a JSON value: integral values in `i64` range become integers;
/// NaN and infinities become `null`.
pub fn number(f: f64) -> Value {
    if !f.is_finite() {
        return Value::Null;
    }
    // ±2^63 are exactly representable; `i64::MAX as f64` rounds up to 2^63.
    const I64_RANGE: std::ops::Range<f64> = -9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0;
    if f.fract() == 0.0 && I64_RANGE.contains(&f) {
        return Value::from(f as i64);
    }
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// A value as text inside a string: numbers plainly (integral ones without
/// `.0`), booleans `true`/`false`, strings raw, arrays and objects as compact
/// JSON, `null` as `null`.
pub fn stringify(v: &Value) -> String {
    let mut out = String::new();
    write_text(&mut out, v);
    out
}

pub(crate) fn write_text(out: &mut String, v: &Value) {
    match v {
        Value::String(s) => out.push_str(s),
        other => write_json(out, other),
    }
}

/// Compact JSON in map order, numbers written as [`stringify()`] writes them.
pub fn to_json_string(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v);
    out
}

fn write_json(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                write_json(out, item);
            }
            out.push('}');
        }
    }
}

fn write_number(out: &mut String, n: &serde_json::Number) {
    match n.as_f64() {
        // `2.0` → `2`; other floats keep serde_json's shortest form.
        Some(f) if n.is_f64() => match number(f) {
            Value::Number(m) if !m.is_f64() => out.push_str(&m.to_string()),
            _ => out.push_str(&n.to_string()),
        },
        _ => out.push_str(&n.to_string()),
    }
}
