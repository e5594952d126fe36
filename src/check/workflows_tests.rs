use super::*;
use crate::check::Config;

fn table(files: &[(&str, &str)]) -> Arc<WorkflowTable> {
    let sources = files
        .iter()
        .map(|(id, text)| WorkflowSource {
            id: (*id).to_owned(),
            path: format!("workflows/{id}.yaml"),
            text: (*text).to_owned(),
        })
        .collect();
    WorkflowTable::build(sources, &Config::default())
}

#[test]
fn a_workflow_s_contract_is_its_params_in_and_its_outputs_out() {
    let t = table(&[
        (
            "child",
            "params: {n: {type: number}}\nrequired: [n]\nsteps:\n  - {id: a, call: x, capture_as: r, success_schema: {type: object, properties: {v: {type: string}}}}\noutputs:\n  v: <<r.v>>\n  text: \"n = <<params.n>>\"\n",
        ),
        (
            "parent",
            "steps:\n  - {id: c, uses: child, with: {n: 1}, capture_as: out}\noutputs:\n  got: <<out>>\n",
        ),
    ]);
    let child = t.contract("child").unwrap();
    assert!(child.sub_workflow);
    assert_eq!(child.input.as_ref().unwrap()["required"], json!(["n"]));
    let Type::Object(o) = child.output_type() else { panic!("an object") };
    assert!(!o.open);
    assert_eq!(o.fields["v"], Type::String);
    assert_eq!(o.fields["text"], Type::String);
    // The parent's output is the child's outputs object, typed callee first.
    let Type::Object(p) = t.contract("parent").unwrap().output_type() else { panic!("an object") };
    assert!(matches!(&p.fields["got"], Type::Object(g) if g.fields.contains_key("v")));
    assert_eq!(t.get("parent").unwrap().uses[0].callee, "child");
    assert_eq!((t.get("parent").unwrap().uses[0].line, t.get("parent").unwrap().uses[0].column), (2, 19));
}

#[test]
fn a_cycle_is_typed_without_looping() {
    let t = table(&[
        ("a", "steps:\n  - {id: s, uses: b, capture_as: r}\noutputs: {x: <<r.y>>}\n"),
        ("b", "steps:\n  - {id: s, uses: a, capture_as: r}\noutputs: {y: <<r.x>>}\n"),
        ("broken", "steps: [[[\n"),
    ]);
    assert!(t.contract("a").is_some() && t.contract("b").is_some());
    assert!(t.get("broken").is_none() || t.contract("broken").is_some());
}
