//! Params: the original `name: {desc, required: true}` form → JSON Schema
//! properties (`description`) and a top-level `required` list; a param used
//! as `{{params.NAME}}` but never declared is declared, and required.

use super::Cx;
use super::placeholder;
use super::step::{scalar_text, template_scalars};
use super::value::{Yaml, key_text};
use crate::syntax::node::{Node, ScalarValue};

/// The params: declared (legacy forms converted), inferred, required.
#[derive(Debug, Default)]
pub(super) struct Params {
    pub declared: Vec<String>,
    /// Used as `{{params.NAME}}` but not declared: (name, line of first use).
    pub inferred: Vec<(String, usize)>,
    pub required: Vec<String>,
    /// `params` is a full `{type: object, properties}` schema, or not a
    /// mapping at all (for `check` to report): left alone.
    left_alone: bool,
}

impl Params {
    pub fn read(cx: &Cx, root: &Node, steps: &[Node]) -> Params {
        let mut p = Params::default();
        if let Some(params) = root.get("params") {
            if params.as_map().is_none() && !params.is_null() {
                p.left_alone = true;
            } else if params.get("type").is_some() && params.get("properties").is_some() {
                p.left_alone = true;
                let props = params.get("properties").and_then(Node::as_map).unwrap_or_default();
                p.declared.extend(props.iter().map(|e| key_text(&e.key)));
                for r in params.get("required").and_then(Node::as_seq).unwrap_or_default() {
                    p.required.extend(scalar_text(r));
                }
            } else {
                for e in params.as_map().unwrap_or_default() {
                    let name = key_text(&e.key);
                    if e.value.get("required").and_then(Node::as_scalar).map(|s| s.resolve())
                        == Some(ScalarValue::Bool(true))
                    {
                        p.required.push(name.clone());
                    }
                    p.declared.push(name);
                }
            }
        }
        for r in root.get("required").and_then(Node::as_seq).unwrap_or_default() {
            if let Some(r) = scalar_text(r)
                && !p.required.contains(&r)
            {
                p.required.push(r);
            }
        }
        if p.left_alone {
            return p;
        }
        for step in steps {
            for node in template_scalars(step) {
                let Some(text) = node.as_str() else { continue };
                for (_, inner) in placeholder::find_all(text) {
                    let Some(path) = placeholder::parse_path(inner) else { continue };
                    let Some(name) = path.first_field.filter(|_| path.root == "params") else { continue };
                    if !p.declared.iter().any(|d| d == name) && !p.inferred.iter().any(|(d, _)| d == name) {
                        p.inferred.push((name.to_owned(), cx.line(node.span.start)));
                    }
                }
            }
        }
        for (name, _) in &p.inferred {
            p.declared.push(name.clone());
            if !p.required.contains(name) {
                p.required.push(name.clone());
            }
        }
        p
    }

    /// The `params` mapping: the original one converted (if the file had
    /// one), then the inferred params.
    pub fn yaml(&self, cx: &mut Cx, original: Option<&Node>) -> Yaml {
        let mut out = Vec::new();
        if let Some(node) = original {
            if self.left_alone {
                return Yaml::from_node(node);
            }
            for e in node.as_map().unwrap_or_default() {
                out.push((key_text(&e.key), legacy_param(cx, &key_text(&e.key), &e.value)));
            }
        }
        for (name, line) in &self.inferred {
            cx.changes.push(super::Change {
                line: *line,
                message: format!("declared param `{name}` (required): the original used `{{{{params.{name}}}}}` without declaring it"),
            });
            let description =
                "Inferred by savant-think migrate: the original workflow used it without declaring it.";
            out.push((name.clone(), Yaml::Map(vec![("description".into(), Yaml::Str(description.into()))])));
        }
        Yaml::Map(out)
    }

    /// An existing top-level `required`, extended with the legacy and inferred ones.
    pub fn required_yaml(&self, node: &Node) -> Yaml {
        let mut items: Vec<Yaml> = node
            .as_seq()
            .map_or_else(|| vec![Yaml::from_node(node)], |s| s.iter().map(Yaml::from_node).collect());
        for r in &self.required {
            if !items.iter().any(|i| i.as_str() == Some(r)) {
                items.push(Yaml::Str(r.clone()));
            }
        }
        Yaml::Seq(items)
    }
}

/// `{desc: …, required: true}` → `{description: …}`.
fn legacy_param(cx: &mut Cx, name: &str, node: &Node) -> Yaml {
    let Some(entries) = node.as_map() else { return Yaml::from_node(node) };
    let mut out = Vec::new();
    for e in entries {
        let key = key_text(&e.key);
        match key.as_str() {
            "desc" if node.get("description").is_none() => {
                cx.change(&e.key, format!("param `{name}`: `desc` → `description`"));
                out.push(("description".into(), Yaml::from_node(&e.value)));
            }
            "required"
                if e.value.as_scalar().is_some_and(|s| matches!(s.resolve(), ScalarValue::Bool(_))) =>
            {
                let to = if e.value.as_scalar().map(|s| s.resolve()) == Some(ScalarValue::Bool(true)) {
                    "listed in the top-level `required`"
                } else {
                    "dropped (params are optional by default)"
                };
                cx.change(
                    &e.key,
                    format!(
                        "param `{name}`: `required: {}` → {to}",
                        e.value.as_scalar().map_or("", |s| s.value.as_str())
                    ),
                );
            }
            _ => out.push((key, Yaml::from_node(&e.value))),
        }
    }
    Yaml::Map(out)
}
