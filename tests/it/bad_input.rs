//! Bad input, end to end: binary garbage, broken encodings, huge and deeply
//! nested files, bombs, empty files, unreadable files, odd line endings and
//! unicode everywhere. Every one gives diagnostics or a clear error and exit
//! status 1 or 2 — never a panic, a hang or an OOM — through the library
//! (`check_source`, `check_file`, every renderer) and through the binary
//! (run under a watchdog).
//!
//! `tests/it/yaml_bad_input.rs` covers the YAML reader alone; this file covers the
//! whole pipeline.

use crate::common::{BIN, CRATE, Root, Run, WATCHDOG, run, run_cmd};
use savant_think::Limits;
use savant_think::check::{Config, check_source};
use savant_think::diagnostic::{Code, Diagnostic, Severity};
use savant_think::report::{self, FileReport, Format, HumanOptions};
use savant_think::source::{LineCol, SourceFile};
use savant_think::workspace;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------- helpers

/// The binary must end by itself, with status 1 or 2, and say something.
pub(crate) fn assert_handled(r: &Run, what: &str) {
    assert!(matches!(r.code, Some(1 | 2)), "{what}: {r:?}");
    assert!(!r.stderr.contains("panicked"), "{what}: {r:?}");
    assert!(!r.stderr.contains("overflow"), "{what}: {r:?}");
    assert!(!r.stdout.trim().is_empty() || !r.stderr.trim().is_empty(), "{what} gave no message: {r:?}");
}

/// Every span of every diagnostic is inside the file and on character
/// boundaries, and every renderer accepts the result.
pub(crate) fn assert_sane(src: &SourceFile, diags: &[Diagnostic]) {
    let text = &src.text;
    let spans = diags.iter().flat_map(|d| std::iter::once(d.span).chain(d.labels.iter().map(|l| l.span)));
    for span in spans {
        assert!(span.start <= span.end, "reversed span {span}");
        assert!(span.end as usize <= text.len(), "span {span} is past the end ({} bytes)", text.len());
        assert!(text.is_char_boundary(span.start as usize), "span {span} starts inside a character");
        assert!(text.is_char_boundary(span.end as usize), "span {span} ends inside a character");
    }
    for d in diags {
        assert!(!d.message.trim().is_empty(), "{d:?}");
    }
    let reports = [FileReport { source: src, diagnostics: diags }];
    for format in [Format::Json, Format::Sarif, Format::Github] {
        let out = report::render(format, &reports, &HumanOptions::default());
        if format != Format::Github {
            let _: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        }
    }
}

/// `check_source` on `text`: quick, sane, and — for any file that is not a
/// workflow — at least one error.
pub(crate) fn check_text(text: &str, config: &Config) -> (SourceFile, Vec<Diagnostic>) {
    let src = SourceFile::new("bad.yaml", text);
    let started = Instant::now();
    let diags = check_source(&src, config);
    assert!(started.elapsed() < WATCHDOG, "check_source took {:?}", started.elapsed());
    assert_sane(&src, &diags);
    (src, diags)
}

pub(crate) fn errors(text: &str) -> (SourceFile, Vec<Diagnostic>) {
    let (src, diags) = check_text(text, &Config::default());
    assert!(
        diags.iter().any(|d| d.severity == Severity::Error),
        "no error for {:?}…",
        text.chars().take(80).collect::<String>()
    );
    (src, diags)
}

pub(crate) fn codes(diags: &[Diagnostic]) -> Vec<Code> {
    diags.iter().map(|d| d.code).collect()
}

pub(crate) fn has(diags: &[Diagnostic], code: Code, words: &str) -> bool {
    diags.iter().any(|d| d.code == code && d.message.contains(words))
}

pub(crate) fn pos(src: &SourceFile, d: &Diagnostic) -> (usize, usize, usize, usize) {
    let LineCol { line, column } = src.line_col(d.span.start as usize);
    let end = src.line_col(d.span.end as usize);
    (line, column, end.line, end.column)
}

