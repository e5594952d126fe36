//! `migrate` through the library: each dialect rule on a small workflow.

use savant_think::Limits;
use savant_think::check::{Config, check_source};
use savant_think::diagnostic::Severity;
use savant_think::migrate::{Dialect, Migration, Outcome, migrate};
use savant_think::source::SourceFile;

fn run(text: &str) -> Migration {
    migrate(&SourceFile::new("wf.yaml", text), &Limits::default())
}

/// Migrates, asserts the result checks without errors and is stable, and returns it.
fn migrated(text: &str) -> (String, Migration) {
    let m = run(text);
    let Outcome::Migrated { text: out, .. } = &m.outcome else { panic!("not migrated: {m:?}") };
    let errors: Vec<_> = check_source(&SourceFile::new("wf.yaml", out.clone()), &Config::default())
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{out}\n{errors:#?}");
    let again = run(out);
    assert!(matches!(again.outcome, Outcome::Current { .. }), "not stable: {out}\n{:?}", again.changes);
    (out.clone(), m)
}

#[test]
fn think_dialect_keys_params_and_placeholders() {
    let (out, m) = migrated(
        r#"workflow: demo
title: Demo
summary: Says hello.
version: 3
params:
  ticket:
    desc: The ticket.
    required: true
  note:
    desc: Optional.
    required: false
steps:
  - id: 1
    call: jira.get
    input_template:
      key: "{{params.ticket}}"
      text: "About {{params.ticket}} and {{params.note}} by {{params.owner}}"
    capture_as: jira
  - id: 2
    deps: [1]
    call: prompt.say
    input_template:
      text: |
        Title: {{jira.fields.summary}}
        Whole: {{jira}} {{workflow}} {{#each x}}
      all: "{{ jira }}"
"#,
    );
    assert_eq!(
        out,
        r#"id: demo
name: Demo
description: Says hello.
version: 3
params:
  ticket:
    description: The ticket.
  note:
    description: Optional.
  owner:
    description: "Inferred by savant-think migrate: the original workflow used it without declaring it."
required: [ticket, owner]
steps:
  - id: "1"
    call: jira.get
    input_template:
      key: "<<params.ticket>>"
      text: "About <<params.ticket>> and <<params.note ?? ''>> by <<params.owner>>"
    capture_as: jira
  - id: "2"
    deps: ["1"]
    call: prompt.say
    input_template:
      text: |
        Title: <<jira.fields.summary ?? ''>>
        Whole: <<jira ?? ''>> {{workflow}} {{#each x}}
      all: "<<jira>>"
"#
    );
    let literals: Vec<_> = m.literals.iter().map(|l| (l.line, l.text.as_str())).collect();
    assert_eq!(literals, [(25, "{{workflow}}"), (25, "{{#each x}}")]);
    assert!(m.changes.iter().any(|c| c.line == 1 && c.message == "`workflow` → `id`"), "{:?}", m.changes);
    assert!(m.changes.iter().any(|c| c.message.contains("declared param `owner`")));
}

#[test]
fn captures_that_would_make_a_cycle_stay_literal() {
    let (out, m) = migrated(
        r#"steps:
  - id: a
    call: t.a
    input_template: { q: "{{later}} {{mine}}" }
    capture_as: mine
  - id: b
    call: t.b
    deps: [a]
    input_template: { q: "{{mine}}" }
    capture_as: later
"#,
    );
    assert!(out.contains(r#"q: "{{later}} {{mine}}""#), "{out}");
    assert!(out.contains(r#"q: "<<mine>>""#), "{out}");
    let reasons: Vec<_> = m.literals.iter().map(|l| l.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "`later` is captured by a step that runs after this one (a dependency cycle)",
            "reads the step's own capture"
        ]
    );
}

#[test]
fn applicable_when_becomes_a_null_safe_when() {
    let (out, _) = migrated(
        r#"steps:
  - id: gate
    call: prompt.say
    input_template: { text: "applicable?" }
    capture_as: gate_mig
  - id: check
    call: local.exec
    deps: [gate]
    applicable_when: { var: gate_mig, field: applicable, equals: true, min_conf_field: confidence, min_conf: 0.6 }
    input_template: { cmd: "rake db:migrate" }
"#,
    );
    assert!(
        out.contains("    when: gate_mig?.applicable == true && (gate_mig?.confidence ?? 0) >= 0.6\n"),
        "{out}"
    );
    // A broken one is kept (for `check` to report) and listed.
    let m = run("steps:\n  - id: a\n    call: t\n    applicable_when: { field: x }\n");
    assert!(m.literals[0].reason.contains("needs `var`"), "{:?}", m.literals);
}

#[test]
fn workflow_engine_dialect() {
    let (out, m) = migrated(
        r#"steps:
  - name: diff
    tool: git.diff
  - name: summarize
    agent: summarizer
    with:
      goal: "Summarise."
      diff: "{{ diff }}"
"#,
    );
    assert_eq!(
        out,
        r#"steps:
  - id: diff
    call: git.diff
    capture_as: diff
  - id: summarize
    call: agent.summarizer
    deps: [diff]
    input_template:
      goal: Summarise.
      diff: "<<diff>>"
    capture_as: summarize
"#
    );
    assert!(matches!(m.outcome, Outcome::Migrated { dialect: Dialect::WorkflowEngine, .. }));
}

#[test]
fn current_files_are_left_alone() {
    let text = "# a comment that must survive\nid: ok\nsteps:\n  - {id: a, call: t, input_template: {x: '<<params.y ?? 1>>', l: '{{kept}}'}}\n";
    let m = run(text);
    assert!(matches!(m.outcome, Outcome::Current { dialect: Dialect::Think }), "{m:?}");
    assert!(m.changes.is_empty());
    assert_eq!(m.literals.len(), 1, "a literal is still reported");
}

#[test]
fn files_that_are_not_workflows_fail_with_codes() {
    for (text, code) in [
        ("steps: [\n", "YAML_SYNTAX"),
        ("a: \"\\(\"\n", "YAML_SYNTAX"),
        ("- just\n- a list\n", "YAML_SCHEMA_VIOLATION"),
        ("", "YAML_SCHEMA_VIOLATION"),
        ("steps: 3\n", "YAML_SCHEMA_VIOLATION"),
    ] {
        let m = run(text);
        let Outcome::Failed { diagnostics } = &m.outcome else { panic!("{text:?}: {m:?}") };
        assert_eq!(diagnostics[0].code.as_str(), code, "{text:?}");
    }
}

/// The code block after each `<!-- migrate: KIND -->` marker in docs/migrating.md.
fn doc_blocks(doc: &str, kind: &str) -> Vec<String> {
    let marker = format!("<!-- migrate: {kind} -->\n```yaml\n");
    doc.match_indices(&marker)
        .map(|(at, _)| {
            let body = &doc[at + marker.len()..];
            body[..body.find("```\n").expect("a closed block")].to_owned()
        })
        .collect()
}

#[test]
fn the_examples_in_docs_migrating_md_are_real() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/migrating.md")).unwrap();
    let (before, after) = (doc_blocks(&doc, "before"), doc_blocks(&doc, "after"));
    assert_eq!(before.len(), 3, "three examples");
    assert_eq!(before.len(), after.len());
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(&migrated(b).0, a, "docs/migrating.md shows a different result for\n{b}");
    }
}

#[test]
fn params_it_cannot_read_are_left_for_check() {
    // A list is not params: kept as written (check reports it), nothing inferred into it.
    let m = run("params: [a]\nsteps:\n  - {id: s, call: t, input_template: {x: '{{params.a}}'}}\n");
    assert!(matches!(m.outcome, Outcome::Current { .. }), "{m:?}");
    assert_eq!(m.literals[0].reason, "`a` is not a declared param");
    // A full JSON Schema is read: its properties resolve.
    let (out, _) = migrated(
        "params: {type: object, properties: {a: {type: string}}, required: [a]}\nsteps:\n  - {id: s, call: t, input_template: {x: 'A {{params.a}}'}}\n",
    );
    assert!(out.contains("x: \"A <<params.a>>\""), "{out}");
}

#[test]
fn indentation_only_libyaml_accepted_is_repaired_and_listed() {
    let text = "steps:\n  - id: a\n    call: t\n  - id: b\n    call: t\n    deps: [\n      \"a\"\n    ]\n    input_template:\n      cmd: 'ls\n\n'\n";
    let (out, m) = migrated(text);
    assert!(out.contains("    deps: [a]\n") && out.ends_with("      cmd: |\n        ls\n"), "{out}");
    let lines: Vec<_> =
        m.changes.iter().filter(|c| c.message.starts_with("indented")).map(|c| c.line).collect();
    assert_eq!(lines, [8, 12]);
}

#[test]
fn a_legacy_key_beside_its_replacement_is_kept_and_listed() {
    let m = run(
        "steps:\n  - id: a\n    call: t\n    tool: u\n    when: 'true'\n    applicable_when: {var: g, field: f}\n",
    );
    assert!(matches!(m.outcome, Outcome::Current { .. }), "{m:?}");
    let kept: Vec<_> = m.literals.iter().map(|l| (l.line, l.text.as_str())).collect();
    assert_eq!(kept, [(4, "tool"), (6, "applicable_when")]);
    assert_eq!(m.literals[0].reason, "the step also has `call`; `check` reports the old key");
}

/// Found by the `migrate` fuzz target: a workflow-engine step with both
/// `with` and `input_template` (or its own `deps`) was migrated to a step
/// with the key twice, which is not YAML.
#[test]
fn a_workflow_engine_step_never_gets_a_key_twice() {
    let m = run("steps:\n  - name: a\n    tool: t\n  - name: b\n    agent: writer\n    with: {x: 1}\n    \
         input_template: {y: 2}\n    deps: [a]\n");
    let Outcome::Migrated { text, .. } = &m.outcome else { panic!("not migrated: {m:?}") };
    let errors: Vec<_> = check_source(&SourceFile::new("wf.yaml", text.clone()), &Config::default())
        .into_iter()
        .filter(|d| d.code == savant_think::Code::YamlSyntax)
        .collect();
    assert!(errors.is_empty(), "{text}\n{errors:#?}");
    assert_eq!(text.matches("input_template:").count(), 1, "{text}");
    assert_eq!(text.matches("deps:").count(), 1, "{text}");
    assert!(text.contains("with:"), "the step's `with` is kept: {text}");
    let kept: Vec<_> = m.literals.iter().map(|l| (l.line, l.text.as_str())).collect();
    assert_eq!(kept, [(6, "with")]);
}
