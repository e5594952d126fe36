//! The language server's incremental check after an edit that changes only
//! what types a step's capture (`check::recheck`'s `Change::Retype`): the
//! same diagnostics as `check`, from checking only the steps it can reach.

use crate::lsp_incremental::edit_in_turn_with;
use savant_think::check::Config;

/// A clean workflow: the steps that read a capture (`b`, `c`, `e`,
/// `outputs:`) and depend on a step (`d`) have no diagnostic of their own
/// to be checked again for.
const RETYPES: &str = "id: retypes
params:
  x: { type: string }
steps:
  - id: a
    call: tool.t
    input_template: { q: \"<<params.x>>\" }
    capture_as: ra
    success_schema: { type: object, properties: { title: { type: string }, items: { type: array } } }
  - id: b
    call: tool.t
    deps: [a]
    input_template: { q: \"<<ra.title>>\" }
    capture_as: rb
  - id: c
    call: tool.t
    foreach: ra.items
    as: it
    input_template: { q: \"<<it>> <<rb>>\" }
    capture_as: rc
  - id: d
    call: think
    deps: [c]
    capture_as: rd
  - id: e
    call: tool.t
    input_template: { q: \"<<rd.thought>>\" }
  - id: f
    call: tool.t
outputs:
  title: \"<<ra.title>>\"
  thought: \"<<rd.thought>>\"
  last: \"<<rc>>\"
";

/// Changes to what types a capture (a step's `call`, its `success_schema`),
/// each applied to the last text: each checked as `check` checks the text,
/// and each checked selectively (not every step). With `DESTRUCTIVE_CALL`
/// on, whose verdict on a step depends on the calls of the steps before it.
#[test]
fn retypes_check_as_check_checks() {
    let edits = [
        // A field `b` and `outputs:` read, renamed in `a`'s schema (they
        // stop resolving), and back.
        ("title: { type: string }", "titel: { type: string }", true),
        ("titel: { type: string }", "title: { type: string }", true),
        // What `c` loops over stops being an array, and is one again.
        ("items: { type: array }", "items: { type: string }", true),
        ("items: { type: string }", "items: { type: array }", true),
        // `d` destructive (`e` no longer finds the field it reads), then
        // `c` asks the user first (`d`, which depends on it, is guarded),
        // and stops asking; `d` as it was.
        ("call: think\n    deps: [c]", "call: think.reset\n    deps: [c]", true),
        ("  - id: c\n    call: tool.t", "  - id: c\n    call: prompt.say", true),
        ("  - id: c\n    call: prompt.say", "  - id: c\n    call: tool.t", true),
        ("call: think.reset", "call: think", true),
        // `rd` typed by a named schema that is not there, and by its call again.
        ("    capture_as: rd\n", "    success_schema: Missing\n    capture_as: rd\n", true),
        ("    success_schema: Missing\n", "", true),
        // `b` typed by an engine tool, then by another.
        ("  - id: b\n    call: tool.t", "  - id: b\n    call: think", true),
        ("  - id: b\n    call: think", "  - id: b\n    call: tool.t", true),
    ];
    edit_in_turn_with(typed(), RETYPES, &edits);
}

/// Edits that change several parts of a step's face at once (`Change::Names`:
/// a `foreach` added or removed, its expression, a tool and a capture name
/// together), each applied to the last text: each checked as `check` checks
/// the text, and each checked selectively (not every step).
#[test]
fn reshapes_check_as_check_checks() {
    let edits = [
        // `b` loops (its capture becomes a list: `c` reads `rb` as an item,
        // `outputs:` does not read it), and stops.
        ("  - id: b\n    call: tool.t\n", "  - id: b\n    call: tool.t\n    foreach: ra.items\n", true),
        ("  - id: b\n    call: tool.t\n    foreach: ra.items\n", "  - id: b\n    call: tool.t\n", true),
        // `c` stops looping (`it` no longer resolves), and loops over what
        // `b` captured, then over `ra.items` again.
        ("    foreach: ra.items\n    as: it\n", "", true),
        ("  - id: c\n    call: tool.t\n", "  - id: c\n    call: tool.t\n    foreach: rb\n    as: it\n", true),
        ("foreach: rb\n", "foreach: ra.items\n", true),
        // `d`'s tool and capture at once (`e` and `outputs:` lose `rd`), and back.
        (
            "call: think\n    deps: [c]\n    capture_as: rd",
            "call: think.reset\n    deps: [c]\n    capture_as: rdx",
            true,
        ),
        (
            "call: think.reset\n    deps: [c]\n    capture_as: rdx",
            "call: think\n    deps: [c]\n    capture_as: rd",
            true,
        ),
        // `a`'s id, capture and schema at once, colliding with `f`, and back.
        (
            "  - id: a\n    call: tool.t\n    input_template: { q: \"<<params.x>>\" }\n    capture_as: ra\n    success_schema: { type: object, properties: { title: { type: string }, items: { type: array } } }",
            "  - id: f\n    call: tool.t\n    input_template: { q: \"<<params.x>>\" }\n    capture_as: rf\n    success_schema: { type: object }",
            true,
        ),
        (
            "  - id: f\n    call: tool.t\n    input_template: { q: \"<<params.x>>\" }\n    capture_as: rf\n    success_schema: { type: object }",
            "  - id: a\n    call: tool.t\n    input_template: { q: \"<<params.x>>\" }\n    capture_as: ra\n    success_schema: { type: object, properties: { title: { type: string }, items: { type: array } } }",
            true,
        ),
    ];
    edit_in_turn_with(typed(), RETYPES, &edits);
}

/// The engine's tools typed, as `check` and the language server have them,
/// with `DESTRUCTIVE_CALL` on.
fn typed() -> Config {
    Config {
        builtins: savant_think::runtime::contracts::builtin(),
        select: vec![savant_think::diagnostic::Code::DestructiveCall],
        ..Config::default()
    }
}
