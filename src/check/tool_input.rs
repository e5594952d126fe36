//! A step's input against the input schema of the tool it calls: which
//! schema that is (shared by `UNKNOWN_TOOL`, which reports keys, and
//! `TYPE_MISMATCH`, which reports values of the wrong type).

use crate::check::Cx;
use crate::check::infer::{Infer, loop_item_type};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{ExprSite, Step, TemplateValue, Type};
use serde_json::Value;
use std::borrow::Cow;

/// The input schema of the tool step `i` calls: the manifest's entry, the
/// engine's own tool, or `model.generate`'s.
pub(crate) fn input_schema<'a>(cx: &Cx<'a>, i: usize) -> Option<Cow<'a, Value>> {
    if cx.wf.steps[i].uses.is_some() {
        // A sub-workflow's params (its `with:`).
        return cx.contract(i)?.input.as_ref().map(Cow::Borrowed);
    }
    let call = cx.wf.steps[i].call.as_ref()?;
    if let Some(Some(schema)) = cx.config.tools.as_ref().and_then(|m| m.tools.get(call.value.as_str())) {
        return Some(Cow::Borrowed(schema));
    }
    if let Some(schema) = cx.contract(i).and_then(|c| c.input.as_ref()) {
        return Some(Cow::Borrowed(schema));
    }
    crate::check::manifest::builtin_input_schema(&call.value).map(Cow::Owned)
}

/// `TYPE_MISMATCH` for an input whose value cannot have the type the
/// tool's schema gives it: a literal of another type, or a lone `<<expr>>`
/// (which renders to the expression's value as is) of another type.
pub(crate) fn check_types(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let Some(TemplateValue::Object(entries, _)) = &step.input_template else { continue };
        let Some(schema) = input_schema(cx, i) else { continue };
        let Some(call) = step.call.as_ref().or(step.uses.as_ref()) else { continue };
        let at = Site { cx, i, step, call: &call.value };
        at.object(entries, &schema, "", out);
    }
}

/// Where a value being checked sits: the step and the tool it calls.
struct Site<'s, 'a> {
    cx: &'s Cx<'a>,
    i: usize,
    step: &'s Step,
    call: &'s str,
}

impl Site<'_, '_> {
    /// The entries of an object literal against an object schema, into
    /// nested object literals (and arrays of them) as deep as the schema
    /// describes them; `path` is the keys above (`options.`).
    fn object(
        &self,
        entries: &[(crate::ir::Str, TemplateValue)],
        schema: &Value,
        path: &str,
        out: &mut Vec<Diagnostic>,
    ) {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else { return };
        for (key, value) in entries {
            let Some(prop) = props.get(key.value.as_str()) else { continue };
            let name = format!("{path}{}", key.value);
            self.value(value, prop, &name, out);
        }
    }

