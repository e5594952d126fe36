//! The project's workflows as callees of `uses:`: each one's contract (its
//! params as the input schema, its `outputs:` as the output schema) and the
//! `uses:` edges between them, for the checks that look across files
//! (`UNKNOWN_WORKFLOW`, `WORKFLOW_CYCLE`, `WORKFLOW_TOO_DEEP`) and for typing
//! a `uses:` step's capture.
//!
//! Built once per project by the caller, which reads the files
//! ([`crate::workspace::load_workflows`]); nothing here does I/O. A
//! sub-workflow is one more kind of callee, like a tool: its contract is a
//! [`ToolContract`] with `sub_workflow` set.

use crate::check::{Config, Cx, ToolContract};
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::ir::{ExprSite, Type, Workflow};
use crate::source::SourceFile;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// How deep a chain of `uses:` may go (the workflow run directly is depth 0).
pub const MAX_USES_DEPTH: usize = 16;

/// One workflow file of the project, as read by the caller.
#[derive(Clone, Debug)]
pub struct WorkflowSource {
    /// The id `uses:` names it by: the file stem under `workflows/`.
    pub id: String,
    /// The path shown in messages (relative to the project root).
    pub path: String,
    pub text: String,
}

/// A `uses:` of one workflow: which step, which callee, and where (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UseEdge {
    pub step: String,
    pub callee: String,
    pub line: usize,
    pub column: usize,
}

/// What the checker knows of one workflow of the project.
#[derive(Debug)]
pub struct WorkflowEntry {
    pub id: String,
    pub path: String,
    /// Its `uses:`, in file order.
    pub uses: Vec<UseEdge>,
    /// Its contract: set once its callees' are (a callee in a cycle with
    /// it is typed `any`).
    contract: OnceLock<ToolContract>,
    /// Its text, checked on demand ([`WorkflowTable::checked`]).
    src: SourceFile,
    /// Its check, once asked for (callees first).
    checked: OnceLock<Checked>,
    /// Its lowered form and the reading diagnostics, until it is checked.
    lowered: Mutex<Option<(Workflow, Vec<Diagnostic>)>>,
}

/// A workflow of the table, checked: its diagnostics (as
/// [`crate::check::check_source`] gives them) and the first error a
/// caller is told about (suppression comments applied).
#[derive(Debug)]
pub struct Checked {
    pub diagnostics: Vec<Diagnostic>,
    pub fault: Option<Fault>,
}

/// The first error of a workflow, followed down to where it is: through
/// callees whose first error is that a callee of theirs has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The callees from the workflow asked about down to the one at fault
    /// (empty when the fault is in the workflow itself).
    pub via: Vec<String>,
    /// The workflow at fault and its path.
    pub workflow: String,
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub code: Code,
    pub message: String,
    /// How many errors that workflow has.
    pub errors: usize,
}

impl WorkflowEntry {
    /// The contract: params in, outputs out.
    pub fn contract(&self) -> Option<&ToolContract> {
        self.contract.get()
    }
}

/// The workflows of a project, by id.
#[derive(Debug, Default)]
pub struct WorkflowTable {
    entries: BTreeMap<String, WorkflowEntry>,
}

