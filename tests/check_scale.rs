//! Inputs whose size once broke the checker: deep recursion and quadratic work.

use savant_think::check::{Config, check_source};
use savant_think::diagnostic::Code;
use savant_think::source::SourceFile;

fn chain(n: usize, cycle: bool) -> String {
    let first = if cycle {
        format!("  - {{ id: s0, call: think, deps: [s{}] }}\n", n - 1)
    } else {
        "  - { id: s0, call: think }\n".to_owned()
    };
    let mut yaml = format!("steps:\n{first}");
    for i in 1..n {
        yaml.push_str(&format!("  - {{ id: s{i}, call: think, deps: [s{}] }}\n", i - 1));
    }
    yaml
}

/// The cycle search once recursed per step and overflowed the stack on a
/// long chain; it must be iterative. Run on a small thread stack to prove it.
#[test]
fn a_long_dependency_chain_does_not_overflow_the_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let config = Config {
                limits: savant_think::Limits { max_file_bytes: 1 << 30, ..Default::default() },
                ..Default::default()
            };
            let ok = check_source(&SourceFile::new("chain.yaml", chain(20_000, false)), &config);
            assert!(ok.is_empty(), "{:?}", &ok[..ok.len().min(3)]);
            let bad = check_source(&SourceFile::new("cycle.yaml", chain(20_000, true)), &config);
            assert_eq!(bad.iter().filter(|d| d.code == Code::CyclicDependency).count(), 1);
            assert_eq!(bad[0].labels.len(), 20_000, "a label on every edge of the cycle");
        })
        .unwrap();
    handle.join().unwrap();
}

/// Many misspelled names: each gets its own diagnostic; the first few hundred a suggestion.
#[test]
fn many_unresolved_names_each_get_a_suggestion() {
    let mut yaml = String::from("steps:\n");
    for i in 0..600 {
        yaml.push_str(&format!(
            "  - {{ id: s{i}, call: think, capture_as: cap{i}, input_template: {{ t: \"<<capx{i}>> <<steps.s{i}x.status>>\" }} }}\n"
        ));
    }
    let diags = check_source(&SourceFile::new("typos.yaml", yaml), &Config::default());
    let unresolved: Vec<_> = diags.iter().filter(|d| d.code == Code::UnresolvedVar).collect();
    assert_eq!(unresolved.len(), 1_200);
    assert_eq!(unresolved[0].help.as_deref(), Some("did you mean `cap0`?"));
}
