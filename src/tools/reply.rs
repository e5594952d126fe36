//! A tool's reply made JSON ([`Reply`]): as a `serde_json::Value`, as its
//! compact text, or both ([`Made`]), and the two fields of it the MCP
//! adapter reads after the call (the run it named, [`Ids`]) from whichever
//! it has, without making the other.

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// What a call's typed reply is made into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Made {
    /// A `Value` only (the CLI, the executor, the inspector).
    Value,
    /// Compact text only: the stdio transport writes the text in the
    /// value's place, so nothing reads a value.
    Text,
    /// Both, the text written from the typed reply rather than from the
    /// value (an MCP result over HTTP carries both).
    Both,
}

/// A tool's reply made JSON: the value and its compact text, each when
/// asked for ([`Made`]); at least one is there.
#[derive(Debug)]
pub struct Reply {
    /// The reply as JSON.
    pub value: Option<Value>,
    /// `value.to_string()`.
    pub text: Option<String>,
}

/// The `workflow` and `run_id` strings at the top of a reply.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Ids {
    /// The reply's `workflow`.
    pub workflow: Option<String>,
    /// The reply's `run_id`.
    pub run_id: Option<String>,
}

impl Reply {
    /// The reply as a value: the one made, or else read back from its text.
    pub fn into_value(self) -> Value {
        match (self.value, self.text) {
            (Some(value), _) => value,
            (None, Some(text)) => serde_json::from_str(&text).unwrap_or(Value::Null),
            (None, None) => Value::Null,
        }
    }

    /// The reply's top-level `workflow` and `run_id` (each `None` when
    /// absent or not a string): from the value when there is one, else
    /// from the text, read only as far as both were seen (a run's progress
    /// starts with them).
    pub fn ids(&self) -> Ids {
        match (&self.value, &self.text) {
            (Some(value), _) => {
                let field = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned);
                Ids { workflow: field("workflow"), run_id: field("run_id") }
            }
            (None, Some(text)) => ids_of_text(text),
            (None, None) => Ids::default(),
        }
    }
}

/// [`Reply::ids`] from the compact text of an object.
fn ids_of_text(text: &str) -> Ids {
    let mut ids = Ids::default();
    let mut de = serde_json::Deserializer::from_str(text);
    // Stopping once both are seen leaves the object unfinished, which
    // serde_json reports after the visitor returned: what it read stands.
    // Text that is not an object yields no ids, as `Value::get` does.
    let _ = de::Deserializer::deserialize_map(&mut de, Seek(&mut ids));
    ids
}

/// The top-level keys [`Seek`] looks for.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Key {
    Workflow,
    RunId,
    #[serde(other)]
    Other,
}

/// A string, or any other value (skipped).
#[derive(Deserialize)]
#[serde(untagged)]
enum MaybeStr {
    Str(String),
    Other(IgnoredAny),
}

impl MaybeStr {
    fn string(self) -> Option<String> {
        match self {
            MaybeStr::Str(s) => Some(s),
            MaybeStr::Other(_) => None,
        }
    }
}

/// Reads an object's entries until `workflow` and `run_id` were both seen.
struct Seek<'a>(&'a mut Ids);

impl<'de> Visitor<'de> for Seek<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a tool's reply object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Workflow => self.0.workflow = map.next_value::<MaybeStr>()?.string(),
                Key::RunId => self.0.run_id = map.next_value::<MaybeStr>()?.string(),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            if self.0.workflow.is_some() && self.0.run_id.is_some() {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn both_ways(value: Value) -> (Ids, Ids) {
        let text = value.to_string();
        let from_value = Reply { value: Some(value), text: None }.ids();
        (from_value, Reply { value: None, text: Some(text) }.ids())
    }

    #[test]
    fn the_ids_read_from_the_text_are_the_values() {
        let cases = [
            json!({"run_id": "r1", "workflow": "w", "instruction": {"workflow": "x", "run_id": "y"}}),
            json!({"instruction": {"workflow": "x", "run_id": "y"}, "done": false, "workflow": "w\"é\\", "run_id": "r"}),
            json!({"workflow": "w", "steps": [1, {"run_id": "no"}]}),
            json!({"workflow": 3, "run_id": {"a": "b"}, "x": null}),
            json!({"runs": [], "total": 0}),
            json!(["workflow", "run_id"]),
            json!(null),
            json!("workflow"),
        ];
        for value in cases {
            let (from_value, from_text) = both_ways(value.clone());
            assert_eq!(from_text, from_value, "{value}");
        }
        let (ids, _) = both_ways(json!({"run_id": "r1", "workflow": "w"}));
        assert_eq!(ids, Ids { workflow: Some("w".into()), run_id: Some("r1".into()) });
    }

    #[test]
    fn a_value_is_read_back_from_the_text_when_none_was_made() {
        let value = json!({"run_id": "r", "workflow": "w", "n": [1, 2.5, -3], "s": "a\"b"});
        let text = Reply { value: None, text: Some(value.to_string()) };
        assert_eq!(text.into_value(), value);
        assert_eq!(Reply { value: Some(value.clone()), text: Some("{}".into()) }.into_value(), value);
        assert_eq!(Reply { value: None, text: None }.into_value(), Value::Null);
    }
}
