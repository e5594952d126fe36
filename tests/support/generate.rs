//! Generated workflows and params.

use serde_json::{Value, json};

/// A `foreach` over `params.items`: step `each` sends every item to `think`
/// (input `{thought: "item <it> #<index>"}`), captured as the list `out`.
pub fn foreach(id: &str) -> String {
    format!(
        r#"
id: {id}
params:
  items: {{ type: array, items: {{ type: string }} }}
required: [items]
steps:
  - id: each
    call: think
    foreach: params.items
    as: it
    input_template: {{ thought: "item <<it>> #<<loop.index>>" }}
    capture_as: out
"#
    )
}

/// [`foreach`], then a step `after` (`prompt.say`) that reads the whole
/// list and is captured as `said`.
pub fn foreach_then_say(id: &str) -> String {
    foreach(id)
        + "  - id: after\n    call: prompt.say\n    input_template: { text: \"<<len(out)>> results\" }\n    \
           capture_as: said\n"
}

/// `n` sequential `think` steps `s0`…, each reading the previous capture
/// (`c<i>`), then a step `end` (`prompt.say`) that reads the last. The
/// client answers each in its own shape (`{ok}`), not `think`'s reply:
/// each step says so with a `success_schema`.
pub fn sequential(id: &str, n: usize) -> String {
    let answer = "    success_schema: { type: object }\n";
    let mut y = format!("id: {id}\nsteps:\n  - id: s0\n    call: think\n    capture_as: c0\n{answer}");
    for i in 1..n {
        y.push_str(&format!(
            "  - id: s{i}\n    call: think\n    input_template: {{ thought: \"after <<c{}.ok>>\" }}\n    capture_as: c{i}\n{answer}",
            i - 1
        ));
    }
    y.push_str(&format!(
        "  - id: end\n    call: prompt.say\n    input_template: {{ message: \"<<c{}.ok>>\" }}\n",
        n - 1
    ));
    y
}

/// Params of [`foreach`]: `n` items `i0`, `i1`, …
pub fn items(n: usize) -> Value {
    json!({ "items": (0..n).map(|i| format!("i{i}")).collect::<Vec<_>>() })
}

/// A small xorshift generator, seeded from the clock and the process id:
/// for varied timings, not quality (print `.0` to know the seed).
pub struct Rng(pub u64);

impl Rng {
    pub fn seeded() -> Rng {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        Rng((nanos ^ u64::from(std::process::id()).rotate_left(32)) | 1)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}
