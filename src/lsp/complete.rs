//! Completion: tool names in `call:`, the called tool's inputs under
//! `input_template:`, the project's workflows in `uses:` and the used
//! workflow's params under `with:`, step ids in `deps`, names in scope and functions
//! inside `<<…>>` and expressions, fields after `.`, and step and workflow
//! keys.

use super::document::Analysis;
use crate::check::infer::{Infer, loop_item_type};
use crate::check::scope::{self, LOOP_FIELDS, RUN_FIELDS, WORKFLOW_FIELDS};
use crate::check::{Config, Cx};
use crate::ir::lower::{KeyDoc, STEP_KEYS, WORKFLOW_KEYS};
use crate::ir::{ExprSite, Type, builtins};
use crate::syntax::expr::parse_expr;
use lsp_types::{CompletionItem, CompletionItemKind, Documentation, MarkupContent, MarkupKind};

/// Where the cursor is, read from the text before it.
#[derive(Debug, PartialEq)]
enum Context {
    /// In a `deps:` list.
    Deps,
    /// The value of `call:`.
    Call,
    /// The value of `uses:`: the project's workflows.
    Uses,
    /// In an expression; `path` is the text before a trailing `.` (`mr.changes`), if any.
    Expr {
        site: ExprSite,
        path: Option<String>,
    },
    /// At a key under a step's `input_template:`: the called tool's inputs.
    InputKey,
    /// At a key of a mapping: a step's (indented) or the workflow's.
    Key {
        step: bool,
    },
    None,
}

fn line_before(text: &str, offset: usize) -> &str {
    let start = text[..offset].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    &text[start..offset]
}

fn context(text: &str, offset: usize) -> Context {
    let line = line_before(text, offset);
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    // Inside an unclosed `<<` on this line, or in a `when:` / `foreach:` value.
    let site = match (line.rfind("<<"), line.rfind(">>")) {
        (Some(open), close) if close.is_none_or(|c| c < open) => {
            Some((ExprSite::Template, &line[open + 2..]))
        }
        _ => ["when:", "foreach:"].iter().find_map(|k| {
            let rest = trimmed.strip_prefix("- ").unwrap_or(trimmed).strip_prefix(k)?;
            let site = if *k == "when:" { ExprSite::When } else { ExprSite::Foreach };
            Some((site, rest.trim_start().trim_start_matches(['"', '\''])))
        }),
    };
    if let Some((site, expr)) = site {
        // The word being typed and the path before its dot.
        let word_start = expr
            .char_indices()
            .rfind(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &expr[word_start..];
        let path = word.rfind('.').map(|d| word[..d].to_owned()).filter(|p| !p.is_empty());
        return Context::Expr { site, path };
    }
    if trimmed.strip_prefix("- ").unwrap_or(trimmed).starts_with("call:") {
        return Context::Call;
    }
    if trimmed.strip_prefix("- ").unwrap_or(trimmed).starts_with("uses:") {
        return Context::Uses;
    }
    if trimmed.starts_with("deps:") || (trimmed.starts_with("- ") && under_deps(text, offset, indent)) {
        return Context::Deps;
    }
    let key_part = trimmed.strip_prefix("- ").unwrap_or(trimmed);
    let is_key = key_part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if is_key
        && !trimmed.starts_with("- ")
        && matches!(parent_key(text, offset, indent), Some("input_template" | "with"))
    {
        return Context::InputKey;
    }
    if is_key {
        return Context::Key { step: indent > 0 || trimmed.starts_with("- ") };
    }
    Context::None
}

/// The key of the nearest line above that is indented less than `indent`
/// (the mapping this line is in).
fn parent_key(text: &str, offset: usize, indent: usize) -> Option<&str> {
    let start = text[..offset].rfind('\n').unwrap_or(0);
    let l = text[..start].lines().rev().find(|l| {
        let t = l.trim_start();
        !t.is_empty() && l.len() - t.len() < indent
    })?;
    let t = l.trim_start();
    t.strip_prefix("- ").unwrap_or(t).split(':').next().map(str::trim)
}

/// The inputs of the tool the step at `offset` calls, with their types and
/// descriptions (an engine tool, a locked tool, or the manifest's).
fn input_keys(a: &Analysis, config: &Config, offset: usize) -> Vec<CompletionItem> {
    let Some(wf) = &a.wf else { return Vec::new() };
    let Some(step) = step_at(a, offset.min(a.src.text.len())).map(|i| &wf.steps[i]) else {
        return Vec::new();
    };
    // A `uses:` step's `with:`: the workflow's params.
    let used = step.uses.as_ref().and_then(|u| config.workflows.as_ref()?.contract(&u.value));
    let schema = match (&step.call, used) {
        (Some(call), _) => {
            let listed =
                config.tools.as_ref().and_then(|m| m.tools.get(call.value.as_str())).and_then(Option::as_ref);
            listed.or_else(|| config.contract(&call.value).and_then(|c| c.input.as_ref()))
        }
        (None, Some(c)) => c.input.as_ref(),
        (None, None) => None,
    };
    let Some(schema) = schema else { return Vec::new() };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str())
        .collect();
    let props = schema.get("properties").and_then(|p| p.as_object());
    props
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let req = if required.contains(&k.as_str()) { " (required)" } else { "" };
            let doc = v.get("description").and_then(|d| d.as_str()).map(str::to_owned);
            item(k, CompletionItemKind::PROPERTY, format!("{}{req}", Type::from_schema(v)), doc)
        })
        .collect()
}

