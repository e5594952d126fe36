//! The one action a model answers per step, its JSON Schema (sent to Ollama
//! as `format` and to OpenAI-compatible servers as `response_format`), and
//! the strict parser.

use serde::Serialize;
use serde_json::{Map, Value, json};

/// What the model decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    /// Call `tool_name` with `args`.
    Tool,
    /// Think: `reasoning` goes into memory, nothing is called.
    Reason,
    /// Done: `final` is the answer.
    Finish,
    /// Give up: `final` (or `reasoning`) says why.
    Error,
}

impl ActionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Tool => "tool",
            ActionKind::Reason => "reason",
            ActionKind::Finish => "finish",
            ActionKind::Error => "error",
        }
    }
}

/// One parsed action: what the model decided, each kind with what it
/// carries. Serialized as the five fields of [`schema`] (`""` / `{}` for
/// what a kind does not carry).
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Call `tool` with `args` (always a JSON object).
    Tool { tool: String, args: Value, reasoning: String },
    /// Think: `reasoning` goes into memory, nothing is called.
    Reason { reasoning: String },
    /// Done: `answer` is the final answer (never blank).
    Finish { answer: String, reasoning: String },
    /// Give up: `message` (the answer's `final`, or else `reasoning`) says
    /// why; `tool` is the tool the answer named, or the loop gave up on.
    Error { message: String, reasoning: String, tool: Option<String> },
}

impl Action {
    pub fn finish(final_text: impl Into<String>, reasoning: impl Into<String>) -> Action {
        Action::Finish { answer: final_text.into(), reasoning: reasoning.into() }
    }

    /// Giving up with `message`, which is its reasoning too.
    pub fn error(message: impl Into<String>) -> Action {
        let message = message.into();
        Action::Error { reasoning: message.clone(), message, tool: None }
    }

    pub fn tool(name: impl Into<String>, args: Value) -> Action {
        Action::Tool { tool: name.into(), args: coerce_args(args), reasoning: String::new() }
    }

    /// Its kind, the `action` field.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Tool { .. } => ActionKind::Tool,
            Action::Reason { .. } => ActionKind::Reason,
            Action::Finish { .. } => ActionKind::Finish,
            Action::Error { .. } => ActionKind::Error,
        }
    }

    /// Why, in the model's words (empty when it gave none).
    pub fn reasoning(&self) -> &str {
        match self {
            Action::Tool { reasoning, .. }
            | Action::Reason { reasoning }
            | Action::Finish { reasoning, .. }
            | Action::Error { reasoning, .. } => reasoning,
        }
    }

    /// The tool it names: the one to call, or the one an error is about.
    pub fn tool_name(&self) -> Option<&str> {
        match self {
            Action::Tool { tool, .. } => Some(tool),
            Action::Error { tool, .. } => tool.as_deref(),
            Action::Reason { .. } | Action::Finish { .. } => None,
        }
    }

    /// The `final` field: a finish's answer, an error's message.
    pub fn final_text(&self) -> &str {
        match self {
            Action::Finish { answer: text, .. } | Action::Error { message: text, .. } => text,
            Action::Tool { .. } | Action::Reason { .. } => "",
        }
    }

    /// What identifies a repeated action for stuck detection: the kind, the
    /// tool and its args, and for `reason` the text (a model that thinks new
    /// thoughts is not stuck).
    pub fn fingerprint(&self) -> String {
        match self {
            Action::Tool { tool, args, .. } => format!("tool {tool} {args}"),
            Action::Reason { reasoning } => format!("reason {}", reasoning.trim()),
            other => other.kind().as_str().to_owned(),
        }
    }
}

/// The five fields of [`schema`], in its order.
impl Serialize for Action {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let empty = json!({});
        let args = match self {
            Action::Tool { args, .. } => args,
            _ => &empty,
        };
        let mut st = s.serialize_struct("Action", 5)?;
        st.serialize_field("action", &self.kind())?;
        st.serialize_field("tool_name", self.tool_name().unwrap_or_default())?;
        st.serialize_field("args", args)?;
        st.serialize_field("final", self.final_text())?;
        st.serialize_field("reasoning", self.reasoning())?;
        st.end()
    }
}

