//! `UNKNOWN_SCHEMA`
//!
//! *What it does*: reports a `success_schema` name with no readable
//! `schemas/<Name>.json`.
//!
//! *Why is this bad?* The step's result could not be validated, and its
//! capture's type would be unknown to every later check.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::SchemaRef;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for step in &cx.wf.steps {
        let Some(SchemaRef::Named(name)) = &step.success_schema else { continue };
        match cx.config.schemas.get(&name.value) {
            Some(Ok(_)) => {}
            Some(Err(why)) => out.push(Diagnostic::new(
                Code::UnknownSchema,
                name.span,
                format!("schema `{}` cannot be used: {why}", name.value),
            )),
            None => {
                let help = suggest(&name.value, cx.config.schemas.keys().map(String::as_str)).or_else(|| {
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
        }
    }
}