    fn value(&self, value: &TemplateValue, prop: &Value, name: &str, out: &mut Vec<Diagnostic>) {
        let want = json_types(prop);
        if let Some((found, ty)) = value_type(self.cx, self.i, self.step, value).filter(|_| !want.is_empty())
        {
            // A number from an expression may be whole; a literal with a
            // fraction never is (the run would refuse "2.5 is not of type integer").
            let fraction = matches!(value, TemplateValue::Number(..)) && found == "number";
            let fits = want.contains(&found)
                || (found == "number" && !fraction && want.contains(&"integer"))
                || (found == "integer" && want.contains(&"number"));
            if !fits {
                let message = format!(
                    "`{name}` of `{}` takes {}, found {}",
                    self.call,
                    // `null` is how an optional input is written: not worth saying.
                    want.iter()
                        .filter(|w| **w != "null" || want.len() == 1)
                        .map(|w| article(w))
                        .collect::<Vec<_>>()
                        .join(" or "),
                    match value {
                        TemplateValue::Number(n, _) if fraction => n.to_string(),
                        _ => article(found),
                    },
                );
                let help = match value {
                    TemplateValue::Number(n, _) if fraction => Some(format!(
                        "the run would refuse it ({n} is not of type integer): write a whole number"
                    )),
                    _ => fix_help(value, ty.as_ref(), name, &want),
                };
                out.push(Diagnostic::new(Code::TypeMismatch, span_of(value), message).with_help_opt(help));
                return;
            }
        }
        match value {
            TemplateValue::Object(entries, _) => self.object(entries, prop, &format!("{name}."), out),
            TemplateValue::Array(items, _) => {
                if let Some(item) = prop.get("items").filter(|s| s.is_object()) {
                    for (k, v) in items.iter().enumerate() {
                        self.value(v, item, &format!("{name}[{k}]"), out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `TYPE_MISMATCH` for a `success_schema` that cannot hold what a server's
/// tool returns (its `outputSchema`, which the result must match): a
/// property both describe with disjoint types, or a required property the
/// tool's output does not list. Not for the engine's own tools: a `think`
/// step with a `success_schema` is answered by the client in its own shape.
pub(crate) fn check_success_schema(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let Some(tool) = cx.contract(i).filter(|c| c.server.is_some()) else { continue };
        let Some(output) = &tool.output else { continue };
        let (schema, span) = match &step.success_schema {
            Some(crate::ir::SchemaRef::Inline { schema, span }) => (&**schema, *span),
            Some(crate::ir::SchemaRef::Named(n)) => match cx.config.schemas.get(n.value.as_str()) {
                Some(Ok(s)) => (s, n.span),
                _ => continue,
            },
            None => continue,
        };
        let props = |s: &Value| s.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        let (mine, theirs) = (props(schema), props(output));
        for (key, s) in &mine {
            let (want, have) = (json_types(s), theirs.get(key).map(json_types).unwrap_or_default());
            let meets =
                |a: &str, b: &str| a == b || matches!((a, b), ("integer", "number") | ("number", "integer"));
            if want.is_empty() || have.is_empty() || want.iter().any(|w| have.iter().any(|h| meets(w, h))) {
                continue;
            }
            let help = format!(
                "declare `{key}` as `type: {}` in `success_schema`, as the tool does, or drop `success_schema` to take the tool's own types",
                have[0]
            );
            out.push(
                Diagnostic::new(
                    Code::TypeMismatch,
                    span,
                    format!(
                        "`success_schema` wants `{key}` to be {}, but `{}` returns {} (its outputSchema)",
                        want.iter().map(|w| article(w)).collect::<Vec<_>>().join(" or "),
                        tool.name,
                        have.iter().map(|h| article(h)).collect::<Vec<_>>().join(" or "),
                    ),
                )
                .with_help(help),
            );
        }
        let open = matches!(output.get("additionalProperties"), Some(Value::Bool(true) | Value::Object(_)));
        let required = schema.get("required").and_then(Value::as_array).into_iter().flatten();
        for key in required.filter_map(Value::as_str).filter(|k| !open && !theirs.contains_key(*k)) {
            let help = crate::diagnostic::suggest(key, theirs.keys().map(String::as_str))
                .or_else(|| Some(format!("drop `{key}` from the `required:` of `success_schema`")));
            out.push(
                Diagnostic::new(
                    Code::TypeMismatch,
                    span,
                    format!(
                        "`success_schema` requires `{key}`, which `{}` never returns (its outputSchema)",
                        tool.name
                    ),
                )
                .with_help_opt(help)
                .without_fix(),
            );
        }
    }
}

/// The JSON types a property schema allows (`type`, a string or a list);
/// empty when it does not say.
fn json_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A value's JSON type as the tool will receive it, and its static type
/// when it comes from an expression; `None` when it cannot be known.
fn value_type(cx: &Cx, i: usize, step: &Step, value: &TemplateValue) -> Option<(&'static str, Option<Type>)> {
    Some(match value {
        TemplateValue::Null(_) => ("null", None),
        TemplateValue::Bool(..) => ("boolean", None),
        TemplateValue::Number(n, _) if n.fract() == 0.0 => ("integer", None),
        TemplateValue::Number(..) => ("number", None),
        TemplateValue::Array(..) => ("array", None),
        TemplateValue::Object(..) => ("object", None),
        TemplateValue::String(t) => {
            let Some(expr) = t.template.as_single_expr() else { return Some(("string", None)) };
            let mut inf = Infer {
                cx,
                step: i,
                site: ExprSite::Template,
                loc: &t.loc,
                text: &t.text,
                loop_item: if step.foreach.is_some() { loop_item_type(cx, i) } else { Type::Any },
                out: None,
            };
            let ty = inf.infer(expr);
            let name = match &ty {
                Type::String => "string",
                Type::Bool => "boolean",
                Type::Number => "number",
                Type::Array(_) => "array",
                Type::Object(_) => "object",
                // `null` from an expression is most often "not known yet".
                Type::Any | Type::Null => return None,
            };
            (name, Some(ty))
        }
    })
}

fn article(json_type: &str) -> String {
    match json_type {
        "integer" => "an integer".into(),
        "array" | "object" => format!("an {json_type}"),
        "null" => "null".into(),
        "boolean" => "a bool".into(),
        t => format!("a {t}"),
    }
}

/// The fix for an object or array rendered where a string goes: one of its
/// string fields (`<<idea.thought>>`), or text around it.
fn fix_help(value: &TemplateValue, ty: Option<&Type>, key: &str, want: &[&str]) -> Option<String> {
    let TemplateValue::String(t) = value else { return None };
    if !want.contains(&"string") {
        return None;
    }
    let expr = t.text.trim().strip_prefix("<<")?.strip_suffix(">>")?.trim();
    match ty? {
        Type::Object(o) => {
            let strings: Vec<&str> =
                o.fields.iter().filter(|(_, t)| **t == Type::String).map(|(k, _)| k.as_str()).collect();
            let preferred = [key, "thought", "message", "text", "content", "title", "name", "formatted"];
            let pick = preferred.iter().find(|p| strings.contains(p)).copied().or(strings.first().copied());
            Some(match pick {
                Some(f) => format!("read one of its string fields, e.g. `<<{expr}.{f}>>`"),
                None => format!("read a string field of it (`<<{expr}.FIELD>>`), or put it in text"),
            })
        }
        Type::Array(_) => Some(format!("join it first, e.g. `<<join({expr}, ', ')>>`")),
        _ => None,
    }
}

fn span_of(value: &TemplateValue) -> crate::source::Span {
    match value {
        TemplateValue::Null(s)
        | TemplateValue::Bool(_, s)
        | TemplateValue::Number(_, s)
        | TemplateValue::Array(_, s)
        | TemplateValue::Object(_, s) => *s,
        TemplateValue::String(t) => t.loc.span,
    }
}
