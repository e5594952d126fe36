//! Matching an expected value against an actual one: a *subset* match (every
//! key the expectation gives must match, other keys are ignored; lists match
//! item by item and must have the same length; numbers compare by value), or
//! equality (`=name`). Each difference names its JSON path.

use serde::Serialize;
use serde_json::Value;

/// One difference between what a test expected and what happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    /// The JSON path of the difference, e.g. `captures.notes[0].sentence`.
    pub path: String,
    /// What the test expected there (absent: nothing should be there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// What there was (absent: nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
    /// The difference in words.
    pub message: String,
}

/// A key as a JSON path segment: `.name`, or `["odd key"]`.
pub fn segment(key: &str) -> String {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain { format!(".{key}") } else { format!("[{}]", Value::String(key.to_owned())) }
}

/// True when `actual` contains `expected` (see the module docs).
pub fn contains(expected: &Value, actual: &Value) -> bool {
    let mut out = Vec::new();
    diff(expected, Some(actual), false, "", &mut out);
    out.is_empty()
}

fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        _ => false,
    }
}

/// Every difference between `expected` and `actual` at `path`, in order. With
/// `exact`, objects must have the same keys too.
pub fn diff(expected: &Value, actual: Option<&Value>, exact: bool, path: &str, out: &mut Vec<Mismatch>) {
    let Some(actual) = actual else {
        out.push(Mismatch {
            path: path.to_owned(),
            expected: Some(expected.clone()),
            actual: None,
            message: "missing".into(),
        });
        return;
    };
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                diff(v, a.get(k), exact, &format!("{path}{}", segment(k)), out);
            }
            if exact {
                for (k, v) in a.iter().filter(|(k, _)| !e.contains_key(*k)) {
                    out.push(Mismatch {
                        path: format!("{path}{}", segment(k)),
                        expected: None,
                        actual: Some(v.clone()),
                        message: "not expected".into(),
                    });
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                diff(ev, Some(av), exact, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Array(e), Value::Array(a)) => out.push(Mismatch {
            path: path.to_owned(),
            expected: Some(expected.clone()),
            actual: Some(actual.clone()),
            message: format!("expected {} item(s), got {}", e.len(), a.len()),
        }),
        _ if expected == actual || numbers_equal(expected, actual) => {}
        _ => out.push(Mismatch {
            path: path.to_owned(),
            expected: Some(expected.clone()),
            actual: Some(actual.clone()),
            message: "differs".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(expected: Value, actual: Value, exact: bool) -> Vec<String> {
        let mut out = Vec::new();
        diff(&expected, Some(&actual), exact, "captures.x", &mut out);
        out.into_iter().map(|m| format!("{} {}", m.path, m.message)).collect()
    }

    #[test]
    fn a_subset_matches_and_extra_keys_are_ignored_unless_exact() {
        let actual = json!({"a": 1, "b": {"c": [1, 2], "d": "x"}});
        assert!(paths(json!({"b": {"d": "x"}}), actual.clone(), false).is_empty());
        assert_eq!(
            paths(json!({"b": {"d": "x"}}), actual.clone(), true),
            ["captures.x.b.c not expected", "captures.x.a not expected"]
        );
        assert!(paths(actual.clone(), actual.clone(), true).is_empty());
    }

    #[test]
    fn differences_name_their_paths() {
        let actual = json!({"items": [{"t": "a"}, {"t": "b"}], "n": 1.0});
        assert_eq!(
            paths(json!({"items": [{"t": "a"}, {"t": "c"}], "n": 1}), actual.clone(), false),
            ["captures.x.items[1].t differs"]
        );
        assert_eq!(
            paths(json!({"items": []}), actual.clone(), false),
            ["captures.x.items expected 0 item(s), got 2"]
        );
        assert_eq!(paths(json!({"odd key": 1}), actual, false), ["captures.x[\"odd key\"] missing"]);
        assert!(!contains(&json!("1"), &json!(1)), "a string is not a number");
    }
}
