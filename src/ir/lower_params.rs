//! Lowering `params`: each parameter's JSON Schema, read into a type and checked as a schema.

use super::*;

impl Lower<'_> {
    pub(super) fn params(&mut self, node: &Node, required: &[Str]) -> Vec<Param> {
        if node.is_null() {
            return Vec::new();
        }
        // A full JSON Schema object (`type: object, properties: …`) is accepted too.
        let (props, required_inner) = match (node.get("type").and_then(Node::as_str), node.get("properties"))
        {
            (Some("object"), Some(props)) => {
                let inner = node.get("required").map(|n| self.string_list(n, "`params.required`"));
                (props, inner.unwrap_or_default())
            }
            _ => (node, Vec::new()),
        };
        let Some(entries) = props.as_map() else {
            self.violation(
                node.span,
                format!("`params` must be a mapping of name → JSON Schema, found {}", node.kind_name()),
                None,
            );
            return Vec::new();
        };
        let mut params: Vec<Param> = entries.iter().filter_map(|e| self.param(e)).collect();
        for r in required.iter().chain(&required_inner) {
            match params.iter_mut().find(|p| p.name.value == r.value) {
                Some(p) => p.required = true,
                None => {
                    let help = suggest(&r.value, params.iter().map(|p| p.name.value.as_str()));
                    self.violation(
                        r.span,
                        format!("required param `{}` is not declared in `params`", r.value),
                        help,
                    );
                }
            }
        }
        params
    }

    /// One parameter: its name checked as an identifier, its schema read
    /// into a type and checked as the engine compiles it.
    fn param(&mut self, e: &Entry) -> Option<Param> {
        let Some(name) = e.key.as_str() else {
            self.violation(e.key.span, "param names must be strings", None);
            return None;
        };
        let name = Str { value: name.into(), span: e.key.span };
        if !is_identifier(&name.value) {
            self.violation(
                name.span,
                format!("param name `{}` is not an identifier", name.value),
                Some("expressions read params as `params.NAME`: use letters, digits and `_`".into()),
            );
        }
        if !e.value.is_null() && e.value.as_map().is_none() {
            self.violation(
                e.value.span,
                format!(
                    "param `{}` must be a JSON Schema mapping, found {}",
                    name.value,
                    e.value.kind_name()
                ),
                Some("e.g. `{ type: string, description: … }`".into()),
            );
        }
        if let Some(r) = e.value.get("required")
            && matches!(r.as_scalar().map(|s| s.resolve()), Some(ScalarValue::Bool(_)))
        {
            self.violation(
                r.span,
                "`required: true` inside a param is the original system's form",
                Some("list required params at the top level: `required: [NAME]`".into()),
            );
        }
        let type_ok = match e.value.get("type") {
            Some(t) => self.schema_type(t, Code::YamlSchemaViolation),
            None => true,
        };
        let schema = if e.value.is_null() { serde_json::json!({}) } else { e.value.to_json() };
        if type_ok && e.value.as_map().is_some() {
            self.param_schema(&name.value, &e.value, &schema);
        }
        let ty = Type::from_schema(&schema);
        Some(Param { name, schema, ty, required: false })
    }

    /// Compiles a param's schema as the engine does (`jsonschema`), pointing
    /// a failure at the offending key, and checks its `default` against it:
    /// what passes here, `plan` accepts.
    pub(super) fn param_schema(&mut self, name: &str, node: &Node, schema: &serde_json::Value) {
        let what = format!("the schema of param `{name}`");
        let help = "`plan` would refuse the workflow; fix the schema";
        if self.invalid_schema(node, schema, Code::YamlSchemaViolation, &what, help)
            && let (Some(d), Some(dn)) = (schema.get("default"), node.get("default"))
            && !crate::ir::sure_schema::valid(schema, d)
            && let Ok(validator) = jsonschema::validator_for(schema)
            && let Some(err) = validator.iter_errors(d).next()
        {
            self.violation(
                dn.span,
                format!("the default of param `{name}` does not match its schema: {err}"),
                Some("`plan` would refuse the params; fix the default or the schema".into()),
            );
        }
    }

    /// Compiles `schema` (written at `node`) as the engine does; when it is
    /// not a valid JSON Schema, reports `code` at the offending key (a bad
    /// `type` with the did-you-mean of the type names) and returns false.
    pub(super) fn invalid_schema(
        &mut self,
        node: &Node,
        schema: &serde_json::Value,
        code: Code,
        what: &str,
        help: &str,
    ) -> bool {
        let Err(faults) = schema_faults(node, schema) else { return true };
        for f in faults {
            let d = match f.type_name {
                true => Diagnostic::new(code, f.span, f.message).with_help_opt(f.help),
                false => Diagnostic::new(code, f.span, format!("{what} {}", f.message)).with_help(help),
            };
            self.diags.push(d);
        }
        false
    }

    /// Checks `type:` values; false when one was reported.
    pub(super) fn schema_type(&mut self, t: &Node, code: Code) -> bool {
        let faults = type_faults(t);
        let ok = faults.is_empty();
        for f in faults {
            self.diags.push(Diagnostic::new(code, f.span, f.message).with_help_opt(f.help));
        }
        ok
    }
}

