//! Every schema `savant-think run` can send as structured output is one a
//! grammar converter can enforce: checked in Rust (`grammar::check`: every
//! member typed, no long bounds, no unsupported keyword), and by the real
//! converters, llama-cpp-python's `json_schema_to_gbnf` and llguidance, run
//! by `tests/grammar/check_schemas.py`.
//!
//! The Python half needs an interpreter with `llguidance` and the file
//! `llama_cpp/llama_grammar.py`: `SAVANT_GRAMMAR_PYTHON` and
//! `SAVANT_LLAMA_GRAMMAR_PY`, else the real-model venv
//! (`target/real-model-venv`, made portable by `tests/real_model/venv.sh`,
//! which `.ci/run` and `tests/real_model/run.sh` call).
//! Without them it is skipped with a note, unless `SAVANT_REQUIRE_GRAMMAR=1`
//! or `CI` is set, where a skip is a failure. `SAVANT_GRAMMAR_DUMP=DIR`
//! keeps a copy of every schema sent.

use crate::common::Root;
use savant_think::agent::ToolInfo;
use savant_think::agent::Tools;
use savant_think::agent::mux::{Multiplexer, MuxOptions};
use savant_think::agent::run::{action, grammar};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn tool(name: &str, input_schema: Value) -> ToolInfo {
    ToolInfo { name: name.into(), description: String::new(), input_schema }
}

