//! `docs/checks.md` is checked against the real checker, so the documentation
//! of every diagnostic code can never drift from what `check` prints.
//!
//! The conventions the test reads in `docs/checks.md`:
//!
//! - A section per code, headed `## CODE (severity)`, in the order of
//!   [`Code::ALL`]. Every code has one; the severity matches the code's. A `##`
//!   heading whose first word looks like a code (`UPPER_SNAKE`) must be one.
//! - Inside a code section, a ```` ```yaml ```` block is a whole workflow file,
//!   checked as `example.yaml` with the crate's `schemas/` directory.
//!   - When the next fenced block is ```` ```text ````, the yaml is an
//!     *example*: the text block is exactly what `check --format human`
//!     prints for it (no colour, width 100), and the example must produce at
//!     least one diagnostic of the section's code.
//!   - Otherwise the yaml is a *fix*: it must check clean.
//! - A ```` ```json tools ```` block is a tool manifest (as for `--tools`): it
//!   applies to every yaml block after it in the same section.
//! - A ```` ```toml savant-think.toml ```` block is the project's
//!   savant-think.toml: its `[events.NAME]` apply to every yaml block after
//!   it in the same section (without one, the events are not known and
//!   `UNDECLARED_EVENT` is not reported).
//! - A ```` ```yaml workflows/NAME.yaml ```` block is a workflow of the
//!   example's project: every yaml block after it in the same section may
//!   `uses: NAME` it (it is not an example itself).
//! - Fenced blocks outside code sections (the introduction) are not checked.
//! - The introduction has an index table, `| code | severity | summary |`,
//!   with one row per code, its severity and [`Code::summary`].
//!
//! `SAVANT_BLESS_DOCS=1 cargo test --test it docs::` rewrites every example's text
//! block with the checker's real output instead of comparing. To add an
//! example, write the yaml followed by an empty ```` ```text ```` block and bless.

use savant_think::check::{self, Config, ToolManifest};
use savant_think::diagnostic::{Code, Diagnostic};
use savant_think::report::{self, FileReport, Format, HumanOptions};
use savant_think::source::SourceFile;
use savant_think::workspace;
use std::path::{Path, PathBuf};

/// One fenced block: its info string and its content lines (fences excluded).
struct Block {
    info: String,
    /// Line index of the first content line.
    start: usize,
    /// Line index of the closing fence.
    end: usize,
    /// The content, every line ended by `\n`.
    content: String,
}

/// A `## CODE (severity)` section and the fenced blocks in it.
struct Section {
    code: Code,
    heading: String,
    blocks: Vec<Block>,
}

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn docs_path() -> PathBuf {
    crate_root().join("docs/checks.md")
}

fn code_named(name: &str) -> Option<Code> {
    Code::ALL.iter().copied().find(|c| c.as_str() == name)
}

fn looks_like_code(word: &str) -> bool {
    word.len() > 1
        && word.contains('_')
        && word.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Splits the document into code sections. Panics on a malformed document.
fn parse(lines: &[&str]) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    // Whether the blocks being read belong to a code section.
    let mut in_code_section = false;
    let mut open: Option<(String, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some((info, start)) = &open {
            if line.trim_end() == "```" {
                if in_code_section {
                    let content: String = lines[*start..i].iter().map(|l| format!("{l}\n")).collect();
                    let block = Block { info: info.clone(), start: *start, end: i, content };
                    sections.last_mut().unwrap().blocks.push(block);
                }
                open = None;
            }
            continue;
        }
        if let Some(info) = line.strip_prefix("```") {
            open = Some((info.trim().to_owned(), i + 1));
        } else if let Some(heading) = line.strip_prefix("## ") {
            let heading = heading.trim();
            let name = heading.split_whitespace().next().unwrap_or("");
            let Some(code) = code_named(name) else {
                assert!(
                    !looks_like_code(name),
                    "docs/checks.md:{}: `{name}` is not a diagnostic code",
                    i + 1
                );
                in_code_section = false;
                continue;
            };
            let expected = format!("{} ({})", code.as_str(), code.severity().as_str());
            assert_eq!(heading, expected, "docs/checks.md:{}: heading should be `## {expected}`", i + 1);
            in_code_section = true;
            sections.push(Section { code, heading: heading.to_owned(), blocks: Vec::new() });
        }
    }
    assert!(open.is_none(), "docs/checks.md ends inside a fenced block");
    sections
}

/// The index table's rows, as they should be.
fn index_rows() -> Vec<String> {
    Code::ALL
        .iter()
        .map(|c| {
            let severity = c.severity().as_str();
            // GitHub's anchor for `## CODE (severity)`.
            let anchor = format!("{}-{severity}", c.as_str().to_ascii_lowercase());
            format!("| [`{c}`](#{anchor}) | {severity} | {} |", c.summary())
        })
        .collect()
}

/// The line range of the index table's rows (after its header and separator).
fn index_range(lines: &[&str]) -> std::ops::Range<usize> {
    let header = lines
        .iter()
        .position(|l| l.trim_end() == "| code | severity | summary |")
        .expect("docs/checks.md needs an index table `| code | severity | summary |`");
    assert!(lines.get(header + 1).is_some_and(|l| l.starts_with("| ---")), "the index table's separator");
    let start = header + 2;
    let len = lines[start..].iter().take_while(|l| l.starts_with('|')).count();
    start..start + len
}

/// Checks `text` as the file `example.yaml` and renders it as `check` does.
fn run(text: &str, config: &Config) -> (Vec<Diagnostic>, String) {
    let source = SourceFile::new("example.yaml", text);
    let diagnostics = check::suppress::apply(&source, check::check_source(&source, config), &[]);
    let rendered = report::render(
        Format::Human,
        &[FileReport { source: &source, diagnostics: &diagnostics }],
        &HumanOptions::default(),
    );
    (diagnostics, rendered)
}

