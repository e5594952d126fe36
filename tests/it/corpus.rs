//! The original system's workflows (../shared/corpus/legacy, or
//! `SAVANT_CORPUS`): every file migrates; every migrated file checks with no
//! errors; every migrated workflow runs `plan` → `next` … → `done` when each
//! step's result is `{}`. The only exceptions are the genuine defects listed
//! in tests/corpus_expectations.yaml — and a listed defect that no longer
//! occurs fails the test too, so the list cannot rot.

use crate::common::j;
use crate::support::{CRATE, Root, drive_to_done};
use savant_think::Limits;
use savant_think::check::{self, Config};
use savant_think::diagnostic::Severity;
use savant_think::migrate::{self, Outcome};
use savant_think::runtime::Engine;
use savant_think::source::SourceFile;
use savant_think::syntax::node::Node;
use savant_think::syntax::yaml;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The corpus directory: `SAVANT_CORPUS` (which must exist when set), else
/// ../shared/corpus/legacy beside the crate, else none (the test skips).
fn corpus_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SAVANT_CORPUS").filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        assert!(dir.is_dir(), "SAVANT_CORPUS={} is not a directory", dir.display());
        return Some(dir);
    }
    let dir = Path::new(CRATE).join("../shared/corpus/legacy");
    if dir.is_dir() {
        return Some(dir);
    }
    crate::support::skip::skip(
        "the corpus tests",
        &format!("no corpus (set SAVANT_CORPUS or put it at {})", dir.display()),
        None,
    );
    None
}

/// (file, stage, code) → justification.
type Expectations = BTreeMap<(String, String, String), String>;

fn expectations() -> Expectations {
    let path = Path::new(CRATE).join("tests/corpus_expectations.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let parsed = yaml::parse(&SourceFile::new(path.display().to_string(), text), &Limits::default());
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let root = parsed.root.expect("a list of expectations");
    let mut out = Expectations::new();
    for e in root.get("expected").and_then(Node::as_seq).expect("`expected:` list") {
        let field = |k: &str| e.get(k).and_then(Node::as_str).unwrap_or_default().to_owned();
        let (file, stage, code, why) = (field("file"), field("stage"), field("code"), field("justification"));
        assert!(["migrate", "check", "run"].contains(&stage.as_str()), "bad stage in {e:?}");
        assert!(
            !file.is_empty() && !code.is_empty() && why.len() > 20,
            "every expectation needs a justification: {e:?}"
        );
        assert!(out.insert((file, stage, code), why).is_none(), "listed twice: {e:?}");
    }
    out
}

/// A value of the param's declared type.
fn sample(schema: &Value) -> Value {
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|a| a.first()) {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("number" | "integer") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        Some("null") => Value::Null,
        _ => json!("x"),
    }
}

/// Runs a workflow to `done` with `{}` for every step: Ok(the done response) or Err(error code).
fn run_to_done(engine: &Engine, path: &str, params: Value, run_id: &str) -> Result<Value, (String, Value)> {
    let mut steps = 0;
    let done = drive_to_done(engine, path, run_id, params, |_| {
        steps += 1;
        assert!(steps < 10_000, "{path} does not end");
        json!({})
    });
    done.map(j).map_err(|e| {
        let j = e.to_json();
        (j["error"].as_str().unwrap_or("?").to_owned(), j)
    })
}

