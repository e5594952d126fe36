//! The language server's incremental check (`check::incremental`) against
//! a fresh full check: random one-character edits (inserted or deleted
//! anywhere, often inside expressions, keys and indentation) to a generated
//! 1,000-step workflow, the bundled workflows and every check's fixtures;
//! after each edit the workflow and the diagnostics (codes, spans,
//! messages, fixes) must equal `check::analyze`'s of the same text.

use crate::support::CRATE;
use proptest::prelude::*;
use savant_think::check::{self, Config, incremental};
use savant_think::ir::Workflow;
use savant_think::source::SourceFile;
use std::fmt::Write as _;
use std::path::Path;

/// A 1,000-step workflow like the LSP bench's: deps, captures read by the
/// next step, `when:` and `foreach:` expressions, a rationale with an emoji.
fn generated(n: usize) -> String {
    let mut s =
        String::from("id: gen\nparams:\n  topic: { type: string }\n  limit: { type: integer }\nsteps:\n");
    for i in 0..n {
        let _ = write!(s, "  - id: s{i}\n    call: tool.t{}\n", i % 7);
        if i > 0 {
            let _ = writeln!(s, "    deps: [s{}]", i - 1);
        }
        if i % 20 == 13 {
            let _ = write!(s, "    foreach: c{}.items\n    as: it\n", i - 1);
        }
        if i % 10 == 7 {
            s.push_str("    when: \"params.limit > 3 && len(params.topic) > 0\"\n");
        }
        let read = if i == 0 { String::new() } else { format!(" after <<c{}.title>>", i - 1) };
        let _ = writeln!(s, "    input_template: {{ q: \"<<params.topic>>{read}\" }}");
        let _ = write!(
            s,
            "    capture_as: c{i}\n    success_schema: {{ type: object, properties: {{ title: {{ type: string }}, items: {{ type: array }} }} }}\n"
        );
        let _ = writeln!(s, "    rationale: \"Step {i} 😀 of the generated workflow.\"");
    }
    let _ = write!(s, "outputs:\n  last: \"<<c{}.title>>\"\n", n - 1);
    s
}

/// Shapes the generated file does not have: CRLF lines, block scalars,
/// comments, flow items, an anchor, nested input templates.
const EDGES: &str = "id: edges\r\nsteps:\r\n  - id: a   # first\r\n    call: t\r\n    capture_as: r\r\n    rationale: |\r\n      Why <<params.x>>\r\n      more\r\n\r\n  - id: b\r\n    call: t\r\n    input_template:\r\n      nested: { list: [1, \"<<r.y>>\", null, true] }\r\n      text: >-\r\n        folded <<r.z>>\r\n  - {id: c, call: t, deps: [b]}\r\n  - id: d\r\n    call: &tool t\r\n    when: r.ok == true\r\n    description: 'quoted ''x'''\r\n  - id: e\r\n    call: t\r\n";

/// What the server would hold after each version: the last analysis that
/// gave a workflow, with its state (as `lsp::document::Document` keeps it).
struct Editor {
    base: Option<(SourceFile, Workflow, incremental::State)>,
    config: Config,
    incremental: usize,
    /// Of those, how many checked only the edited step.
    rechecked: usize,
}

impl Editor {
    fn check(&mut self, text: &str) -> Result<(), TestCaseError> {
        let src = SourceFile::new("w.yaml", text);
        let (want_wf, want) = check::analyze(&src, &self.config);
        let got = match self.base.take() {
            Some((old, mut wf, mut state)) => {
                let before = state.rechecked();
                match incremental::reanalyze(&old, &mut wf, &mut state, &src, &self.config) {
                    Some(diags) => {
                        self.incremental += 1;
                        self.rechecked += state.rechecked() - before;
                        Some((Some(wf), diags, Some(state)))
                    }
                    None => {
                        self.base = Some((old, wf, state));
                        None
                    }
                }
            }
            None => None,
        };
        let (wf, diags, state) = got.unwrap_or_else(|| incremental::analyze(&src, &self.config));
        prop_assert_eq!(&diags, &want, "diagnostics of {:?}", text);
        prop_assert_eq!(&wf, &want_wf);
        if let Some(wf) = wf {
            self.base = state.map(|s| (src, wf, s));
        }
        Ok(())
    }
}

