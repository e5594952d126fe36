//! Building a step's request: the budget that fits the model's context, and
//! the prompt and structured-output schema that go with it.

use super::{Runner, action};
use crate::agent::ToolInfo;
use crate::agent::Tools;
use crate::agent::backend::{Backend, ChatRequest, Message};
use crate::agent::run::bound;
use crate::agent::run::prompt::{self, Prompt, PromptParts};
use serde_json::{Value, json};

impl<B: Backend, T: Tools> Runner<'_, B, T> {
    /// The prompt budget of a step and the context it needs (prompt, answer
    /// and a correction round): `--budget-tokens`, lowered to fit the model's
    /// context when `--context-tokens` or the server says it.
    pub(super) async fn budget(&mut self, heavy: bool) -> Budget {
        let model = self.backend.model(heavy);
        // Asked once per model (and logged then); the flag wins.
        let first_time = !self.contexts.contains_key(&model);
        if first_time {
            let found = match self.options.context_tokens {
                Some(n) => Some(n),
                None => self.backend.context_tokens(heavy).await,
            };
            self.contexts.insert(model.clone(), found);
        }
        let from = if self.options.context_tokens.is_some() { "--context-tokens" } else { "the server" };
        let context = self.contexts.get(&model).copied().flatten().map(|n| (n, from));
        let reserve = self.options.answer_tokens + CORRECTION_RESERVE_TOKENS;
        let mut prompt = self.options.budget_tokens;
        if let Some((n, from)) = context {
            // Tokens are estimated: keep a tenth of the context as a margin.
            let fits = (n - n / 10).saturating_sub(reserve).max(MIN_PROMPT_TOKENS);
            if fits < prompt {
                prompt = fits;
            }
            if first_time && n - n / 10 < reserve + MIN_PROMPT_TOKENS {
                // The smallest prompt and the answer do not fit: the server
                // will cut the prompt or refuse it. Said once, where it shows.
                let warning = format!(
                    "model {model} has a context of {n} tokens ({from}): too small for a {}-token answer \
                     and a prompt of at least {MIN_PROMPT_TOKENS} tokens; lower --answer-tokens or use a \
                     model with a larger context",
                    self.options.answer_tokens
                );
                tracing::warn!("{warning}");
                self.telemetry.log(&format!("warning: {warning}"));
            }
            if first_time {
                self.telemetry.log(&format!(
                    "step {}: model {model} has a context of {n} tokens ({from}): prompt budget {prompt}, \
                     answer {}",
                    self.step, self.options.answer_tokens
                ));
            }
        }
        Budget {
            prompt,
            num_ctx: u32::try_from(prompt + reserve).unwrap_or(u32::MAX),
            context: context.map(|(n, _)| n),
        }
    }

    /// The step schema for `tools` with the largest string bounds whose
    /// longest answer fits [`ANSWER_SHARE`] of the context (bounds halved
    /// until it does), and that answer's size in tokens.
    /// With `must_call`, a tool call (or an error) is all the schema admits.
    fn sized_schema(&self, tools: &[ToolInfo], budget: &Budget, must_call: bool) -> (Value, usize) {
        let limit = budget.context.map(|n| (n - n / 10) * ANSWER_SHARE / 100);
        let mut caps = action::step_caps(tools);
        loop {
            let schema = if must_call {
                action::call_schema_with(tools, caps)
            } else {
                action::step_schema_with(tools, caps)
            };
            let longest = bound::longest(&schema).unwrap_or(self.options.answer_tokens);
            match (limit, caps.halved()) {
                (Some(limit), Some(smaller)) if longest > limit => caps = smaller,
                _ => return (schema, longest),
            }
        }
    }

    /// The step's prompt (logged) and the request that carries it. With
    /// `must_call` (the goal needs a tool's output and none has come yet),
    /// the step may only call a tool or give up, and the prompt says so.
    pub(super) fn request(
        &mut self,
        tools: &[ToolInfo],
        heavy: bool,
        budget: Budget,
        must_call: bool,
    ) -> (ChatRequest, Prompt) {
        let schema = action::schema();
        let (step_schema, longest) = self.sized_schema(tools, &budget, must_call);
        // The answer's bound covers the longest valid answer: under the
        // schema it is never cut off. The prompt gives way to it.
        let max_tokens = self.options.answer_tokens.max(longest);
        let mut budget = budget;
        if let Some(n) = budget.context {
            let fits =
                (n - n / 10).saturating_sub(max_tokens + CORRECTION_RESERVE_TOKENS).max(MIN_PROMPT_TOKENS);
            budget.prompt = budget.prompt.min(fits);
        }
        budget.num_ctx =
            u32::try_from(budget.prompt + max_tokens + CORRECTION_RESERVE_TOKENS).unwrap_or(u32::MAX);
        let mut policy = self.options.policy.note();
        if must_call && !tools.is_empty() {
            policy.push_str(MUST_CALL_NOTE);
        }
        let built = prompt::build(&PromptParts {
            persona: &self.options.persona,
            goal: self.goal,
            driver: self.options.driver.as_deref(),
            policy: &policy,
            tools,
            memory: &self.session,
            last_output: self.last_output.as_deref(),
            schema: &schema,
            step: self.step,
            max_steps: self.options.max_steps,
            budget_tokens: budget.prompt,
        });
        let trimmed = if built.trimmed.is_empty() {
            String::new()
        } else {
            format!(", trimmed {}", built.trimmed.join(", "))
        };
        self.telemetry.log(&format!(
            "step {}: prompt ~{} tokens, answer up to {max_tokens} tokens, {} {}{trimmed}",
            self.step,
            built.tokens,
            built.hash,
            section_sizes(&built)
        ));
        let request = ChatRequest {
            messages: vec![Message::system(built.system.clone()), Message::user(built.user.clone())],
            schema: step_schema,
            heavy,
            max_tokens: u32::try_from(max_tokens).unwrap_or(u32::MAX),
            num_ctx: Some(budget.num_ctx),
            context: json!({
                "run_id": self.run_id, "goal": self.goal, "step": self.step, "max_steps": self.options.max_steps,
                "policy": policy, "tools": tools,
                "memory": {"summaries": self.session.summaries, "steps": self.session.steps},
                "last_output": self.last_output, "prompt_hash": built.hash,
            }),
        };
        (request, built)
    }
}

/// The policy's last sentence on a step that must call a tool.
pub(super) const MUST_CALL_NOTE: &str = " The goal needs what a tool returns, and no tool has returned anything yet: call a tool now; finish after \
     reading its output.";

/// `{section: estimated tokens}` of a prompt.
pub(super) fn section_sizes(p: &Prompt) -> Value {
    Value::Object(p.sections.iter().map(|s| (s.name.to_owned(), json!(s.tokens))).collect())
}

/// Room kept in the context for a correction round beyond the answer: the
/// echoed answer (at most [`action::ECHO_CHARS`]) and the correction message.
const CORRECTION_RESERVE_TOKENS: usize = action::ECHO_CHARS / 4 + 150;
/// The smallest prompt budget, however small the context.
const MIN_PROMPT_TOKENS: usize = 500;

/// A step's token budget.
#[derive(Clone, Copy)]
pub(super) struct Budget {
    /// For the prompt (estimated tokens).
    pub(super) prompt: usize,
    /// The context the request needs (prompt, answer, correction).
    pub(super) num_ctx: u32,
    /// The model's context, when known.
    pub(super) context: Option<usize>,
}

/// The most of the usable context (a tenth kept as a margin) the longest
/// answer may take, in percent; the rest is the prompt's.
const ANSWER_SHARE: usize = 55;
