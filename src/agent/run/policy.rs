//! Which tools the model may call: all of them, none (`SAVANT_DISABLE_TOOLS=1`),
//! only some (`SAVANT_ALLOW_TOOLS=a,b`), all but some (`SAVANT_DENY_TOOLS=c`).
//! The CLI reads the environment ([`ToolPolicy::from_env_values`]); the loop
//! takes the struct.
//!
//! A pattern is a tool name or a prefix ending in `*` (`think_*`,
//! `github.*`); `-`, `.` and `_` are the same character when matching
//! ([`crate::agent::normalize_tool_name`]), so `github.search` and
//! `github_search` name the same tool.

use crate::agent::ToolInfo;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolPolicy {
    /// No tool at all.
    pub disable_all: bool,
    /// When set, only tools matching one of these patterns.
    pub allow: Option<Vec<String>>,
    /// Tools matching one of these patterns are never offered (wins over `allow`).
    pub deny: Vec<String>,
}

fn matches(pattern: &str, name: &str) -> bool {
    use crate::agent::normalize_tool_name as normalize;
    let (p, n) = (normalize(pattern), normalize(name));
    match p.strip_suffix('*') {
        Some(prefix) => n.starts_with(prefix),
        None => p == n,
    }
}

fn list(value: Option<&str>) -> Vec<String> {
    value.unwrap_or_default().split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

fn truthy(value: Option<&str>) -> bool {
    matches!(value.map(|v| v.trim().to_lowercase()).as_deref(), Some("1" | "true" | "yes" | "on"))
}

impl ToolPolicy {
    /// The policy from the values of `SAVANT_DISABLE_TOOLS`, `SAVANT_ALLOW_TOOLS`
    /// and `SAVANT_DENY_TOOLS`. An empty allow list is no allow list.
    pub fn from_env_values(disable: Option<&str>, allow: Option<&str>, deny: Option<&str>) -> ToolPolicy {
        let allow = list(allow);
        ToolPolicy {
            disable_all: truthy(disable),
            allow: if allow.is_empty() { None } else { Some(allow) },
            deny: list(deny),
        }
    }

    /// `Ok` when `name` may be called, else the reason it may not.
    pub fn permits(&self, name: &str) -> Result<(), String> {
        if self.disable_all {
            return Err("tools are disabled (SAVANT_DISABLE_TOOLS=1)".into());
        }
        if let Some(p) = self.deny.iter().find(|p| matches(p, name)) {
            return Err(format!("`{name}` is denied by SAVANT_DENY_TOOLS (`{p}`)"));
        }
        if let Some(allow) = &self.allow
            && !allow.iter().any(|p| matches(p, name))
        {
            return Err(format!("`{name}` is not in SAVANT_ALLOW_TOOLS ({})", allow.join(",")));
        }
        Ok(())
    }

    /// The tools the model is offered, in the given order.
    pub fn filter(&self, tools: Vec<ToolInfo>) -> Vec<ToolInfo> {
        tools.into_iter().filter(|t| self.permits(&t.name).is_ok()).collect()
    }

    /// The `SAVANT_ALLOW_TOOLS` patterns that match none of `tools` (a
    /// typo offers the model fewer tools, or none, without a word).
    pub fn unmatched_allow<'a>(&'a self, tools: &[ToolInfo]) -> Vec<&'a str> {
        let allow = self.allow.iter().flatten();
        allow.filter(|p| !tools.iter().any(|t| matches(p, &t.name))).map(String::as_str).collect()
    }

    /// One line for the prompt's policy section.
    pub fn note(&self) -> String {
        if self.disable_all {
            return "Tools are disabled: do not use action tool; reason, then finish.".into();
        }
        let mut parts = vec!["Call only the tools listed below, by their exact name.".to_owned()];
        if let Some(allow) = &self.allow {
            parts.push(format!("Allowed: {}.", allow.join(", ")));
        }
        if !self.deny.is_empty() {
            parts.push(format!("Denied: {}.", self.deny.join(", ")));
        }
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools(names: &[&str]) -> Vec<ToolInfo> {
        names
            .iter()
            .map(|n| ToolInfo { name: (*n).into(), description: String::new(), input_schema: json!({}) })
            .collect()
    }

    fn names(p: &ToolPolicy) -> Vec<String> {
        p.filter(tools(&["think_plan", "think_next", "prompt_say", "github.search", "local_exec"]))
            .into_iter()
            .map(|t| t.name)
            .collect()
    }

    #[test]
    fn allow_patterns_that_match_no_tool_are_named() {
        let p = ToolPolicy::from_env_values(None, Some("think_*, nosuch_tool, github_search"), None);
        assert_eq!(p.unmatched_allow(&tools(&["think_plan", "github.search"])), ["nosuch_tool"]);
        assert!(ToolPolicy::default().unmatched_allow(&tools(&["think_plan"])).is_empty());
    }

    #[test]
    fn env_values_filter_the_tool_list() {
        assert_eq!(names(&ToolPolicy::default()).len(), 5);
        assert!(names(&ToolPolicy::from_env_values(Some("1"), None, None)).is_empty());
        assert_eq!(names(&ToolPolicy::from_env_values(Some("0"), None, None)).len(), 5);
        assert_eq!(
            names(&ToolPolicy::from_env_values(None, Some("think_*, github_search"), None)),
            ["think_plan", "think_next", "github.search"]
        );
        assert_eq!(
            names(&ToolPolicy::from_env_values(None, Some("think_*"), Some("think.next"))),
            ["think_plan"]
        );
        assert_eq!(names(&ToolPolicy::from_env_values(None, Some(" , "), Some("local_exec"))).len(), 4);
    }

    #[test]
    fn a_refusal_says_which_setting_refused() {
        let p = ToolPolicy::from_env_values(None, Some("think_*"), Some("think_reset"));
        assert!(p.permits("think_reset").unwrap_err().contains("SAVANT_DENY_TOOLS"));
        assert!(p.permits("local_exec").unwrap_err().contains("SAVANT_ALLOW_TOOLS"));
        assert!(p.permits("think_plan").is_ok());
    }
}