/// One edit: where (a fraction of the file, or the nth occurrence of an
/// interesting character), insert or delete, and what.
#[derive(Clone, Debug)]
struct Edit {
    at: f64,
    near: Option<char>,
    insert: Option<char>,
}

fn edit() -> impl Strategy<Value = Edit> {
    let near = prop_oneof![
        Just(None),
        prop::sample::select(vec!['<', '.', ':', '-', '"', '\n', '{', '[', '#', 'c', 's', '>', '|'])
            .prop_map(Some),
    ];
    // Mostly what typing inserts, sometimes what breaks the YAML.
    let insert = prop_oneof![
        2 => Just(None),
        3 => prop::sample::select(vec!['x', 'e', '1', '_', ' ', '.', 'é', '😀', '中']).prop_map(Some),
        2 => prop::sample::select(vec![
            ':', '-', '"', '\'', '<', '>', '\n', '#', '{', '}', '[', ']', '*', '&', '\t', '|', ',', '!', '%', '\r',
        ])
        .prop_map(Some),
    ];
    (0.0..1.0f64, near, insert).prop_map(|(at, near, insert)| Edit { at, near, insert })
}

fn apply(text: &mut String, e: &Edit) {
    let mut at = (e.at * text.len() as f64) as usize;
    if let Some(c) = e.near {
        let hits: Vec<usize> = text.match_indices(c).map(|(i, _)| i).collect();
        if !hits.is_empty() {
            // Just after the character, or on it.
            at = hits[(e.at * hits.len() as f64) as usize % hits.len()] + usize::from(e.insert.is_some());
        }
    }
    while !text.is_char_boundary(at.min(text.len())) {
        at -= 1;
    }
    let at = at.min(text.len());
    match e.insert {
        Some(c) => text.insert(at, c),
        None => {
            if let Some(c) = text[at..].chars().next() {
                text.replace_range(at..at + c.len_utf8(), "");
            }
        }
    }
}

/// Checks `text`, then after each edit (each applied to the last text when
/// `cumulative`, else each alone to `text`); returns how many edits were
/// checked incrementally.
fn run(text: &str, edits: &[Edit], cumulative: bool) -> Result<usize, TestCaseError> {
    run_counting(text, edits, cumulative).map(|(incremental, _)| incremental)
}

/// [`run`], and how many edits had only their step checked.
fn run_counting(text: &str, edits: &[Edit], cumulative: bool) -> Result<(usize, usize), TestCaseError> {
    let mut editor = Editor { base: None, config: Config::default(), incremental: 0, rechecked: 0 };
    editor.check(text)?;
    let start = editor.base.clone();
    let mut edited = text.to_owned();
    for e in edits {
        if !cumulative {
            editor.base.clone_from(&start);
            text.clone_into(&mut edited);
        }
        apply(&mut edited, e);
        editor.check(&edited)?;
    }
    Ok((editor.incremental, editor.rechecked))
}