#[test]
fn checks_md_matches_the_checker() {
    let path = docs_path();
    let text = std::fs::read_to_string(&path).expect("docs/checks.md");
    let lines: Vec<&str> = text.lines().collect();
    let sections = parse(&lines);
    let bless = std::env::var_os("SAVANT_BLESS_DOCS").is_some_and(|v| v == "1");

    // Every code documented, once, in the order of `Code::ALL`.
    let documented: Vec<Code> = sections.iter().map(|s| s.code).collect();
    assert_eq!(
        documented,
        Code::ALL,
        "docs/checks.md must have one `## CODE (severity)` section per code, in the order of Code::ALL"
    );

    // Text blocks to rewrite when blessing: (first content line, closing fence line, new content).
    let mut rewrites: Vec<(usize, usize, String)> = Vec::new();
    let mut failures = Vec::new();

    let index = index_range(&lines);
    let rows = index_rows();
    if lines[index.clone()] != rows {
        if bless {
            rewrites.push((index.start, index.end, rows.iter().map(|r| format!("{r}\n")).collect()));
        } else {
            failures.push(format!("the index table should read:\n{}", rows.join("\n")));
        }
    }

    let schemas = workspace::load_schemas(&crate_root().join("schemas"));
    for section in &sections {
        let code = section.code;
        let mut config = Config {
            schemas: schemas.clone(),
            builtins: savant_think::runtime::contracts::builtin(),
            // Every example is checked with the opt-in codes selected.
            select: Code::ALL.iter().copied().filter(|c| c.is_opt_in()).collect(),
            ..Config::default()
        };
        let mut examples = 0;
        let mut project: Vec<check::workflows::WorkflowSource> = Vec::new();
        let mut blocks = section.blocks.iter().peekable();
        while let Some(block) = blocks.next() {
            let at = block.start; // 1-based line of the opening fence
            match block.info.as_str() {
                "json tools" => match ToolManifest::parse(&block.content) {
                    Ok(m) => config.tools = Some(m),
                    Err(e) => {
                        failures.push(format!("{}: line {at}: bad tool manifest: {e}", section.heading))
                    }
                },
                "toml savant-think.toml" => match toml::from_str(&block.content) {
                    Ok(c) => config.events = Some(workspace::declared_events(&c)),
                    Err(e) => {
                        failures.push(format!("{}: line {at}: bad savant-think.toml: {e}", section.heading))
                    }
                },
                info if info.starts_with("yaml workflows/") => {
                    let path = info.trim_start_matches("yaml ").to_owned();
                    let id = check::default_id(&path);
                    project.push(check::workflows::WorkflowSource { id, path, text: block.content.clone() });
                    config.workflows = Some(check::workflows::WorkflowTable::build(project.clone(), &config));
                }
                "yaml" => {
                    let (diagnostics, rendered) = run(&block.content, &config);
                    match blocks.next_if(|b| b.info == "text") {
                        Some(output) => {
                            examples += 1;
                            if !diagnostics.iter().any(|d| d.code == code) {
                                failures.push(format!(
                                    "{}: the example at line {at} does not produce {code}:\n{rendered}",
                                    section.heading
                                ));
                            }
                            if bless {
                                if output.content != rendered {
                                    rewrites.push((output.start, output.end, rendered));
                                }
                            } else if output.content != rendered {
                                failures.push(format!(
                                    "{}: the output at line {} is not what `check` prints; it prints:\n{rendered}",
                                    section.heading, output.start
                                ));
                            }
                        }
                        None => {
                            if !diagnostics.is_empty() {
                                failures.push(format!(
                                    "{}: the fix at line {at} (a yaml block with no text block after it) \
                                     should check clean, got:\n{rendered}",
                                    section.heading
                                ));
                            }
                        }
                    }
                }
                "text" => failures.push(format!(
                    "{}: the text block at line {at} does not follow a yaml block",
                    section.heading
                )),
                _ => {}
            }
        }
        // IO_ERROR is about a file that cannot be read: no workflow shows it
        // (tests/it/project.rs runs it for real). The TEST_* codes are about
        // test files, not workflows: tests/it/test_cmd.rs runs each.
        // INCOMPATIBLE_UPGRADE is about stored runs (`check --runs`):
        // tests/it/first_hour.rs runs it for real. INVALID_TOOL_LOCK is
        // about the lock file, not a workflow (src/check/lock.rs's tests).
        // WORKFLOW_TOO_DEEP needs a project of 17 workflows: its fixtures
        // (tests/checks/workflow_too_deep/) show it.
        if examples == 0
            && !section.heading.starts_with("IO_ERROR")
            && !section.heading.starts_with("TEST_")
            && !section.heading.starts_with("INCOMPATIBLE_UPGRADE")
            && !section.heading.starts_with("INVALID_TOOL_LOCK")
            && !section.heading.starts_with("WORKFLOW_TOO_DEEP")
        {
            failures.push(format!("{}: no example (a yaml block followed by a text block)", section.heading));
        }
    }

    if bless && !rewrites.is_empty() {
        let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        rewrites.sort_by_key(|r| std::cmp::Reverse(r.0));
        for (start, end, content) in rewrites {
            out.splice(start..end, content.lines().map(str::to_owned));
        }
        let mut new_text = out.join("\n");
        new_text.push('\n');
        std::fs::write(&path, new_text).expect("write docs/checks.md");
    }
    assert!(
        failures.is_empty(),
        "docs/checks.md is out of date (run `SAVANT_BLESS_DOCS=1 cargo test --test it docs::` to rewrite \
         the outputs):\n\n{}",
        failures.join("\n\n")
    );
}
