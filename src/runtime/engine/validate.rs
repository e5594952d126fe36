//! Validating results and responses against JSON Schemas (compiled once,
//! cached), and workflows against the checker.

use super::*;
use crate::runtime::reply::Validation;

impl Engine {
    // ---- validation -----------------------------------------------------

    pub(super) fn validator(
        &self,
        cache_key: &str,
        schema: &Value,
    ) -> Result<Arc<jsonschema::Validator>, EngineError> {
        if let Some(v) = self.validators.lock().unwrap_or_else(|p| p.into_inner()).get(cache_key) {
            return Ok(v.clone());
        }
        let v = Arc::new(jsonschema::validator_for(schema).map_err(|e| {
            EngineError::new(
                ErrorCode::UnknownSchema,
                json!({"schema": cache_key, "message": format!("invalid JSON Schema: {e}")}),
            )
        })?);
        self.validators.lock().unwrap_or_else(|p| p.into_inner()).insert(cache_key.to_owned(), v.clone());
        Ok(v)
    }

    pub(super) fn schema_errors(
        &self,
        cache_key: &str,
        schema: &Value,
        instance: &Value,
    ) -> Result<Vec<Value>, EngineError> {
        let v = self.validator(cache_key, schema)?;
        // Bounded work and memory per request: at most 50 errors (the
        // iterator is lazy, so validation stops there), each message cut to
        // a few hundred bytes (a message can quote the whole failing value).
        Ok(v.iter_errors(instance)
            .take(50)
            .map(|e| json!({ "path": e.instance_path().to_string(), "message": cut_message(e.to_string()) }))
            .collect())
    }

    pub(super) fn named_schema(&self, name: &str) -> Result<Value, EngineError> {
        self.project.schema(name).cloned()
    }

    /// The JSON Schema an instruction's result must match: its inline
    /// schema, its named schema looked up, or `{}` (anything) when it has
    /// none or the name is unknown.
    pub fn success_schema_of(&self, instruction: &crate::runtime::reply::Instruction) -> Value {
        match &instruction.success_schema {
            Value::String(name) => self.named_schema(name).unwrap_or_else(|_| json!({})),
            Value::Null => json!({}),
            inline => inline.clone(),
        }
    }

    pub(super) fn validate_result(
        &self,
        schema: &SchemaRef,
        result: &Value,
    ) -> Result<Vec<Value>, EngineError> {
        match schema {
            SchemaRef::Named(n) => {
                let s = self.named_schema(&n.value)?;
                self.schema_errors(&n.value, &s, result)
            }
            SchemaRef::Inline { schema, .. } => self.schema_errors(&schema.to_string(), schema, result),
        }
    }

    /// `validate`: a named or inline schema against a response → `{valid, errors}`.
    pub fn validate(&self, schema: &Value, response: &Value) -> EngineResult<Validation> {
        let errors = match schema {
            Value::String(name) => {
                let s = self.named_schema(name)?;
                self.schema_errors(name, &s, response)?
            }
            inline => self.schema_errors(&inline.to_string(), inline, response)?,
        };
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
