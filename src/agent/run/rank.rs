//! Which tools a step offers the model: the few most relevant to the goal
//! and the last tool output, out of all the policy allows. A small model
//! reads a long tool list badly (it calls whichever tool comes first), so
//! each step offers the top [`DEFAULT_OFFERED_TOOLS`] by a BM25 score
//! (k1 = 1.2, b = 0.75) of the query against each tool's document.
//!
//! - A tool's document: its name's words (three times: a name says most),
//!   its description, and its arguments' names.
//! - The query: the goal's words, the last tool output's first
//!   [`OUTPUT_WORDS`] words (once each), and a few expansions: a file-like
//!   word (`notes.txt`) adds `path`, `file` and `read`; `summarise`,
//!   `summarize`, `summary` and `open` add `read`; `list` adds `list`.
//! - A tool whose name's words are in the query, in a row, gets
//!   [`NAMED_BONUS`] (the goal names it).
//! - When the goal names a file (a file-like word), a tool with a `path`
//!   argument gets [`PATH_BONUS`]: it is the tool that takes a file (a
//!   tool that only has `read` in its name, like `think_workflows_read`,
//!   takes something else).
//! - Words are lowercased runs of letters and digits, a trailing `s` dropped
//!   (`workflows` is `workflow`), stop words and one-letter words left out.
//!
//! A tool that needs a run (a required `run_id`) is left out while there
//! is none to give it: no tool output so far had a `run_id` and the goal
//! names none (a small model invents one, and the call cannot work).
//!
//! A tool scoring under [`CUTOFF`] of the best is left out, so a goal with
//! one clear match offers that tool alone. Deterministic: the offered tools
//! come best first (a small model tends to
//! call the first tool it reads), ties in the order they were listed in.

use crate::agent::ToolInfo;
use std::collections::{BTreeMap, BTreeSet};

/// How many tools a step offers by default (`0` offers all).
pub const DEFAULT_OFFERED_TOOLS: usize = 4;
/// Added to the score of a tool whose name's words are in the query, in a
/// row (the goal names the tool: "think about …" and `think`).
pub const NAMED_BONUS: f64 = 6.0;
/// Added to the score of a tool with a `path` argument when the goal names
/// a file.
pub const PATH_BONUS: f64 = 6.0;
/// A tool scoring under this share of the best tool's score is not offered
/// (when the best scores anything): a small model calls a weak match as
/// readily as the right tool.
pub const CUTOFF: f64 = 0.5;
/// How many words of the last tool output join the query.
pub const OUTPUT_WORDS: usize = 64;

const STOP: &[&str] = &[
    "the", "and", "then", "with", "that", "this", "for", "from", "into", "its", "it", "is", "are", "was",
    "be", "to", "of", "in", "on", "or", "an", "as", "at", "by", "if", "no", "not", "one", "all", "get",
    "what", "how", "when", "your", "you", "me", "my", "please", "about", "do", "each", "any", "can", "use",
    "there",
];

/// The words of `text` as the ranking sees them.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() > 1 && !STOP.contains(&w.as_str()))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_owned(),
            _ => w,
        })
        .collect()
}

/// The query words for `goal` and the last tool output, with the expansions
/// of the module docs.
pub fn query(goal: &str, last_output: Option<&str>) -> Vec<String> {
    let mut q = words(goal);
    let mut extra: Vec<&str> = Vec::new();
    if names_a_file(goal) {
        extra.extend(["path", "file", "read"]);
    }
    if q.iter().any(|w| matches!(w.as_str(), "summarise" | "summarize" | "summary" | "open")) {
        extra.push("read");
    }
    q.extend(extra.into_iter().map(str::to_owned));
    if let Some(out) = last_output {
        let mut seen = BTreeSet::new();
        q.extend(words(out).into_iter().filter(|w| seen.insert(w.clone())).take(OUTPUT_WORDS));
    }
    q
}

/// `tools` without those that need a run (a required `run_id`) when
/// `run_known` is false (see the module docs); all of them when that would
/// leave none.
pub fn needing_no_unknown_run(tools: Vec<ToolInfo>, run_known: bool) -> Vec<ToolInfo> {
    if run_known {
        return tools;
    }
    let needs_run = |t: &ToolInfo| {
        t.input_schema
            .get("required")
            .and_then(|r| r.as_array())
            .is_some_and(|r| r.iter().any(|n| n == "run_id"))
    };
    if tools.iter().all(needs_run) {
        return tools;
    }
    tools.into_iter().filter(|t| !needs_run(t)).collect()
}

/// Whether `goal` has a file-like word (`notes.txt`, `src/main.rs`).
pub fn names_a_file(goal: &str) -> bool {
    !file_words(goal).is_empty()
}

