//! The language server warns, as `check --runs` does, when the saved file
//! would strand a run in flight (issue 23.3): `INCOMPATIBLE_UPGRADE` at the
//! changed line, on open and on save, and gone once the change is undone.

use crate::lsp::{Client, url};
use crate::support::Root;
use serde_json::{Value, json};

const V1: &str = "id: rev\nsteps:\n  - id: fetch\n    call: gitlab.get_mr\n    capture_as: mr\n  - id: say\n    call: prompt.say\n    input_template: { text: \"<<mr>>\" }\n";

fn codes(published: &Value) -> Vec<(String, u64)> {
    published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (d["code"].as_str().unwrap_or_default().to_owned(), d["range"]["start"]["line"].as_u64().unwrap())
        })
        .collect()
}

#[test]
fn a_saved_change_that_strands_a_run_is_a_warning_in_the_editor() {
    let root = Root::with_workflows("lsp-runs", &[("rev", V1)]);
    root.ok(&["plan", "rev", "--run-id", "r1"]);
    root.ok(&["next", "rev", "--run-id", "r1", "--step", "fetch", "--result", r#"{"t": 1}"#]);
    let file = root.join("workflows/rev.yaml");
    let (mut client, _) = Client::start(&root.path, json!({}));
    assert_eq!(codes(&client.open(&file, V1)), vec![], "the file the run started with");

    // Edited, not saved: the runs are compared with files, not buffers.
    let v2 = V1.replace("gitlab.get_mr", "gitlab.get_merge_request");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": url(&file), "version": 2}, "contentChanges": [{"text": v2}]}),
    );
    assert_eq!(codes(&client.notification("textDocument/publishDiagnostics")), vec![]);

    // Saved: the run `r1` would be stranded at the changed call (line 4).
    std::fs::write(&file, &v2).unwrap();
    client.notify("textDocument/didSave", json!({"textDocument": {"uri": url(&file)}}));
    let published = client.notification("textDocument/publishDiagnostics");
    assert_eq!(codes(&published), vec![("INCOMPATIBLE_UPGRADE".to_owned(), 3)], "{published}");
    let d = &published["diagnostics"][0];
    assert_eq!(d["severity"], 2, "a warning: {d}");
    assert!(d["message"].as_str().unwrap().contains("run `r1`"), "{d}");

    // Undone and saved: the warning goes.
    std::fs::write(&file, V1).unwrap();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": url(&file), "version": 3}, "contentChanges": [{"text": V1}]}),
    );
    client.notify("textDocument/didSave", json!({"textDocument": {"uri": url(&file)}}));
    let mut last = client.notification("textDocument/publishDiagnostics");
    while last["version"] != json!(3) {
        last = client.notification("textDocument/publishDiagnostics");
    }
    assert_eq!(codes(&last), vec![], "{last}");
    client.shutdown();
}
