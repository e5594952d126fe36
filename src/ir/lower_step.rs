//! Lowering one step: its keys, ids, bindings, timeout and retry.

use super::*;

/// [`STEP_KEYS`] without `with:` (the keys of a `call` step), made once: it
/// was collected again for every step.
static CALL_STEP_KEYS: std::sync::LazyLock<Vec<KeyDoc>> =
    std::sync::LazyLock::new(|| STEP_KEYS.iter().filter(|k| k.name != "with").copied().collect());

impl Lower<'_> {
    pub(super) fn step(&mut self, node: &Node) -> Option<Step> {
        let Some(entries) = node.as_map() else {
            self.violation(
                node.span,
                format!("a step must be a mapping with `id` and `call`, found {}", node.kind_name()),
                None,
            );
            return None;
        };
        let uses_node = node.get("uses");
        if uses_node.is_some() {
            self.check_keys(entries, STEP_KEYS, "step");
        } else {
            // `with:` belongs to a `uses:` step; on a `call` step it is the
            // original system's `input_template`, reported as before.
            self.check_keys(entries, &CALL_STEP_KEYS, "step");
        }
        let id = self.step_id(node, entries)?;
        let uses = uses_node.and_then(|n| self.workflow_ref(n));
        let waits = WAIT_KEYS.iter().any(|k| node.get(k).is_some());
        let call = self.step_call(node, entries, &id, waits);
        let deps = node.get("deps").map(|n| self.string_list(n, "`deps`")).unwrap_or_default();
        let (capture_as, loop_var, foreach) = self.step_bindings(node);
        let when = node.get("when").and_then(|n| self.expression(n, "`when`")).map(Box::new);
        let (wait, wait_schema) = match self.wait(node, &id) {
            Some((w, schema)) => (Some(w), schema),
            None => (None, None),
        };
        let success_schema = match &wait {
            Some(_) => wait_schema,
            None => node.get("success_schema").and_then(|n| self.schema_ref(n, "`success_schema`")),
        };
        // Reported by `wait`: a wait has no input.
        let input_template = if wait.is_some() { None } else { self.step_input(node) };
        let rationale = node.get("rationale").and_then(|n| {
            let s = self.scalar_text(n, "`rationale`")?;
            Some(Box::new(self.template_string(n, s)))
        });
        let description = node.get("description").and_then(|n| self.scalar_text(n, "`description`"));
        // On a wait these keys were reported by `wait`: read no further.
        let (timeout, retry_max) = match wait {
            Some(_) => (None, None),
            None => (
                node.get("timeout").and_then(|n| self.timeout(n)),
                node.get("retry").and_then(|n| self.retry(n)),
            ),
        };
        Some(Step {
            id,
            span: node.span,
            call,
            uses,
            deps,
            input_template,
            capture_as,
            success_schema,
            when,
            foreach,
            loop_var,
            rationale,
            description,
            timeout,
            retry_max,
            wait,
        })
    }

    /// A step's `id`, reported when missing or not a valid id (`None` only
    /// when there is none to name the step by).
    fn step_id(&mut self, node: &Node, entries: &[Entry]) -> Option<Str> {
        let id = match node.get("id") {
            Some(n) => self.string(n, "step `id`")?,
            None => {
                // A legacy `name:` or a misspelling is already reported as the key to rename.
                if node.get("name").is_none() && !Self::misspelled(entries, STEP_KEYS, "id") {
                    let span = entries.first().map_or(node.span, |e| e.key.span);
                    self.violation(
                        span,
                        "step is missing required key `id`",
                        Some("every step needs a unique `id`".into()),
                    );
                }
                return None;
            }
        };
        if let Some(bad) = id.value.chars().find(|c| matches!(c, '[' | ']') || c.is_whitespace()) {
            let why = if bad == '[' || bad == ']' {
                "`[` and `]` are reserved for foreach items"
            } else {
                "ids cannot hold whitespace"
            };
            self.violation(id.span, format!("step id `{}` is not valid: {why}", id.value), None);
        } else if id.value.is_empty() {
            self.violation(id.span, "step id is empty", None);
        }
        Some(id)
    }

    /// A step's `call`: none on a wait or a `uses:` step, and reported
    /// when it is both or neither.
    fn step_call(&mut self, node: &Node, entries: &[Entry], id: &Str, waits: bool) -> Option<Str> {
        let uses = node.get("uses").is_some();
        match node.get("call") {
            // Reported by `wait`: a wait calls nothing.
            Some(_) if waits => None,
            Some(n) if uses => {
                self.violation(
                    n.span,
                    format!("step `{}` has both `call` and `uses`", id.value),
                    Some("a step either calls a tool (`call`) or runs a workflow (`uses`): keep one".into()),
                );
                None
            }
            Some(n) => self.string(n, "`call`"),
            None if uses || waits => None,
            None => {
                // A legacy `tool:` / `agent:` or a misspelling is already reported as the key to rename.
                if node.get("tool").is_none()
                    && node.get("agent").is_none()
                    && !Self::misspelled(entries, STEP_KEYS, "call")
                {
                    self.violation(
                        id.span,
                        format!("step `{}` is missing required key `call`", id.value),
                        None,
                    );
                }
                None
            }
        }
    }

    /// The names a step binds: `capture_as`, and the loop variable `as`
    /// with its `foreach`.
    fn step_bindings(&mut self, node: &Node) -> (Option<Str>, Option<Str>, Option<Box<ExprSource>>) {
        let capture_as = node.get("capture_as").and_then(|n| self.string(n, "`capture_as`"));
        if let Some(c) = &capture_as {
            self.binding_name(c, "capture name");
        }
        let loop_var = node.get("as").and_then(|n| self.string(n, "`as`"));
        if let Some(v) = &loop_var {
            self.binding_name(v, "loop variable");
        }
        let foreach = node.get("foreach").and_then(|n| self.expression(n, "`foreach`")).map(Box::new);
        if let (Some(v), None) = (&loop_var, &foreach)
            && node.get("foreach").is_none()
        {
            self.violation(
                v.span,
                "`as` names the loop variable of `foreach`, but this step has no `foreach`",
                None,
            );
        }
        (capture_as, loop_var, foreach)
    }

    /// The input of a step that is not a wait: `input_template` of a
    /// `call`, `with:` of a `uses:` (and `input_template` there reported).
    fn step_input(&mut self, node: &Node) -> Option<TemplateValue> {
        let uses = node.get("uses").is_some();
        match (node.get("input_template"), node.get("with")) {
            (Some(n), Some(_)) if uses => {
                self.violation(
                    n.span,
                    "a `uses:` step gives the workflow its params with `with:`, not `input_template`",
                    Some("move these keys under `with:`".into()),
                );
                None
            }
            (Some(n), None) if uses => {
                let mut d = Diagnostic::new(
                    Code::YamlSchemaViolation,
                    n.span,
                    "a `uses:` step gives the workflow its params with `with:`",
                )
                .with_help("rename `input_template` to `with`");
                if let Some(key) = node.as_map().and_then(|es| {
                    es.iter().find(|e| e.key.as_scalar().is_some_and(|k| k.value == "input_template"))
                }) && let Some(k) = key.key.as_scalar()
                {
                    d.fix = key_fix(key.key.span, k, "with");
                }
                self.diags.push(d);
                Some(self.template_value(n))
            }
            (Some(n), _) => Some(self.template_value(n)),
            (None, Some(n)) if uses => {
                if !matches!(n.kind, NodeKind::Map(_)) && !n.is_null() {
                    self.violation(
                        n.span,
                        format!("`with` must be a mapping of params, found {}", n.kind_name()),
                        Some("write `with: {param: <<expr>>}`".into()),
                    );
                }
                Some(self.template_value(n))
            }
            (None, _) => None,
        }
    }

    /// A schema reference: a name in `schemas/`, or an inline schema (each
    /// distinct text compiled once, and kept once).
    pub(super) fn schema_ref(&mut self, n: &Node, what: &str) -> Option<SchemaRef> {
        match &n.kind {
            NodeKind::Map(_) => {
                let schema = n.to_json();
                // Generated workflows repeat one inline schema: compile each
                // text once, and keep one copy of it.
                let text = schema.to_string();
                let (shared, valid) = match self.inline_schemas.get(&text) {
                    Some((shared, valid)) => (Arc::clone(shared), *valid),
                    None => (Arc::new(schema), false),
                };
                if !valid {
                    let help = "the run would stop at this step with UNKNOWN_SCHEMA; fix the schema";
                    let what = "this inline schema";
                    let valid = self.invalid_schema(n, &shared, Code::UnknownSchema, what, help);
                    self.inline_schemas.insert(text, (Arc::clone(&shared), valid));
                }
                let schema = shared;
                Some(SchemaRef::Inline { schema, span: n.span })
            }
            _ => self.string(n, what).map(SchemaRef::Named),
        }
    }

    /// The workflow id of `uses:`.
    fn workflow_ref(&mut self, node: &Node) -> Option<Str> {
        let id = self.string(node, "`uses`")?;
        if !valid_workflow_id(&id.value) {
            self.violation(
                id.span,
                format!("`uses: {}` is not a workflow id", id.value),
                Some("name a workflow of the project by its id: the file stem under `workflows/`".into()),
            );
            return None;
        }
        Some(id)
    }

    /// `outputs:`: name → template string, each name an identifier.
    pub(super) fn outputs(&mut self, node: &Node) -> Vec<Output> {
        if node.is_null() {
            return Vec::new();
        }
        let Some(entries) = node.as_map() else {
            self.violation(
                node.span,
                format!("`outputs` must be a mapping of names to `<<expr>>`, found {}", node.kind_name()),
                Some("write `outputs: {summary: <<review.text>>}`".into()),
            );
            return Vec::new();
        };
        let mut out: Vec<Output> = Vec::new();
        for e in entries {
            let Some(name) = self.string(&e.key, "an output name") else { continue };
            if !is_identifier(&name.value) {
                self.violation(
                    name.span,
                    format!("output `{}` is not an identifier", name.value),
                    Some("a caller reads it as `capture.NAME`: use letters, digits and `_`".into()),
                );
                continue;
            }
            let Some(text) = self.scalar_text(&e.value, &format!("output `{}`", name.value)) else {
                continue;
            };
            let value = self.template_string(&e.value, text);
            out.push(Output { name, value });
        }
        out
    }

    pub(super) fn binding_name(&mut self, name: &Str, what: &str) {
        if RESERVED_NAMES.contains(&name.value.as_str()) {
            self.violation(
                name.span,
                format!("`{}` is a reserved name and cannot be a {what}", name.value),
                Some(format!("reserved names: {}", RESERVED_NAMES.join(", "))),
            );
        } else if !is_identifier(&name.value) {
            self.violation(
                name.span,
                format!("{what} `{}` is not an identifier", name.value),
                Some(
                    "expressions read it by name: use letters, digits and `_`, not starting with a digit"
                        .into(),
                ),
            );
        }
    }

    pub(super) fn timeout(&mut self, node: &Node) -> Option<f64> {
        let help = Some("write seconds (`30`) or a duration (`500ms`, `30s`, `5m`, `1h`)".to_owned());
        let secs = match node.as_scalar().map(|s| s.resolve()) {
            Some(ScalarValue::Int(i)) => Some(i as f64),
            Some(ScalarValue::Float(f)) => Some(f),
            Some(ScalarValue::String(s)) => parse_duration(s),
            _ => None,
        };
        match secs {
            Some(s) if s.is_finite() && s > 0.0 => Some(s),
            _ => {
                self.violation(node.span, "`timeout` must be a positive duration", help);
                None
            }
        }
    }

    pub(super) fn retry(&mut self, node: &Node) -> Option<u32> {
        let Some(entries) = node.as_map() else {
            self.violation(
                node.span,
                format!("`retry` must be a mapping like `{{max: 3}}`, found {}", node.kind_name()),
                None,
            );
            return None;
        };
        self.check_keys(entries, RETRY_KEYS, "retry");
        let max = node.get("max")?;
        match max.as_scalar().map(|s| s.resolve()) {
            Some(ScalarValue::Int(i)) if (0..=1000).contains(&i) => Some(i as u32),
            _ => {
                self.violation(max.span, "`retry.max` must be a whole number from 0 to 1000", None);
                None
            }
        }
    }
}
