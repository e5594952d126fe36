//! The one diagnostic type every layer reports with, and its stable codes.

use crate::source::Span;
use serde::Serialize;

/// Declares [`Code`] from one table: a row per code — the variant (its doc
/// comment), the stable name, the severity and the one-line summary. Adding
/// a code is one row here, its check's own file in `src/check/` (registered
/// in `check::CHECKS`), its section in docs/checks.md, and its fixture
/// directory under `tests/checks/`.
macro_rules! codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal, $severity:ident, $summary:literal;)*) => {
        /// Stable diagnostic codes. The string form (`YAML_SYNTAX`) is the public
        /// contract: renderers, docs and users' suppressions rely on it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum Code {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Code {
            /// Every code, in the order of docs/checks.md.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable name (`YAML_SYNTAX`), as renderers and suppressions write it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }

            /// The severity a diagnostic of this code has.
            pub fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)*
                }
            }

            /// A one-line summary, used as the SARIF rule description.
            pub fn summary(self) -> &'static str {
                match self {
                    $(Code::$variant => $summary,)*
                }
            }
        }
    };
}

codes! {
    /// The file could not be read as YAML (syntax, encoding, duplicate keys).
    YamlSyntax = "YAML_SYNTAX", Error, "The file is not valid YAML.";
    /// The file exceeds a safety limit: size, nesting depth or alias expansion.
    YamlLimit = "YAML_LIMIT", Error, "The file exceeds a safety limit (size, nesting, node count or alias expansion).";
    /// The YAML is well formed but not a workflow: missing, ill-typed or unknown keys.
    YamlSchemaViolation = "YAML_SCHEMA_VIOLATION", Error, "A key is missing, has the wrong type, or is unknown.";
    /// Two steps share one id.
    DuplicateStep = "DUPLICATE_STEP", Error, "Two steps share one id.";
    /// Two steps capture their results under one name.
    DuplicateCapture = "DUPLICATE_CAPTURE", Error, "Two steps capture their results under one name.";
    /// A `deps` entry names a step that does not exist.
    UnknownDep = "UNKNOWN_DEP", Error, "A dependency names a step that does not exist.";
    /// Steps depend on each other in a cycle.
    CyclicDependency = "CYCLIC_DEPENDENCY", Error, "Steps depend on each other in a cycle.";
    /// An expression (`when:`, `foreach:`, `<<…>>`) cannot be parsed.
    ExprSyntax = "EXPR_SYNTAX", Error, "An expression cannot be parsed.";
    /// An expression names a variable that is not in scope.
    UnresolvedVar = "UNRESOLVED_VAR", Error, "An expression names a variable that is not in scope.";
    /// A value has the wrong type for where it is used.
    TypeMismatch = "TYPE_MISMATCH", Error, "A value has the wrong type for where it is used.";
    /// An expression calls a function that does not exist.
    UnknownFunction = "UNKNOWN_FUNCTION", Error, "An expression calls a function that does not exist.";
    /// A step calls a tool the manifest (or its server's lock) does not list.
    UnknownTool = "UNKNOWN_TOOL", Error, "A step calls a tool the manifest (or its server in tools.lock.json) does not list.";
    /// A `success_schema` names a missing schema, or is not a valid JSON Schema.
    UnknownSchema = "UNKNOWN_SCHEMA", Error, "A success_schema names a missing schema, or is not a valid JSON Schema.";
    /// `{{…}}` is literal text here, not interpolation (use `<<…>>`).
    LegacyInterpolation = "LEGACY_INTERPOLATION", Warning, "`{{...}}` is literal text, not interpolation.";
    /// A step captures a result no other step reads.
    UnusedCapture = "UNUSED_CAPTURE", Warning, "A step captures a result no other step reads.";
    /// A `# savant-think: ignore[…]` comment that silences nothing.
    UnusedSuppression = "UNUSED_SUPPRESSION", Warning, "A `# savant-think: ignore[…]` comment silences nothing or names no code.";
    /// A file or directory could not be read (reported by `check` as a diagnostic in machine formats).
    IoError = "IO_ERROR", Error, "A file or directory could not be read, so it was not checked.";
    /// A test file names a workflow that cannot be found or does not compile.
    TestUnknownWorkflow = "TEST_UNKNOWN_WORKFLOW", Error, "A test file names a workflow that cannot be found or does not compile.";
    /// A test file's `mocks` or `expect` names a step the workflow does not have.
    TestUnknownStep = "TEST_UNKNOWN_STEP", Error, "A test file's `mocks` or `expect` names a step the workflow does not have.";
    /// A test file expects a capture that no step of the workflow sets.
    TestUnknownCapture = "TEST_UNKNOWN_CAPTURE", Error, "A test file expects a capture that no step of the workflow sets.";
    /// A mock's result violates the step's `success_schema`.
    TestMockInvalid = "TEST_MOCK_INVALID", Warning, "A mock's result violates the step's `success_schema`.";
    /// A test has no `expect`: it asserts nothing.
    TestNoExpect = "TEST_NO_EXPECT", Error, "A test has no `expect`: it asserts nothing.";
    /// `check --runs`: an unfinished run of this workflow could not be upgraded to the file as it is now.
    IncompatibleUpgrade = "INCOMPATIBLE_UPGRADE", Warning, "An unfinished run of the workflow could not be upgraded to the file as it is now (`check --runs`).";
    /// `tools.lock.json` does not parse, or holds something that is not a lock (a schema that is not JSON Schema).
    InvalidToolLock = "INVALID_TOOL_LOCK", Error, "`tools.lock.json` does not parse, or a schema in it is not a valid JSON Schema.";
    /// Opt-in (`[check] select`): a step calls a tool marked `destructiveHint: true` with no `when:` guard and no confirmation before it.
    DestructiveCall = "DESTRUCTIVE_CALL", Warning, "A step calls a destructive tool with no `when:` guard and no confirmation before it (opt-in).";
    /// A step `uses:` a workflow the project does not have.
    UnknownWorkflow = "UNKNOWN_WORKFLOW", Error, "A step uses a workflow the project does not have.";
    /// Workflows use each other (`uses:`) in a cycle, across files.
    WorkflowCycle = "WORKFLOW_CYCLE", Error, "Workflows use each other (`uses:`) in a cycle.";
    /// A chain of `uses:` is deeper than the limit (16).
    WorkflowTooDeep = "WORKFLOW_TOO_DEEP", Error, "A chain of sub-workflows (`uses:`) is deeper than 16.";
    /// A step `uses:` a workflow that has check errors itself (at any depth below): `plan` refuses the caller too.
    CalleeError = "CALLEE_ERROR", Error, "A step uses a workflow that does not check clean.";
    /// A step gives a tool or a workflow an input it does not take (an `input_template` or `with:` key); reported as `UNKNOWN_TOOL` / `UNKNOWN_WORKFLOW` before, whose suppressions still silence it.
    UnknownInput = "UNKNOWN_INPUT", Error, "A step gives a tool or workflow an input (`input_template` / `with:` key) it does not take.";
    /// A step omits an input its tool or workflow requires; reported as `UNKNOWN_TOOL` / `UNKNOWN_WORKFLOW` before, whose suppressions still silence it.
    MissingInput = "MISSING_INPUT", Error, "A step omits an input its tool or workflow requires.";
    /// An `await:` schema a person could not be asked with an MCP elicitation form (a flat object of primitives and enums).
    ElicitationSchema = "ELICITATION_SCHEMA", Warning, "An `await:` schema falls outside MCP elicitation's forms (a flat object of strings, numbers, booleans and enums).";
    /// A wait's `on_timeout:` value does not match the answer's or the event's schema.
    OnTimeoutMismatch = "ON_TIMEOUT_MISMATCH", Error, "A wait's `on_timeout:` value does not match the schema of what it stands for.";
    /// An `await:` or `wait_for:` has no `timeout:` (`timeout: never` says so on purpose).
    WaitWithoutTimeout = "WAIT_WITHOUT_TIMEOUT", Warning, "A wait has no `timeout:`; `timeout: never` says it waits for ever on purpose.";
    /// A `wait_for:` names an event savant-think.toml does not declare (`[events.NAME]`).
    UndeclaredEvent = "UNDECLARED_EVENT", Error, "A `wait_for:` names an event savant-think.toml does not declare.";
    /// Two waits can be live at once on the same event and key: one event would answer only one of them.
    DuplicateWait = "DUPLICATE_WAIT", Error, "Two waits can be live at once on the same event and key.";
    /// A step reads the capture of a wait that fails the run when it times out (a `timeout:` and no `on_timeout:`).
    UnhandledTimeout = "UNHANDLED_TIMEOUT", Warning, "A step reads the capture of a wait that fails the run when it times out (no `on_timeout:`).";
    /// A field an answer's or event's schema does not require is read with no default (`??`) and no `when:` that tests it.
    UnguardedOptional = "UNGUARDED_OPTIONAL", Warning, "A field an answer's or event's schema does not require is read with no default and no `when:` testing it.";
}