impl WorkflowTable {
    /// Reads every workflow (parse and lower, no checks) and types each
    /// one's outputs, callees first. `config` is the project's (schemas,
    /// lock), without a table.
    pub fn build(sources: Vec<WorkflowSource>, config: &Config) -> Arc<WorkflowTable> {
        let mut lowered: BTreeMap<String, (SourceFile, Workflow, Vec<Diagnostic>)> = BTreeMap::new();
        let mut entries = BTreeMap::new();
        for s in sources {
            if entries.contains_key(&s.id) {
                continue;
            }
            let src = SourceFile::new(s.path.clone(), s.text);
            let parsed = crate::syntax::yaml::parse(&src, &config.limits);
            let Some(root) = parsed.root else { continue };
            let (wf, lower_diags) = crate::ir::lower(&src, root, &s.id);
            let mut read = parsed.diagnostics;
            read.extend(lower_diags);
            let uses = edges(&src, &wf);
            entries.insert(
                s.id.clone(),
                WorkflowEntry {
                    id: s.id.clone(),
                    path: s.path,
                    uses,
                    contract: OnceLock::new(),
                    src: src.clone(),
                    checked: OnceLock::new(),
                    lowered: Mutex::new(None),
                },
            );
            lowered.insert(s.id, (src, wf, read));
        }
        let table = Arc::new(WorkflowTable { entries });
        let config = Config { workflows: Some(Arc::clone(&table)), ..config.clone() };
        // Callees first (depth-first, post-order), so a caller's capture of
        // a callee's outputs is typed; a cycle leaves its back edge untyped.
        let mut state: BTreeMap<&str, bool> = BTreeMap::new();
        for id in table.entries.keys() {
            visit(&table, id, &mut state, &mut |id| {
                let (src, wf, _) = &lowered[id];
                let contract = contract_of(src, wf, &config);
                let _ = table.entries[id].contract.set(contract);
            });
        }
        // Kept for the check of each, so it is not read twice.
        for (id, (_, wf, read)) in lowered {
            *lock(&table.entries[&id].lowered) = Some((wf, read));
        }
        table
    }

    pub fn get(&self, id: &str) -> Option<&WorkflowEntry> {
        self.entries.get(id)
    }

    /// The contract of workflow `id`, when it is in the project and typed.
    pub fn contract(&self, id: &str) -> Option<&ToolContract> {
        self.entries.get(id)?.contract()
    }

    /// Every id, sorted.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Workflow `id` checked with `config` (which holds this table), once
    /// per table: its callees are checked first, so a check never waits on
    /// one below it. `None` for an id the project does not have. The
    /// caller makes sure no cycle is below `id` (`WORKFLOW_CYCLE` is
    /// reported instead): a workflow in a cycle cannot be checked before
    /// its callees.
    pub fn checked(&self, id: &str, config: &Config) -> Option<&Checked> {
        let entry = self.entries.get(id)?;
        if let Some(done) = entry.checked.get() {
            return Some(done);
        }
        let mut state: BTreeMap<&str, bool> = BTreeMap::new();
        visit(self, id, &mut state, &mut |at| {
            let e = &self.entries[at];
            e.checked.get_or_init(|| self.check_one(e, config));
        });
        entry.checked.get()
    }

    /// The diagnostics of `src` (checked with `config`, which holds this
    /// table) when it is one of this table's workflows, unchanged: a file
    /// checked both as a callee and as itself is checked once.
    pub fn checked_file(&self, src: &SourceFile, config: &Config) -> Option<&[Diagnostic]> {
        let id = crate::check::default_id(&src.path);
        let e = self.entries.get(&id).filter(|e| e.src.text == src.text)?;
        Some(&self.checked(&e.id, config)?.diagnostics)
    }