#[test]
fn legacy_corpus_migrates_checks_and_runs() {
    let Some(dir) = corpus_dir() else { return };
    let expected = expectations();
    let limits = Limits::default();
    let root = Root::with_workflows("corpus", &[]).crate_files();
    let engine = root.engine();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no workflows in {}", dir.display());

    let mut found: BTreeMap<(String, String, String), String> = BTreeMap::new();
    let (mut migrated, mut ran) = (0, 0);
    for (n, path) in files.iter().enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let original = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
        let m = migrate::migrate(&SourceFile::new(name.clone(), original.clone()), &limits);
        let text = match &m.outcome {
            Outcome::Failed { diagnostics } => {
                for d in diagnostics {
                    found
                        .entry((name.clone(), "migrate".into(), d.code.to_string()))
                        .or_insert(d.message.clone());
                }
                continue;
            }
            Outcome::Migrated { text, .. } => text.clone(),
            Outcome::Current { .. } => original.clone(),
        };
        migrated += 1;

        // Stable: migrating the result changes nothing.
        let again = migrate::migrate(&SourceFile::new(name.clone(), text.clone()), &limits);
        assert!(
            matches!(again.outcome, Outcome::Current { .. }) && again.changes.is_empty(),
            "{name}: migrating the migrated file changes it again: {:?}",
            again.changes
        );
        assert_same_steps(&name, &original, &text);

        let (wf, diags) = check::analyze(&SourceFile::new(name.clone(), text.clone()), &Config::default());
        let errors: Vec<_> = diags.iter().filter(|d| d.severity == Severity::Error).collect();
        for d in &errors {
            found.entry((name.clone(), "check".into(), d.code.to_string())).or_insert(d.message.clone());
        }
        if !errors.is_empty() {
            continue;
        }
        let wf = wf.expect("a workflow");
        let params: Map<String, Value> =
            wf.params.iter().map(|p| (p.name.value.to_string(), sample(&p.schema))).collect();
        let file = root.join("workflows").join(&name);
        std::fs::write(&file, &text).unwrap();
        match run_to_done(&engine, &file.to_string_lossy(), Value::Object(params), &format!("r{n}")) {
            Ok(done) => {
                let count = |k: &str| done["summary"][k].as_array().map_or(0, Vec::len);
                assert_eq!(
                    count("ran") + count("skipped"),
                    wf.steps.len(),
                    "{name}: every step ran or was skipped"
                );
                assert!(count("ran") > 0, "{name}: nothing ran");
                ran += 1;
            }
            Err((code, details)) => {
                found.insert((name.clone(), "run".into(), code), details.to_string());
            }
        }
    }

    let unexpected: Vec<_> = found.iter().filter(|(k, _)| !expected.contains_key(*k)).collect();
    let gone: Vec<_> = expected.keys().filter(|k| !found.contains_key(*k)).collect();
    assert!(
        unexpected.is_empty() && gone.is_empty(),
        "corpus results differ from tests/corpus_expectations.yaml\n\
         not listed (fix migrate/check, or list it with a justification if the original is at fault):\n{unexpected:#?}\n\
         listed but no longer happening (remove them):\n{gone:#?}"
    );
    eprintln!(
        "{} files: {migrated} migrated, {ran} ran to done, {} listed defects",
        files.len(),
        expected.len()
    );
}

/// The migrated file has the original's steps, in order, calling the same tools.
fn assert_same_steps(name: &str, original: &str, migrated: &str) {
    let read = |t: &str| {
        let src = SourceFile::new(name, t);
        let parsed = yaml::parse(&src, &Limits::default());
        if parsed.diagnostics.is_empty() {
            return parsed.root.unwrap();
        }
        // An original with indentation only libyaml accepted, as migrate repaired it.
        let (fixed, _) = migrate::repair::reindent(&src, &parsed.diagnostics, &Limits::default()).unwrap();
        yaml::parse(&SourceFile::new(name, fixed), &Limits::default()).root.unwrap()
    };
    let (a, b) = (read(original), read(migrated));
    let steps = |n: &Node| n.get("steps").and_then(Node::as_seq).map(<[Node]>::to_vec).unwrap_or_default();
    let (sa, sb) = (steps(&a), steps(&b));
    assert_eq!(sa.len(), sb.len(), "{name}: step count changed");
    for (x, y) in sa.iter().zip(&sb) {
        let call = |n: &Node| {
            n.get("call")
                .or_else(|| n.get("tool"))
                .and_then(Node::as_str)
                .map(str::to_owned)
                .or_else(|| n.get("agent").and_then(Node::as_str).map(|a| format!("agent.{a}")))
        };
        assert_eq!(call(x), call(y), "{name}: a step's call changed");
    }
    let ids: BTreeSet<_> = sb.iter().filter_map(|s| s.get("id").and_then(Node::as_str)).collect();
    assert_eq!(ids.len(), sb.len(), "{name}: every migrated step has a distinct string id");
}
