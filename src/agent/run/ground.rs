//! Checks that need no model: whether a tool call is hopeless before it is
//! made ([`hopeless`]), and whether a final answer is grounded in what the
//! tools returned ([`ungrounded`]).
//!
//! A goal that asks to read, summarise, list or show something (see
//! [`needs_grounding`]) is done only when the final answer carries what a
//! tool brought: it must share at least [`MIN_SHARED_WORDS`] words with the
//! text of the run's successful tool outputs (their string values and
//! numbers, not their keys), words of the goal itself not counted (a final
//! answer that only repeats the goal says nothing). Words are those of
//! [`rank::words`](super::rank::words).

use super::rank::words;
use serde_json::Value;
use std::collections::BTreeSet;

/// Words a grounded final answer shares with the tools' outputs, at least.
pub const MIN_SHARED_WORDS: usize = 2;

/// The goal words that make a goal need a tool's output.
const OBSERVE: &[&str] =
    &["read", "summarise", "summarize", "summary", "list", "show", "content", "contain", "open", "print"];

/// Whether the goal asks for something only a tool can bring (it says
/// read, summarise, list, show, …).
pub fn needs_grounding(goal: &str) -> bool {
    words(goal).iter().any(|w| OBSERVE.contains(&w.as_str()))
}

/// The text of a tool output: its string values and numbers, keys left out.
pub fn observed_text(output: &Value, into: &mut String) {
    match output {
        Value::String(s) => {
            // A tool that returns JSON as a string: its values, not its keys.
            match serde_json::from_str::<Value>(s) {
                Ok(v @ (Value::Object(_) | Value::Array(_))) => observed_text(&v, into),
                _ => {
                    into.push_str(s);
                    into.push(' ');
                }
            }
        }
        Value::Number(n) => {
            into.push_str(&n.to_string());
            into.push(' ');
        }
        Value::Array(items) => items.iter().for_each(|v| observed_text(v, into)),
        Value::Object(map) => map.values().for_each(|v| observed_text(v, into)),
        Value::Bool(_) | Value::Null => {}
    }
}

/// Whether the goal asks for a list (its words include `list`).
pub fn asks_for_list(goal: &str) -> bool {
    words(goal).iter().any(|w| w == "list")
}

/// The ids of the items a list output holds: the first list of objects
/// (depth first, JSON inside a string read as JSON) whose every item has a
/// string `id`, else a string `name`; `None` when there is none.
pub fn listed_ids(output: &Value) -> Option<Vec<String>> {
    match output {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(inner @ (Value::Object(_) | Value::Array(_))) => listed_ids(&inner),
            _ => None,
        },
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => ["id", "name"]
            .iter()
            .find_map(|key| items.iter().map(|i| i.get(key)?.as_str().map(str::to_owned)).collect())
            .or_else(|| items.iter().find_map(listed_ids)),
        Value::Array(items) => items.iter().find_map(listed_ids),
        Value::Object(map) => map.values().find_map(listed_ids),
        _ => None,
    }
}

/// A tool output as a small model reads it best (issue 46.5: SmolLM2-135M
/// copies from it): an object as `key: value` pairs joined by `; `, a list
/// one `- ` line per item, JSON inside a string read as JSON, `null`s left
/// out. A list inside an object starts on a line of its own.
pub fn quoted_text(output: &Value) -> String {
    fn scalar(v: &Value) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
    fn object(map: &serde_json::Map<String, Value>, out: &mut String) {
        let mut pairs = Vec::new();
        for (k, v) in map {
            match v {
                Value::Null => {}
                Value::Array(_) | Value::Object(_) => {
                    if !pairs.is_empty() {
                        out.push_str(&pairs.join("; "));
                        pairs.clear();
                    }
                    if !out.is_empty() && !out.ends_with('\n') {
                        out.push('\n');
                    }
                    out.push_str(&format!("{k}:\n"));
                    write(v, out);
                }
                v => pairs.extend(scalar(v).map(|s| format!("{k}: {s}"))),
            }
        }
        out.push_str(&pairs.join("; "));
    }
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(inner @ (Value::Object(_) | Value::Array(_))) => write(&inner, out),
                _ => out.push_str(s),
            },
            Value::Object(map) => object(map, out),
            Value::Array(items) => {
                for item in items {
                    if !out.is_empty() && !out.ends_with('\n') {
                        out.push('\n');
                    }
                    out.push_str("- ");
                    match item {
                        Value::Object(map) => object(map, out),
                        other => write(other, out),
                    }
                }
            }
            other => out.extend(scalar(other)),
        }
    }
    let mut out = String::new();
    write(output, &mut out);
    out
}