const FIELDS: [&str; 5] = ["action", "tool_name", "args", "final", "reasoning"];

/// The action's JSON Schema (draft 2020-12). Every field is required so that
/// structured output always produces all five; the parser is more lenient
/// about missing ones (see [`parse`]).
pub fn schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "AgentAction",
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["tool", "reason", "finish", "error"],
                "description": "tool: call tool_name with args; reason: think, nothing is called; finish: final is the answer; error: give up, final says why"
            },
            "tool_name": { "type": "string", "description": "The tool to call (action tool), else \"\"" },
            "args": { "type": "object", "description": "The tool's arguments (action tool), else {}" },
            "final": { "type": "string", "description": "The answer (finish) or the reason for giving up (error), else \"\"" },
            "reasoning": { "type": "string", "description": "One or two sentences: why this action" }
        },
        "required": FIELDS,
        "additionalProperties": false
    })
}

/// The tight schema of one step, built from the tools offered at that step:
/// one `anyOf` branch per tool (`tool_name` its name as a `const`, `args` its
/// own input schema) and one each for reason, finish (a non-empty `final`)
/// and error. Sent as the structured-output constraint, so a server that
/// honours it cannot invent a tool name or fill `args` with anything but the
/// tool's arguments. It is made [`grammar::enforceable`](super::grammar::enforceable)
/// (every member typed, no long bound from a tool's own schema) and then
/// finite with `caps` ([`bound`](super::bound)): every string has a bound,
/// a required string argument is not empty, so the longest answer it admits
/// is known and the request's token limit covers it (an answer is never cut
/// off). The prompt keeps [`schema`], the general shape.
pub fn step_schema(tools: &[crate::agent::ToolInfo]) -> Value {
    step_schema_with(tools, step_caps(tools))
}

/// The string bounds of a step offering `tools`: [`bound::DEFAULT_CAPS`](super::bound::DEFAULT_CAPS),
/// halved while the schema's [`weight`](super::bound::weight) is over
/// [`bound::MAX_WEIGHT`](super::bound::MAX_WEIGHT) (the grammar grows with
/// its string bounds: many tools get shorter strings, and so many that even
/// the smallest are too many, none).
pub fn step_caps(tools: &[crate::agent::ToolInfo]) -> super::bound::Caps {
    use super::bound::{DEFAULT_CAPS, MAX_WEIGHT, weight};
    let over = |caps| weight(&step_schema_with(tools, caps)) > MAX_WEIGHT;
    let mut caps = DEFAULT_CAPS;
    while over(caps)
        && let Some(smaller) = caps.halved()
    {
        caps = smaller;
    }
    if over(caps) {
        // So many tools that even the smallest bounds make too large a
        // grammar: no bounds (the step is bounded by --answer-tokens alone).
        caps = super::bound::UNBOUNDED;
    }
    caps
}

/// [`step_schema`] with other string bounds (a small context halves them).
pub fn step_schema_with(tools: &[crate::agent::ToolInfo], caps: super::bound::Caps) -> Value {
    schema_for(tools, Branches { reason: true, finish: true }, caps)
}

/// [`step_schema_with`] for a step that must call a tool (docs/agent.md,
/// "Grounded answers"): a goal that needs a tool's output, and no tool has
/// returned anything yet. One branch per tool and error; no reason, no
/// finish. Without tools it is [`step_schema_with`]: nothing can be called.
pub fn call_schema_with(tools: &[crate::agent::ToolInfo], caps: super::bound::Caps) -> Value {
    if tools.is_empty() {
        return step_schema_with(tools, caps);
    }
    schema_for(tools, Branches { reason: false, finish: false }, caps)
}

/// The schema of a narrowed re-ask (see docs/agent.md, "Repeats"): a call
/// of one of `tools`, a finish or an error; no `reason`.
pub fn narrowed_schema(tools: &[crate::agent::ToolInfo]) -> Value {
    schema_for(tools, Branches { reason: false, finish: true }, super::bound::DEFAULT_CAPS)
}

