//! Lowering expressions and templates (`when`, `foreach`, `<<…>>` values) under the file's expression budget.

use super::*;

impl Lower<'_> {
    pub(super) fn expression(&mut self, node: &Node, what: &str) -> Option<ExprSource> {
        let Some(scalar) = node.as_scalar() else {
            self.violation(
                node.span,
                format!("{what} must be an expression string, found {}", node.kind_name()),
                None,
            );
            return None;
        };
        let loc = ScalarLoc { span: node.span, style: scalar.style };
        let text = scalar.value.clone();
        if !self.expr_budget(node.span, text.len()) {
            return Some(ExprSource { text, loc, expr: None });
        }
        // `foreach: "<<files>>"`: template syntax where an expression goes.
        // One diagnostic with the edit, and the inner expression is checked.
        if let Some((open, inner)) = wrapped_in_template(&text) {
            let whole = Span::new(open, open + inner.len() + 4);
            let span = loc.file_span(&self.scalars, &text, whole);
            let inner_span = loc.file_span(&self.scalars, &text, Span::new(open + 2, open + 2 + inner.len()));
            let trimmed = inner.trim();
            let mut d = Diagnostic::new(
                Code::ExprSyntax,
                span,
                format!("{what} is an expression already: `<<…>>` belongs in strings"),
            )
            .with_help(format!("write `{trimmed}`"));
            // The edit keeps the text inside `<<` `>>`, when it maps one to one.
            if (span.end - span.start) as usize == inner.len() + 4
                && (inner_span.end - inner_span.start) as usize == inner.len()
            {
                d = d.with_fix(span, trimmed);
            }
            self.diags.push(d);
            let expr = crate::syntax::expr::parse_expr_at(inner, open + 2).ok();
            return Some(ExprSource { text, loc, expr });
        }
        let expr = match parse_expr(&text) {
            Ok(e) => Some(e),
            Err(err) => {
                let span = loc.file_span(&self.scalars, &text, err.span);
                let help = err.help.or_else(|| foreign_syntax_hint(&text, err.span));
                self.diags.push(Diagnostic::new(Code::ExprSyntax, span, err.message).with_help_opt(help));
                None
            }
        };
        Some(ExprSource { text, loc, expr })
    }

    /// Counts `len` bytes of expression text against the file's budget; past
    /// it, reports once (at `span`) and the text is not parsed.
    pub(super) fn expr_budget(&mut self, span: Span, len: usize) -> bool {
        let before = self.expr_bytes;
        self.expr_bytes = before.saturating_add(len);
        let budget = self.expr_budget;
        if self.expr_bytes <= budget {
            return true;
        }
        if before <= budget {
            self.diags.push(
                Diagnostic::new(
                    Code::ExprSyntax,
                    span,
                    format!("the file's expressions total over {budget} bytes; the rest are not checked"),
                )
                .with_help("pass large data as a param or a capture and read it by name"),
            );
        }
        false
    }

    pub(super) fn template_string(&mut self, node: &Node, text: String) -> TemplateString {
        let style = node.as_scalar().map_or(crate::syntax::node::ScalarStyle::Plain, |s| s.style);
        let loc = ScalarLoc { span: node.span, style };
        if !self.expr_budget(node.span, interpolation_bytes(&text)) {
            // Not parsed; the error above keeps the file from running.
            let template = crate::syntax::ast::Template { segments: vec![] };
            return TemplateString { text, loc, template };
        }
        let (template, errors) = parse_template(&text);
        for err in errors {
            let span = loc.file_span(&self.scalars, &text, err.span);
            let help = err.help.or_else(|| foreign_syntax_hint(&text, err.span));
            self.diags.push(Diagnostic::new(Code::ExprSyntax, span, err.message).with_help_opt(help));
        }
        TemplateString { text, loc, template }
    }

    pub(super) fn template_value(&mut self, node: &Node) -> TemplateValue {
        match &node.kind {
            NodeKind::Scalar(s) => match s.resolve() {
                ScalarValue::Null => TemplateValue::Null(node.span),
                ScalarValue::Bool(b) => TemplateValue::Bool(b, node.span),
                ScalarValue::Int(i) => TemplateValue::Number(i as f64, node.span),
                ScalarValue::Float(f) => TemplateValue::Number(f, node.span),
                ScalarValue::String(text) => {
                    TemplateValue::String(Box::new(self.template_string(node, text.to_owned())))
                }
            },
            NodeKind::Seq(items) => {
                TemplateValue::Array(items.iter().map(|i| self.template_value(i)).collect(), node.span)
            }
            NodeKind::Map(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for e in entries {
                    let Some(k) = e.key.as_scalar() else {
                        self.violation(e.key.span, "`input_template` keys must be strings", None);
                        continue;
                    };
                    let key = Str { value: k.value.as_str().into(), span: e.key.span };
                    out.push((key, self.template_value(&e.value)));
                }
                TemplateValue::Object(out, node.span)
            }
        }
    }
}
