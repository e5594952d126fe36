//! Golden tests of `savant-think check`'s output formats (JSON, GitHub,
//! SARIF), continued from `cli.rs` (its fixtures).

use crate::cli::{CLEAN, ERROR, MULTIBYTE, WARNING};
use crate::common::{Root, assert_exit, run};
use serde_json::Value;
use std::collections::BTreeSet;

// ---------------------------------------------------------------- formats

#[test]
fn json_has_the_documented_shape_and_character_columns() {
    let s = Root::new("json");
    s.write("ünï/çödé.yaml", MULTIBYTE);
    s.write("dup.yaml", "steps:\n  - id: fetch\n    call: think\n  - id: fetch\n    call: think\n");
    let r = run(&s.path, &["check", "dup.yaml", "ünï/çödé.yaml", "--format", "json"]);
    assert_exit(&r, 1);
    let v = r.json();
    let top: BTreeSet<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(top, BTreeSet::from(["version", "diagnostics", "summary"]));
    assert_eq!(v["version"], 1);
    assert_eq!(v["summary"], serde_json::json!({"files": 2, "errors": 3, "warnings": 0}));
    let diags = v["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 3, "{r:?}");
    let keys = BTreeSet::from([
        "file",
        "code",
        "severity",
        "message",
        "line",
        "column",
        "end_line",
        "end_column",
        "labels",
        "help",
    ]);
    for d in diags {
        let got: BTreeSet<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(got, keys, "{d}");
        for k in ["line", "column", "end_line", "end_column"] {
            assert!(d[k].as_u64().unwrap() >= 1, "{k} is 1-based: {d}");
        }
        assert!(d["help"].is_null() || d["help"].is_string(), "{d}");
        for l in d["labels"].as_array().unwrap() {
            let got: BTreeSet<&str> = l.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(got, BTreeSet::from(["line", "column", "end_line", "end_column", "message"]), "{l}");
        }
    }
    // Diagnostics come file by file, in the order the files were given.
    let dup = &diags[0];
    assert_eq!(dup["file"], "dup.yaml");
    assert_eq!(dup["code"], "DUPLICATE_STEP");
    assert_eq!(dup["severity"], "error");
    assert_eq!(
        (&dup["line"], &dup["column"], &dup["end_line"], &dup["end_column"]),
        (&Value::from(4), &Value::from(9), &Value::from(4), &Value::from(14))
    );
    assert_eq!(
        dup["labels"],
        serde_json::json!([{"line": 2, "column": 9, "end_line": 2, "end_column": 14, "message": "first defined here"}])
    );
    assert!(dup["help"].is_string());

    // Inside `"naïve \"q\" \u00e9\t😀 <<missing_a>> and⏎ ünïcödé 🚀 <<other>>"`:
    // columns count characters of the source as written (escapes included).
    let pos = |d: &Value| {
        (
            d["line"].as_u64().unwrap(),
            d["column"].as_u64().unwrap(),
            d["end_line"].as_u64().unwrap(),
            d["end_column"].as_u64().unwrap(),
        )
    };
    let (a, b) = (&diags[1], &diags[2]);
    assert_eq!(a["file"], "ünï/çödé.yaml");
    assert_eq!(
        (a["code"].as_str(), a["message"].as_str()),
        (Some("UNRESOLVED_VAR"), Some("`missing_a` is not in scope"))
    );
    assert_eq!(pos(a), (6, 38, 6, 47));
    assert_eq!(b["message"], "`other` is not in scope");
    assert_eq!(pos(b), (7, 21, 7, 26));
    assert_eq!(b["labels"], serde_json::json!([]));
}

#[test]
fn json_with_no_files_is_still_a_document() {
    let s = Root::new("json-empty");
    std::fs::create_dir(s.path.join("w")).unwrap();
    let r = run(&s.path, &["check", "w", "--format", "json"]);
    assert_exit(&r, 0);
    assert_eq!(
        r.json(),
        serde_json::json!({"version": 1, "diagnostics": [], "summary": {"files": 0, "errors": 0, "warnings": 0}})
    );
}

#[test]
fn github_format_is_one_workflow_command_per_diagnostic() {
    let s = Root::new("github");
    s.write("flows/review.yaml", ERROR);
    s.write("flows/warn.yaml", WARNING);
    s.write("flows/ünï.yaml", MULTIBYTE);
    let r = run(&s.path, &["check", "./flows", "--format", "github"]);
    assert_exit(&r, 1);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "::error file=flows/review.yaml,line=8,col=14,endLine=8,endColumn=20,title=UNRESOLVED_VAR\
             ::`mr_dta` is not in scope%0Ahelp: did you mean `mr_data`?",
            "::warning file=flows/warn.yaml,line=4,col=17,endLine=4,endColumn=22,title=UNUSED_CAPTURE\
             ::capture `issue` is never read%0Ahelp: read it in a later step as `<<issue>>`, or remove `capture_as`",
            "::error file=flows/ünï.yaml,line=6,col=38,endLine=6,endColumn=47,title=UNRESOLVED_VAR\
             ::`missing_a` is not in scope",
            "::error file=flows/ünï.yaml,line=7,col=21,endLine=7,endColumn=26,title=UNRESOLVED_VAR\
             ::`other` is not in scope",
        ],
        "{r:?}"
    );
    assert!(r.stdout.ends_with('\n'));
    // Clean: no output at all.
    s.write("clean/ok.yaml", CLEAN);
    let r = run(&s.path, &["check", "clean", "--format", "github"]);
    assert_exit(&r, 0);
    assert_eq!(r.stdout, "");
}

#[test]
fn sarif_has_results_with_rules_relative_uris_and_regions() {
    let s = Root::new("sarif");
    s.write("flows/review.yaml", ERROR);
    s.write("flows/dir with space/warn.yaml", WARNING);
    let r = run(&s.path, &["check", "flows", "--format", "sarif"]);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["version"], "2.1.0");
    assert!(v["$schema"].as_str().unwrap().contains("sarif-schema-2.1.0"));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run0 = &runs[0];
    assert_eq!(run0["tool"]["driver"]["name"], "savant-think");
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run0["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{r:?}");
    for res in results {
        let rule_id = res["ruleId"].as_str().unwrap();
        let index = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], rule_id, "ruleIndex points at the rule");
        let loc = &res["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().unwrap();
        assert!(!uri.starts_with('/') && !uri.contains("://") && !uri.starts_with("./"), "relative: {uri}");
        for k in ["startLine", "startColumn", "endLine", "endColumn"] {
            assert!(loc["region"][k].as_u64().unwrap() >= 1, "{k}: {res}");
        }
    }
    // Files in directory order: `dir with space/` sorts before `review.yaml`.
    let warn = &results[0];
    assert_eq!(warn["ruleId"], "UNUSED_CAPTURE");
    assert_eq!(warn["level"], "warning");
    assert_eq!(
        warn["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "flows/dir%20with%20space/warn.yaml"
    );
    let err = &results[1];
    assert_eq!(err["ruleId"], "UNRESOLVED_VAR");
    assert_eq!(err["level"], "error");
    assert!(err["message"]["text"].as_str().unwrap().contains("`mr_dta` is not in scope"));
    let loc = &err["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "flows/review.yaml");
    assert_eq!(
        loc["region"],
        serde_json::json!({"startLine": 8, "startColumn": 14, "endLine": 8, "endColumn": 20})
    );
}
