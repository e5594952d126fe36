//! The deterministic prompt builder. The same inputs always give the same
//! bytes (and so the same hash): sections in a fixed order, tools in the
//! order the multiplexer lists them, JSON with its keys in insertion order.
//!
//! Cache-friendly order: the sections that do not change during a run come
//! first (system, driver, tools, policy), the ones that do last (goal,
//! progress, summaries, memory, last output), so consecutive steps share a
//! long prefix and a server with prefix caching (llama.cpp, vLLM, Ollama)
//! does not re-read it every step.
//!
//! Budget: the prompt's estimated size must fit `budget_tokens` (8k by
//! default, a small model's window). Over budget, the builder trims, in this
//! order: the oldest remembered steps, then the older summaries, then the
//! driver prompt, then the tools' argument schemas (names and descriptions
//! stay), and finally cuts the last tool output. The goal, the policy, the
//! tool names and the action schema are never trimmed.
//!
//! Tokens are estimated as `ceil(characters / 4)`, the usual rule of thumb
//! for English text and JSON with BPE tokenizers; backends that report real
//! counts (Ollama, OpenAI) have those logged next to the estimate.

use super::memory::{Session, cut};
use crate::agent::ToolInfo;
use serde::Serialize;
use serde_json::Value;

/// The default prompt budget, in estimated tokens.
pub const DEFAULT_BUDGET_TOKENS: usize = 8_000;

pub use super::tokens::estimate_tokens;

/// What goes into one prompt.
pub struct PromptParts<'a> {
    pub persona: &'a str,
    pub goal: &'a str,
    /// The driver prompt (an extra: trimmed before the tools' schemas).
    pub driver: Option<&'a str>,
    pub policy: &'a str,
    pub tools: &'a [ToolInfo],
    pub memory: &'a Session,
    pub last_output: Option<&'a str>,
    pub schema: &'a Value,
    pub step: usize,
    pub max_steps: usize,
    pub budget_tokens: usize,
}

/// One section's name and estimated size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Section {
    pub name: &'static str,
    pub tokens: usize,
}

/// A built prompt: a system and a user message.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prompt {
    pub system: String,
    pub user: String,
    pub sections: Vec<Section>,
    /// Estimated tokens of both messages.
    pub tokens: usize,
    /// `sha256:` of the system message, a NUL byte, and the user message.
    pub hash: String,
    /// What was trimmed to fit the budget, in order (`memory_step #3`, `driver`, …).
    pub trimmed: Vec<String>,
}

/// Keep at least this many characters of the last tool output.
const MIN_OUTPUT_CHARS: usize = 200;

struct Draft<'a> {
    parts: &'a PromptParts<'a>,
    skip_steps: usize,
    skip_summaries: usize,
    driver: bool,
    tool_schemas: bool,
    output_chars: Option<usize>,
}

impl Draft<'_> {
    fn render(&self) -> (String, String, Vec<Section>) {
        let p = self.parts;
        let system = format!(
            "{persona}\n\nAnswer every turn with exactly one JSON object, the next action, matching this JSON \
             Schema:\n{schema}\n\n- action \"tool\": call tool_name with args (an object).\n- action \"reason\": \
             think one step further; nothing is called.\n- action \"finish\": final is your answer to the goal.\n- \
             action \"error\": the goal cannot be reached; final says why.\nJSON only: no prose, no code fence.",
            persona = p.persona.trim(),
            schema = p.schema
        );
        let mut sections = vec![Section { name: "system", tokens: estimate_tokens(&system) }];
        let mut user = String::new();
        let mut add = |name: &'static str, title: &str, body: &str| {
            if body.is_empty() {
                return;
            }
            let text = format!("## {title}\n{}\n\n", body.trim_end());
            sections.push(Section { name, tokens: estimate_tokens(&text) });
            user.push_str(&text);
        };
        // What stays the same from step to step comes first, so that a server
        // with prefix caching reads it once per run, not once per step.
        if self.driver
            && let Some(d) = p.driver
        {
            add("driver", "Driver prompt", d.trim());
        }
        add("tools", "Tools", &self.tools());
        add("policy", "Tool policy", p.policy);
        add("goal", "Goal", p.goal.trim());
        add("progress", "Progress", &format!("This is step {} of at most {}.", p.step, p.max_steps));
        let summaries: Vec<String> =
            p.memory.summaries.iter().skip(self.skip_summaries).map(|s| format!("- {}", s.text)).collect();
        add("summaries", "Earlier steps (summarised)", &summaries.join("\n"));
        let steps: Vec<String> = p
            .memory
            .steps
            .iter()
            .skip(self.skip_steps)
            .map(|s| {
                let mut line = format!("- {}", s.summary());
                if s.action == "tool" {
                    line.push_str(&format!("\n  args: {}", s.args));
                    if !s.output.is_null() {
                        line.push_str(&format!("\n  output: {}", s.output));
                    }
                }
                line
            })
            .collect();
        add("memory", "Recent steps", &steps.join("\n"));
        if let Some(out) = p.last_output {
            let out = match self.output_chars {
                Some(max) => cut(out, max),
                None => out.to_owned(),
            };
            add("last_output", "Last tool output", &out);
        }
        (system, user, sections)
    }

    fn tools(&self) -> String {
        let p = self.parts;
        if p.tools.is_empty() {
            return "(none)".into();
        }
        let lines: Vec<String> = p
            .tools
            .iter()
            .map(|t| {
                if self.tool_schemas {
                    format!("- {}: {}\n  args: {}", t.name, t.description.trim(), t.input_schema)
                } else {
                    format!("- {}: {}", t.name, cut(t.description.trim(), 100))
                }
            })
            .collect();
        lines.join("\n")
    }
}