impl Code {
    /// Reported only when `[check] select` names it.
    pub fn is_opt_in(self) -> bool {
        matches!(self, Code::DestructiveCall)
    }

    /// Whether a suppression (or `[check] ignore`) naming `named` silences
    /// this code: its own name, and for `UNKNOWN_INPUT` / `MISSING_INPUT`
    /// also `UNKNOWN_TOOL` and `UNKNOWN_WORKFLOW`, under which they were
    /// reported before they had codes of their own (users' ignore lists
    /// keep working).
    pub fn silenced_by(self, named: Code) -> bool {
        self == named
            || (matches!(self, Code::UnknownInput | Code::MissingInput)
                && matches!(named, Code::UnknownTool | Code::UnknownWorkflow))
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How bad a diagnostic is: an error fails `check`, a warning does not (unless `--deny-warnings`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth fixing; `check` still passes.
    Warning,
    /// The workflow cannot run as written.
    Error,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A secondary location with its own message (e.g. one edge of a cycle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Where, in the same file.
    pub span: Span,
    /// What is there.
    pub message: String,
}

/// A machine-applicable edit: replace the text at `span` with `replacement`.
/// Editors offer it as a quick fix (`savant-think lsp`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// The text to replace.
    pub span: Span,
    /// What to put there.
    pub replacement: String,
}

/// One problem in one file. Spans are byte offsets into the file's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stable code.
    pub code: Code,
    /// The code's severity (see [`Code::severity`]).
    pub severity: Severity,
    /// What is wrong, for a person.
    pub message: String,
    /// The characters it is about.
    pub span: Span,
    /// Other places that explain it (e.g. each edge of a cycle).
    pub labels: Vec<Label>,
    /// How to fix it, e.g. "did you mean `mr_data`?".
    pub help: Option<String>,
    /// The edit that fixes it, when there is exactly one plausible one. A help
    /// of the form "did you mean `X`?" (see [`suggest`]) carries the fix
    /// "replace the diagnostic's span with X"; a check whose span is wider
    /// than the misspelled name narrows it with [`Diagnostic::with_fix`].
    pub fix: Option<Fix>,
}

impl Diagnostic {
    /// A diagnostic with the code's severity, no labels, help or fix.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            span,
            labels: Vec::new(),
            help: None,
            fix: None,
        }
    }

    /// Adds a secondary location.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { span, message: message.into() });
        self
    }

    /// Adds help; a "did you mean `X`?" help also carries the fix.
    pub fn with_help(self, help: impl Into<String>) -> Diagnostic {
        self.with_help_opt(Some(help.into()))
    }

    /// [`Diagnostic::with_help`] when there is help to give.
    pub fn with_help_opt(mut self, help: Option<String>) -> Diagnostic {
        self.fix =
            help.as_deref().and_then(suggestion).map(|r| Fix { span: self.span, replacement: r.to_owned() });
        self.help = help;
        self
    }

    /// No fix: a did-you-mean whose name is not at the diagnostic's span
    /// (the span is the whole schema, the name a key inside it).
    pub fn without_fix(mut self) -> Diagnostic {
        self.fix = None;
        self
    }

    /// Sets the fix: replace `span` with `replacement`.
    pub fn with_fix(mut self, span: Span, replacement: impl Into<String>) -> Diagnostic {
        self.fix = Some(Fix { span, replacement: replacement.into() });
        self
    }
}

