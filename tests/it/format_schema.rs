//! The JSON Schema of the workflow format (`savant-think schema`): the
//! committed copy editors point at is the generated one, it accepts every
//! bundled workflow and rejects what the lowerer rejects as a key.
//!
//! `SAVANT_BLESS_SCHEMA=1 cargo test --test it format_schema::` rewrites the
//! committed copy.

use savant_think::Limits;
use savant_think::schema::{COMMITTED_PATH, workflow_schema, workflow_schema_text};
use savant_think::source::SourceFile;
use savant_think::syntax::yaml;
use serde_json::Value;
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A YAML text as JSON, read by the crate's own parser.
fn yaml_to_json(path: &str, text: &str) -> Value {
    let src = SourceFile::new(path, text);
    let parsed = yaml::parse(&src, &Limits::default());
    assert!(parsed.diagnostics.is_empty(), "{path}: {:?}", parsed.diagnostics);
    parsed.root.expect("a document").to_json()
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft7::new(&workflow_schema()).expect("the generated schema is a valid draft-07 schema")
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

#[test]
fn the_committed_copy_is_the_generated_schema() {
    let path = repo().join(COMMITTED_PATH);
    let generated = workflow_schema_text();
    if std::env::var_os("SAVANT_BLESS_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{COMMITTED_PATH} is out of date: run `savant-think schema > {COMMITTED_PATH}` \
         (or SAVANT_BLESS_SCHEMA=1 cargo test --test it format_schema::)"
    );
}

#[test]
fn the_committed_copy_is_not_a_named_success_schema() {
    // `check` loads every schemas/*.json as a success schema by name (and
    // tests copy that directory flat): the editor schema lives outside it.
    assert!(!COMMITTED_PATH.starts_with("schemas/"));
    let names = savant_think::workspace::load_schemas(&repo().join("schemas"));
    assert!(!names.keys().any(|n| n.contains("workflow")), "{:?}", names.keys());
}

#[test]
fn every_bundled_workflow_is_valid() {
    let v = validator();
    let mut n = 0;
    for entry in std::fs::read_dir(repo().join("workflows")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let doc = yaml_to_json(&p.display().to_string(), &std::fs::read_to_string(&p).unwrap());
        assert_eq!(errors(&v, &doc), Vec::<String>::new(), "{}", p.display());
        n += 1;
    }
    assert!(n >= 3, "found {n} bundled workflows");
}

const MINIMAL: &str = "id: w\nsteps:\n  - id: a\n    call: t.x\n    timeout: 5m\n    retry: { max: 2 }\n";

#[test]
fn unknown_keys_are_rejected_at_every_level() {
    let v = validator();
    assert!(v.is_valid(&yaml_to_json("ok.yaml", MINIMAL)));
    for (bad, where_) in [
        (format!("{MINIMAL}tittle: x\n"), "workflow"),
        (MINIMAL.replace("call: t.x", "call: t.x\n    depz: [b]"), "step"),
        (MINIMAL.replace("{ max: 2 }", "{ max: 2, delay: 1 }"), "retry"),
    ] {
        let doc = yaml_to_json("bad.yaml", &bad);
        let errs = errors(&v, &doc);
        assert!(!errs.is_empty(), "an unknown {where_} key must be rejected:\n{bad}");
    }
}

#[test]
fn shapes_the_lowerer_rejects_are_rejected() {
    let v = validator();
    for bad in [
        "steps: []\n",
        "id: w\n",
        "steps:\n  - id: a\n",
        "steps:\n  - id: a\n    call: t\n    capture_as: params\n",
        "steps:\n  - id: a\n    call: t\n    timeout: 5 days\n",
        "steps:\n  - id: a b\n    call: t\n",
    ] {
        assert!(!v.is_valid(&yaml_to_json("bad.yaml", bad)), "must be rejected:\n{bad}");
    }
}

#[test]
fn every_key_has_a_description_for_hover() {
    let schema = workflow_schema();
    let objects = [&schema, &schema["definitions"]["step"]];
    for o in objects {
        for (k, p) in o["properties"].as_object().unwrap() {
            assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()), "{k} has no description");
        }
    }
}

#[test]
fn the_cli_prints_the_schema() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_savant-think")).arg("schema").output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), workflow_schema_text());
}