/// `schema` (a step schema) with the argument `arg` of `tool`'s branch
/// allowed only `choices` (a hopeless call's re-ask: the values the engine
/// knows would work); without choices, an optional `arg` left out (a
/// required one is kept). No such branch or argument: unchanged.
pub fn pin_arg(schema: &mut Value, tool: &str, arg: &str, choices: &[String]) {
    let Some(branches) = schema.get_mut("anyOf").and_then(Value::as_array_mut) else { return };
    for b in branches {
        if b["properties"]["tool_name"]["const"] != tool {
            continue;
        }
        let args = &mut b["properties"]["args"];
        let required =
            args.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|n| n == arg));
        let Some(props) = args.get_mut("properties").and_then(Value::as_object_mut) else { continue };
        if !choices.is_empty() && props.contains_key(arg) {
            props.insert(arg.to_owned(), json!({ "type": "string", "enum": choices }));
        } else if choices.is_empty() && !required {
            props.remove(arg);
        }
    }
}

/// Which branches besides the tools' a schema has (error always does).
#[derive(Clone, Copy)]
struct Branches {
    reason: bool,
    finish: bool,
}

/// A tool's `args` in a step schema: enforceable, finite, and with a
/// required string argument at least one character long.
fn step_args(input_schema: &Value, max_chars: u64) -> Value {
    let args = super::grammar::enforceable(&super::grammar::first_alternative(input_schema));
    let mut args = if max_chars == 0 { args } else { super::bound::bounded(&args, max_chars) };
    let required: Vec<String> = args
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    if let Some(props) = args.get_mut("properties").and_then(Value::as_object_mut) {
        for name in required {
            if let Some(Value::Object(p)) = props.get_mut(&name)
                && p.get("type") == Some(&json!("string"))
                && p.get("minLength").and_then(Value::as_u64).unwrap_or(0) == 0
            {
                p.insert("minLength".into(), json!(1));
            }
        }
    }
    args
}

fn schema_for(tools: &[crate::agent::ToolInfo], with: Branches, caps: super::bound::Caps) -> Value {
    let empty = json!({ "const": "" });
    let no_args = json!({ "type": "object", "properties": {}, "additionalProperties": false });
    let bounded = |max: u64, min: u64| {
        let mut s = json!({ "type": "string" });
        if min > 0 {
            s["minLength"] = json!(min);
        }
        if max > 0 {
            s["maxLength"] = json!(max);
        }
        s
    };
    let short = bounded(caps.reasoning_chars, 0);
    let branch = |action: &str, tool_name: Value, args: Value, final_text: Value| {
        json!({
            "type": "object",
            "properties": {
                "action": { "const": action },
                "tool_name": tool_name,
                "args": args,
                "final": final_text,
                "reasoning": short,
            },
            "required": FIELDS,
            "additionalProperties": false
        })
    };
    let mut branches: Vec<Value> = tools
        .iter()
        .map(|t| {
            branch(
                "tool",
                json!({ "const": t.name }),
                step_args(&t.input_schema, caps.arg_chars),
                empty.clone(),
            )
        })
        .collect();
    if with.reason {
        branches.push(branch("reason", empty.clone(), no_args.clone(), empty.clone()));
    }
    if with.finish {
        branches.push(branch("finish", empty.clone(), no_args.clone(), bounded(caps.final_chars, 1)));
    }
    branches.push(branch("error", empty.clone(), no_args, short.clone()));
    json!({ "title": "AgentAction", "anyOf": branches })
}

/// What the loop tells a model that asked for the same failed tool call as
/// at the step before, when it asks again with [`narrowed_schema`].
pub fn repeat_note(tool: &str) -> String {
    format!(
        "`{tool}` failed with these arguments at the last step (its error is above). Do not call it again \
         the same way: call another tool, or finish, or give up with action error."
    )
}

/// A prose answer (not JSON at all) as the final answer, where the request
/// allowed only a final answer: its trimmed text, unless empty or JSON-like.
pub fn prose_final(text: &str) -> Option<String> {
    let t = text.trim();
    let json_like = t.starts_with('{') || t.starts_with('[') || t.starts_with("```");
    (!t.is_empty() && !json_like).then(|| t.to_owned())
}