/// What is wrong with a schema, at the value at fault.
#[derive(Debug)]
pub struct SchemaFault {
    pub span: Span,
    /// "`strnig` is not a JSON Schema type" when `type_name`; else "is not
    /// a valid JSON Schema at `…`: why", to follow what the schema is.
    pub message: String,
    pub help: Option<String>,
    /// A `type:` that names no JSON Schema type.
    pub type_name: bool,
}

/// Compiles `schema` (written at `node`) as the engine does (not at all
/// when it is surely valid: `ir::sure_schema`); when it is not a valid JSON
/// Schema, says why in a person's words at the value at fault: a bad `type`
/// anywhere with the did-you-mean of the type names (not the validator's
/// "not valid under any of the schemas listed in 'anyOf'"), else the
/// validator's reason at the key it names.
pub fn schema_faults(node: &Node, schema: &serde_json::Value) -> Result<(), Vec<SchemaFault>> {
    if crate::ir::sure_schema::compiles(schema) {
        return Ok(());
    }
    let Err(e) = jsonschema::validator_for(schema) else { return Ok(()) };
    let path: Vec<String> = e.instance_path().into_iter().map(|s| s.to_string()).collect();
    let at = node_at(node, &path);
    // A bad `type` anywhere gets the did-you-mean of the type names.
    if path.last().is_some_and(|k| k == "type") || (path.len() >= 2 && path[path.len() - 2] == "type") {
        let type_node = if path.last().is_some_and(|k| k == "type") {
            at
        } else {
            node_at(node, &path[..path.len() - 1])
        };
        let faults = type_faults(type_node);
        if !faults.is_empty() {
            return Err(faults);
        }
    }
    let shown = if path.is_empty() { String::new() } else { format!(" at `{}`", path.join(".")) };
    let message = format!("is not a valid JSON Schema{shown}: {e}");
    Err(vec![SchemaFault { span: at.span, message, help: None, type_name: false }])
}

/// The `type:` values (one or a list) that name no JSON Schema type.
fn type_faults(t: &Node) -> Vec<SchemaFault> {
    const TYPES: &[&str] = &["string", "number", "integer", "boolean", "array", "object", "null"];
    let names: Vec<&Node> = match &t.kind {
        NodeKind::Seq(items) => items.iter().collect(),
        _ => vec![t],
    };
    let mut out = Vec::new();
    for n in names {
        if n.as_str().is_some_and(|s| TYPES.contains(&s)) {
            continue;
        }
        let v = n.as_scalar().map_or("", |s| s.value.as_str());
        let help = suggest(v, TYPES.iter().copied())
            .or_else(|| Some(format!("JSON Schema types are: {}", TYPES.join(", "))));
        let message = format!("`{v}` is not a JSON Schema type");
        out.push(SchemaFault { span: n.span, message, help, type_name: true });
    }
    out
}
