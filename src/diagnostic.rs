//! The one diagnostic type every layer reports with, and its stable codes.

use crate::source::Span;
use serde::Serialize;

/// Stable diagnostic codes. The string form (`YAML_SYNTAX`) is the public
/// contract: renderers, docs and users' suppressions rely on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Code {
    /// The file could not be read as YAML (syntax, encoding, duplicate keys).
    YamlSyntax,
    /// The file exceeds a safety limit: size, nesting depth or alias expansion.
    YamlLimit,
    /// The YAML is well formed but not a workflow: missing, ill-typed or unknown keys.
    YamlSchemaViolation,
    /// Two steps share one id.
    DuplicateStep,
    /// Two steps capture their results under one name.
    DuplicateCapture,
    /// A `deps` entry names a step that does not exist.
    UnknownDep,
    /// Steps depend on each other in a cycle.
    CyclicDependency,
    /// An expression (`when:`, `foreach:`, `<<…>>`) cannot be parsed.
    ExprSyntax,
    /// An expression names a variable that is not in scope.
    UnresolvedVar,
    /// A value has the wrong type for where it is used.
    TypeMismatch,
    /// An expression calls a function that does not exist.
    UnknownFunction,
    /// A step calls a tool the manifest does not list, or passes it unknown keys.
    UnknownTool,
    /// A `success_schema` names a missing schema, or is not a valid JSON Schema.
    UnknownSchema,
    /// `{{…}}` is literal text here, not interpolation (use `<<…>>`).
    LegacyInterpolation,
    /// A step captures a result no other step reads.
    UnusedCapture,
    /// A `# savant-think: ignore[…]` comment that silences nothing.
    UnusedSuppression,
    /// A file or directory could not be read (reported by `check` as a diagnostic in machine formats).
    IoError,
    /// A test file names a workflow that cannot be found or does not compile.
    TestUnknownWorkflow,
    /// A test file's `mocks` or `expect` names a step the workflow does not have.
    TestUnknownStep,
    /// A test file expects a capture that no step of the workflow sets.
    TestUnknownCapture,
    /// A mock's result violates the step's `success_schema`.
    TestMockInvalid,
    /// A test has no `expect`: it asserts nothing.
    TestNoExpect,
}

impl Code {
    /// Every code, in the order of docs/checks.md.
    pub const ALL: &'static [Code] = &[
        Code::YamlSyntax,
        Code::YamlLimit,
        Code::YamlSchemaViolation,
        Code::DuplicateStep,
        Code::DuplicateCapture,
        Code::UnknownDep,
        Code::CyclicDependency,
        Code::ExprSyntax,
        Code::UnresolvedVar,
        Code::TypeMismatch,
        Code::UnknownFunction,
        Code::UnknownTool,
        Code::UnknownSchema,
        Code::LegacyInterpolation,
        Code::UnusedCapture,
        Code::UnusedSuppression,
        Code::IoError,
        Code::TestUnknownWorkflow,
        Code::TestUnknownStep,
        Code::TestUnknownCapture,
        Code::TestMockInvalid,
        Code::TestNoExpect,
    ];

    /// The stable name (`YAML_SYNTAX`), as renderers and suppressions write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::YamlSyntax => "YAML_SYNTAX",
            Code::YamlLimit => "YAML_LIMIT",
            Code::YamlSchemaViolation => "YAML_SCHEMA_VIOLATION",
            Code::DuplicateStep => "DUPLICATE_STEP",
            Code::DuplicateCapture => "DUPLICATE_CAPTURE",
            Code::UnknownDep => "UNKNOWN_DEP",
            Code::CyclicDependency => "CYCLIC_DEPENDENCY",
            Code::ExprSyntax => "EXPR_SYNTAX",
            Code::UnresolvedVar => "UNRESOLVED_VAR",
            Code::TypeMismatch => "TYPE_MISMATCH",
            Code::UnknownFunction => "UNKNOWN_FUNCTION",
            Code::UnknownTool => "UNKNOWN_TOOL",
            Code::UnknownSchema => "UNKNOWN_SCHEMA",
            Code::LegacyInterpolation => "LEGACY_INTERPOLATION",
            Code::UnusedCapture => "UNUSED_CAPTURE",
            Code::UnusedSuppression => "UNUSED_SUPPRESSION",
            Code::IoError => "IO_ERROR",
            Code::TestUnknownWorkflow => "TEST_UNKNOWN_WORKFLOW",
            Code::TestUnknownStep => "TEST_UNKNOWN_STEP",
            Code::TestUnknownCapture => "TEST_UNKNOWN_CAPTURE",
            Code::TestMockInvalid => "TEST_MOCK_INVALID",
            Code::TestNoExpect => "TEST_NO_EXPECT",
        }
    }

    /// The severity a diagnostic of this code has.
    pub fn severity(self) -> Severity {
        match self {
            Code::LegacyInterpolation
            | Code::UnusedCapture
            | Code::UnusedSuppression
            | Code::TestMockInvalid => Severity::Warning,
            _ => Severity::Error,
        }
    }

    /// A one-line summary, used as the SARIF rule description.
    pub fn summary(self) -> &'static str {
        match self {
            Code::YamlSyntax => "The file is not valid YAML.",
            Code::YamlLimit => "The file exceeds a safety limit (size, nesting or alias expansion).",
            Code::YamlSchemaViolation => "A key is missing, has the wrong type, or is unknown.",
            Code::DuplicateStep => "Two steps share one id.",
            Code::DuplicateCapture => "Two steps capture their results under one name.",
            Code::UnknownDep => "A dependency names a step that does not exist.",
            Code::CyclicDependency => "Steps depend on each other in a cycle.",
            Code::ExprSyntax => "An expression cannot be parsed.",
            Code::UnresolvedVar => "An expression names a variable that is not in scope.",
            Code::TypeMismatch => "A value has the wrong type for where it is used.",
            Code::UnknownFunction => "An expression calls a function that does not exist.",
            Code::UnknownTool => "A step calls a tool the manifest does not list, or passes it unknown keys.",
            Code::UnknownSchema => "A success_schema names a missing schema, or is not a valid JSON Schema.",
            Code::LegacyInterpolation => "`{{...}}` is literal text, not interpolation.",
            Code::UnusedCapture => "A step captures a result no other step reads.",
            Code::UnusedSuppression => {
                "A `# savant-think: ignore[…]` comment silences nothing or names no code."
            }
            Code::IoError => "A file or directory could not be read, so it was not checked.",
            Code::TestUnknownWorkflow => {
                "A test file names a workflow that cannot be found or does not compile."
            }
            Code::TestUnknownStep => {
                "A test file's `mocks` or `expect` names a step the workflow does not have."
            }
            Code::TestUnknownCapture => "A test file expects a capture that no step of the workflow sets.",
            Code::TestMockInvalid => "A mock's result violates the step's `success_schema`.",
            Code::TestNoExpect => "A test has no `expect`: it asserts nothing.",
        }
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