/// `None` when `final_text` is grounded in `observed` (the text of the
/// tools' outputs, `None` when no tool call has worked yet) for `goal`, else
/// why not. Outputs with fewer than [`MIN_SHARED_WORDS`] words of their own
/// (an empty list) ground any answer: there is nothing to repeat.
pub fn ungrounded(goal: &str, final_text: &str, observed: Option<&str>) -> Option<String> {
    let Some(observed) = observed else {
        return Some(
            "no tool has returned anything yet: call the tool that brings what the goal asks for".into(),
        );
    };
    let goal_words: BTreeSet<String> = words(goal).into_iter().collect();
    let seen: BTreeSet<String> = words(observed).into_iter().filter(|w| !goal_words.contains(w)).collect();
    if seen.len() < MIN_SHARED_WORDS {
        return None;
    }
    let shared: BTreeSet<String> = words(final_text).into_iter().filter(|w| seen.contains(w)).collect();
    if shared.len() >= MIN_SHARED_WORDS {
        return None;
    }
    Some(format!(
        "the final answer does not use the tool output: it shares {} word{} with it ({}), at least \
         {MIN_SHARED_WORDS} are needed besides the goal's own",
        shared.len(),
        if shared.len() == 1 { "" } else { "s" },
        if shared.is_empty() { "none".to_owned() } else { shared.into_iter().collect::<Vec<_>>().join(", ") }
    ))
}

/// Why a call of a tool with `schema` (its input schema) and `args` cannot
/// work, when the engine can tell without making it: a required argument
/// missing, or a required string argument empty; or, when the schema's
/// `anyOf` lists alternatives of required arguments (`think`: `thought` or
/// `thoughts`), none of them given. `None` when it may work.
pub fn hopeless(schema: &Value, args: &Value) -> Option<String> {
    let props = schema.get("properties").and_then(Value::as_object);
    let names = |v: &Value| -> Vec<String> {
        v.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
    };
    for name in names(schema.get("required").unwrap_or(&Value::Null)) {
        let about = props
            .and_then(|p| p.get(&name))
            .and_then(|p| p.get("description"))
            .and_then(Value::as_str)
            .map(|d| format!(" ({})", d.trim_end_matches('.')))
            .unwrap_or_default();
        if let Some(what) = absent(args, &name) {
            return Some(format!("the required argument `{name}`{about} is {what}"));
        }
    }
    let alternatives: Vec<Vec<String>> = schema
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| a.get("required"))
        .map(names)
        .filter(|set| !set.is_empty())
        .collect();
    let given = |set: &Vec<String>| set.iter().all(|n| absent(args, n).is_none());
    if !alternatives.is_empty() && !alternatives.iter().any(given) {
        let sets: Vec<String> = alternatives.iter().map(|set| format!("`{}`", set.join("` and `"))).collect();
        return Some(format!("it needs {}, not empty, and none is given", sets.join(" or ")));
    }
    None
}

/// `Some("missing")` or `Some("empty")` when `args` has no value for `name`.
fn absent(args: &Value, name: &str) -> Option<&'static str> {
    match args.get(name) {
        None | Some(Value::Null) => Some("missing"),
        Some(Value::String(s)) if s.trim().is_empty() => Some("empty"),
        _ => None,
    }
}

