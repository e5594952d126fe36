//! Workflow auto-detect: a goal that names a known workflow (`"run
//! review_v1 on !42"`) is that workflow's job, so `run` hands it to `exec`
//! instead of the model. Off with `SAVANT_DISABLE_WORKFLOW_AUTODETECT=1`.
//!
//! A workflow matches when its id appears in the goal as a whole word,
//! ignoring case, written with `_`, `-` or spaces between its parts
//! (`release_notes`, `release-notes`, `release notes`). The longest matching
//! id wins, so `review_v1` beats `review`.

/// The id of the workflow the goal names, if any.
pub fn detect_workflow(goal: &str, ids: &[String]) -> Option<String> {
    let goal = normalize(goal);
    let mut best: Option<&String> = None;
    for id in ids {
        let needle = normalize(id);
        if needle.is_empty() || !contains_word(&goal, &needle) {
            continue;
        }
        if best.is_none_or(|b| normalize(b).len() < needle.len()) {
            best = Some(id);
        }
    }
    best.cloned()
}

/// Lowercase, with `_`, `-` and runs of whitespace as single spaces.
fn normalize(s: &str) -> String {
    let mapped: String =
        s.chars().map(|c| if c == '_' || c == '-' || c.is_whitespace() { ' ' } else { c }).collect();
    mapped.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ")
}

fn contains_word(haystack: &str, needle: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric();
    haystack.match_indices(needle).any(|(i, _)| {
        let before = haystack[..i].chars().next_back();
        let after = haystack[i + needle.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::detect_workflow;

    fn ids() -> Vec<String> {
        ["review", "review_v1", "release_notes", "ticket_grooming"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_goal_naming_a_workflow_is_detected() {
        assert_eq!(detect_workflow("Run review_v1 on MR !42", &ids()).as_deref(), Some("review_v1"));
        assert_eq!(
            detect_workflow("write the Release Notes for 1.2", &ids()).as_deref(),
            Some("release_notes")
        );
        assert_eq!(detect_workflow("ticket-grooming please.", &ids()).as_deref(), Some("ticket_grooming"));
        assert_eq!(detect_workflow("a review of the code", &ids()).as_deref(), Some("review"));
    }

    #[test]
    fn words_that_merely_contain_an_id_do_not_match() {
        assert_eq!(detect_workflow("the reviewers said hi", &ids()), None);
        assert_eq!(detect_workflow("prereview_v1x", &ids()), None);
        assert_eq!(detect_workflow("", &ids()), None);
    }
}
