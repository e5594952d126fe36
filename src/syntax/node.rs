//! The YAML tree the rest of the compiler reads: every node has a span, every
//! scalar keeps its style so offsets inside it can be mapped back to the file.

use crate::source::Span;

/// How a scalar was written. Needed to map an offset inside the decoded value
/// back to a byte in the file (quotes, escapes, block indentation, folding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    /// `|` block scalar.
    Literal,
    /// `>` block scalar.
    Folded,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    /// The decoded value (quotes removed, escapes applied, blocks folded).
    pub value: String,
    pub style: ScalarStyle,
}

impl Scalar {
    /// The YAML 1.2 core-schema reading of the scalar. Only plain scalars can
    /// be null, bool or numbers; quoted and block scalars are always strings.
    pub fn resolve(&self) -> ScalarValue<'_> {
        if self.style != ScalarStyle::Plain {
            return ScalarValue::String(&self.value);
        }
        let v = self.value.as_str();
        match v {
            "" | "~" | "null" | "Null" | "NULL" => return ScalarValue::Null,
            "true" | "True" | "TRUE" => return ScalarValue::Bool(true),
            "false" | "False" | "FALSE" => return ScalarValue::Bool(false),
            ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
                return ScalarValue::Float(f64::INFINITY);
            }
            "-.inf" | "-.Inf" | "-.INF" => return ScalarValue::Float(f64::NEG_INFINITY),
            ".nan" | ".NaN" | ".NAN" => return ScalarValue::Float(f64::NAN),
            _ => {}
        }
        if let Some(i) = parse_int(v) {
            return ScalarValue::Int(i);
        }
        if looks_like_float(v)
            && let Ok(f) = v.parse::<f64>()
        {
            return ScalarValue::Float(f);
        }
        ScalarValue::String(v)
    }
}

fn parse_int(v: &str) -> Option<i64> {
    let (neg, digits) = match v.as_bytes().first()? {
        b'-' => (true, &v[1..]),
        b'+' => (false, &v[1..]),
        _ => (false, v),
    };
    let n = if let Some(hex) = digits.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(oct) = digits.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()?
    } else {
        return None;
    };
    Some(if neg { -n } else { n })
}

fn looks_like_float(v: &str) -> bool {
    let body = v.strip_prefix(['-', '+']).unwrap_or(v);
    !body.is_empty()
        && body.bytes().any(|b| b.is_ascii_digit())
        && body.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
}

/// A scalar read through the YAML 1.2 core schema.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(&'a str),
}

impl ScalarValue<'_> {
    /// What a user would call this value in a message: "a string", "a number"…
    pub fn kind_name(&self) -> &'static str {
        match self {
            ScalarValue::Null => "null",
            ScalarValue::Bool(_) => "a boolean",
            ScalarValue::Int(_) | ScalarValue::Float(_) => "a number",
            ScalarValue::String(_) => "a string",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Entries in file order. Duplicate keys were reported by the parser and
    /// only the first occurrence is kept.
    Map(Vec<Entry>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    /// For scalars: the scalar as written, including quotes or the block
    /// header (`|`, `>-`) and its body. For collections: from the first
    /// character of the collection to the end of its last item.
    pub span: Span,
}

impl Node {
    /// The number of nodes in the tree (as the parser counts them against
    /// [`crate::source::Limits::max_nodes`]: scalars and collections).
    pub fn count(&self) -> usize {
        match &self.kind {
            NodeKind::Scalar(_) => 1,
            NodeKind::Seq(items) => 1 + items.iter().map(Node::count).sum::<usize>(),
            NodeKind::Map(entries) => {
                1 + entries.iter().map(|e| e.key.count() + e.value.count()).sum::<usize>()
            }
        }
    }

    /// Moves every span of the tree `by` bytes later (a tree parsed from a
    /// part of a file, placed where that part is).
    pub fn offset(&mut self, by: usize) {
        self.span = self.span.offset(by);
        match &mut self.kind {
            NodeKind::Scalar(_) => {}
            NodeKind::Seq(items) => items.iter_mut().for_each(|n| n.offset(by)),
            NodeKind::Map(entries) => entries.iter_mut().for_each(|e| {
                e.key.offset(by);
                e.value.offset(by);
            }),
        }
    }

    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The scalar's string if it is a string scalar (a plain `12` is not).
    pub fn as_str(&self) -> Option<&str> {
        match self.as_scalar()?.resolve() {
            ScalarValue::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.kind {
            NodeKind::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// Looks a key up in a mapping node.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?.iter().find(|e| e.key.as_scalar().is_some_and(|k| k.value == key)).map(|e| &e.value)
    }

    pub fn is_null(&self) -> bool {
        matches!(self.as_scalar().map(Scalar::resolve), Some(ScalarValue::Null))
    }

    /// What a user would call this node in a message: "a mapping", "a string"…
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Scalar(s) => s.resolve().kind_name(),
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a mapping",
        }
    }

    /// Converts to JSON (for inline schemas and default values). Keys that are
    /// not strings are stringified.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            NodeKind::Scalar(s) => match s.resolve() {
                ScalarValue::Null => Value::Null,
                ScalarValue::Bool(b) => Value::Bool(b),
                ScalarValue::Int(i) => Value::from(i),
                ScalarValue::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
                ScalarValue::String(s) => Value::String(s.to_owned()),
            },
            NodeKind::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeKind::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|e| {
                        let k = e
                            .key
                            .as_scalar()
                            .map_or_else(|| e.key.to_json().to_string(), |s| s.value.clone());
                        (k, e.value.to_json())
                    })
                    .collect(),
            ),
        }
    }
}