/// Deterministic pseudo-random bytes (xorshift), NULs included.
pub(crate) fn garbage(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

/// A workflow with one step whose `when:` is `expr` (double-quoted).
pub(crate) fn when(expr: &str) -> String {
    format!("params:\n  a: {{ type: string }}\nsteps:\n  - id: s\n    call: think\n    when: \"{expr}\"\n")
}

/// A workflow whose only step's `input_template.t` is `value` (double-quoted).
pub(crate) fn template(value: &str) -> String {
    format!("steps:\n  - id: s\n    call: demo.say\n    input_template: {{ t: \"{value}\" }}\n")
}

// ---------------------------------------------------------------- the hostile files

/// Every hostile file: a name and its bytes. Each must be checked by the
/// binary (human and JSON) with exit 1 and no panic.
fn hostile_files() -> Vec<(&'static str, Vec<u8>)> {
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        ("garbage.yaml", garbage(64 * 1024, 0x9E37_79B9_7F4A_7C15)),
        ("garbage_nul.yaml", [b"steps:\n".as_slice(), &[0u8; 64], &garbage(1024, 7)].concat()),
        ("latin1.yaml", b"steps:\n  - id: a\n    call: \"caf\xe9\"\n".to_vec()),
        ("utf16.yaml", {
            let mut v = vec![0xff, 0xfe];
            v.extend("steps: []\n".encode_utf16().flat_map(u16::to_le_bytes));
            v
        }),
        ("nul.yaml", b"steps:\n  - id: a\0b\n    call: think\n".to_vec()),
        ("empty.yaml", Vec::new()),
        ("comments.yaml", b"# nothing\n   # here\n\n".to_vec()),
        ("blank.yaml", b"  \n\n\t\n".to_vec()),
        ("tabs.yaml", b"steps:\n\t- id: a\n\t  call: think\n".to_vec()),
        ("deep_flow.yaml", format!("steps: {}", "[".repeat(10_000)).into_bytes()),
        (
            "deep_flow_closed.yaml",
            format!("steps: {}{}", "[".repeat(10_000), "]".repeat(10_000)).into_bytes(),
        ),
        ("deep_flow_map.yaml", format!("{}1{}", "{a: ".repeat(10_000), "}".repeat(10_000)).into_bytes()),
        ("deep_block_seq.yaml", format!("steps:\n  {}x\n", "- ".repeat(10_000)).into_bytes()),
        ("deep_block_keys.yaml", format!("{}x\n", "? ".repeat(10_000)).into_bytes()),
        ("deep_parens.yaml", when(&format!("{}true{}", "(".repeat(10_000), ")".repeat(10_000))).into_bytes()),
        (
            "deep_template.yaml",
            template(&format!("<<{}x{}>>", "(".repeat(10_000), ")".repeat(10_000))).into_bytes(),
        ),
        ("long_expr.yaml", when(&vec!["params.a == 'x'"; 7_000].join(" && ")).into_bytes()),
        ("bomb.yaml", {
            let mut y = String::from(
                "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
            );
            for (prev, name) in
                ["a", "b", "c", "d", "e", "f", "g", "h"].iter().zip(["b", "c", "d", "e", "f", "g", "h", "i"])
            {
                y.push_str(&format!("{name}: &{name} [{}]\n", vec![format!("*{prev}"); 9].join(",")));
            }
            y.push_str("steps: *i\n");
            y.into_bytes()
        }),
        ("unicode.yaml", UNICODE.as_bytes().to_vec()),
    ];
    files.push(("crlf.yaml", CRLF.as_bytes().to_vec()));
    files.push(("bom.yaml", format!("\u{feff}{}", template("<<nope>>")).into_bytes()));
    files
}

