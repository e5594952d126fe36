//! Rendering `input_template` values and `<<expr>>` strings.
//!
//! - A string that is exactly one `<<expr>>` yields the expression's typed
//!   value — an object, an array, a number, even `null`.
//! - Mixed text stringifies each interpolation with [`stringify()`](crate::runtime::text::stringify): numbers
//!   plainly (`2`, not `2.0`), booleans as `true`/`false`, strings raw, arrays
//!   and objects as compact JSON.
//! - A `null` inside mixed text is an error naming the expression — a prompt
//!   reading "Review null" is a bug — unless the expression is guarded, i.e.
//!   its top-level operator is `??` (`<<mr.title ?? ''>>`, or even
//!   `<<mr.title ?? null>>`): a guarded `null` renders as the empty string.
//! - Text segments are literal (the parser already turned `\<<` into `<<`).
//! - Objects and arrays render member by member; key order is preserved.
//!
//! Rendering is pure and deterministic, like [`eval`].

use std::fmt;

use serde_json::{Map, Value};

use crate::ir::{TemplateString, TemplateValue};
use crate::runtime::eval::{Scope, eval, eval_cow};
use crate::runtime::text::number;
use crate::runtime::text::write_text;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Segment};

/// A template that cannot be rendered (`TEMPLATE_RENDER_ERROR`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderError {
    /// The expression's source text, e.g. `mr.title`.
    pub expr: String,
    /// Why it cannot be rendered.
    pub message: String,
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RenderError {}

/// Renders an `input_template` value.
pub fn render(tv: &TemplateValue, scope: &dyn Scope) -> Result<Value, RenderError> {
    Ok(match tv {
        TemplateValue::Null(_) => Value::Null,
        TemplateValue::Bool(b, _) => Value::Bool(*b),
        TemplateValue::Number(n, _) => number(*n),
        TemplateValue::String(t) => render_string(t, scope)?,
        TemplateValue::Array(items, _) => {
            Value::Array(items.iter().map(|i| render(i, scope)).collect::<Result<_, _>>()?)
        }
        TemplateValue::Object(entries, _) => {
            let mut map = Map::with_capacity(entries.len());
            for (key, value) in entries {
                map.insert(key.value.as_str().to_owned(), render(value, scope)?);
            }
            Value::Object(map)
        }
    })
}

/// Renders one template string: typed when it is exactly one `<<expr>>`,
/// otherwise a string.
pub fn render_string(t: &TemplateString, scope: &dyn Scope) -> Result<Value, RenderError> {
    if let Some(expr) = t.template.as_single_expr() {
        return Ok(eval(expr, scope));
    }
    if t.template.segments.is_empty() {
        // All literal: the template is its text (`syntax::ast::Template`).
        return Ok(Value::String(t.text.clone()));
    }
    let mut out = String::with_capacity(t.text.len());
    for segment in &t.template.segments {
        match segment {
            Segment::Text(text) => out.push_str(text.as_str(&t.text)),
            Segment::Interp { expr, span } => {
                let value = eval_cow(expr, scope);
                if !value.is_null() {
                    write_text(&mut out, &value);
                } else if !is_guarded(expr) {
                    let source = t
                        .text
                        .get(expr.span.range())
                        .or_else(|| t.text.get(span.range()))
                        .unwrap_or_default()
                        .trim()
                        .to_string();
                    let message = format!("`<<{source}>>` is null in a text template");
                    return Err(RenderError { expr: source, message });
                }
            }
        }
    }
    Ok(Value::String(out))
}