/// Tool schemas as MCP servers write them, with what grammar converters
/// choke on: description-only members, long bounds, formats, patterns,
/// recursion, `oneOf`, type lists, `allOf`.
fn hostile_tools() -> Vec<ToolInfo> {
    vec![
        tool(
            "any_value",
            json!({"type": "object", "properties": {"value": {"description": "any JSON"}},
                                  "required": ["value"]}),
        ),
        tool(
            "long_text",
            json!({"type": "object", "properties": {
            "body": {"type": "string", "maxLength": 100000, "minLength": 1},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 50}, "maxItems": 500}}}),
        ),
        tool(
            "formats",
            json!({"type": "object", "properties": {
            "when": {"type": "string", "format": "date-time"}, "email": {"type": "string", "format": "email"},
            "id": {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$"}},
            "patternProperties": {"^x-": {"type": "string"}}}),
        ),
        tool(
            "tree",
            json!({"$defs": {"node": {"type": "object", "properties": {"label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["label"]}},
            "type": "object", "properties": {"root": {"$ref": "#/$defs/node"}}, "required": ["root"]}),
        ),
        tool(
            "unions",
            json!({"type": "object", "properties": {
            "target": {"oneOf": [{"type": "string"}, {"type": "object", "properties": {"path": {"type": "string"}}}]},
            "limit": {"type": ["integer", "null"], "minimum": 0, "maximum": 10000},
            "mode": {"enum": ["fast", "slow"], "description": "how"},
            "opts": {"allOf": [{"type": "object", "properties": {"a": {"type": "boolean"}}},
                               {"properties": {"b": {"not": {"type": "null"}}}, "required": ["b"]}]}}}),
        ),
        tool("free", json!({})),
        tool("free_map", json!({"type": "object", "additionalProperties": {"description": "a value"}})),
    ]
}

/// The schemas `run` sends: the step schema with every built-in tool, each
/// built-in tool alone, none, and the hostile MCP-like tools.
async fn schemas(root: &Path) -> Vec<(String, Value)> {
    let engine = Arc::new(savant_think::runtime::Engine::new(root).unwrap());
    let mux = Multiplexer::new(engine, MuxOptions::default());
    let builtin = mux.list().await;
    assert!(builtin.len() > 5, "the multiplexer lists its built-in tools");
    let mut out = vec![("step_all_builtin".to_owned(), action::step_schema(&builtin))];
    out.push(("step_no_tools".into(), action::step_schema(&[])));
    for t in builtin.iter().chain(hostile_tools().iter()) {
        out.push((format!("step_{}", t.name), action::step_schema(std::slice::from_ref(t))));
    }
    out.push(("step_all_hostile".into(), action::step_schema(&hostile_tools())));
    out
}

#[tokio::test]
async fn every_schema_we_send_is_typed_everywhere_and_bounded() {
    let root = Root::new("grammar-rust");
    for (name, schema) in schemas(&root.path).await {
        grammar::check(&schema).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(schema.to_string().len() < 64 * 1024, "{name}: {} bytes", schema.to_string().len());
    }
}

/// An interpreter with llguidance and llama-cpp-python's `llama_grammar.py`.
fn converters() -> Result<(PathBuf, PathBuf), String> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/real-model-venv");
    let python = std::env::var_os("SAVANT_GRAMMAR_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| venv.join("bin/python"));
    let script = match std::env::var_os("SAVANT_LLAMA_GRAMMAR_PY") {
        Some(p) => PathBuf::from(p),
        None => {
            let lib = venv.join("lib");
            let found = std::fs::read_dir(&lib).ok().into_iter().flatten().flatten().find_map(|d| {
                let p = d.path().join("site-packages/llama_cpp/llama_grammar.py");
                p.is_file().then_some(p)
            });
            found.ok_or_else(|| format!("no llama_cpp/llama_grammar.py under {}", lib.display()))?
        }
    };
    if !script.is_file() {
        return Err(format!("{} is not a file", script.display()));
    }
    let has_llg =
        Command::new(&python).args(["-c", "import llguidance"]).output().is_ok_and(|o| o.status.success());
    if !has_llg {
        return Err(format!("{} cannot import llguidance (pip install llguidance)", python.display()));
    }
    Ok((python, script))
}

#[tokio::test]
async fn llama_cpp_and_llguidance_convert_every_schema_we_send() {
    let (python, script) = match converters() {
        Ok(found) => found,
        Err(why) => {
            let test = "llama_cpp_and_llguidance_convert_every_schema_we_send";
            let why = format!(
                "{why}; run tests/real_model/venv.sh once, or set SAVANT_GRAMMAR_PYTHON and SAVANT_LLAMA_GRAMMAR_PY"
            );
            return crate::support::skip::skip(test, &why, Some("SAVANT_REQUIRE_GRAMMAR"));
        }
    };
    let root = Root::new("grammar-py");
    let dir = root.path.join("schemas-sent");
    std::fs::create_dir_all(&dir).unwrap();
    let all = schemas(&root.path).await;
    // SAVANT_GRAMMAR_DUMP=DIR keeps a copy of every schema sent, to feed other converters by hand.
    let dump = std::env::var_os("SAVANT_GRAMMAR_DUMP").map(PathBuf::from);
    for (name, schema) in &all {
        let bytes = serde_json::to_vec_pretty(schema).unwrap();
        std::fs::write(dir.join(format!("{name}.json")), &bytes).unwrap();
        if let Some(d) = &dump {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join(format!("{name}.json")), &bytes).unwrap();
        }
    }
    let checker = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grammar/check_schemas.py");
    let out = Command::new(&python).arg(&checker).arg(&script).arg(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("schemas: {} passed, 0 failed", all.len())), "{stdout}");
}

/// The converters do catch what the sanitizer removes: the same hostile
/// tools, sent raw (a description-only member, a long bound), fail the
/// Python check, so the check above can fail.
#[tokio::test]
async fn the_converters_reject_the_raw_hostile_schemas() {
    let (python, script) = match converters() {
        Ok(found) => found,
        Err(why) => {
            let test = "the_converters_reject_the_raw_hostile_schemas";
            return crate::support::skip::skip(test, &why, Some("SAVANT_REQUIRE_GRAMMAR"));
        }
    };
    let root = Root::new("grammar-raw");
    let dir = root.path.join("raw");
    std::fs::create_dir_all(&dir).unwrap();
    for t in hostile_tools().iter().take(2) {
        std::fs::write(dir.join(format!("{}.json", t.name)), t.input_schema.to_string()).unwrap();
    }
    let checker = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grammar/check_schemas.py");
    let out = Command::new(&python).arg(&checker).arg(&script).arg(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    for name in ["any_value", "long_text"] {
        assert!(stdout.contains(&format!("FAIL {name}.json")), "{stdout}");
    }
}