fn fixtures() -> Vec<(String, String)> {
    let mut files = vec![("edges".to_owned(), EDGES.to_owned())];
    let repo = Path::new(CRATE);
    let mut dirs = vec![repo.join("workflows")];
    for d in std::fs::read_dir(repo.join("tests/checks")).unwrap() {
        // Directories only: `events.toml` is the fixtures' events.
        dirs.extend(Some(d.unwrap().path()).filter(|d| d.is_dir()));
    }
    for dir in dirs {
        for f in std::fs::read_dir(dir).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                files.push((path.display().to_string(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn small_files_check_the_same_after_every_edit(
        file in prop::sample::select(fixtures()),
        edits in prop::collection::vec(edit(), 1..40),
    ) {
        run(&file.1, &edits, true)?;
    }

    #[test]
    fn small_files_check_the_same_after_any_one_edit(
        file in prop::sample::select(fixtures()),
        edits in prop::collection::vec(edit(), 1..40),
    ) {
        run(&file.1, &edits, false)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3, ..ProptestConfig::default() })]

    #[test]
    fn a_1k_step_workflow_checks_the_same_after_every_edit(edits in prop::collection::vec(edit(), 8..16)) {
        run(&generated(1_000), &edits, true)?;
    }

    #[test]
    fn a_1k_step_workflow_checks_the_same_after_any_one_edit(edits in prop::collection::vec(edit(), 8..16)) {
        run(&generated(1_000), &edits, false)?;
    }
}

/// Range edits through the real server (UTF-16 positions after an emoji,
/// two changes in one notification): the published diagnostics are
/// `check`'s for the edited text.
#[test]
fn range_edits_publish_checks_diagnostics_of_the_edited_text() {
    use crate::lsp::{BROKEN, Client, assert_same_as_check, project, url};
    use serde_json::json;
    let dir = project("incremental");
    let file = dir.join("workflows/demo.yaml");
    let (mut c, init) = Client::start(&dir, json!({}));
    assert_eq!(init["capabilities"]["textDocumentSync"]["change"], 2, "incremental: {init}");
    c.open(&file, BROKEN);
    let lines: Vec<&str> = BROKEN.lines().collect();
    let col =
        |line: usize, needle: &str| lines[line][..lines[line].find(needle).unwrap()].encode_utf16().count();
    let change = |line: usize, from: usize, to: usize, text: &str| json!({ "range": { "start": { "line": line, "character": from }, "end": { "line": line, "character": to } }, "text": text });
    let uri = url(&file);
    let h = col(11, "h]");
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [change(11, h, h + 1, "")] }),
    );
    let t = col(12, "ta.x");
    let first = col(8, "first");
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 3 }, "contentChanges": [
            change(12, t, t, "a"),
            change(8, first, first, "really\n      "),
        ] }),
    );
    let published = loop {
        let p = c.notification("textDocument/publishDiagnostics");
        if p["version"] == 3 {
            break p;
        }
    };
    let text = BROKEN
        .replace("[fetchh]", "[fetch]")
        .replace("mr_dta", "mr_data")
        .replace("data first", "data really\n      first");
    std::fs::write(&file, &text).unwrap();
    assert_same_as_check(&dir, &file, &text, &published, true);
    c.shutdown();
}

/// The incremental path is taken: a test that always fell back to the full
/// check would prove nothing.
#[test]
fn edits_inside_a_step_are_checked_incrementally() {
    let text = generated(50);
    let at = |needle: &str| text.find(needle).unwrap() as f64 / text.len() as f64;
    let edits: Vec<Edit> = [
        ("Step 7 ", Some('z')),
        ("Step 7 ", None),
        ("c20.title", Some('x')),
        ("c20.title", None),
        ("id: s30", Some('9')),
        ("deps: [s12]", Some('x')),
    ]
    .into_iter()
    .map(|(needle, insert)| Edit { at: at(needle) + 1e-9, near: None, insert })
    .collect();
    let (incremental, rechecked) = run_counting(&text, &edits, true).unwrap();
    assert_eq!(incremental, edits.len(), "every edit inside a step is incremental");
    // The rationale leaves what other steps see of the step as it was; a
    // new name read and a new dep change only the graph's edges into it
    // (the step and the steps that walk the graph are checked again); a
    // new id changes what the other steps resolve (every step is).
    assert_eq!(rechecked, 5, "only the edited step and those it may affect are checked again");
}

/// Steps whose diagnostics depend on another step (its id, capture, loop
/// variable, `deps`, what its `when:` reads): edits to that step, one
/// after the other, each checked as `check` checks the text. Reused
/// diagnostics of the other steps would go stale if the re-check missed
/// what they read.
const FACES: &str = "id: faces
params:
  topic: { type: string }