/// An interpolation whose top-level operator is `??` may render `null` as "".
fn is_guarded(expr: &Expr) -> bool {
    matches!(expr.kind, ExprKind::Binary { op: BinOp::Coalesce, .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ScalarLoc, Str};
    use crate::runtime::text::{stringify, to_json_string};
    use crate::source::Span;
    use crate::syntax::expr::parse_expr;
    use crate::syntax::node::ScalarStyle;
    use crate::syntax::template::parse_template;
    use proptest::prelude::*;
    use serde_json::json;

    fn scope() -> Value {
        json!({
            "params": {"n": 3, "f": 2.5, "two": 2.0, "s": "héllo", "arr": [1, "a"], "obj": {"b": 1, "a": [true]}},
            "mr": {"title": null, "name": "Fix"},
        })
    }

    fn tstr(text: &str) -> TemplateString {
        let (template, errors) = parse_template(text);
        assert!(errors.is_empty(), "{text}: {errors:?}");
        let loc = ScalarLoc { span: Span::default(), style: ScalarStyle::Plain };
        TemplateString { text: text.to_string(), loc, template }
    }

    fn rs(text: &str) -> Result<Value, RenderError> {
        render_string(&tstr(text), &scope())
    }

    #[test]
    fn a_lone_interpolation_is_typed() {
        assert_eq!(rs("<<params.obj>>"), Ok(json!({"b": 1, "a": [true]})));
        assert_eq!(rs("<< params.n >>"), Ok(json!(3)));
        assert_eq!(rs("<<1 + 1>>"), Ok(json!(2)));
        assert_eq!(rs("<<params.arr>>"), Ok(json!([1, "a"])));
        assert_eq!(rs("<<mr.title>>"), Ok(json!(null)));
        assert_eq!(rs("<<nope>>"), Ok(json!(null)));
    }

    #[test]
    fn mixed_text_stringifies() {
        let t = "n=<<params.n>> f=<<params.f>> two=<<params.two>> b=<<1 < 2>> s=<<params.s>> \
                 a=<<params.arr>> o=<<params.obj>>";
        let want = r#"n=3 f=2.5 two=2 b=true s=héllo a=[1,"a"] o={"b":1,"a":[true]}"#;
        assert_eq!(rs(t), Ok(json!(want)));
        assert_eq!(rs("<<4 / 2>>!"), Ok(json!("2!")));
        assert_eq!(rs("<<'a'>><<'b'>>"), Ok(json!("ab")));
        assert_eq!(rs("plain"), Ok(json!("plain")));
        assert_eq!(rs(""), Ok(json!("")));
    }

    #[test]
    fn escapes_and_legacy_braces_stay_literal() {
        assert_eq!(rs(r"\<<not>> <<params.n>>"), Ok(json!("<<not>> 3")));
        assert_eq!(rs(r"\<<params.n>>"), Ok(json!("<<params.n>>")));
        assert_eq!(rs("{{ params.n }} <<'>>'>>"), Ok(json!("{{ params.n }} >>")));
    }

    #[test]
    fn null_in_text_is_an_error_naming_the_expression() {
        let err = rs("Title: << mr.title >>!").unwrap_err();
        assert_eq!(err.expr, "mr.title");
        assert_eq!(err.message, "`<<mr.title>>` is null in a text template");
        assert_eq!(err.to_string(), err.message);
        assert_eq!(rs("a<<true ? null : 1>>").unwrap_err().expr, "true ? null : 1");
        assert_eq!(rs("x <<mr.nope.deep>>").unwrap_err().expr, "mr.nope.deep");
    }

    #[test]
    fn a_coalesce_guard_renders_null_as_empty() {
        assert_eq!(rs("T: <<mr.title ?? ''>>!"), Ok(json!("T: !")));
        assert_eq!(rs("T: <<mr.title ?? null>>"), Ok(json!("T: ")));
        assert_eq!(rs("T: <<(mr.title ?? mr.name)>>"), Ok(json!("T: Fix")));
        assert_eq!(rs("T: <<mr.title ?? 0>>"), Ok(json!("T: 0")));
    }

    fn key(k: &str) -> Str {
        Str { value: k.into(), span: Span::default() }
    }

    #[test]
    fn values_render_recursively_in_order() {
        let s = |t: &str| TemplateValue::String(Box::new(tstr(t)));
        let sp = Span::default();
        let tv = TemplateValue::Object(
            vec![
                (
                    key("z"),
                    TemplateValue::Array(vec![TemplateValue::Number(1.0, sp), s("<<params.arr>>")], sp),
                ),
                (key("a"), TemplateValue::Null(sp)),
                (key("m"), TemplateValue::Object(vec![(key("q"), s("n=<<params.n>>"))], sp)),
                (key("b"), TemplateValue::Bool(false, sp)),
                (key("f"), TemplateValue::Number(1.5, sp)),
            ],
            sp,
        );
        let out = render(&tv, &scope()).unwrap();
        assert_eq!(to_json_string(&out), r#"{"z":[1,[1,"a"]],"a":null,"m":{"q":"n=3"},"b":false,"f":1.5}"#);
        let bad = TemplateValue::Array(vec![TemplateValue::Null(sp), s("<<mr.title>> x")], sp);
        assert_eq!(render(&bad, &scope()).unwrap_err().expr, "mr.title");
    }

    #[test]
    fn stringify_formats() {
        assert_eq!(stringify(&json!(null)), "null");
        assert_eq!(stringify(&json!(true)), "true");
        assert_eq!(stringify(&json!(2.0)), "2");
        assert_eq!(stringify(&json!(-0.0)), "0");
        assert_eq!(stringify(&json!(2.5)), "2.5");
        assert_eq!(stringify(&json!(u64::MAX)), "18446744073709551615");
        assert_eq!(stringify(&json!(1e300)), "1e+300");
        assert_eq!(stringify(&json!("a\"b\n")), "a\"b\n");
        assert_eq!(stringify(&json!({"x": [2.0, "a\"b"]})), r#"{"x":[2,"a\"b"]}"#);
        assert_eq!(to_json_string(&json!("a\"b\n")), r#""a\"b\n""#);
    }

    fn expr_source() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(vec![
            "null",
            "true",
            "false",
            "0",
            "1",
            "7",
            "2.5",
            "''",
            "'ab'",
            "'{}'",
            "'[a-'",
            "'{\"a\":[1]}'",
            "params",
            "params.n",
            "params.f",
            "params.s",
            "params.arr",
            "params.obj",
            "mr.title",
            "nope",
        ])
        .prop_map(str::to_string);
        let ops = vec!["*", "/", "%", "+", "-", "<", "<=", ">", ">=", "==", "!=", "in", "&&", "||", "??"];
        let functions: Vec<&str> = crate::ir::builtins::FUNCTIONS.iter().map(|f| f.name).collect();
        leaf.prop_recursive(4, 48, 4, move |inner| {
            prop_oneof![
                (inner.clone(), prop::sample::select(ops.clone()), inner.clone())
                    .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
                (prop::sample::select(vec!["!", "-"]), inner.clone()).prop_map(|(o, a)| format!("{o}({a})")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
                (prop::sample::select(functions.clone()), prop::collection::vec(inner.clone(), 0..4))
                    .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
                (inner.clone(), inner.clone()).prop_map(|(a, i)| format!("({a})[{i}]")),
                (inner.clone(), prop::sample::select(vec!["a", "b", "n", "title"]))
                    .prop_map(|(a, f)| format!("({a})?.{f}")),
                prop::collection::vec(inner, 0..3).prop_map(|v| format!("[{}]", v.join(", "))),
            ]
        })
    }

    proptest! {
        #[test]
        fn evaluation_is_total_and_deterministic(src in expr_source()) {
            let expr = parse_expr(&src).map_err(|e| TestCaseError::fail(format!("{src}: {e:?}")))?;
            let scope = scope();
            let v = eval(&expr, &scope);
            prop_assert_eq!(&v, &eval(&expr, &scope));
            let back: Value = serde_json::from_str(&to_json_string(&v)).unwrap();
            prop_assert!(crate::runtime::eval::values_equal(&v, &back), "{} → {}", src, v);
            let _ = render_string(&tstr(&format!("<<{src}>>")), &scope);
            let _ = render_string(&tstr(&format!("x <<{src}>> y")), &scope);
        }

        #[test]
        fn random_text_never_panics(text in "\\PC{0,40}") {
            if let Ok(expr) = parse_expr(&text) {
                let _ = eval(&expr, &scope());
            }
            let (template, _) = parse_template(&text);
            let loc = ScalarLoc { span: Span::default(), style: ScalarStyle::Plain };
            let t = TemplateString { text: text.clone(), loc, template };
            let _ = render_string(&t, &scope());
        }
    }
}