/// Whether the list item on this line belongs to a `deps:` key above it.
fn under_deps(text: &str, offset: usize, indent: usize) -> bool {
    let start = text[..offset].rfind('\n').unwrap_or(0);
    for l in text[..start].lines().rev() {
        let t = l.trim_start();
        if t.is_empty() {
            continue;
        }
        let ind = l.len() - t.len();
        if t.starts_with("- ") && ind == indent {
            continue;
        }
        return t.starts_with("deps:") && ind <= indent;
    }
    false
}

fn item(label: &str, kind: CompletionItemKind, detail: String, doc: Option<String>) -> CompletionItem {
    CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        detail: Some(detail),
        documentation: doc
            .map(|d| Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: d })),
        ..Default::default()
    }
}

fn keys(table: &[KeyDoc]) -> Vec<CompletionItem> {
    table
        .iter()
        .map(|k| item(k.name, CompletionItemKind::PROPERTY, "key".into(), Some(k.description.to_owned())))
        .collect()
}

/// The step whose mapping holds `offset` (or the last one starting before it).
fn step_at(a: &Analysis, offset: usize) -> Option<usize> {
    let wf = a.wf.as_ref()?;
    wf.steps.iter().rposition(|s| (s.span.start as usize) <= offset)
}

/// Completion items at `offset` of `text` (the current text; `a` is its
/// analysis, or the last one that produced a workflow).
pub fn complete(text: &str, offset: usize, a: &Analysis, config: &Config) -> Vec<CompletionItem> {
    let offset = offset.min(text.len());
    if !text.is_char_boundary(offset) {
        return Vec::new();
    }
    match context(text, offset) {
        Context::InputKey => input_keys(a, config, offset),
        Context::Key { step: true } => keys(STEP_KEYS),
        Context::Key { step: false } => keys(WORKFLOW_KEYS),
        Context::None => Vec::new(),
        Context::Call => tools(config),
        Context::Uses => workflows(config),
        Context::Deps => {
            let Some(wf) = &a.wf else { return Vec::new() };
            // Not the step itself, nor one that depends on it: either would
            // close a cycle.
            let here = step_at(a, offset.min(a.src.text.len()));
            let cx = Cx::new(&a.src, wf, config);
            wf.steps
                .iter()
                .enumerate()
                .filter(|(i, _)| here.is_none_or(|h| *i != h && !cx.graph.depends_on(*i, h)))
                .map(|(_, s)| {
                    let call = s.call.as_ref().map_or("", |c| c.value.as_str());
                    item(&s.id.value, CompletionItemKind::REFERENCE, format!("step → {call}"), None)
                })
                .collect()
        }
        Context::Expr { site, path } => {
            let Some(wf) = &a.wf else { return Vec::new() };
            let Some(step) = step_at(a, offset.min(a.src.text.len())) else { return Vec::new() };
            let cx = Cx::new(&a.src, wf, config);
            match path {
                Some(p) => fields(&cx, step, site, &p),
                None => names(&cx, step, site),
            }
        }
    }
}

