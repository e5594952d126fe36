//! What a name in an expression refers to (DESIGN.md §2, "Names in scope").

use crate::check::Cx;
use crate::ir::{ExprSite, ObjectType, Type};

/// What a root name resolves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    Params,
    Workflow,
    Run,
    /// `steps.<id>.status`.
    Steps,
    /// `loop.index`, inside a foreach step (not in its `foreach:` itself).
    Loop,
    /// The foreach variable (`as:`, default `item`).
    LoopVar,
    /// The capture of the step with this index.
    Capture(usize),
}

pub const WORKFLOW_FIELDS: &[&str] = &["id", "name", "version"];
pub const RUN_FIELDS: &[&str] = &["id"];
pub const LOOP_FIELDS: &[&str] = &["index"];
pub const STEP_FIELDS: &[&str] = &["status"];

/// Resolves a root name used in step `step` at `site`. The loop variable
/// shadows a capture of the same name.
pub fn resolve(cx: &Cx, step: usize, site: ExprSite, name: &str) -> Option<Binding> {
    let looping = looping(cx, step, site);
    let in_loop = looping.is_some() && site != ExprSite::Foreach;
    if let Some(s) = looping
        && in_loop
        && name == s.loop_var_name()
    {
        return Some(Binding::LoopVar);
    }
    match name {
        "params" => Some(Binding::Params),
        "workflow" => Some(Binding::Workflow),
        "run" => Some(Binding::Run),
        "steps" => Some(Binding::Steps),
        "loop" if in_loop => Some(Binding::Loop),
        _ => cx.captures.get(name).map(|&i| Binding::Capture(i)),
    }
}

/// Every root name visible in step `step` at `site`, for "did you mean".
pub fn visible_names<'a>(cx: &'a Cx, step: usize, site: ExprSite) -> Vec<&'a str> {
    let mut names = vec!["params", "workflow", "run", "steps"];
    if let Some(s) = looping(cx, step, site)
        && site != ExprSite::Foreach
    {
        names.push("loop");
        names.push(s.loop_var_name());
    }
    names.extend(cx.captures.keys().copied());
    names
}

/// The step whose `foreach` an expression at `site` of step `step` is in:
/// a foreach step's, but not for `outputs:` (read after every step, `step`
/// there is any index, even one past the end).
pub fn looping<'a>(cx: &Cx<'a>, step: usize, site: ExprSite) -> Option<&'a crate::ir::Step> {
    if site == ExprSite::Output {
        return None;
    }
    cx.wf.steps.get(step).filter(|s| s.foreach.is_some())
}

/// The static type of a binding. `loop_item` is the type of the foreach
/// collection's items (computed by the caller, which can infer it).
pub fn binding_type(cx: &Cx, binding: Binding, loop_item: &Type) -> Type {
    match binding {
        Binding::Params => cx.params_type.clone(),
        Binding::Workflow => Type::Object(ObjectType::closed([
            ("id", Type::String),
            ("name", Type::String),
            ("version", Type::String),
        ])),
        Binding::Run => Type::Object(ObjectType::closed([("id", Type::String)])),
        Binding::Loop => Type::Object(ObjectType::closed([("index", Type::Number)])),
        // `steps.<id>` is checked by name; its value is `{status}`.
        Binding::Steps => Type::Any,
        Binding::LoopVar => loop_item.clone(),
        Binding::Capture(i) => Type::clone(&cx.capture_types[i]),
    }
}

/// The type of field `name` of `params`, `workflow`, `run` or `loop`: the
/// field's type in [`binding_type`]'s object (`any` when it has none),
/// without building that object.
pub fn builtin_field_type(cx: &Cx, binding: Binding, name: &str) -> Type {
    match binding {
        Binding::Params => match &cx.params_type {
            Type::Object(o) => o.fields.get(name).cloned().unwrap_or(Type::Any),
            _ => Type::Any,
        },
        Binding::Workflow if WORKFLOW_FIELDS.contains(&name) => Type::String,
        Binding::Run if RUN_FIELDS.contains(&name) => Type::String,
        Binding::Loop if LOOP_FIELDS.contains(&name) => Type::Number,
        _ => Type::Any,
    }
}
