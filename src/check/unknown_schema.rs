//! `UNKNOWN_SCHEMA`
//!
//! *What it does*: reports a `success_schema` that cannot be used: a name
//! with no readable `schemas/<Name>.json`, or a schema (named or inline)
//! that is not a valid JSON Schema.
//!
//! *Why is this bad?* The step's result could not be validated — the run
//! would stop at that step with `UNKNOWN_SCHEMA` — and its capture's type
//! would be unknown to every later check.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::SchemaRef;
use serde_json::Value;
use std::collections::HashMap;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    // A named schema is compiled once, however many steps name it.
    let mut named: HashMap<&str, Option<String>> = HashMap::new();
    for (_, step) in cx.steps() {
        match &step.success_schema {
            None => {}
            // Inline schemas are compiled while lowering, where the YAML
            // tree can point at the offending key.
            Some(SchemaRef::Inline { .. }) => {}
            Some(SchemaRef::Named(name)) => match cx.config.schemas.get(name.value.as_str()) {
                Some(Ok(schema)) => {
                    let why = named.entry(&name.value).or_insert_with(|| invalid(schema));
                    if let Some(why) = why {
                        out.push(
                            Diagnostic::new(
                                Code::UnknownSchema,
                                name.span,
                                format!("schema `{}` is not a valid JSON Schema: {why}", name.value),
                            )
                            .with_help(format!("fix `schemas/{}.json`", name.value)),
                        );
                    }
                }
                Some(Err(why)) => out.push(Diagnostic::new(
                    Code::UnknownSchema,
                    name.span,
                    format!("schema `{}` cannot be used: {why}", name.value),
                )),
                None => {
                    let help =
                        suggest(&name.value, cx.config.schemas.keys().map(String::as_str)).or_else(|| {
                            Some(format!("add `schemas/{}.json`, or write the schema inline", name.value))
                        });
                    out.push(
                        Diagnostic::new(
                            Code::UnknownSchema,
                            name.span,
                            format!("unknown schema `{}`", name.value),
                        )
                        .with_help_opt(help),
                    );
                }
            },
        }
    }
}

/// Why `schema` is not a JSON Schema the run engine can compile, if it is not.
/// The engine compiles schemas with `jsonschema::validator_for`; the check
/// uses the same call, so what passes here compiles there.
fn invalid(schema: &Value) -> Option<String> {
    jsonschema::validator_for(schema).err().map(|e| {
        let at = e.instance_path().to_string();
        if at.is_empty() || at == "/" { e.to_string() } else { format!("{e} (at `{at}`)") }
    })
}