/// The file-like words of `text` (`notes.txt`, `src/main.rs`), in order:
/// a stem, a dot and an extension of one to five letters.
pub fn file_words(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| {
            w.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=5).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphabetic())
            })
        })
        .collect()
}

/// Whether `t` takes a `path` argument.
fn takes_a_path(t: &ToolInfo) -> bool {
    t.input_schema.get("properties").and_then(|p| p.get("path")).is_some()
}

fn document(t: &ToolInfo) -> Vec<String> {
    let name = words(&t.name.replace(['_', '.', '-'], " "));
    let mut doc: Vec<String> = name.iter().chain(&name).chain(&name).cloned().collect();
    doc.extend(words(&t.description));
    if let Some(props) = t.input_schema.get("properties").and_then(|p| p.as_object()) {
        for key in props.keys() {
            doc.extend(words(&key.replace('_', " ")));
        }
    }
    doc
}

/// Each tool's BM25 score for `query`, in the tools' order.
pub fn scores(tools: &[ToolInfo], query: &[String]) -> Vec<f64> {
    let docs: Vec<Vec<String>> = tools.iter().map(document).collect();
    let n = docs.len() as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let mut df: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &docs {
        for w in d.iter().map(String::as_str).collect::<BTreeSet<_>>() {
            *df.entry(w).or_default() += 1;
        }
    }
    let (k1, b) = (1.2, 0.75);
    docs.iter()
        .zip(tools)
        .map(|(d, t)| {
            let name = words(&t.name.replace(['_', '.', '-'], " "));
            let named = !name.is_empty() && query.windows(name.len()).any(|run| run == name.as_slice());
            let bonus = if named { NAMED_BONUS } else { 0.0 };
            let mut tf: BTreeMap<&str, usize> = BTreeMap::new();
            for w in d {
                *tf.entry(w.as_str()).or_default() += 1;
            }
            let len = d.len() as f64;
            query
                .iter()
                .filter_map(|q| {
                    let f = *tf.get(q.as_str())? as f64;
                    let m = df[q.as_str()] as f64;
                    let idf = ((n - m + 0.5) / (m + 0.5) + 1.0).ln();
                    Some(idf * f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * len / avg.max(1.0))))
                })
                .sum::<f64>()
                + bonus
        })
        .collect()
}

