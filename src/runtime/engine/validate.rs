//! Validating results and responses against JSON Schemas (compiled once,
//! cached), and workflows against the checker.

use super::*;
use crate::runtime::error_details::FieldError;
use crate::runtime::reply::Validation;

impl Engine {
    // ---- validation -----------------------------------------------------

    /// At most 50 errors of `instance` against `validator`.
    pub(super) fn schema_errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<FieldError> {
        // Bounded work and memory per request. A valid value costs one
        // pass and nothing kept. jsonschema gathers *every* error before
        // its iterator yields one (hundreds of bytes each: a 4 MB array of
        // wrong items cost 1 GB), so a large value gets only its first
        // error, found by a pass that stops there; a small one its first
        // 50. Each message is cut to a few hundred bytes (a message can
        // quote the whole failing value).
        let error = |e: jsonschema::ValidationError<'_>| FieldError {
            path: e.instance_path().to_string(),
            message: cut_message(e.to_string()),
            help: None,
        };
        if validator.is_valid(instance) {
            return Vec::new();
        }
        if values_over(instance, ALL_ERRORS_UP_TO) {
            return validator.validate(instance).err().map(error).into_iter().collect();
        }
        validator.iter_errors(instance).take(50).map(error).collect()
    }

    /// At most 50 errors of `instance` against the inline `schema`: none,
    /// without compiling the schema, when it surely holds
    /// (`ir::sure_schema`: a process that meets only plain schemas never
    /// builds `jsonschema`'s meta-schema validator).
    pub(super) fn inline_errors(
        &self,
        schema: &Value,
        instance: &Value,
    ) -> Result<Vec<FieldError>, EngineError> {
        use crate::ir::sure_schema;
        if sure_schema::compiles(schema) && sure_schema::valid(schema, instance) {
            return Ok(Vec::new());
        }
        Ok(Self::schema_errors(&*self.project.inline_validator(schema)?, instance))
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

    /// What an instruction's call answers, as far as anything says: the
    /// step's success schema, else the `outputSchema` of the tool in
    /// `tools.lock.json`, else `{}` (anything).
    pub fn output_type_of(&self, instruction: &crate::runtime::reply::Instruction) -> Value {
        if !instruction.success_schema.is_null() {
            return self.success_schema_of(instruction);
        }
        let config = self.project.check_config();
        let locked = instruction.call.as_deref().and_then(|call| {
            config.lock.as_ref().and_then(|lock| lock.contracts.get(call).and_then(|c| c.output.clone()))
        });
        locked.unwrap_or_else(|| json!({}))
    }

    pub(super) fn validate_result(
        &self,
        schema: &SchemaRef,
        result: &Value,
    ) -> Result<Vec<FieldError>, EngineError> {
        let validator = match schema {
            SchemaRef::Named(n) => self.project.named_validator(&n.value)?,
            SchemaRef::Inline { schema, .. } => self.project.step_validator(schema)?,
        };
        Ok(Self::schema_errors(&validator, result))
    }

    /// `validate`: a named or inline schema against a response → `{valid, errors}`.
    pub fn validate(&self, schema: &Value, response: &Value) -> EngineResult<Validation> {
        let errors = match schema {
            Value::String(name) => Self::schema_errors(&*self.project.named_validator(name)?, response),
            inline => self.inline_errors(inline, response)?,
        };
        let errors: Vec<Value> = errors.iter().map(|e| serde_json::to_value(e).unwrap_or_default()).collect();
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

/// Values up to this many (nested values counted) get all their errors
/// listed (at most 50); larger ones their first.
const ALL_ERRORS_UP_TO: usize = 10_000;

/// True when `value` holds more than `limit` values, counting itself and
/// every nested one; stops counting past `limit`.
fn values_over(value: &Value, limit: usize) -> bool {
    let mut stack = vec![value];
    let mut seen = 0usize;
    while let Some(v) = stack.pop() {
        seen += 1;
        if seen > limit {
            return true;
        }
        let children = match v {
            Value::Array(items) => items.len(),
            Value::Object(map) => map.len(),
            _ => 0,
        };
        if seen + children > limit {
            return true;
        }
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_invalid_value_gets_its_first_error_and_a_small_one_fifty() {
        let schema = json!({"type": "array", "items": {"type": "string"}});
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(Engine::schema_errors(&validator, &json!(["a", "b"])).is_empty());
        let small = Engine::schema_errors(&validator, &json!(vec![1; 100]));
        assert_eq!(small.len(), 50);
        assert_eq!(small[1].path, "/1");
        let large = Engine::schema_errors(&validator, &json!(vec![1; ALL_ERRORS_UP_TO + 1]));
        assert_eq!(
            serde_json::to_value(&large).unwrap(),
            json!([{"path": "/0", "message": "1 is not of type \"string\""}])
        );
        assert!(!values_over(&json!(vec![1; 9]), 10));
        assert!(values_over(&json!({"a": vec![1; 10]}), 10));
    }
}