/// `args` as an object: objects as given; `null` → `{}`; a string holding a
/// JSON object → that object; anything else → `{"input": value}`.
pub fn coerce_args(args: Value) -> Value {
    match args {
        Value::Object(_) => args,
        Value::Null => json!({}),
        Value::String(s) if s.trim().is_empty() => json!({}),
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(v @ Value::Object(_)) => v,
            _ => json!({ "input": s }),
        },
        other => json!({ "input": other }),
    }
}

/// The body of a single fenced code block (```json … ```), if that is all
/// the text is; models sometimes wrap JSON that way despite instructions.
fn unfence(text: &str) -> &str {
    let t = text.trim();
    let Some(rest) = t.strip_prefix("```") else { return t };
    let Some(body) = rest.strip_suffix("```") else { return t };
    let body = body.strip_prefix("json").or_else(|| body.strip_prefix("JSON")).unwrap_or(body);
    body.trim()
}

fn text_field(map: &Map<String, Value>, key: &str) -> String {
    match map.get(key) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// `text` with every raw control character inside a JSON string escaped
/// (`\n`, `\t`, `\r`, else `\u00XX`): small models put raw newlines in
/// strings, which JSON forbids but whose meaning is plain. Outside strings
/// nothing changes.
pub fn escape_control_chars(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if (c as u32) < 0x20 {
                match c {
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    _ => out.push_str(&format!("\\u{:04x}", c as u32)),
                }
                continue;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// Parses one action strictly: the whole answer must be one JSON object
/// (optionally in a single ```json fence) with only the five known fields,
/// `action` one of the four kinds, a non-empty `tool_name` for `tool` and a
/// non-empty `final` for `finish`. `args` is coerced to an object; `final`
/// and `reasoning` that are not strings are kept as their JSON text.
pub fn parse(text: &str) -> Result<Action, String> {
    let body = unfence(text);
    if body.is_empty() {
        return Err("the answer is empty".into());
    }
    let value: Value = serde_json::from_str(&escape_control_chars(body))
        .map_err(|e| format!("the answer is not valid JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err(format!("the answer must be a JSON object, got {}", kind_of(&value)));
    };
    if let Some(extra) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        let help = crate::diagnostic::suggest(extra, FIELDS).map(|h| format!(" ({h})")).unwrap_or_default();
        return Err(format!("unknown field `{extra}`{help}; the fields are {}", FIELDS.join(", ")));
    }
    let action = match map.get("action") {
        Some(Value::String(s)) => match s.trim().to_lowercase().as_str() {
            "tool" => ActionKind::Tool,
            "reason" => ActionKind::Reason,
            "finish" => ActionKind::Finish,
            "error" => ActionKind::Error,
            other => return Err(format!("`action` must be tool, reason, finish or error, got `{other}`")),
        },
        Some(other) => return Err(format!("`action` must be a string, got {}", kind_of(other))),
        None => return Err("missing `action` (tool, reason, finish or error)".into()),
    };
    let (tool, reasoning) = (text_field(&map, "tool_name").trim().to_owned(), text_field(&map, "reasoning"));
    let final_text = text_field(&map, "final");
    match action {
        ActionKind::Tool if tool.is_empty() => Err("`tool_name` is required when action is tool".into()),
        ActionKind::Tool => {
            let args = coerce_args(map.get("args").cloned().unwrap_or(Value::Null));
            Ok(Action::Tool { tool, args, reasoning })
        }
        ActionKind::Reason => Ok(Action::Reason { reasoning }),
        ActionKind::Finish if final_text.trim().is_empty() => {
            Err("`final` is required when action is finish: put the answer there".into())
        }
        ActionKind::Finish => Ok(Action::Finish { answer: final_text, reasoning }),
        ActionKind::Error => {
            Ok(Action::Error { message: final_text, reasoning, tool: Some(tool).filter(|t| !t.is_empty()) })
        }
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The correction message sent after a malformed answer.
pub fn correction(error: &str) -> String {
    format!(
        "Your answer could not be used: {error}.\nAnswer with JSON only: one object with the fields \
         action, tool_name, args, final, reasoning, matching the schema. No prose, no code fence. Keep it \
         short: args holds only the tool's own arguments, reasoning one sentence."
    )
}

/// The most characters of a bad answer echoed back in the correction round:
/// the whole answer could be as long as the context (a model that filled
/// `args` until it was cut off), and echoing it would overflow the context.
pub const ECHO_CHARS: usize = 600;

/// The bad answer as echoed in the correction round: at most
/// [`ECHO_CHARS`] characters, with a note when it was longer.
pub fn echo(answer: &str) -> String {
    let total = answer.chars().count();
    if total <= ECHO_CHARS {
        return answer.to_owned();
    }
    let head: String = answer.chars().take(ECHO_CHARS).collect();
    format!("{head}… [{} more characters not shown]", total - ECHO_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_actions_parse_and_args_are_coerced() {
        let a = parse(r#"{"action":"tool","tool_name":"t","args":"{\"x\":1}","final":"","reasoning":"r"}"#)
            .unwrap();
        assert_eq!(a, Action::Tool { tool: "t".into(), args: json!({"x": 1}), reasoning: "r".into() });
        let b = parse("```json\n{\"action\":\"tool\",\"tool_name\":\"t\",\"args\":null}\n```").unwrap();
        assert_eq!(b, Action::tool("t", json!({})));
        let c = parse(r#"{"action":"tool","tool_name":"t","args":[1,2]}"#).unwrap();
        assert_eq!(c, Action::tool("t", json!({"input": [1, 2]})));
        let d = parse(r#"{"action":"finish","final":{"answer":42}}"#).unwrap();
        assert_eq!(d.final_text(), r#"{"answer":42}"#);
        // Serialized as the schema's five fields, whatever the kind carries.
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({"action": "tool", "tool_name": "t", "args": {"x": 1}, "final": "", "reasoning": "r"})
        );
        let e = Action::Error { message: "m".into(), reasoning: "r".into(), tool: Some("t".into()) };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"action": "error", "tool_name": "t", "args": {}, "final": "m", "reasoning": "r"})
        );
        assert_eq!(parse(r#"{"action":"error","tool_name":"t","final":"m","reasoning":"r"}"#).unwrap(), e);
    }

    #[test]
    fn malformed_answers_are_rejected_with_a_reason() {
        for (text, needle) in [
            ("", "empty"),
            ("Sure! I will call the tool.", "not valid JSON"),
            ("[1]", "JSON object"),
            (r#"{"action":"dance"}"#, "`action` must be"),
            (r#"{"tool_name":"x"}"#, "missing `action`"),
            (r#"{"action":"tool","args":{}}"#, "`tool_name` is required"),
            (r#"{"action":"finish","final":""}"#, "`final` is required"),
            (r#"{"action":"reason","reasonning":"x"}"#, "did you mean `reasoning`"),
            (r#"{"action":"tool","tool_name":"a"} {"action":"finish"}"#, "not valid JSON"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn raw_control_characters_inside_strings_are_escaped() {
        let a = parse("{\"action\":\"finish\",\n \"final\":\"two\nlines\tand\u{1}\"}").unwrap();
        assert_eq!(a.final_text(), "two\nlines\tand\u{1}");
        // Escapes already there stay as they are.
        let b = parse(r#"{"action":"finish","final":"a \"q\" \\ b\n"}"#).unwrap();
        assert_eq!(b.final_text(), "a \"q\" \\ b\n");
        assert_eq!(escape_control_chars("{\n}"), "{\n}");
    }

    #[test]
    fn docs_agent_md_publishes_this_schema() {
        let doc = include_str!("../../../docs/agent.md");
        let at = doc.find("<!-- action-schema").expect("docs/agent.md marks the action schema");
        let block = &doc[at..];
        let start = block.find("```json\n").unwrap() + 8;
        let end = start + block[start..].find("```").unwrap();
        let published: Value = serde_json::from_str(&block[start..end]).unwrap();
        assert_eq!(published, schema(), "docs/agent.md's action schema differs from action::schema()");
    }

    #[test]
    fn the_step_schema_pins_tool_names_and_args_to_the_offered_tools() {
        let tools = [
            crate::agent::ToolInfo {
                name: "think_plan".into(),
                description: "Plan.".into(),
                input_schema: json!({"$schema": "x", "type": "object", "properties": {"workflow": {"type": "string", "maxLength": 4000}},
                                     "required": ["workflow"], "additionalProperties": false}),
            },
            crate::agent::ToolInfo { name: "echo".into(), description: "".into(), input_schema: json!({}) },
        ];
        let s = step_schema(&tools);
        super::super::grammar::check(&s).unwrap();
        assert_eq!(s["anyOf"].as_array().unwrap().len(), 5);
        assert_eq!(s["anyOf"][0]["properties"]["tool_name"], json!({"const": "think_plan"}));
        let args = &s["anyOf"][0]["properties"]["args"];
        assert_eq!(
            args["properties"]["workflow"],
            json!({"type": "string", "minLength": 1, "maxLength": 120}),
            "the tool's long bound dropped for the loop's own; a required string is not empty"
        );
        assert_eq!(super::super::bound::longest(&s), None, "echo takes any JSON: unbounded");
        let plan_only = step_schema(&tools[..1]);
        assert!(super::super::bound::longest(&plan_only).is_some(), "finite: its longest answer is known");
        assert!(args.get("$schema").is_none());
        let v = jsonschema::validator_for(&s).unwrap();
        let a = |action: &str, tool: &str, args: Value, fin: &str| json!({"action": action, "tool_name": tool, "args": args, "final": fin, "reasoning": "r"});
        assert!(v.is_valid(&a("tool", "think_plan", json!({"workflow": "w"}), "")));
        assert!(v.is_valid(&a("tool", "echo", json!({"anything": 1}), "")));
        assert!(v.is_valid(&a("finish", "", json!({}), "done")));
        assert!(v.is_valid(&a("reason", "", json!({}), "")));
        // An invented name, args copied from a schema, an empty finish: all refused.
        assert!(!v.is_valid(&a("tool", "think-plan", json!({"workflow": "w"}), "")));
        assert!(!v.is_valid(&a("tool", "think_plan", json!({"type": "object", "properties": {}}), "")));
        assert!(!v.is_valid(&a("finish", "", json!({}), "")));
        assert!(!v.is_valid(&a("tool", "think_plan", json!({"workflow": ""}), "")), "an empty required id");
        assert!(!v.is_valid(&a("finish", "", json!({}), &"x".repeat(321))), "a final answer over its bound");
        // No tools: only reason, finish and error.
        assert_eq!(step_schema(&[])["anyOf"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn a_pinned_argument_takes_only_its_choices_and_an_optional_one_goes() {
        let tools = [crate::agent::ToolInfo {
            name: "list".into(),
            description: String::new(),
            input_schema: json!({"type": "object", "required": ["workflow"], "properties": {
                "workflow": {"type": "string"}, "filter": {"type": "string"}}}),
        }];
        let mut s = step_schema(&tools);
        pin_arg(&mut s, "list", "workflow", &["a".to_owned(), "b".to_owned()]);
        let args = &s["anyOf"][0]["properties"]["args"];
        assert_eq!(args["properties"]["workflow"], json!({"type": "string", "enum": ["a", "b"]}));
        pin_arg(&mut s, "list", "filter", &[]);
        pin_arg(&mut s, "list", "workflow", &[]);
        let args = &s["anyOf"][0]["properties"]["args"];
        assert!(args["properties"].get("filter").is_none(), "optional: left out");
        assert!(args["properties"].get("workflow").is_some(), "required: kept");
        let before = s.clone();
        pin_arg(&mut s, "other", "workflow", &["x".to_owned()]);
        assert_eq!(s, before, "no such branch: unchanged");
    }

    #[test]
    fn the_schema_requires_every_field_and_allows_no_other() {
        let s = schema();
        assert_eq!(s["required"], json!(FIELDS));
        assert_eq!(s["additionalProperties"], json!(false));
        let validator = jsonschema::validator_for(&s).unwrap();
        assert!(
            validator
                .is_valid(&json!({"action":"reason","tool_name":"","args":{},"final":"","reasoning":"x"}))
        );
        assert!(
            !validator.is_valid(&json!({"action":"jump","tool_name":"","args":{},"final":"","reasoning":""}))
        );
    }
}