/// The tools a step can call: the engine's own and the lock's (with their
/// descriptions and input keys), and those of the manifest (`[check] tools`
/// in savant-think.toml) with the keys of their input.
/// The project's workflows, for `uses:`: each with its params.
fn workflows(config: &Config) -> Vec<CompletionItem> {
    let Some(table) = &config.workflows else { return Vec::new() };
    table
        .ids()
        .filter_map(|id| {
            let c = table.contract(id)?;
            let props = c.input.as_ref().and_then(|s| s.get("properties")).and_then(|p| p.as_object());
            let params: Vec<String> = props
                .into_iter()
                .flatten()
                .map(|(k, v)| format!("{k}: {}", crate::ir::Type::from_schema(v)))
                .collect();
            let detail = format!("workflow({})", params.join(", "));
            Some(item(id, CompletionItemKind::MODULE, detail, c.description.clone()))
        })
        .collect()
}

fn tools(config: &Config) -> Vec<CompletionItem> {
    let keys_of = |schema: Option<&serde_json::Value>| -> Vec<String> {
        let props = schema.and_then(|s| s.get("properties")).and_then(|p| p.as_object());
        props
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{k}: {}", crate::ir::Type::from_schema(v)))
            .collect()
    };
    let contract = |c: &crate::check::ToolContract, what: &str| {
        let keys = keys_of(c.input.as_ref());
        let detail = if keys.is_empty() { what.to_owned() } else { format!("{what}({})", keys.join(", ")) };
        item(&c.name, CompletionItemKind::FUNCTION, detail, c.description.clone())
    };
    let locked = config.lock.iter().flat_map(|l| l.contracts.iter()).map(|c| contract(c, "tool"));
    let engine = config.builtins.iter().map(|c| contract(c, "built-in tool"));
    let builtin = crate::check::manifest::BUILTIN_TOOLS
        .iter()
        .map(|t| item(t, CompletionItemKind::FUNCTION, "built-in tool".into(), None));
    let listed = config.tools.iter().flat_map(|m| &m.tools).map(|(name, schema)| {
        let keys: Vec<&str> = schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.as_object())
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let detail = if keys.is_empty() { "tool".to_owned() } else { format!("tool({})", keys.join(", ")) };
        let doc =
            schema.as_ref().and_then(|s| s.get("description")).and_then(|d| d.as_str()).map(str::to_owned);
        item(name, CompletionItemKind::FUNCTION, detail, doc)
    });
    let mut out: Vec<CompletionItem> = locked.chain(listed).chain(engine).chain(builtin).collect();
    let mut seen = std::collections::HashSet::new();
    out.retain(|i| seen.insert(i.label.clone()));
    out
}

fn names(cx: &Cx, step: usize, site: ExprSite) -> Vec<CompletionItem> {
    let loop_item = loop_item_type(cx, step);
    let mut out: Vec<CompletionItem> = scope::visible_names(cx, step, site)
        .into_iter()
        .map(|n| {
            let b = scope::resolve(cx, step, site, n);
            let ty = b.map(|b| scope::binding_type(cx, b, &loop_item)).unwrap_or(Type::Any);
            let origin = match b {
                Some(scope::Binding::Capture(i)) => format!("capture of step `{}`", cx.wf.steps[i].id.value),
                Some(scope::Binding::LoopVar) => "loop item".to_owned(),
                _ => "built-in".to_owned(),
            };
            item(n, CompletionItemKind::VARIABLE, format!("{ty} — {origin}"), None)
        })
        .collect();
    out.sort_by(|a, b| a.label.cmp(&b.label));
    out.dedup_by(|a, b| a.label == b.label);
    out.extend(
        builtins::FUNCTIONS
            .iter()
            .map(|f| item(f.name, CompletionItemKind::FUNCTION, f.signature(), Some(f.doc.to_owned()))),
    );
    out
}