steps:
  - id: a
    call: tool.t
    when: \"params.topic != 'a'\"
    capture_as: ca
    success_schema: { type: object, properties: { title: { type: string }, items: { type: array } }, additionalProperties: false }
    rationale: \"first\"
  - id: b
    call: tool.t
    deps: [a]
    foreach: ca.items
    as: it
    input_template: { q: \"<<ca.title>> <<it>> <<cb.x>> <<steps.a.status>>\" }
    capture_as: cb
    rationale: \"second\"
  - id: c
    call: tool.t
    deps: [b, zz]
    when: \"ca.title == 'x' && cb != null && ca.nope == 1\"
    input_template: { q: \"<<item>> {{ca.title}} <<it>> <<steps.b.status>>\" }
    capture_as: ca
    rationale: \"third\"
  - id: d
    call: tool.t
    input_template: { q: \"<<cc>> <<a>> <<topic>> {{cd.x}}\" }
    capture_as: cd
    rationale: \"fourth\"
  - id: e
    call: tool.t
outputs:
  last: \"<<cd.title>> <<ca.nope>>\"
";

#[test]
fn edits_to_what_other_steps_read_check_as_check_checks() {
    // (the text to change, what it becomes): each applied to the last text.
    let edits = [
        ("\"first\"", "\"firstx\""),
        // Before a capture another step's diagnostic points at.
        ("!= 'a'", "!= 'ab'"),
        // Before the `as:` another step's diagnostic points at.
        ("foreach: ca.items", "foreach: ca.items "),
        ("!= 'ab'", "!= 'a'"),
        ("capture_as: ca\n    success", "capture_as: cc\n    success"),
        ("\"second\"", "\"secondx\""),
        ("capture_as: cc\n    success", "capture_as: ca\n    success"),
        ("  - id: a\n", "  - id: aa\n"),
        ("\"third\"", "\"thirdx\""),
        ("  - id: aa\n", "  - id: a\n"),
        ("as: it\n", "as: item\n"),
        ("\"fourth\"", "\"fourthx\""),
        ("deps: [a]", "deps: [a, c]"),
        ("\"secondx\"", "\"secon\""),
        ("\"thirdx\"", "\"third\""),
        ("cb != null", "cbb != null"),
        ("\"secon\"", "\"second\""),
        ("deps: [b, zz]", "deps: [zz]"),
        ("\"third\"", "\"thirdy\""),
        ("cbb != null", "cb != null"),
        ("ca.title == 'x'", "cd.title == 'x'"),
        ("\"fourthx\"", "\"fourth\""),
        ("  - id: a\n    call: tool.t", "  - id: a\n    call: think"),
        ("\"firstx\"", "\"first\""),
        ("<<cc>> <<a>>", "<<cc>> <<c>>"),
        ("\"second\"", "\"seco\""),
        ("  - id: b\n", "  - id:  b\n"),
        ("\"seco\"", "\"second\""),
        ("deps: [a, c]", "deps: [a]"),
        ("\"thirdy\"", "\"third\""),
        ("foreach: ca.items ", "foreach: ca.items"),
    ];
    let mut editor = Editor { base: None, config: Config::default(), incremental: 0, rechecked: 0 };
    let mut text = FACES.to_owned();
    editor.check(&text).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from:?} in {text}");
        text = text.replacen(from, to, 1);
        editor.check(&text).unwrap();
    }
    assert!(editor.incremental >= edits.len() - 2, "{} of {} incremental", editor.incremental, edits.len());
    assert!(editor.rechecked >= 12, "{} rechecked", editor.rechecked);
}

/// Steps whose diagnostics depend on the dependency graph or on the set of
/// names: edits that change only what a step reads or its `deps` (checked
/// again selectively) and renames (selective too, see
/// [`renames_check_as_check_checks`]), one after the
/// other, each checked as `check` checks the text. `c`'s `{{ra.x}}` is
/// offered a fix only while `a` does not depend on `c`; a capture is
/// unused while its step has dependents and no expression reads it.
const GRAPH: &str = "id: graph
params:
  x: { type: string }
steps:
  - id: a
    call: tool.t
    input_template: { q: \"<<params.x>>\" }
    capture_as: ra
    success_schema: { type: object, properties: { title: { type: string } } }
  - id: b
    call: tool.t
    input_template: { q: \"<<ra.title>>\" }
    capture_as: rb
  - id: c
    call: tool.t
    deps: [b]
    input_template: { q: \"{{rb.title}} {{ra.x}}\" }
    capture_as: rc
  - id: d
    call: tool.t
    input_template: { q: \"<<rc>>\" }
    capture_as: rd
  - id: e
    call: tool.t
    when: \"rd != null\"
  - id: f
    call: tool.t
outputs:
  last: \"<<rd>>\"
";

#[test]
fn edits_to_the_graph_and_the_names_check_as_check_checks() {
    // (the text to change, what it becomes, whether only the names read
    // or `deps` change, or only a name: checked selectively).
    let edits = [
        // A name that does not resolve: from here on who reads what is counted.
        ("<<params.x>>", "<<params.x>> <<zz>>", true),
        // `rb` is read by no expression: unused while `c` depends on `b`.
        ("deps: [b]", "deps: [bx]", true),
        ("deps: [bx]", "deps: [b]", true),
        // `rc`, read once, stops being read, and is read again.
        ("\"<<rc>>\"", "\"<<rcy>>\"", true),
        ("\"<<rcy>>\"", "\"<<rc>>\"", true),
        // `ra` is no longer read, but `b` still depends on `a` (its status).
        ("<<ra.title>>", "<<steps.a.status>>", true),
        ("<<steps.a.status>>", "<<steps.ax.status>>", true),
        ("<<steps.ax.status>>", "<<ra.title>>", true),
        // `a` now depends on `c`, a cycle: `{{ra.x}}` in `c` loses its fix.
        ("<<params.x>> <<zz>>", "<<rc.x>>", true),
        // A name that stops resolving (a did-you-mean), then resolves again.
        ("<<rc.x>>", "<<rcx.x>>", true),
        ("<<rcx.x>>", "<<rd.x>>", true),
        // A cycle through `deps` (a on d, d on c, c on b, b on a), then broken.
        (
            "call: tool.t\n    input_template: { q: \"<<rd.x>>",
            "call: tool.t\n    deps: [d]\n    input_template: { q: \"<<rd.x>>",
            true,
        ),
        ("deps: [d]", "deps: [dd]", true),
        ("deps: [dd]", "deps: [d, b]", true),
        ("deps: [d, b]", "deps: [e]", true),
        // `rc` stops being read: unused; then read again.
        ("\"<<rc>>\"", "\"<<rcz>>\"", true),
        ("\"<<rcz>>\"", "\"<<rc>>\"", true),
        // Renames: a capture that collides with another, an id another
        // step's `deps` names, a name a did-you-mean suggests.
        ("capture_as: rd", "capture_as: rb", true),
        ("capture_as: rb\n  - id: e", "capture_as: rd\n  - id: e", true),
        ("  - id: b\n", "  - id: bb\n", true),
        ("deps: [b]", "deps: [bb]", true),
        ("when: \"rd != null\"", "when: \"rc != null && r != null\"", true),
        ("capture_as: rc", "capture_as: r", true),
    ];
    edit_in_turn(GRAPH, &edits);
}

/// Checks `text`, then each edit of `edits` (the text to change, what it
/// becomes, whether it must be checked selectively) applied to the last
/// text, each as `check` checks it; every edit must be inside a step.
fn edit_in_turn(text: &str, edits: &[(&str, &str, bool)]) {
    edit_in_turn_with(Config::default(), text, edits)
}

/// [`edit_in_turn`] under `config`.
pub(crate) fn edit_in_turn_with(config: Config, text: &str, edits: &[(&str, &str, bool)]) {
    let mut editor = Editor { base: None, config, incremental: 0, rechecked: 0 };
    let mut text = text.to_owned();
    editor.check(&text).unwrap();
    for &(from, to, selective) in edits {
        assert!(text.contains(from), "{from:?} in {text}");
        text = text.replacen(from, to, 1);
        let before = editor.rechecked;
        editor.check(&text).unwrap();
        if selective {
            assert_eq!(editor.rechecked, before + 1, "{to:?} is checked selectively");
        }
    }
    assert_eq!(editor.incremental, edits.len(), "every edit is inside a step");
}

/// A character typed into a file at the size cap makes it too large: the
/// incremental check declines, and the full check reports `YAML_LIMIT`.
#[test]
fn an_edit_past_the_size_cap_is_checked_as_check_checks_it() {
    let text = generated(20);
    let limits = savant_think::Limits { max_file_bytes: text.len(), ..Default::default() };
    let mut editor =
        Editor { base: None, config: Config { limits, ..Config::default() }, incremental: 0, rechecked: 0 };
    editor.check(&text).unwrap();
    let mut edited = text.clone();
    edited.insert(text.find("Step 7 ").unwrap(), 'x');
    editor.check(&edited).unwrap();
    assert_eq!(editor.incremental, 0);
}

/// Names other steps read, `deps` on ids, `steps.X` and `steps['X']`, a
/// loop variable, names that do not resolve (with and without a
/// did-you-mean), `{{…}}` with fixes and `outputs:`, for renames.
const RENAMES: &str = "id: renames
params:
  x: { type: string }
steps:
  - id: a
    call: tool.t
    input_template: { q: \"<<params.x>> <<rq>>\" }
    capture_as: ra
    success_schema: { type: object, properties: { title: { type: string }, items: { type: array } } }
  - id: b
    call: tool.t
    deps: [a]
    input_template: { q: \"<<ra.title>> <<steps.a.status>> <<steps['x'].status>>\" }
    capture_as: rb
  - id: c
    call: tool.t
    foreach: ra.items
    as: it
    input_template: { q: \"<<it>> {{rb.title}}\" }
    capture_as: rc
  - id: d
    call: tool.t
    deps: [c]
    when: \"zz != null\"
    capture_as: rd
  - id: e
    call: tool.t
  - id: f
    call: tool.t
    capture_as: rf
outputs:
  last: \"<<rc>>\"
";

/// Renames (an id, a capture, a loop variable), each applied to the last
/// text, between edits to what a step reads: each checked as `check`
/// checks the text, and each rename checked selectively (not every step).
#[test]
fn renames_check_as_check_checks() {
    // (the text to change, what it becomes, whether it is a rename).
    let edits = [
        // Away from a name others read (`deps`, `steps.a`), and back.
        ("  - id: a\n", "  - id: ax\n", true),
        ("  - id: ax\n", "  - id: a\n", true),
        // A capture read by `b` and `c`'s `foreach:`, away and back.
        ("capture_as: ra", "capture_as: rax", true),
        ("capture_as: rax", "capture_as: ra", true),
        // To a name `d`'s did-you-mean then suggests, to the name `d`
        // reads (resolving it), and away.
        ("capture_as: rb", "capture_as: zy", true),
        ("capture_as: zy", "capture_as: zz", true),
        ("capture_as: zz", "capture_as: rb", true),
        // A colliding id (a duplicate), and back.
        ("  - id: c\n", "  - id: b\n", true),
        ("  - id: b\n    call: tool.t\n    foreach", "  - id: c\n    call: tool.t\n    foreach", true),
        // An id and a capture colliding with a later step's (which becomes the duplicate).
        ("  - id: b\n", "  - id: e\n", true),
        ("  - id: e\n    call: tool.t\n    deps: [a]", "  - id: b\n    call: tool.t\n    deps: [a]", true),
        ("capture_as: rb", "capture_as: rf", true),
        ("capture_as: rf\n  - id: c", "capture_as: rb\n  - id: c", true),
        // A colliding capture, and back.
        ("capture_as: rd", "capture_as: rc", true),
        ("capture_as: rc\n  - id: e", "capture_as: rd\n  - id: e", true),
        // The loop variable, away from what the step reads and back.
        ("as: it\n", "as: itx\n", true),
        ("as: itx\n", "as: it\n", true),
        // A step key read only as `steps['…']` (the face is unchanged), then
        // renamed to: who mentions a name is kept up to date.
        ("steps['x']", "steps['e']", false),
        ("  - id: e\n", "  - id: ex\n", true),
        ("  - id: ex\n", "  - id: e\n", true),
        // `d` now reads `ra` too (its edges change), then `ra` is renamed.
        ("zz != null", "zz != null && ra != null", false),
        ("capture_as: ra", "capture_as: r", true),
        ("capture_as: r\n", "capture_as: ra\n", true),
        // `e` reads `rb` (its edges change), then `rb` is renamed.
        ("  - id: e\n    call", "  - id: e\n    when: \"rb != null\"\n    call", false),
        ("capture_as: rb", "capture_as: rbx", true),
        ("capture_as: rbx", "capture_as: rb", true),
        // A rename that makes a cycle (`a` reads `rq`: `d` → `a` → `c` → `d`), and breaks it.
        ("capture_as: rd", "capture_as: rq", true),
        ("capture_as: rq", "capture_as: rd", true),
        // What `outputs:` reads.
        ("capture_as: rc", "capture_as: rcc", true),
        ("capture_as: rcc", "capture_as: rc", true),
        // An id emptied (a step without an id: every step is checked),
        // then typed into, colliding with `d`.
        ("  - id: e\n", "  - id: \n", false),
        ("  - id: \n", "  - id: d\n", false),
    ];
    edit_in_turn(RENAMES, &edits);
}
