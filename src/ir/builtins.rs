//! The expression language's built-in functions: names and signatures.
//! The runtime evaluator implements exactly this table.

use crate::ir::types::Type;

/// A parameter's accepted types; `Any` in the list accepts everything.
#[derive(Clone, Debug)]
pub struct Function {
    pub name: &'static str,
    /// Accepted types of each positional parameter, as a short description and a predicate.
    pub params: &'static [Param],
    /// Extra arguments beyond `params` are allowed (of any type).
    pub variadic: bool,
    pub doc: &'static str,
}

#[derive(Clone, Copy, Debug)]
pub enum Param {
    Any,
    String,
    Array,
    Object,
    /// A string, an array or an object (things with a length or members).
    Collection,
    /// A string or an array.
    StringOrArray,
}

impl Param {
    pub fn accepts(self, t: &Type) -> bool {
        matches!(
            (self, t),
            (_, Type::Any)
                | (Param::Any, _)
                | (Param::String, Type::String)
                | (Param::Array, Type::Array(_))
                | (Param::Object, Type::Object(_))
                | (Param::Collection, Type::String | Type::Array(_) | Type::Object(_))
                | (Param::StringOrArray, Type::String | Type::Array(_))
        )
    }

    pub fn describe(self) -> &'static str {
        match self {
            Param::Any => "any value",
            Param::String => "a string",
            Param::Array => "an array",
            Param::Object => "an object",
            Param::Collection => "a string, an array or an object",
            Param::StringOrArray => "a string or an array",
        }
    }
}

use Param as P;

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "len",
        params: &[P::Collection],
        variadic: false,
        doc: "length of a string (characters), an array or an object",
    },
    Function {
        name: "contains",
        params: &[P::StringOrArray, P::Any],
        variadic: false,
        doc: "substring or element test",
    },
    Function { name: "starts_with", params: &[P::String, P::String], variadic: false, doc: "prefix test" },
    Function { name: "ends_with", params: &[P::String, P::String], variadic: false, doc: "suffix test" },
    Function { name: "lower", params: &[P::String], variadic: false, doc: "lower-case" },
    Function { name: "upper", params: &[P::String], variadic: false, doc: "upper-case" },
    Function { name: "trim", params: &[P::String], variadic: false, doc: "strip surrounding whitespace" },
    Function {
        name: "join",
        params: &[P::Array, P::String],
        variadic: false,
        doc: "join array items with a separator",
    },
    Function {
        name: "split",
        params: &[P::String, P::String],
        variadic: false,
        doc: "split a string on a separator",
    },
    Function { name: "keys", params: &[P::Object], variadic: false, doc: "an object's keys, sorted" },
    Function {
        name: "values",
        params: &[P::Object],
        variadic: false,
        doc: "an object's values, in key order",
    },
    Function {
        name: "default",
        params: &[P::Any, P::Any],
        variadic: false,
        doc: "the first argument unless it is null, else the second",
    },
    Function { name: "exists", params: &[P::Any], variadic: false, doc: "true unless the value is null" },
    Function { name: "to_json", params: &[P::Any], variadic: false, doc: "compact JSON text" },
    Function { name: "from_json", params: &[P::String], variadic: false, doc: "parse JSON text" },
    Function {
        name: "format",
        params: &[P::String],
        variadic: true,
        doc: "replace each `{}` with the next argument",
    },
    Function {
        name: "matches",
        params: &[P::String, P::String],
        variadic: false,
        doc: "regular expression test",
    },
];

pub fn lookup(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

impl Function {
    /// The static result type for the given argument types.
    pub fn result(&self, args: &[Type]) -> Type {
        match self.name {
            "len" => Type::Number,
            "contains" | "starts_with" | "ends_with" | "exists" | "matches" => Type::Bool,
            "lower" | "upper" | "trim" | "join" | "to_json" | "format" => Type::String,
            "split" | "keys" => Type::array(Type::String),
            "values" => match args.first() {
                Some(Type::Object(o)) if !o.open && !o.fields.is_empty() => {
                    Type::array(o.fields.values().fold(Type::Null, |acc, t| acc.join(t)))
                }
                _ => Type::array(Type::Any),
            },
            "default" => match args {
                [a, b] => a.join(b),
                _ => Type::Any,
            },
            _ => Type::Any,
        }
    }

    /// A human signature: `len(a string, an array or an object)`.
    pub fn signature(&self) -> String {
        let mut s: Vec<&str> = self.params.iter().map(|p| p.describe()).collect();
        if self.variadic {
            s.push("…");
        }
        format!("{}({})", self.name, s.join(", "))
    }
}