/// The hint that goes with a hopeless call of `tool` for `goal`.
pub fn hopeless_hint(tool: &str, reason: &str, goal: &str) -> String {
    if reason.contains("there is no file `") {
        let named = super::rank::file_words(goal);
        if !named.is_empty() {
            let named: Vec<String> = named.iter().map(|f| format!("`{f}`")).collect();
            return format!("call `{tool}` with the path the goal names: {}", named.join(", "));
        }
        return format!("call `{tool}` with the path of a file that exists, or finish");
    }
    if reason.contains("is not a workflow") {
        return format!(
            "give `{tool}` one of the workflows named, or call another tool, or finish if the goal needs no \
             workflow"
        );
    }
    if reason.contains("no run `") {
        return format!("call `{tool}` with a run another tool returned, or finish if the goal needs no run");
    }
    if reason.contains("`workflow`") {
        return format!(
            "give `{tool}` a workflow id: the ids are in the output of think_workflows_list; or finish if the \
             goal needs no workflow"
        );
    }
    format!("give `{tool}` a value for every required argument, or call another tool, or finish")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn goals_that_read_or_list_need_grounding() {
        assert!(needs_grounding("Summarise the file notes.txt"));
        assert!(needs_grounding("List the available workflows"));
        assert!(needs_grounding("Read README.md and tell me what it says"));
        assert!(!needs_grounding("Think about what a workflow is, then finish with a one-sentence answer"));
    }

    #[test]
    fn a_final_answer_must_share_words_with_the_output_beyond_the_goal() {
        let mut observed = String::new();
        observed_text(
            &json!({"path": "notes.txt", "content": "Release notes for 1.2: the checker now reports unknown \
                    tools, exec runs model steps."}),
            &mut observed,
        );
        assert!(!observed.contains("content"), "keys are not observed: {observed}");
        let goal = "Summarise the file notes.txt";
        // The real answer of issue 46: words of the prompt, nothing of the file.
        let bad =
            "The engine decides to call the tool named in instruction. This is a summary of the result.";
        let why = ungrounded(goal, bad, Some(&observed)).expect("ungrounded");
        assert!(why.contains("shares 1 word with it (tool)"), "{why}");
        // Repeating the goal is not grounding either.
        assert!(ungrounded(goal, "A summary of the file notes.txt.", Some(&observed)).is_some());
        assert_eq!(ungrounded(goal, "The checker now reports unknown tools.", Some(&observed)), None);
        let none = ungrounded(goal, "The checker reports unknown tools.", None).unwrap();
        assert!(none.contains("no tool has returned anything"), "{none}");
        // An output with nothing to repeat (an empty list) grounds any answer.
        assert_eq!(ungrounded("List the workflows", "There are none.", Some(" workflows ")), None);
    }

    #[test]
    fn json_inside_a_string_output_is_read_for_its_values() {
        let mut observed = String::new();
        observed_text(
            &json!(r#"{"workflows": [{"id": "release_notes"}, {"id": "review_v1"}]}"#),
            &mut observed,
        );
        assert_eq!(observed.split_whitespace().collect::<Vec<_>>(), ["release_notes", "review_v1"]);
        assert_eq!(ungrounded("List the workflows", "release_notes and review_v1", Some(&observed)), None);
        assert!(ungrounded("List the workflows", "Here are the workflows.", Some(&observed)).is_some());
    }

    #[test]
    fn a_quoted_output_is_one_line_per_listed_item_with_its_keys() {
        let list = json!({"workflows": [
            {"id": "release_notes", "name": "Release notes", "steps": 3, "valid": true, "tags": null},
            {"id": "review_v1", "name": "Code review", "steps": 5, "valid": true}]});
        assert_eq!(
            quoted_text(&list),
            "workflows:\n- id: release_notes; name: Release notes; steps: 3; valid: true\n\
             - id: review_v1; name: Code review; steps: 5; valid: true"
        );
        let read = json!({"path": "notes.txt", "content": "Release notes for 1.2.", "bytes": 23});
        assert_eq!(quoted_text(&read), "path: notes.txt; content: Release notes for 1.2.; bytes: 23");
        assert_eq!(quoted_text(&json!(r#"["a", "b"]"#)), "- a\n- b", "JSON inside a string");
        assert_eq!(quoted_text(&json!("plain")), "plain");
    }

    #[test]
    fn the_ids_of_a_listed_output_are_found() {
        let list = json!({"count": 2, "workflows": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}]});
        assert_eq!(listed_ids(&list), Some(vec!["a".to_owned(), "b".to_owned()]));
        let names = json!([{"name": "x"}, {"name": "y", "id": 3}]);
        assert_eq!(listed_ids(&names), Some(vec!["x".to_owned(), "y".to_owned()]), "a number id is no id");
        assert_eq!(listed_ids(&json!(r#"{"runs": [{"id": "r-1"}]}"#)), Some(vec!["r-1".to_owned()]));
        assert_eq!(listed_ids(&json!({"path": "notes.txt", "content": "text"})), None);
        assert_eq!(listed_ids(&json!({"items": []})), None);
        assert!(asks_for_list("List the available workflows") && !asks_for_list("Summarise notes.txt"));
    }

    #[test]
    fn an_empty_or_missing_required_argument_is_hopeless() {
        let schema = json!({"type": "object", "required": ["workflow"], "properties": {
            "workflow": {"type": "string", "description": "The workflow id."}, "run_id": {"type": "string"}}});
        let empty = hopeless(&schema, &json!({"workflow": " "})).unwrap();
        assert_eq!(empty, "the required argument `workflow` (The workflow id) is empty");
        assert!(hopeless(&schema, &json!({})).unwrap().contains("is missing"));
        assert!(hopeless(&schema, &json!({"workflow": null})).unwrap().contains("is missing"));
        assert_eq!(hopeless(&schema, &json!({"workflow": "w", "run_id": ""})), None, "run_id is optional");
        assert_eq!(hopeless(&json!({"type": "object"}), &json!({})), None);
        // `think`: `thought` or `thoughts`, one of them not empty.
        let think = json!({"type": "object", "properties": {"thought": {"type": ["string", "null"]},
            "thoughts": {"type": ["string", "null"]}}, "anyOf": [{"required": ["thought"]}, {"required": ["thoughts"]}]});
        let none = hopeless(&think, &json!({"thought": ""})).unwrap();
        assert_eq!(none, "it needs `thought` or `thoughts`, not empty, and none is given");
        assert_eq!(hopeless(&think, &json!({"thought": null, "thoughts": "a plan"})), None);
        assert!(hopeless_hint("think_plan", &empty, "Run a workflow").contains("think_workflows_list"));
        let missing = "there is no file `file.txt` under the project root";
        assert_eq!(
            hopeless_hint("local_read", missing, "Summarise the file notes.txt"),
            "call `local_read` with the path the goal names: `notes.txt`"
        );
        assert!(hopeless_hint("local_read", missing, "Summarise it").contains("a file that exists"));
        let unknown = "`x` is not a workflow of this project (the workflows: a, b)";
        assert!(hopeless_hint("think_plan", unknown, "g").contains("one of the workflows named"));
    }
}