/// The fields of the value `path` names: params, step ids, built-in fields,
/// or the object type's fields (from JSON Schemas).
fn fields(cx: &Cx, step: usize, site: ExprSite, path: &str) -> Vec<CompletionItem> {
    let field = |n: &str, ty: String| item(n, CompletionItemKind::FIELD, ty, None);
    match path {
        "params" => {
            return cx
                .wf
                .params
                .iter()
                .map(|p| {
                    let doc = p.schema.get("description").and_then(|d| d.as_str()).map(str::to_owned);
                    item(&p.name.value, CompletionItemKind::FIELD, p.ty.to_string(), doc)
                })
                .collect();
        }
        "steps" => return cx.wf.steps.iter().map(|s| field(&s.id.value, "{status}".into())).collect(),
        "workflow" => return WORKFLOW_FIELDS.iter().map(|f| field(f, "string".into())).collect(),
        "run" => return RUN_FIELDS.iter().map(|f| field(f, "string".into())).collect(),
        "loop" => return LOOP_FIELDS.iter().map(|f| field(f, "number".into())).collect(),
        _ => {}
    }
    let Ok(expr) = parse_expr(path) else { return Vec::new() };
    let loc = crate::ir::ScalarLoc {
        span: crate::source::Span::point(0),
        style: crate::syntax::node::ScalarStyle::Plain,
    };
    let mut inf =
        Infer { cx, step, site, loc: &loc, text: path, loop_item: loop_item_type(cx, step), out: None };
    let mut ty = inf.infer(&expr);
    if let Type::Array(item) = &ty {
        // `xs.` on an array offers nothing; its items' fields are one `[0]` away.
        ty = (**item).clone();
    }
    match ty {
        Type::Object(o) => o.fields.iter().map(|(n, t)| field(n, t.to_string())).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts() {
        let at_end = |t: &str| context(t, t.len());
        assert_eq!(at_end("steps:\n  - id: a\n    deps: [f"), Context::Deps);
        assert_eq!(at_end("    deps:\n      - x\n      - "), Context::Deps);
        assert_eq!(
            at_end("    input_template: { q: \"<<mr.ch"),
            Context::Expr { site: ExprSite::Template, path: Some("mr".into()) }
        );
        assert_eq!(
            at_end("    when: \"len(x) > 0 && pa"),
            Context::Expr { site: ExprSite::When, path: None }
        );
        assert_eq!(at_end("    q: \"<<a>> done"), Context::None);
        assert_eq!(at_end("  - ca"), Context::Key { step: true });
        assert_eq!(at_end("ver"), Context::Key { step: false });
        assert_eq!(at_end("  - id: a\n    call: gitl"), Context::Call);
        assert_eq!(at_end("  - call: "), Context::Call);
        assert_eq!(at_end("  - id: a\n    uses: rev"), Context::Uses);
        assert_eq!(at_end("    uses: a\n    with:\n      pa"), Context::InputKey);
        // A multi-byte character before the word is skipped whole.
        assert_eq!(at_end("    q: \"<<é.x"), Context::Expr { site: ExprSite::Template, path: None });
        assert_eq!(at_end("    q: \"<<aé"), Context::Expr { site: ExprSite::Template, path: None });
    }

    fn analysis(text: &str) -> (crate::lsp::document::Analysis, Config) {
        let config = Config::default();
        let a = crate::lsp::document::analyze(std::path::Path::new("w.yaml"), text, ".".into(), &config);
        (a, config)
    }

    fn labels_at(text: &str, marker: &str) -> Vec<String> {
        let offset = text.find(marker).unwrap() + marker.len();
        let (a, config) = analysis(text);
        complete(text, offset, &a, &config).into_iter().map(|i| i.label).collect()
    }

    /// `deps:` offers neither the step itself nor a step that depends on
    /// it (each would close a cycle).
    #[test]
    fn deps_offers_only_steps_that_keep_the_graph_acyclic() {
        let text = "steps:\n  - id: a\n    call: x\n  - id: b\n    call: x\n    deps: [a, c]\n  - id: c\n    call: x\n    deps: []\n  - id: d\n    call: x\n    deps: [b]\n";
        // In c's deps: a is fine; b and d depend on c (b directly, d through b); c is itself.
        let offered = labels_at(text, "  - id: c\n    call: x\n    deps: [");
        assert_eq!(offered, ["a"], "{offered:?}");
    }

    /// Inside `<<…>>` in quoted and block scalars, after a `.`: the fields.
    #[test]
    fn fields_complete_in_quoted_and_block_scalars() {
        let text = "params:\n  pr: { type: object, properties: { title: { type: string } } }\nsteps:\n  - id: a\n    call: x\n    input_template:\n      q: \"see <<params.pr.\"\n      s: 'see <<params.pr.'\n      b: |\n        line one\n        see <<params.pr.\n";
        for marker in ["q: \"see <<params.pr.", "s: 'see <<params.pr.", "        see <<params.pr."] {
            assert_eq!(labels_at(text, marker), ["title"], "{marker}");
        }
    }

    /// Hover on an integer param says `integer`, not the checker's `number`.
    #[test]
    fn hover_on_an_integer_param_says_integer() {
        let text =
            "params:\n  n: { type: integer }\nsteps:\n  - id: a\n    call: x\n    when: \"params.n > 1\"\n";
        let (a, config) = analysis(text);
        let offset = text.find("params.n >").unwrap() + "params.".len();
        let hit = crate::lsp::navigate::at(&a, &config, offset).unwrap();
        let hover = crate::lsp::navigate::hover(&a, &config, &hit).unwrap();
        assert!(hover.contains("`integer`"), "{hover}");
    }

    /// A step's hover describes the tool it calls (from the engine's own
    /// table here; a lock's the same way), and tool names complete with
    /// their inputs; a capture's fields come from the tool's output.
    #[test]
    fn tools_hover_and_complete_from_their_contracts() {
        let config = Config { builtins: crate::runtime::contracts::builtin(), ..Config::default() };
        let text = "steps:\n  - id: idea\n    call: think\n    input_template: { thought: hi }\n    capture_as: idea\n  - id: b\n    call: x\n    input_template: { q: \"<<idea.\" }\n";
        let a = crate::lsp::document::analyze(std::path::Path::new("w.yaml"), text, ".".into(), &config);
        let hit = crate::lsp::navigate::at(&a, &config, text.find("idea\n").unwrap()).unwrap();
        let hover = crate::lsp::navigate::hover(&a, &config, &hit).unwrap();
        assert!(hover.contains("**tool `think`**") && hover.contains("`thought`: `string`"), "{hover}");
        assert!(hover.contains("returns:") && hover.contains("`recorded_in`"), "{hover}");
        let think = tools(&config).into_iter().find(|i| i.label == "think").unwrap();
        let block = "steps:\n  - id: idea\n    call: think\n    input_template:\n      th\n";
        let b = crate::lsp::document::analyze(std::path::Path::new("w.yaml"), block, ".".into(), &config);
        let at = block.find("th\n").unwrap() + 2;
        let keys: Vec<String> = complete(block, at, &b, &config).into_iter().map(|i| i.label).collect();
        assert_eq!(keys, ["thought", "thoughts", "workflow", "run_id"], "the inputs of `think`");
        assert!(think.detail.as_deref().is_some_and(|d| d.contains("thought: string")), "{think:?}");
        let offset = text.find("<<idea.").unwrap() + "<<idea.".len();
        let labels: Vec<String> = complete(text, offset, &a, &config).into_iter().map(|i| i.label).collect();
        assert!(
            labels.contains(&"thought".to_owned()) && labels.contains(&"timestamp".to_owned()),
            "{labels:?}"
        );
    }

    /// `uses:` offers the project's workflows, `with:` the used one's params.
    #[test]
    fn uses_completes_workflows_and_with_their_params() {
        let child = "params:\n  path: { type: string }\nrequired: [path]\nsteps:\n  - {id: a, call: x}\n";
        let source = |id: &str, text: &str| crate::check::workflows::WorkflowSource {
            id: id.into(),
            path: format!("workflows/{id}.yaml"),
            text: text.into(),
        };
        let table = crate::check::workflows::WorkflowTable::build(
            vec![source("review_file", child)],
            &Config::default(),
        );
        let config = Config { workflows: Some(table), ..Config::default() };
        let text = "steps:\n  - id: r\n    uses: review_file\n    with:\n      pa\n";
        let a = crate::lsp::document::analyze(std::path::Path::new("w.yaml"), text, ".".into(), &config);
        let at = text.find("pa\n").unwrap() + 2;
        let keys: Vec<String> = complete(text, at, &a, &config).into_iter().map(|i| i.label).collect();
        assert_eq!(keys, ["path"]);
        let at = text.find("uses: ").unwrap() + "uses: ".len();
        let offered = complete(text, at, &a, &config);
        assert_eq!(offered.len(), 1);
        assert_eq!(offered[0].label, "review_file");
        assert_eq!(offered[0].detail.as_deref(), Some("workflow(path: string)"));
    }
}