    fn check_one(&self, e: &WorkflowEntry, config: &Config) -> Checked {
        let lowered = lock(&e.lowered).take();
        let diagnostics = match lowered {
            Some((wf, read)) => crate::check::check_lowered(&e.src, &wf, read, config),
            None => crate::check::check_source(&e.src, config),
        };
        // What a caller is told of: errors left after suppression comments.
        let shown = crate::check::suppress::apply(&e.src, diagnostics.clone(), &[]);
        let errors = shown.iter().filter(|d| d.severity == Severity::Error).count();
        let fault = shown.iter().find(|d| d.severity == Severity::Error).map(|d| {
            // A callee's fault: follow it down (checked already, callees first).
            let below = (d.code == Code::CalleeError)
                .then(|| {
                    let at = e.src.line_col(d.span.start as usize);
                    e.uses.iter().find(|u| (u.line, u.column) == (at.line, at.column))
                })
                .flatten()
                .and_then(|u| Some((u, self.entries.get(&u.callee)?.checked.get()?.fault.clone()?)));
            match below {
                Some((u, mut f)) => {
                    f.via.insert(0, u.callee.clone());
                    f
                }
                None => {
                    let at = e.src.line_col(d.span.start as usize);
                    Fault {
                        via: Vec::new(),
                        workflow: e.id.clone(),
                        path: e.path.clone(),
                        line: at.line,
                        column: at.column,
                        code: d.code,
                        message: d.message.clone(),
                        errors,
                    }
                }
            }
        });
        Checked { diagnostics, fault }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Post-order walk of the `uses:` graph from `id`; `state` is `false`
/// while a workflow is on the path, `true` once done.
fn visit<'t>(
    table: &'t WorkflowTable,
    id: &'t str,
    state: &mut BTreeMap<&'t str, bool>,
    done: &mut impl FnMut(&str),
) {
    if state.contains_key(id) {
        return;
    }
    state.insert(id, false);
    // An explicit stack: a generated chain of thousands of workflows must
    // not overflow the thread's stack.
    let mut stack: Vec<(&str, usize)> = vec![(id, 0)];
    while let Some((at, next)) = stack.pop() {
        let uses = &table.entries[at].uses;
        if let Some(edge) = uses.get(next) {
            stack.push((at, next + 1));
            if let Some((callee, _)) = table.entries.get_key_value(edge.callee.as_str())
                && !state.contains_key(callee.as_str())
            {
                state.insert(callee, false);
                stack.push((callee, 0));
            }
        } else {
            state.insert(at, true);
            done(at);
        }
    }
}

/// The `uses:` of a lowered workflow, with their positions.
pub fn edges(src: &SourceFile, wf: &Workflow) -> Vec<UseEdge> {
    wf.steps
        .iter()
        .filter_map(|s| {
            let u = s.uses.as_ref()?;
            let at = src.line_col(u.span.start as usize);
            Some(UseEdge {
                step: s.id.value.to_string(),
                callee: u.value.to_string(),
                line: at.line,
                column: at.column,
            })
        })
        .collect()
}

/// A workflow's contract: its params schema in, its outputs out (each
/// typed from its expression; text around `<<…>>` makes a string).
fn contract_of(src: &SourceFile, wf: &Workflow, config: &Config) -> ToolContract {
    let cx = Cx::new(src, wf, config);
    let mut props = serde_json::Map::new();
    for o in &wf.outputs {
        let ty = match o.value.template.as_single_expr() {
            Some(expr) => {
                let mut inf = crate::check::infer::Infer {
                    cx: &cx,
                    step: 0,
                    site: ExprSite::Output,
                    loc: &o.value.loc,
                    text: &o.value.text,
                    loop_item: Type::Any,
                    out: None,
                };
                inf.infer(expr)
            }
            None => Type::String,
        };
        props.insert(o.name.value.to_string(), type_schema(&ty));
    }
    ToolContract {
        name: wf_id(wf, src),
        title: wf.name.clone(),
        description: wf.description.clone(),
        input: Some(wf.params_schema()),
        output: Some(json!({"type": "object", "properties": props, "additionalProperties": false})),
        closed_output: true,
        types_capture: true,
        sub_workflow: true,
        ..ToolContract::default()
    }
}

/// The id a caller names the workflow by: the file stem (as the engine
/// resolves `uses:`).
fn wf_id(wf: &Workflow, src: &SourceFile) -> String {
    let stem = crate::check::default_id(&src.path);
    if stem.is_empty() { wf.id.clone() } else { stem }
}

/// A static type as JSON Schema (what [`Type::from_schema`] reads back).
pub fn type_schema(ty: &Type) -> Value {
    match ty {
        Type::Any => json!({}),
        Type::Null => json!({"type": "null"}),
        Type::Bool => json!({"type": "boolean"}),
        Type::Number => json!({"type": "number"}),
        Type::String => json!({"type": "string"}),
        Type::Array(item) => json!({"type": "array", "items": type_schema(item)}),
        Type::Object(o) => {
            let props: serde_json::Map<String, Value> =
                o.fields.iter().map(|(k, t)| (k.clone(), type_schema(t))).collect();
            json!({"type": "object", "properties": props, "additionalProperties": o.open})
        }
    }
}

#[cfg(test)]
#[path = "workflows_tests.rs"]
mod tests;