/// The closest candidate to `name` by edit distance, if it is close enough to
/// be a plausible typo ("did you mean …").
pub fn did_you_mean<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    // How many edits a name of `n` characters may be away: measured on the
    // shorter of the two, so `args` is not "did you mean `as`?" (half of
    // the shorter name changed) while `idd` is still `id`.
    let budget = |n: usize| match n {
        0..=2 => 1,
        3..=5 => 2,
        _ => 3,
    };
    let len = name.chars().count();
    let max = budget(len);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        // The edit distance is at least the length difference: skip the
        // expensive comparison for candidates that cannot be close.
        .filter(|c| c.len().abs_diff(len) <= max + 3 || c.eq_ignore_ascii_case(name))
        .map(|c| (strsim::damerau_levenshtein(name, c), c))
        .filter(|&(d, c)| d <= budget(len.min(c.chars().count())) || c.eq_ignore_ascii_case(name))
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c)
}

/// The `x` of a help that is exactly "did you mean `x`?".
pub fn suggestion(help: &str) -> Option<&str> {
    let name = help.strip_prefix("did you mean `")?.strip_suffix("`?")?;
    (!name.is_empty() && !name.contains('`')).then_some(name)
}

/// A help line "did you mean `x`?" when a close candidate exists.
pub fn suggest<'a, I>(name: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    did_you_mean(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_close_names_only() {
        let names = ["mr_data", "files", "params"];
        assert_eq!(did_you_mean("mr_dta", names), Some("mr_data"));
        assert_eq!(did_you_mean("zzzzzz", names), None);
        assert_eq!(did_you_mean("files", names), None, "an exact match is not a suggestion");
    }

    #[test]
    fn a_did_you_mean_help_carries_its_fix() {
        let d = Diagnostic::new(Code::UnknownDep, Span::new(3, 9), "x")
            .with_help_opt(suggest("mr_dta", ["mr_data"]));
        assert_eq!(d.fix, Some(Fix { span: Span::new(3, 9), replacement: "mr_data".into() }));
        let d = Diagnostic::new(Code::UnknownDep, Span::new(3, 9), "x").with_help("write a list: `[a]`");
        assert_eq!(d.fix, None);
    }
}