/// The `k` tools of `tools` with the highest scores for `goal` and the last
/// output (all of them when there are no more), best first, ties in their
/// listed order (a tool taking a `path` ahead when the goal names a file),
/// without those scoring under [`CUTOFF`] of the best; all of
/// them, as listed, when `k` is 0.
pub fn top(tools: Vec<ToolInfo>, goal: &str, last_output: Option<&str>, k: usize) -> Vec<ToolInfo> {
    if k == 0 {
        return tools;
    }
    let mut s = scores(&tools, &query(goal, last_output));
    if names_a_file(goal) {
        for (score, t) in s.iter_mut().zip(&tools) {
            if takes_a_path(t) {
                *score += PATH_BONUS;
            }
        }
    }
    let mut order: Vec<usize> = (0..tools.len()).collect();
    order.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(a.cmp(&b)));
    let best = order.first().map_or(0.0, |&i| s[i]);
    let mut slots: Vec<Option<ToolInfo>> = tools.into_iter().map(Some).collect();
    order
        .into_iter()
        .take(k)
        .filter(|&i| best <= 0.0 || s[i] >= best * CUTOFF)
        .filter_map(|i| slots[i].take())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, props: &[&str]) -> ToolInfo {
        let properties: serde_json::Map<String, serde_json::Value> =
            props.iter().map(|p| (p.to_string(), json!({"type": "string"}))).collect();
        ToolInfo {
            name: name.into(),
            description: description.into(),
            input_schema: json!({"type": "object", "properties": properties}),
        }
    }

    fn tools() -> Vec<ToolInfo> {
        vec![
            tool(
                "think_plan",
                "Start a run of a workflow and get its first instruction.",
                &["workflow", "run_id"],
            ),
            tool(
                "think_next",
                "Submit the result of the step and get the next instruction.",
                &["workflow", "run_id"],
            ),
            tool("think_workflows_list", "List the workflows available, with names and descriptions.", &[]),
            tool("think_workflows_read", "Read a workflow's YAML source.", &["workflow"]),
            tool("think", "Record a thought: reason step by step before acting.", &["thought"]),
            tool("think_validate", "Check a workflow file for errors.", &["workflow", "schema"]),
            tool("local_read", "Read a text file under the project root.", &["path"]),
        ]
    }

    fn names(t: &[ToolInfo]) -> Vec<&str> {
        t.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn words_are_stemmed_and_stop_words_dropped() {
        assert_eq!(
            words("List the Workflows, then read notes.txt"),
            ["list", "workflow", "read", "note", "txt"]
        );
        assert_eq!(words("a process is this"), ["process"]);
    }

    #[test]
    fn the_tool_a_goal_names_ranks_first() {
        let t = tools();
        let best = |goal: &str| {
            let s = scores(&t, &query(goal, None));
            let i = (0..s.len()).max_by(|&a, &b| s[a].total_cmp(&s[b]).then(b.cmp(&a))).unwrap();
            t[i].name.clone()
        };
        assert_eq!(best("List the available workflows"), "think_workflows_list");
        assert_eq!(best("Summarise the file notes.txt"), "local_read");
        let offered = top(t.clone(), "Think about what a workflow is, then finish", None, 4);
        assert!(names(&offered).contains(&"think"), "{:?}", names(&offered));
    }

    #[test]
    fn top_keeps_k_tools_best_first_and_is_deterministic() {
        let goal = "Read a workflow or a file";
        let offered = top(tools(), goal, None, 3);
        assert_eq!(names(&offered), ["local_read", "think_workflows_read", "think_validate"]);
        assert_eq!(names(&top(tools(), goal, None, 3)), names(&offered), "deterministic");
        let all = scores(&tools(), &query(goal, None));
        let s: Vec<f64> =
            names(&offered).iter().map(|n| all[tools().iter().position(|t| t.name == *n).unwrap()]).collect();
        assert!(s.windows(2).all(|w| w[0] >= w[1]), "best first: {s:?}");
        assert!(s[2] >= s[0] * CUTOFF, "all over the cutoff: {s:?}");
        // One clear match: offered alone (the others score under half of it).
        assert_eq!(names(&top(tools(), "Summarise the file notes.txt", None, 3)), ["local_read"]);
        // k = 0: every tool, as listed; no match at all: the first k as listed.
        assert_eq!(names(&top(tools(), "Summarise notes.txt", None, 0)), names(&tools()));
        assert_eq!(names(&top(tools(), "Help me", None, 2)), ["think_plan", "think_next"]);
    }

    #[test]
    fn the_real_tool_list_offers_the_tool_each_real_model_goal_needs() {
        let mut all: Vec<ToolInfo> = crate::runtime::catalog::tools().map(ToolInfo::from).collect();
        all.push(tool(
            "local_read",
            "Read a text file under the project root (at most 1048576 bytes).",
            &["path"],
        ));
        assert!(all.len() > 20, "{}", all.len());
        for (goal, needed) in [
            ("List the available workflows", "think_workflows_list"),
            ("Summarise the file notes.txt", "local_read"),
            ("Think about what a workflow is, then finish with a one-sentence answer", "think"),
        ] {
            let offered = top(all.clone(), goal, None, DEFAULT_OFFERED_TOOLS);
            assert!(!offered.is_empty() && offered.len() <= DEFAULT_OFFERED_TOOLS);
            assert_eq!(offered[0].name, needed, "{goal}: {:?}", names(&offered));
        }
        // A goal naming a file: the tool that takes a path, alone (the
        // model called `think_workflows_read` with `notes.txt` beside it).
        let offered = top(all.clone(), "Summarise the file notes.txt", None, DEFAULT_OFFERED_TOOLS);
        assert_eq!(names(&offered), ["local_read"]);
        let offered = top(all, "What does README.md say about installing?", None, DEFAULT_OFFERED_TOOLS);
        assert_eq!(offered[0].name, "local_read", "{:?}", names(&offered));
    }

    #[test]
    fn a_tool_that_needs_a_run_waits_for_one() {
        let mut t = tools();
        t.push(tool("answer", "Answer a waiting step of a run.", &["run_id"]));
        for i in [5, 7] {
            t[i].input_schema["required"] = serde_json::json!(["run_id"]);
        }
        let without = needing_no_unknown_run(t.clone(), false);
        assert_eq!(without.len(), t.len() - 2, "{:?}", names(&without));
        assert!(!names(&without).contains(&"answer"));
        assert_eq!(needing_no_unknown_run(t.clone(), true).len(), t.len());
        let only = vec![t.last().unwrap().clone()];
        assert_eq!(names(&needing_no_unknown_run(only, false)), ["answer"], "never none");
    }

    #[test]
    fn the_last_output_moves_the_ranking() {
        let goal = "Help me, please";
        let before = top(tools(), goal, None, 1);
        let after = top(tools(), goal, Some("the yaml source of a workflow: read it"), 1);
        assert_eq!(names(&before), ["think_plan"], "no match at all: the first listed");
        assert_eq!(names(&after), ["think_workflows_read"]);
    }
}