fn total(system: &str, user: &str) -> usize {
    estimate_tokens(system) + estimate_tokens(user)
}

/// Builds the prompt, trimming to fit `parts.budget_tokens`.
pub fn build(parts: &PromptParts<'_>) -> Prompt {
    let mut d = Draft {
        parts,
        skip_steps: 0,
        skip_summaries: 0,
        driver: true,
        tool_schemas: true,
        output_chars: None,
    };
    let mut trimmed = Vec::new();
    let budget = parts.budget_tokens;
    let mut rendered = d.render();
    let over = |r: &(String, String, Vec<Section>)| total(&r.0, &r.1) > budget;
    // The newest step stays: it is what the model just did.
    while over(&rendered) && d.skip_steps + 1 < parts.memory.steps.len() {
        trimmed.push(format!("memory_step #{}", parts.memory.steps[d.skip_steps].step));
        d.skip_steps += 1;
        rendered = d.render();
    }
    while over(&rendered) && d.skip_summaries < parts.memory.summaries.len() {
        let s = &parts.memory.summaries[d.skip_summaries];
        trimmed.push(format!("summary #{}-#{}", s.from, s.to));
        d.skip_summaries += 1;
        rendered = d.render();
    }
    if over(&rendered) && parts.driver.is_some() {
        trimmed.push("driver".into());
        d.driver = false;
        rendered = d.render();
    }
    if over(&rendered) && !parts.tools.is_empty() {
        trimmed.push("tool_schemas".into());
        d.tool_schemas = false;
        rendered = d.render();
    }
    if over(&rendered)
        && let Some(out) = parts.last_output
    {
        let excess_chars = (total(&rendered.0, &rendered.1) - budget) * 4;
        let keep = out.chars().count().saturating_sub(excess_chars + 64).max(MIN_OUTPUT_CHARS);
        trimmed.push(format!("last_output to {keep} chars"));
        d.output_chars = Some(keep);
        rendered = d.render();
    }
    let (system, user, sections) = rendered;
    let hash = crate::runtime::workflow::sha256_hex(format!("{system}\0{user}").as_bytes());
    Prompt { tokens: total(&system, &user), system, user, sections, hash, trimmed }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::run::memory::StepRecord;
    use serde_json::json;

    fn session(steps: usize) -> Session {
        let mut s = Session::new("r", "g", "t".into());
        for n in 1..=steps {
            s.steps.push(StepRecord {
                step: n,
                action: "tool".into(),
                tool_name: "think_plan".into(),
                args: json!({"n": n}),
                output: json!("o".repeat(800)),
                ok: Some(true),
                ..StepRecord::default()
            });
        }
        s
    }

    fn parts<'a>(
        memory: &'a Session,
        tools: &'a [ToolInfo],
        schema: &'a Value,
        budget: usize,
    ) -> PromptParts<'a> {
        PromptParts {
            persona: "You are a careful agent.",
            goal: "List the workflows.",
            driver: Some("Driver text. "),
            policy: "Call only listed tools.",
            tools,
            memory,
            last_output: Some("{\"big\": \"…\"}"),
            schema,
            step: 3,
            max_steps: 25,
            budget_tokens: budget,
        }
    }

    #[test]
    fn the_same_inputs_give_the_same_prompt() {
        let (m, schema) = (session(3), crate::agent::run::action::schema());
        let tools = vec![ToolInfo {
            name: "think_plan".into(),
            description: "Plan.".into(),
            input_schema: json!({}),
        }];
        let a = build(&parts(&m, &tools, &schema, DEFAULT_BUDGET_TOKENS));
        let b = build(&parts(&m, &tools, &schema, DEFAULT_BUDGET_TOKENS));
        assert_eq!(a, b);
        assert!(a.trimmed.is_empty());
        assert!(a.hash.starts_with("sha256:"));
        let names: Vec<_> = a.sections.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["system", "driver", "tools", "policy", "goal", "progress", "memory", "last_output"]
        );
        assert_eq!(a.tokens, estimate_tokens(&a.system) + estimate_tokens(&a.user));
    }

    #[test]
    fn over_budget_the_oldest_memory_goes_first_then_extras() {
        let (m, schema) = (session(12), crate::agent::run::action::schema());
        let tools =
            vec![ToolInfo { name: "t".into(), description: "d".into(), input_schema: json!({"x": 1}) }];
        let p = build(&parts(&m, &tools, &schema, 1_500));
        assert!(p.tokens <= 1_500, "{}", p.tokens);
        assert_eq!(p.trimmed[0], "memory_step #1");
        assert!(!p.trimmed.contains(&"driver".to_owned()), "{:?}", p.trimmed);
        assert!(p.user.contains("#12 tool think_plan"));
        assert!(!p.user.contains("#1 tool think_plan"));
        // A budget too small for even one step drops the extras too, in order.
        let tiny = build(&parts(&m, &tools, &schema, 300));
        let last = |name: &str| tiny.trimmed.iter().position(|t| t == name).unwrap();
        assert!(last("memory_step #11") < last("driver") && last("driver") < last("tool_schemas"));
        assert!(tiny.user.contains("List the workflows."));
    }

    /// The characters two texts share from their start.
    fn common_prefix(a: &str, b: &str) -> usize {
        a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
    }

    #[test]
    fn consecutive_steps_share_most_of_the_prompt_as_a_prefix() {
        // The real engine tools, as `run` offers them.
        let tools: Vec<ToolInfo> = crate::runtime::catalog::tools()
            .map(|t| ToolInfo {
                name: t.name.into(),
                description: t.description.into(),
                input_schema: t.input().clone(),
            })
            .collect();
        let schema = crate::agent::run::action::schema();
        let driver = "Plan with think_plan, then follow think_next.\n".repeat(20);
        let mut memory = Session::new("r", "g", "t".into());
        let mut previous: Option<String> = None;
        for step in 1..=4 {
            let last = memory.steps.last().map(|s| s.output.to_string());
            let p = build(&PromptParts {
                persona: crate::agent::run::PERSONA,
                goal: "List the available workflows and say which has the most steps.",
                driver: Some(&driver),
                policy: "Call only the tools listed below, by their exact name.",
                tools: &tools,
                memory: &memory,
                last_output: last.as_deref(),
                schema: &schema,
                step,
                max_steps: 25,
                budget_tokens: DEFAULT_BUDGET_TOKENS,
            });
            let text = format!("{}\n{}", p.system, p.user);
            if let Some(prev) = &previous {
                let shared = common_prefix(prev, &text) as f64 / text.chars().count() as f64;
                assert!(
                    shared >= 0.8,
                    "step {step} shares only {:.0}% with step {}",
                    shared * 100.0,
                    step - 1
                );
            }
            previous = Some(text);
            memory.steps.push(StepRecord {
                step,
                action: "tool".into(),
                tool_name: "think_workflows_list".into(),
                args: json!({}),
                output: json!({"workflows": ["review_v1", "release_notes"], "step": step}),
                ok: Some(true),
                ..StepRecord::default()
            });
        }
    }
}
