//! Validating results and responses against JSON Schemas (compiled once,
//! cached), and workflows against the checker.

use super::*;
use crate::runtime::reply::Validation;

impl Engine {
    // ---- validation -----------------------------------------------------

    /// At most 50 errors of `instance` against `validator`.
    pub(super) fn schema_errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<Value> {
        // Bounded work and memory per request: at most 50 errors (the
        // iterator is lazy, so validation stops there), each message cut to
        // a few hundred bytes (a message can quote the whole failing value).
        validator
            .iter_errors(instance)
            .take(50)
            .map(|e| json!({ "path": e.instance_path().to_string(), "message": cut_message(e.to_string()) }))
            .collect()
    }

    /// The JSON Schema an instruction's result must match: its inline
    /// schema, its named schema looked up, or `{}` (anything) when it has
    /// none or the name is unknown.
    pub fn success_schema_of(&self, instruction: &crate::runtime::reply::Instruction) -> Value {
        match &instruction.success_schema {
            Value::String(name) => self.project.schema(name).unwrap_or_else(|_| json!({})),
            Value::Null => json!({}),
            inline => inline.clone(),
        }
    }

    pub(super) fn validate_result(
        &self,
        schema: &SchemaRef,
        result: &Value,
    ) -> Result<Vec<Value>, EngineError> {
        let validator = match schema {
            SchemaRef::Named(n) => self.project.named_validator(&n.value)?,
            SchemaRef::Inline { schema, .. } => self.project.step_validator(schema)?,
        };
        Ok(Self::schema_errors(&validator, result))
    }

    /// `validate`: a named or inline schema against a response → `{valid, errors}`.
    pub fn validate(&self, schema: &Value, response: &Value) -> EngineResult<Validation> {
        let validator = match schema {
            Value::String(name) => self.project.named_validator(name)?,
            inline => self.project.inline_validator(inline)?,
        };
        let errors = Self::schema_errors(&validator, response);
        Ok(Validation::Response { valid: errors.is_empty(), errors })
    }

    /// `validate` of a workflow: its diagnostics as JSON.
    pub fn validate_workflow(&self, workflow: &str) -> EngineResult<Validation> {
        let (src, diags) = self.project.check(workflow)?;
        let mut report =
            crate::report::json_value(&[crate::report::FileReport { source: &src, diagnostics: &diags }]);
        let errors = report["summary"]["errors"].as_u64().unwrap_or(0);
        Ok(Validation::Workflow {
            valid: errors == 0,
            workflow: workflow.to_owned(),
            diagnostics: report["diagnostics"].take(),
            summary: report["summary"].take(),
        })
    }
}
