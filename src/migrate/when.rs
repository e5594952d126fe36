//! `applicable_when: {var, field, equals, min_conf_field, min_conf}` → a
//! `when:` expression.
//!
//! The step applies when capture `var` has `field` equal to `equals` and,
//! if `min_conf_field` is given, a number in `min_conf_field` of at least
//! `min_conf`. Every access is optional (`?.`) and a missing confidence
//! counts as 0, so a skipped gate (a `null` capture) or a result without
//! the field makes the step skipped, never an error:
//!
//! ```text
//! gate_mig?.applicable == true && (gate_mig?.confidence ?? 0) >= 0.6
//! ```

use crate::syntax::node::{Node, ScalarValue};

/// The expression for an `applicable_when` mapping, or why it cannot be
/// translated (the mapping is then kept for `check` to report).
pub fn translate(node: &Node) -> Result<Translated, String> {
    let entries =
        node.as_map().ok_or_else(|| format!("`applicable_when` is {}, not a mapping", node.kind_name()))?;
    const KNOWN: &[&str] = &["var", "field", "equals", "min_conf_field", "min_conf"];
    if let Some(e) =
        entries.iter().find(|e| !e.key.as_scalar().is_some_and(|k| KNOWN.contains(&k.value.as_str())))
    {
        let key = super::value::key_text(&e.key);
        return Err(format!("unknown `applicable_when` key `{key}` (known: {})", KNOWN.join(", ")));
    }
    let var =
        node.get("var").and_then(Node::as_str).ok_or("`applicable_when` needs `var`, a capture name")?;
    if !crate::ir::lower::is_identifier(var) {
        return Err(format!("`applicable_when.var` `{var}` is not a capture name"));
    }
    let field = node.get("field").and_then(Node::as_str).ok_or("`applicable_when` needs `field`")?;
    let equals = node.get("equals").map_or(Ok("true".to_owned()), literal)?;
    let mut expr = format!("{} == {equals}", access(var, field));
    match (node.get("min_conf_field"), node.get("min_conf")) {
        (None, None) => {}
        (Some(f), Some(min)) => {
            let f = f.as_str().ok_or("`applicable_when.min_conf_field` must be a string")?;
            let min = match min.as_scalar().map(|s| s.resolve()) {
                Some(ScalarValue::Int(_) | ScalarValue::Float(_)) => literal(min)?,
                _ => return Err("`applicable_when.min_conf` must be a number".to_owned()),
            };
            expr = format!("{expr} && ({} ?? 0) >= {min}", access(var, f));
        }
        _ => {
            return Err("`applicable_when` needs both `min_conf_field` and `min_conf`, or neither".to_owned());
        }
    }
    Ok(Translated { expr, var: var.to_owned() })
}

/// A translated condition and the capture it reads.
#[derive(Debug, PartialEq)]
pub struct Translated {
    pub expr: String,
    pub var: String,
}

/// `var?.field`, or `var?.['odd-field']`.
fn access(var: &str, field: &str) -> String {
    if crate::ir::lower::is_identifier(field) {
        format!("{var}?.{field}")
    } else {
        format!("{var}?.[{}]", string_literal(field))
    }
}

/// An expression literal for a scalar.
fn literal(node: &Node) -> Result<String, String> {
    let scalar = node.as_scalar().ok_or("`applicable_when.equals` must be a scalar")?;
    Ok(match scalar.resolve() {
        ScalarValue::Null => "null".to_owned(),
        ScalarValue::Bool(b) => b.to_string(),
        ScalarValue::Int(i) => i.to_string(),
        ScalarValue::Float(f) if f.is_finite() => {
            let s = f.to_string();
            if s.contains(['.', 'e', 'E']) { s } else { format!("{s}.0") }
        }
        ScalarValue::Float(_) => return Err("`applicable_when` numbers must be finite".to_owned()),
        ScalarValue::String(s) => string_literal(s),
    })
}

/// A single-quoted expression string.
fn string_literal(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;
    use crate::syntax::{expr::parse_expr, yaml};

    fn tr(text: &str) -> Result<String, String> {
        let root =
            yaml::parse(&SourceFile::new("t.yaml", text), &crate::source::Limits::default()).root.unwrap();
        translate(&root).map(|t| {
            parse_expr(&t.expr).unwrap_or_else(|e| panic!("{} does not parse: {e:?}", t.expr));
            t.expr
        })
    }

    #[test]
    fn translations() {
        assert_eq!(
            tr("{var: gate_mig, field: applicable, equals: true, min_conf_field: confidence, min_conf: 0.6}"),
            Ok("gate_mig?.applicable == true && (gate_mig?.confidence ?? 0) >= 0.6".to_owned())
        );
        assert_eq!(tr("{var: g, field: kind, equals: \"it's\"}"), Ok("g?.kind == 'it\\'s'".to_owned()));
        assert_eq!(tr("{var: g, field: my-field, equals: 3}"), Ok("g?.['my-field'] == 3".to_owned()));
        assert!(tr("{var: g, field: f, min_conf: 1}").unwrap_err().contains("both"));
        assert!(tr("{var: g, field: f, colour: red}").unwrap_err().contains("unknown"));
        assert!(tr("{field: f}").unwrap_err().contains("var"));
        assert!(tr("[a]").is_err());
    }
}
