//! The longest a workflow can wait, for `explain` of a workflow (no
//! run): along every path of its plan, the sleeps and timeouts of its
//! waits summed, a foreach step's times the number of its items when its
//! `foreach:` is a literal array; unbounded when a wait on a path has
//! `timeout: never` or none, is a `sleep_until:` (a time known only when
//! the run gets there), or is in a foreach whose items are not known.

use crate::compile::Plan;
use crate::ir::ast::ExprKind;
use crate::ir::{WaitKind, WaitTimeout, Workflow};
use crate::runtime::reply::LongestWait;

/// Seconds a step waits, `None` when unbounded (see the module's doc).
fn step_wait(wf: &Workflow, i: usize) -> Result<u64, String> {
    let s = &wf.steps[i];
    let Some(wait) = s.wait.as_deref() else { return Ok(0) };
    let id = &s.id.value;
    let once = match &wait.kind {
        WaitKind::Sleep { secs, .. } => *secs,
        WaitKind::SleepUntil { .. } => {
            return Err(format!("step `{id}` sleeps until a time known at run time"));
        }
        _ => match wait.timeout() {
            Some(WaitTimeout::After { secs, .. }) => secs,
            Some(WaitTimeout::Never(_)) => {
                return Err(format!("step `{id}` waits for ever (`timeout: never`)"));
            }
            None => return Err(format!("step `{id}` waits with no timeout")),
        },
    };
    let Some(foreach) = &s.foreach else { return Ok(once) };
    match foreach.expr.as_ref().map(|e| &e.kind) {
        Some(ExprKind::Array(items)) => Ok(once.saturating_mul(items.len() as u64)),
        _ => Err(format!("step `{id}` waits once per item of a `foreach:` whose length is not known")),
    }
}

/// The longest wait along any path of `plan`.
pub(super) fn longest_wait(wf: &Workflow, plan: &Plan) -> LongestWait {
    // Per step: the longest wait of a path ending with it.
    let mut ending: Vec<u64> = vec![0; plan.steps.len()];
    let mut longest = 0;
    for &i in &plan.order {
        let before = plan.steps[i].deps.iter().map(|&d| ending[d]).max().unwrap_or(0);
        match step_wait(wf, i) {
            Ok(secs) => ending[i] = before.saturating_add(secs),
            Err(why) => return LongestWait { secs: None, text: format!("unbounded: {why}") },
        }
        longest = longest.max(ending[i]);
    }
    LongestWait { secs: Some(longest), text: words(longest) }
}

/// Seconds in words: `0s`, `1d 2h`, `10m 30s`.
fn words(secs: u64) -> String {
    if secs == 0 {
        return "0s".to_owned();
    }
    let parts = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")];
    let mut left = secs;
    let mut out = Vec::new();
    for (unit, name) in parts {
        if left >= unit {
            out.push(format!("{}{name}", left / unit));
            left %= unit;
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn words_read_as_durations() {
        assert_eq!(super::words(0), "0s");
        assert_eq!(super::words(93_600), "1d 2h");
        assert_eq!(super::words(630), "10m 30s");
    }
}
