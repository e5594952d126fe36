//! The static types of expression values, and their derivation from JSON Schema.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// A static type. `Any` is both the top type and the "unknown, already
/// reported" type: nothing of type `Any` is ever a second error.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Any,
    Null,
    Bool,
    Number,
    String,
    Array(Box<Type>),
    Object(ObjectType),
}

/// An object's known fields. `open` objects may have fields beyond those
/// listed (JSON Schema's default); reading an unlisted field of an open object
/// is `any`, of a closed object (`additionalProperties: false`) an error.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectType {
    pub fields: BTreeMap<String, Type>,
    pub open: bool,
}

impl ObjectType {
    pub fn closed(fields: impl IntoIterator<Item = (&'static str, Type)>) -> ObjectType {
        ObjectType { fields: fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(), open: false }
    }
}

impl Type {
    pub fn array(item: Type) -> Type {
        Type::Array(Box::new(item))
    }

    pub fn is_any(&self) -> bool {
        matches!(self, Type::Any)
    }

    /// The item type of an array (`Any` for `Any`), `None` for non-arrays.
    pub fn item(&self) -> Option<Type> {
        match self {
            Type::Array(t) => Some((**t).clone()),
            Type::Any => Some(Type::Any),
            _ => None,
        }
    }

    /// Whether two types can meet at runtime (for `==`, array items…): equal
    /// kinds, or either side `Any` or `Null` (anything may be compared with null).
    pub fn compatible(&self, other: &Type) -> bool {
        match (self, other) {
            (Type::Any, _) | (_, Type::Any) | (Type::Null, _) | (_, Type::Null) => true,
            (Type::Array(a), Type::Array(b)) => a.compatible(b),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }

    /// The least type covering both (`Any` when they differ).
    pub fn join(&self, other: &Type) -> Type {
        match (self, other) {
            (Type::Null, t) | (t, Type::Null) => t.clone(),
            (a, b) if a == b => a.clone(),
            (Type::Array(a), Type::Array(b)) => Type::array(a.join(b)),
            _ => Type::Any,
        }
    }

    /// The word for this type in a message: "a string", "an array<string>"…
    pub fn article(&self) -> String {
        match self {
            Type::Any => "a value of any type".to_owned(),
            Type::Null => "null".to_owned(),
            Type::Array(_) | Type::Object(_) => format!("an {self}"),
            _ => format!("a {self}"),
        }
    }

    /// Derives a type from a JSON Schema. Unknown or unsupported schema
    /// shapes give `Any`, never an error: the checker must not guess.
    pub fn from_schema(schema: &Value) -> Type {
        Type::from_schema_depth(schema, 0)
    }

    fn from_schema_depth(schema: &Value, depth: usize) -> Type {
        if depth > 32 {
            return Type::Any;
        }
        let Some(obj) = schema.as_object() else { return Type::Any };
        let ty = match obj.get("type") {
            Some(Value::String(s)) => Some(s.as_str()),
            Some(Value::Array(list)) => {
                let non_null: Vec<&str> =
                    list.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
                match non_null.as_slice() {
                    [one] => Some(*one),
                    _ => None,
                }
            }
            _ => None,
        };
        let ty = ty.or_else(|| {
            if obj.contains_key("properties") {
                Some("object")
            } else if obj.contains_key("items") {
                Some("array")
            } else {
                None
            }
        });
        match ty {
            Some("string") => Type::String,
            Some("number" | "integer") => Type::Number,
            Some("boolean") => Type::Bool,
            Some("null") => Type::Null,
            Some("array") => {
                Type::array(obj.get("items").map_or(Type::Any, |i| Type::from_schema_depth(i, depth + 1)))
            }
            Some("object") => {
                let fields = obj
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|props| {
                        props
                            .iter()
                            .map(|(k, v)| (k.clone(), Type::from_schema_depth(v, depth + 1)))
                            .collect()
                    })
                    .unwrap_or_default();
                let open = !matches!(obj.get("additionalProperties"), Some(Value::Bool(false)));
                Type::Object(ObjectType { fields, open })
            }
            _ => Type::Any,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Any => f.write_str("any"),
            Type::Null => f.write_str("null"),
            Type::Bool => f.write_str("bool"),
            Type::Number => f.write_str("number"),
            Type::String => f.write_str("string"),
            Type::Array(item) => write!(f, "array<{item}>"),
            Type::Object(o) => {
                f.write_str("object{")?;
                for (i, k) in o.fields.keys().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(k)?;
                }
                if o.open {
                    f.write_str(if o.fields.is_empty() { "…" } else { ", …" })?;
                }
                f.write_str("}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_types() {
        let t = Type::from_schema(&json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "iid": {"type": "integer"},
                "changes": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": ["string", "null"]}}}}
            }
        }));
        assert_eq!(t.to_string(), "object{changes, iid}");
        let Type::Object(o) = t else { panic!("not an object") };
        assert!(!o.open);
        assert_eq!(o.fields["changes"].to_string(), "array<object{path, …}>");
        assert_eq!(o.fields["iid"], Type::Number);
        assert_eq!(Type::from_schema(&json!({"anyOf": []})), Type::Any);
    }

    #[test]
    fn compatibility() {
        assert!(Type::String.compatible(&Type::Null));
        assert!(!Type::String.compatible(&Type::Number));
        assert!(Type::array(Type::String).compatible(&Type::array(Type::Any)));
        assert_eq!(Type::Null.join(&Type::String), Type::String);
        assert_eq!(Type::Number.join(&Type::String), Type::Any);
    }
}