pub(crate) const UNICODE: &str = "# 注释 ✓ — مرحبا — שלום — 🦀\u{200d}🔥
id: wf_ünï
description: \"Zeichen: ẞ, 日本語, e\u{301}, \u{202e}reversed\u{202c}, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢\"
params:
  titre: { type: string, description: \"名前 🚀\" }
steps:
  - id: étape
    call: outil.appeler
    capture_as: résultat
    when: \"params.titre == '😀' && params.名前\"
    input_template: { テキスト: \"<<params.titre>> ☃ <<未知>> <<params.titre + 'é'>>\" }
  - id: 第二
    call: prompt.say
    deps: [étape, 不存在]
";

/// CRLF line endings; `nope` sits on line 4 at column 35 (after a two-byte `é`).
pub(crate) const CRLF: &str =
    "steps:\r\n  - id: a\r\n    call: prompt.say\r\n    input_template: { text: \"h\u{e9} <<nope.x>>\" }\r\n";

#[test]
fn every_hostile_file_is_handled_by_the_library() {
    let s = Root::new("hostile-lib");
    for (name, bytes) in hostile_files() {
        let path = s.write(name, &bytes);
        let started = Instant::now();
        let (src, diags) = workspace::check_file(&path, &Config::default()).unwrap();
        assert!(started.elapsed() < WATCHDOG, "{name} took {:?}", started.elapsed());
        assert!(diags.iter().any(|d| d.severity == Severity::Error), "{name}: {diags:?}");
        assert_sane(&src, &diags);
        let human = report::render(
            Format::Human,
            &[FileReport { source: &src, diagnostics: &diags }],
            &HumanOptions::default(),
        );
        assert!(human.contains("error"), "{name}: {human}");
    }
}

#[test]
fn every_hostile_file_is_handled_by_the_binary() {
    let s = Root::new("hostile");
    let files = hostile_files();
    for (name, bytes) in &files {
        s.write(&format!("w/{name}"), bytes);
    }
    for (name, _) in &files {
        let path = format!("w/{name}");
        let r = run(&s.path, &["check", &path]);
        assert_handled(&r, name);
        assert_eq!(r.code, Some(1), "{name}: {r:?}");
        assert!(r.stdout.contains("error"), "{name}: {r:?}");
        let r = run(&s.path, &["check", &path, "--format", "json"]);
        assert_eq!(r.code, Some(1), "{name}: {r:?}");
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(v["summary"]["errors"].as_u64().unwrap() >= 1, "{name}: {r:?}");
    }
    // All at once, in every format.
    for format in ["human", "json", "sarif", "github"] {
        let r = run(&s.path, &["check", "w", "--format", format]);
        assert_handled(&r, format);
        assert_eq!(r.code, Some(1), "{format}: {r:?}");
    }
}

// ---------------------------------------------------------------- encodings

#[test]
fn binary_garbage_is_not_utf8() {
    let s = Root::new("garbage");
    let path = s.write("garbage.yaml", garbage(256 * 1024, 42));
    let (src, diags) = workspace::check_file(&path, &Config::default()).unwrap();
    assert_eq!(codes(&diags), [Code::YamlSyntax]);
    assert!(diags[0].message.contains("not valid UTF-8"));
    assert_sane(&src, &diags);
    // Garbage that happens to be UTF-8: still diagnostics, never a panic.
    for seed in 1..20 {
        let text: String = garbage(4096, seed).iter().map(|&b| char::from(b % 128)).collect();
        errors(&text);
    }
}

#[test]
fn non_utf8_bytes_are_a_yaml_syntax_error_at_the_first_bad_byte() {
    let s = Root::new("latin1");
    s.write("latin1.yaml", b"# d\xc3\xa9j\xc3\xa0 vu\nsteps:\n  - id: a\n    call: \"caf\xe9\"\n");
    let (src, diags) = workspace::check_file(&s.path.join("latin1.yaml"), &Config::default()).unwrap();
    assert_eq!(codes(&diags), [Code::YamlSyntax]);
    assert_eq!(diags[0].help.as_deref(), Some("save the file as UTF-8"));
    assert_eq!(pos(&src, &diags[0]), (4, 15, 4, 16));
    assert_sane(&src, &diags);
    let r = run(&s.path, &["check", "latin1.yaml", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "YAML_SYNTAX");
    assert_eq!((d["line"].as_u64(), d["column"].as_u64()), (Some(4), Some(15)), "{r:?}");
    let r = run(&s.path, &["check", "latin1.yaml"]);
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.contains("not valid UTF-8"), "{r:?}");
}

#[test]
fn nul_and_control_characters() {
    let (src, diags) = errors("steps:\n  - id: a\n    call: think\n    rationale: a\0b\n");
    assert!(has(&diags, Code::YamlSyntax, "U+0000"), "{diags:?}");
    assert_eq!(pos(&src, &diags[0]).0, 4);
    errors("\0");
    errors("\u{1}\u{2}\u{3}\u{7f}\u{85}\u{2028}\u{2029}");
}

// ---------------------------------------------------------------- size

#[test]
fn a_one_megabyte_string_is_fine() {
    let big = "é".repeat(1 << 19); // 1 MiB
    for value in [format!("\"{big}\""), format!("'{big}'"), big.clone(), format!("|\n      {big}")] {
        let yaml = format!(
            "steps:\n  - id: a\n    call: prompt.say\n    rationale: {value}\n    input_template: {{ t: \"<<nope>>\" }}\n"
        );
        let started = Instant::now();
        let (src, diags) = errors(&yaml);
        assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
        assert_eq!(codes(&diags), [Code::UnresolvedVar], "{:?}", diags);
        let last = yaml.lines().count();
        assert_eq!(pos(&src, &diags[0]), (last, 29, last, 33));
    }
    // In the template itself, on a line of its own in a block scalar.
    let yaml = format!(
        "steps:\n  - id: a\n    call: prompt.say\n    input_template:\n      t: |\n        {big}\n        <<nope>>\n"
    );
    let (src, diags) = errors(&yaml);
    assert_eq!(codes(&diags), [Code::UnresolvedVar]);
    assert_eq!(pos(&src, &diags[0]), (7, 11, 7, 15));
}

#[test]
fn very_long_lines() {
    let long = "x".repeat(2 << 20);
    let yaml =
        format!("# {long}\nsteps:\n  - id: a\n    call: think\n    rationale: {long}\n    when: nope\n");
    let (src, diags) = errors(&yaml);
    assert_eq!(codes(&diags), [Code::UnresolvedVar]);
    assert_eq!(pos(&src, &diags[0]), (6, 11, 6, 15));
    let s = Root::new("long-lines");
    s.write("long.yaml", &yaml);
    for format in ["human", "github"] {
        let r = run(&s.path, &["check", "long.yaml", "--format", format]);
        assert_handled(&r, format);
        assert!(r.stdout.contains("UNRESOLVED_VAR"), "{r:?}");
    }
}

#[test]
fn a_file_over_the_size_cap_is_refused() {
    let bundled = Path::new(CRATE).join("workflows/review_v1.yaml");
    let limits = Limits { max_file_bytes: 100, ..Limits::default() };
    let config = Config { limits, ..Config::default() };
    let (src, diags) = workspace::check_file(&bundled, &config).unwrap();
    assert_eq!(codes(&diags), [Code::YamlLimit]);
    assert!(diags[0].message.contains("100 byte"), "{}", diags[0].message);
    assert_sane(&src, &diags);

    let s = Root::new("size-cap");
    std::fs::copy(&bundled, s.path.join("big.yaml")).unwrap();
    s.write("small.yaml", "steps:\n  - { id: a, call: prompt.say }\n");
    let r = run(&s.path, &["check", "big.yaml", "small.yaml", "--max-file-size", "100", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["summary"], serde_json::json!({"files": 2, "errors": 1, "warnings": 0}), "{r:?}");
    assert_eq!(v["diagnostics"][0]["code"], "YAML_LIMIT");
    assert_eq!(v["diagnostics"][0]["file"], "big.yaml");
    let r = run(&s.path, &["check", "big.yaml", "--max-file-size", "100"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stdout.contains("--max-file-size"), "the help says how to raise it: {r:?}");
    // Exactly at the cap is fine.
    let len = std::fs::metadata(s.path.join("small.yaml")).unwrap().len().to_string();
    assert_eq!(run(&s.path, &["check", "small.yaml", "--max-file-size", &len]).code, Some(0));
    // The default cap refuses a 9 MB file without reading it all.
    s.write("huge.yaml", format!("steps: []\n# {}\n", "x".repeat(9 << 20)));
    let r = run(&s.path, &["check", "huge.yaml", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stdout.contains("YAML_LIMIT"), "{r:?}");
}

// ---------------------------------------------------------------- nesting and bombs

#[test]
fn ten_thousand_deep_flow_nesting() {
    for yaml in [
        format!("steps: {}", "[".repeat(10_000)),
        format!("steps: {}{}", "[".repeat(10_000), "]".repeat(10_000)),
        format!("{}1{}", "{a: ".repeat(10_000), "}".repeat(10_000)),
        format!("steps: {}", "[{a: ".repeat(5_000)),
    ] {
        let (_, diags) = errors(&yaml);
        assert!(diags.iter().any(|d| d.code == Code::YamlLimit), "{diags:?}");
    }
}

#[test]
fn ten_thousand_deep_block_nesting() {
    // Compact block sequences and complex keys: one short line.
    for yaml in [format!("steps:\n  {}x\n", "- ".repeat(10_000)), format!("{}x\n", "? ".repeat(10_000))] {
        let (src, diags) = errors(&yaml);
        assert!(has(&diags, Code::YamlLimit, "nested more than 128 levels"), "{diags:?}");
        assert_eq!(src.line_col(diags[0].span.start as usize).line, yaml.lines().count().min(2));
    }
    // Block mappings, one more space of indentation per level: 50 MB of text.
    let yaml: String = (0..10_000).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
    let config =
        Config { limits: Limits { max_file_bytes: usize::MAX, ..Limits::default() }, ..Config::default() };
    let (src, diags) = check_text(&yaml, &config);
    assert!(has(&diags, Code::YamlLimit, "nested more than 128 levels"), "{diags:?}");
    assert_eq!(src.line_col(diags[0].span.start as usize).line, 129);
    // With the default size cap, the same file is refused as too large.
    let s = Root::new("deep-block");
    s.write("deep.yaml", &yaml);
    let r = run(&s.path, &["check", "deep.yaml", "--format", "github"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stdout.contains("YAML_LIMIT"), "{r:?}");
}

#[test]
fn yaml_bombs_stop_at_the_alias_budget() {
    let mut yaml =
        String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for (prev, name) in
        ["a", "b", "c", "d", "e", "f", "g", "h"].iter().zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        yaml.push_str(&format!("{name}: &{name} [{}]\n", vec![format!("*{prev}"); 9].join(",")));
    }
    yaml.push_str("steps: *i\n");
    let (_, diags) = errors(&yaml);
    assert!(has(&diags, Code::YamlLimit, "aliases expand"), "{diags:?}");
    // Merge keys repeating a big mapping in every step.
    let big: Vec<String> = (0..100).map(|i| format!("k{i}: {i}")).collect();
    let mut yaml = format!("base: &base {{{}}}\nsteps:\n", big.join(", "));
    for i in 0..5_000 {
        yaml.push_str(&format!("  - {{<<: *base, id: s{i}, call: think}}\n"));
    }
    let (_, diags) = errors(&yaml);
    assert!(diags.iter().any(|d| d.code == Code::YamlLimit), "{:?}", &diags[..diags.len().min(3)]);
}

// ---------------------------------------------------------------- empty files

#[test]
fn empty_and_comment_only_files() {
    for text in ["", "\n", "   \n\t\n", "# only a comment\n# and another", "---\n", "...\n", "\u{feff}"] {
        let (src, diags) = errors(text);
        assert_eq!(codes(&diags), [Code::YamlSchemaViolation], "{text:?}: {diags:?}");
        assert_eq!(pos(&src, &diags[0]).0, if text == "---\n" { 2 } else { 1 }, "{text:?}");
    }
    let s = Root::new("empty");
    s.write("empty.yaml", "");
    s.write("comments.yml", "# TODO\n");
    let r = run(&s.path, &["check", "."]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stdout.contains("the file is empty"), "{r:?}");
    assert!(r.stdout.contains("2 errors in 2 files"), "{r:?}");
}

// ---------------------------------------------------------------- unreadable files

/// Runs the binary as the `nobody` user when we are root (root reads
/// anything), if `setpriv` can do that here.
#[cfg(unix)]
fn run_as_nobody(dir: &Path, args: &[&str]) -> Option<Run> {
    let probe = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN, "--version"])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
        .args(args)
        .current_dir(dir)
        .env_remove("SAVANT_PATH");
    Some(run_cmd(c))
}

#[cfg(unix)]
#[test]
fn unreadable_files_and_directories_exit_2() {
    use std::os::unix::fs::PermissionsExt;
    let s = Root::new("unreadable");
    s.write("w/ok.yaml", "steps:\n  - { id: a, call: think }\n");
    let secret = s.write("w/secret.yaml", "steps:\n  - { id: a, call: think }\n");
    s.write("w/locked/inner.yaml", "steps:\n  - { id: a, call: think }\n");
    // Unreadable files that are not workflows are none of our business.
    let other = s.write("w/notes.txt", "hello");
    for p in [&secret, &other] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    std::fs::set_permissions(s.path.join("w/locked"), std::fs::Permissions::from_mode(0o000)).unwrap();

    let check = |r: &Run| {
        assert_eq!(r.code, Some(2), "{r:?}");
        assert!(r.stderr.contains("secret.yaml: permission denied"), "{r:?}");
        assert!(r.stderr.contains("locked: permission denied"), "{r:?}");
        assert!(!r.stderr.contains("notes.txt"), "{r:?}");
        assert!(!r.stderr.contains("panicked"), "{r:?}");
    };
    if std::fs::read(&secret).is_err() {
        for format in ["human", "json"] {
            check(&run(&s.path, &["check", "w", "--format", format]));
        }
        let r = run(&s.path, &["check", "w/secret.yaml"]);
        assert_eq!(r.code, Some(2), "{r:?}");
        assert!(r.stderr.contains("permission denied"), "{r:?}");
        let err = workspace::check_file(&secret, &Config::default()).unwrap_err();
        assert_eq!(err.message, "permission denied");
    } else if let Some(r) = run_as_nobody(&s.path, &["check", "w"]) {
        println!("note: running as root; checked the unreadable files as `nobody` through setpriv");
        check(&r);
    } else {
        crate::support::skip::skip(
            "the unreadable-file check",
            "running as root, where chmod 000 does not stop reads, and setpriv is unavailable (util-linux)",
            None,
        );
    }
}
