//! The tree `migrate` writes: YAML values without positions or styles, keys
//! in order. Built from the reader's [`Node`] tree, emitted by [`super::emit`].

use crate::syntax::node::{Node, NodeKind, ScalarValue};

/// A YAML value to emit.
#[derive(Clone, Debug, PartialEq)]
pub enum Yaml {
    /// A string: always read back as a string, whatever its text.
    Str(String),
    /// A plain scalar that is not a string (`null`, `true`, `12`, `0.6`),
    /// written exactly as this text.
    Raw(String),
    Seq(Vec<Yaml>),
    /// Entries in order; keys are strings.
    Map(Vec<(String, Yaml)>),
}

impl Yaml {
    /// Converts a node, keeping key order. Keys that are not strings keep
    /// their text (`1:` becomes the key `"1"`, as JSON would have it).
    pub fn from_node(node: &Node) -> Yaml {
        match &node.kind {
            NodeKind::Scalar(s) => match s.resolve() {
                ScalarValue::String(v) => Yaml::Str(v.to_owned()),
                _ => Yaml::Raw(s.value.clone()),
            },
            NodeKind::Seq(items) => Yaml::Seq(items.iter().map(Yaml::from_node).collect()),
            NodeKind::Map(entries) => {
                Yaml::Map(entries.iter().map(|e| (key_text(&e.key), Yaml::from_node(&e.value))).collect())
            }
        }
    }

    /// The value as JSON, as the reader would see the emitted text.
    pub fn to_json(&self) -> serde_json::Value {
        use crate::syntax::node::{Scalar, ScalarStyle};
        use serde_json::Value;
        match self {
            Yaml::Str(s) => Value::String(s.clone()),
            Yaml::Raw(r) => Node {
                kind: NodeKind::Scalar(Scalar { value: r.clone(), style: ScalarStyle::Plain }),
                span: crate::source::Span::point(0),
            }
            .to_json(),
            Yaml::Seq(items) => Value::Array(items.iter().map(Yaml::to_json).collect()),
            Yaml::Map(entries) => {
                Value::Object(entries.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Yaml::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// A key's text: a scalar's value, or the JSON of a collection key.
pub fn key_text(key: &Node) -> String {
    key.as_scalar().map_or_else(|| key.to_json().to_string(), |s| s.value.clone())
}
