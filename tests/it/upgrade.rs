//! `upgrade`: a run moves onto the workflow file as it is now, checked
//! statically first (docs/runtime.md, "Upgrade in flight").

use crate::support::Root;
use serde_json::{Value, json};

const V1: &str = "id: up
steps:
  - id: fetch
    call: web.search
    input_template: { q: rust }
    capture_as: found
    success_schema: { type: object, required: [hits] }
  - id: draft
    call: llm.write
    input_template: { from: \"<<found>>\" }
    capture_as: text
  - id: publish
    call: cms.post
    input_template: { body: \"<<text>>\" }
";

fn run(root: &Root, args: &[&str]) -> (Option<i32>, Value) {
    let out = crate::common::run_cmd(root.command(args));
    (out.code, serde_json::from_str(&out.stdout).unwrap_or(Value::Null))
}

/// A root with run `r` of V1: `fetch` done, `draft` issued.
fn started(name: &str) -> Root {
    let root = Root::with_workflows(name, &[("up", V1)]);
    root.ok(&["plan", "up", "--run-id", "r"]);
    root.ok(&["next", "up", "--run-id", "r", "--step", "fetch", "--result", r#"{"hits": 3}"#]);
    root
}

fn reasons(e: &Value) -> Vec<String> {
    let runs = e["details"]["runs"].as_array().unwrap();
    // A run with nothing wrong (a child that could follow) has no diagnostics.
    let diags = runs.iter().flat_map(|r| r["diagnostics"].as_array().into_iter().flatten());
    diags.map(|d| d["reason"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_compatible_upgrade_keeps_results_and_reissues_with_the_new_instruction() {
    let root = started("up-ok");
    let before = root.ok(&["state", "get", "up", "--run-id", "r"]);
    // The new version: draft's input changed and renamed, a new step after fetch.
    let v2 = V1.replace("  - id: draft", "  - id: compose").replace("<<found>>", "<<found.hits>> hits").replace(
        "\"<<text>>\" }",
        "\"<<text>>\" }\n  - id: notify\n    call: chat.post\n    deps: [fetch]\n    input_template: { msg: done }",
    );
    root.workflow("up", &v2);
    let dry = root.ok(&["upgrade", "up", "--run-id", "r", "--dry-run", "--rename", "draft=compose"]);
    let plan = &dry["runs"][0]["plan"];
    assert_eq!(dry["runs"][0]["status"], "would upgrade", "{dry}");
    assert_eq!(plan["kept"], json!(["fetch"]));
    assert_eq!(plan["added"], json!(["notify"]));
    assert_eq!(plan["reissued"], json!(["compose"]));
    assert_eq!(plan["ready"], json!(["compose", "notify"]));
    let after = root.ok(&["state", "get", "up", "--run-id", "r"]);
    assert_eq!(
        (&after["version"], &after["history"]),
        (&before["version"], &before["history"]),
        "a dry run changes nothing"
    );
    assert_eq!(after["workflow_hash"], before["workflow_hash"]);

    let done = root.ok(&["upgrade", "up", "--run-id", "r", "--rename", "draft=compose"]);
    assert_eq!(done["runs"][0]["status"], "upgraded", "{done}");
    let s = root.ok(&["state", "get", "up", "--run-id", "r"]);
    assert_eq!((&s["file_differs"], &s["captures"]["found"]), (&json!(false), &json!({"hits": 3})));
    let last = s["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["type"], "upgraded");
    assert_eq!((&last["from"], &last["to"]), (&before["workflow_hash"], &s["workflow_hash"]), "{last}");
    assert_eq!(last["renames"], json!({"draft": "compose"}));
    assert_eq!(s["version"], before["version"].as_u64().unwrap() + 1);
    // The re-issued step has its new instruction; the run goes on.
    let r = root.ok(&["explain", "up", "--run-id", "r", "--step", "compose"]);
    assert_eq!(r["step"]["instruction"]["input"], json!({"from": "3 hits"}), "{r}");
    let r = root.ok(&["next", "up", "--run-id", "r", "--step", "compose", "--result", r#"{"t": 1}"#]);
    assert_eq!(r["ready"], json!(["publish", "notify"]), "{r}");
    let debug = root.ok(&["call", "think_debug", "--input", r#"{"workflow": "up", "run_id": "r"}"#]);
    assert_eq!(debug["consistent"], true, "replay stays deterministic: {debug}");
    // Again: nothing to do.
    let again = root.ok(&["upgrade", "up", "--run-id", "r"]);
    assert_eq!(again["runs"][0]["status"], "unchanged");
    // A malformed rename is refused as such even when the run needs none.
    let (_, e) = run(&root, &["upgrade", "up", "--run-id", "r", "--rename", "garbage"]);
    assert_eq!(e["error"], "INVALID_INPUT", "{e}");
}

#[test]
fn incompatible_upgrades_change_nothing_and_point_into_the_new_file() {
    let root = started("up-bad");
    let before = root.ok(&["state", "get", "up", "--run-id", "r"]);
    let cases = [
        (V1.replace("call: web.search", "call: web.fetch"), "CALL_CHANGED", 4),
        (V1.replace("required: [hits]", "required: [hits, total]"), "RESULT_NO_LONGER_VALID", 7),
        (
            V1.replace(
                "    input_template: { q: rust }",
                "    deps: [publish_first]\n    input_template: { q: rust }",
            )
            .replace("steps:\n", "steps:\n  - id: publish_first\n    call: cms.post\n"),
            "DEPENDS_ON_UNRUN_STEP",
            5,
        ),
    ];
    for (text, reason, line) in cases {
        root.workflow("up", &text);
        for dry in [true, false] {
            let mut args = vec!["upgrade", "up", "--run-id", "r"];
            if dry {
                args.push("--dry-run");
            }
            let (code, e) = run(&root, &args);
            assert_eq!((code, e["error"].as_str()), (Some(1), Some("INCOMPATIBLE_UPGRADE")), "{reason}: {e}");
            assert_eq!(reasons(&e), [reason], "{e}");
            let d = &e["details"]["runs"][0]["diagnostics"][0];
            assert_eq!(
                (&d["code"], &d["line"]),
                (&json!("INCOMPATIBLE_UPGRADE"), &json!(line)),
                "{reason}: {d}"
            );
            assert!(d["file"].as_str().unwrap().ends_with("up.yaml"));
            assert!(d["help"].as_str().is_some_and(|h| !h.is_empty()));
        }
        assert_eq!(
            root.ok(&["state", "get", "up", "--run-id", "r"])["version"],
            before["version"],
            "{reason}"
        );
    }
    // Renames are checked on both sides.
    root.workflow("up", &V1.replace("  - id: draft", "  - id: compose"));
    let (_, e) = run(&root, &["upgrade", "up", "--run-id", "r", "--rename", "drat=compose"]);
    assert_eq!(
        (&e["error"], &e["details"]["help"]),
        (&json!("UNKNOWN_STEP"), &json!("did you mean `draft`?"))
    );
    let (_, e) = run(&root, &["upgrade", "up", "--run-id", "r", "--rename", "draft=compos"]);
    assert_eq!(
        (&e["error"], &e["details"]["help"]),
        (&json!("UNKNOWN_STEP"), &json!("did you mean `compose`?"))
    );
    let (_, e) = run(&root, &["upgrade", "up", "--run-id", "r", "--rename", "draft"]);
    assert_eq!(e["error"], "INVALID_INPUT");
    let (_, e) = run(&root, &["upgrade", "up", "--run-id", "q"]);
    assert_eq!((&e["error"], &e["details"]["help"]), (&json!("UNKNOWN_RUN"), &json!("did you mean `r`?")));
}

#[test]
fn all_checks_every_unfinished_run_first_and_a_finished_run_needs_force() {
    let root = started("up-all");
    root.ok(&["plan", "up", "--run-id", "fresh"]);
    root.ok(&["plan", "up", "--run-id", "done"]);
    for (step, result) in [("fetch", r#"{"hits": 1}"#), ("draft", "{}"), ("publish", "{}")] {
        root.ok(&["next", "up", "--run-id", "done", "--step", step, "--result", result]);
    }
    // `r` (fetch done) cannot take a new call; `fresh` could: --all changes neither.
    root.workflow("up", &V1.replace("call: web.search", "call: web.fetch"));
    let (code, e) = run(&root, &["upgrade", "up", "--all"]);
    assert_eq!(code, Some(1), "{e}");
    let statuses: Vec<&str> =
        e["details"]["runs"].as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["would upgrade", "refused"], "fresh, r (the done run is not unfinished): {e}");
    let s = root.ok(&["state", "get", "up", "--run-id", "fresh"]);
    assert_eq!(s["file_differs"], true, "nothing changed");
    // A compatible edit: --all moves both unfinished runs, never the done one.
    root.workflow("up", &V1.replace("{ q: rust }", "{ q: go }"));
    let all = root.ok(&["upgrade", "up", "--all"]);
    let ids: Vec<&str> =
        all["runs"].as_array().unwrap().iter().map(|r| r["run_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["fresh", "r"], "{all}");
    assert_eq!(
        root.ok(&["state", "get", "up", "--run-id", "fresh"])["steps"][0]["input"],
        json!({"q": "go"})
    );
    // A finished run: refused unless --force.
    let (_, e) = run(&root, &["upgrade", "up", "--run-id", "done"]);
    assert_eq!(reasons(&e), ["RUN_FINISHED"], "{e}");
    let forced = root.ok(&["upgrade", "up", "--run-id", "done", "--force"]);
    assert_eq!(forced["runs"][0]["status"], "upgraded");
}

#[test]
fn two_upgrades_of_one_run_at_once_one_wins_the_other_is_a_conflict() {
    let root = started("up-race");
    for round in 0..3 {
        root.workflow("up", &V1.replace("{ q: rust }", &format!("{{ q: v{round} }}")));
        let outs = crate::common::race(&root, &["upgrade", "up", "--run-id", "r"]);
        let errors: Vec<&Value> = outs.iter().filter_map(|o| o.get("error")).collect();
        assert_eq!(errors, [&json!("STATE_CONFLICT")], "{outs:?}");
    }
}

#[test]
fn mcp_upgrade_is_a_tool() {
    use savant_think::tools::call;
    let root = started("up-mcp");
    root.workflow("up", &V1.replace("{ q: rust }", "{ q: go }"));
    let engine = root.engine();
    let r =
        call(&engine, "think_upgrade", json!({"workflow": "up", "run_id": "r", "dry_run": true})).unwrap();
    assert_eq!(r["runs"][0]["status"], "would upgrade");
    let e = call(&engine, "think_upgrade", json!({"workflow": "up"})).unwrap_err();
    assert_eq!(e.code, "INVALID_INPUT");
    let r = call(&engine, "think_upgrade", json!({"workflow": "up", "all": true})).unwrap();
    assert_eq!(r["runs"][0]["status"], "upgraded");
}

/// `--format human|concise|sarif|github`: a refusal's reasons are `check`
/// diagnostics (errors) at the changed line of the new file, in each report
/// format, exit 1; a compatible upgrade prints its plan for people.
#[test]
fn upgrade_speaks_every_report_format() {
    let root = started("upgrade-formats");
    let text = |args: &[&str]| {
        let out = crate::common::run_cmd(root.command(args));
        (out.code, out.stdout)
    };
    // The call of the done step `fetch` changed (line 4 of the new file).
    root.workflow("up", &V1.replace("web.search", "web.find"));
    let (code, out) = text(&["upgrade", "up", "--run-id", "r", "--dry-run", "--format", "concise"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("up.yaml:4:11: error[INCOMPATIBLE_UPGRADE] run `r` cannot be upgraded"), "{out}");
    assert!(out.contains("INCOMPATIBLE_UPGRADE: 1 of 1 run(s) cannot be upgraded"), "{out}");
    let (code, out) = text(&["upgrade", "up", "--run-id", "r", "--format", "human"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("web.find") && out.contains("help:"), "the line is shown and the help below: {out}");
    let (code, out) = text(&["upgrade", "up", "--run-id", "r", "--format", "github"]);
    assert_eq!(code, Some(1));
    assert!(out.contains("::error file=") && out.contains("line=4"), "{out}");
    let (code, out) = text(&["upgrade", "up", "--run-id", "r", "--format", "sarif"]);
    assert_eq!(code, Some(1));
    let sarif: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], "INCOMPATIBLE_UPGRADE", "{sarif}");
    assert_eq!(sarif["runs"][0]["results"][0]["level"], "error", "{sarif}");
    // Nothing changed.
    assert_eq!(root.ok(&["state", "get", "up", "--run-id", "r"])["version"], 1);

    // A compatible change: the plan, for people; then made.
    root.workflow("up", &V1.replace("<<text>>", "<<text>>!"));
    let (code, out) = text(&["upgrade", "up", "--all", "--dry-run", "--format", "human"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("run `r`: would upgrade"), "{out}");
    assert!(out.contains("kept      fetch") && out.contains("dry run: nothing was changed"), "{out}");
    // Versions shortened to 12 hex digits, as git shortens a commit.
    let versions = out.lines().next().and_then(|l| l.split_once('(')).map(|(_, v)| v.trim_end_matches(')'));
    let (from, to) = versions.and_then(|v| v.split_once(" → ")).unwrap_or_else(|| panic!("{out}"));
    for v in [from, to] {
        assert!(v.len() == 12 && v.chars().all(|c| c.is_ascii_hexdigit()), "{v:?} in {out}");
    }
    let (code, out) = text(&["upgrade", "up", "--run-id", "r", "--format", "concise"]);
    assert_eq!((code, out.contains("run `r`: upgraded")), (Some(0), true), "{out}");
    // Other errors stay the engine's JSON.
    let (code, out) = text(&["upgrade", "up", "--run-id", "nope", "--format", "human"]);
    assert_eq!(code, Some(1));
    assert!(out.contains("UNKNOWN_RUN"), "{out}");
}

/// A `uses:` step pointed at another workflow while its child run is
/// running: the upgrade is refused (`USES_CHANGED`, at the new `uses:`,
/// naming the child run), on the CLI, over MCP and in `check --runs`, and
/// nothing changes; once the child has finished, the same file upgrades.
#[test]
fn a_uses_step_pointed_elsewhere_while_its_child_runs_is_refused() {
    const CHILD: &str = "steps:\n  - id: ask\n    call: web.fetch\n    input_template: { text: hi }\n";
    const PARENT: &str = "steps:\n  - id: sub\n    uses: child\n  - id: after\n    call: web.fetch\n    input_template: { text: done }\n";
    let root = Root::with_workflows("up-uses", &[("child", CHILD), ("other", CHILD), ("parent", PARENT)]);
    let planned = root.ok(&["plan", "parent", "--run-id", "p"]);
    assert_eq!(planned["instruction"]["step_id"], "sub/ask", "{planned}");
    let before = root.ok(&["state", "get", "parent", "--run-id", "p"]);
    root.workflow("parent", &PARENT.replace("uses: child", "uses: other"));

    let (code, e) = run(&root, &["upgrade", "parent", "--run-id", "p"]);
    assert_eq!((code, e["error"].as_str()), (Some(1), Some("INCOMPATIBLE_UPGRADE")), "{e}");
    assert_eq!(reasons(&e), ["USES_CHANGED"], "{e}");
    let parent = &e["details"]["runs"][0];
    assert_eq!((&parent["run_id"], &parent["status"]), (&json!("p"), &json!("refused")), "{e}");
    let d = &parent["diagnostics"][0];
    assert_eq!((&d["step"], &d["line"], &d["column"]), (&json!("sub"), &json!(3), &json!(11)), "{d}");
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("`p.sub`") && message.contains("`other`") && message.contains("running"), "{d}");
    assert!(d["help"].as_str().unwrap().contains("uses: child"), "{d}");
    // Nothing changed: the parent and its child at their versions.
    let after = root.ok(&["state", "get", "parent", "--run-id", "p"]);
    assert_eq!((&after["version"], &after["workflow_hash"]), (&before["version"], &before["workflow_hash"]));
    assert_eq!(root.ok(&["state", "get", "child", "--run-id", "p.sub"])["status"], "running");
    // The human report points at the new `uses:`.
    let out =
        crate::common::run_cmd(root.command(&["upgrade", "parent", "--run-id", "p", "--format", "concise"]));
    assert!(out.stdout.contains("parent.yaml:3:11: error[INCOMPATIBLE_UPGRADE]"), "{out:?}");

    // Over MCP: the same refusal.
    let engine = root.engine();
    let e = savant_think::tools::call(&engine, "think_upgrade", json!({"workflow": "parent", "run_id": "p"}))
        .unwrap_err();
    assert_eq!(e.code, "INCOMPATIBLE_UPGRADE", "{e:?}");
    let e = json!({"details": e.details});
    assert_eq!(reasons(&e), ["USES_CHANGED"], "{e}");
    // `check --runs` warns of it before anyone upgrades.
    let out = crate::common::run_cmd(root.command(&["check", "--runs", "--format", "concise"]));
    assert!(out.stdout.contains("run `p` cannot be upgraded") && out.stdout.contains("`other`"), "{out:?}");

    // The child finished, the step has its result: the file upgrades.
    root.ok(&["next", "parent", "--run-id", "p", "--step", "sub/ask", "--result", r#"{"text": "ok"}"#]);
    let (code, r) = run(&root, &["upgrade", "parent", "--run-id", "p"]);
    assert_eq!((code, &r["runs"][0]["status"]), (Some(0), &json!("upgraded")), "{r}");
}

/// A refusal two levels down (a grandchild run whose workflow changed a
/// step it already ran) points at the grandchild's own file and line in
/// the human formats, not at the workflow upgraded (issue 42).
#[test]
fn a_grandchilds_refusal_points_at_its_own_file() {
    const LEAF: &str = "steps:\n  - id: first\n    call: web.fetch\n    input_template: { text: hi }\n  - id: second\n    call: web.fetch\n    deps: [first]\n    input_template: { text: again }\n";
    const MID: &str = "steps:\n  - id: deep\n    uses: leaf\n";
    const PARENT: &str = "steps:\n  - id: sub\n    uses: mid\n  - id: after\n    call: web.fetch\n    input_template: { text: done }\n";
    let root = Root::with_workflows("up-grandchild", &[("leaf", LEAF), ("mid", MID), ("parent", PARENT)]);
    let planned = root.ok(&["plan", "parent", "--run-id", "p"]);
    assert_eq!(planned["instruction"]["step_id"], "sub/deep/first", "{planned}");
    root.ok(&[
        "next",
        "parent",
        "--run-id",
        "p",
        "--step",
        "sub/deep/first",
        "--result",
        r#"{"text": "ok"}"#,
    ]);
    root.workflow("leaf", &LEAF.replacen("call: web.fetch", "call: prompt.say", 1));

    let (code, e) = run(&root, &["upgrade", "parent", "--run-id", "p"]);
    assert_eq!((code, e["error"].as_str()), (Some(1), Some("INCOMPATIBLE_UPGRADE")), "{e}");
    let refused: Vec<&Value> =
        e["details"]["runs"].as_array().unwrap().iter().filter(|r| r["status"] == "refused").collect();
    assert_eq!(refused.len(), 1, "{e}");
    assert_eq!(refused[0]["run_id"], "p.sub.deep", "{e}");
    let d = &refused[0]["diagnostics"][0];
    assert!(d["file"].as_str().unwrap().ends_with("leaf.yaml"), "{d}");
    let at = format!("leaf.yaml:{}:{}: error[INCOMPATIBLE_UPGRADE]", d["line"], d["column"]);
    for format in ["concise", "human"] {
        let out =
            crate::common::run_cmd(root.command(&["upgrade", "parent", "--run-id", "p", "--format", format]));
        let text = &out.stdout;
        assert!(text.contains("run `p.sub.deep` cannot be upgraded"), "{format}: {out:?}");
        assert!(!text.contains("parent.yaml:"), "{format}: mapped onto the parent's file: {out:?}");
        match format {
            "concise" => assert!(text.contains(&at), "{format}: {out:?}"),
            _ => {
                assert!(text.contains("leaf.yaml"), "{out:?}");
                // The human report quotes the grandchild's line.
                assert!(text.contains("call: prompt.say"), "{out:?}");
            }
        }
    }
}
