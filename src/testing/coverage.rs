//! `savant-think test --coverage`: per workflow, which steps ran and which
//! were skipped across the tests, which `when:` conditions were seen both
//! true and false, which `foreach` ran with zero and with several items; as
//! text, as JSON, or as lcov with the workflow file's line numbers (a step is
//! a function and a line; its `when` and `foreach` are branches).
//!
//! For a `foreach` step with a `when`, the condition is seen true when an
//! item ran and false when an item was skipped.
//!
//! A wait step (`await:`, `wait_for:`, `sleep:`, `sleep_until:`) has two
//! branches: ended by an answer or an event (`answered`), and by its
//! deadline (`timed_out`: its `on_timeout`, or WAIT_TIMED_OUT); a sleep
//! has one, its end. A wait no test reached is `never reached`.
//!
//! A workflow run as a `uses:` child is covered too, under its own id: a
//! test counts for it once, however many child runs of it the test made
//! (a step ran in the test when it ran in any of them).

use crate::ir::WaitKind;
use crate::runtime::run::StepStatus;
use crate::runtime::workflow::CompiledWorkflow;
use crate::testing::run::{StepOutcome, base_id};
use crate::testing::suite::Report;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

/// One step's coverage.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StepCoverage {
    /// The step id.
    pub id: String,
    /// Its line in the workflow file (1-based).
    pub line: usize,
    /// Tests in which it ran.
    pub ran: usize,
    /// Tests in which it was skipped.
    pub skipped: usize,
    /// The line of its `when`, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when_line: Option<usize>,
    /// Tests in which the `when` was seen true / false.
    pub when_true: usize,
    /// See `when_true`.
    pub when_false: usize,
    /// The line of its `foreach`, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreach_line: Option<usize>,
    /// Tests in which the foreach had no item / several items.
    pub foreach_zero: usize,
    /// See `foreach_zero`.
    pub foreach_several: usize,
    /// What it waits for, for a wait step: `answer`, `event` or `timer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<&'static str>,
    /// Tests in which the wait (or an item's) ended by an answer or an event.
    pub wait_answered: usize,
    /// Tests in which it ended at its deadline (a sleep: at its end).
    pub wait_timed_out: usize,
}

impl StepCoverage {
    /// Whether its wait was seen every way it can end: a sleep ended; any
    /// other wait answered (or its event arrived) and timed out.
    fn wait_covered(&self) -> Option<bool> {
        self.wait.map(|w| match w {
            "timer" => self.wait_timed_out > 0,
            _ => self.wait_answered > 0 && self.wait_timed_out > 0,
        })
    }
}

/// One workflow's coverage.
#[derive(Clone, Debug, Serialize)]
pub struct WorkflowCoverage {
    /// The workflow id.
    pub workflow: String,
    /// Its file.
    pub file: String,
    /// Tests run against it.
    pub tests: usize,
    /// Its steps, in declaration order.
    pub steps: Vec<StepCoverage>,
}

impl WorkflowCoverage {
    /// (covered, total) of: steps run, `when` both ways, `foreach` zero and
    /// several, waits every way they end.
    pub fn totals(&self) -> [(usize, usize); 4] {
        let n = |f: &dyn Fn(&StepCoverage) -> Option<bool>| {
            let seen: Vec<bool> = self.steps.iter().filter_map(f).collect();
            (seen.iter().filter(|b| **b).count(), seen.len())
        };
        [
            n(&|s| Some(s.ran > 0)),
            n(&|s| s.when_line.map(|_| s.when_true > 0 && s.when_false > 0)),
            n(&|s| s.foreach_line.map(|_| s.foreach_zero > 0 && s.foreach_several > 0)),
            n(&StepCoverage::wait_covered),
        ]
    }
}

/// What one test saw of one step, across every run of its workflow in the test.
#[derive(Clone, Copy, Default)]
struct Seen {
    ran: bool,
    skipped: bool,
    when_true: bool,
    when_false: bool,
    foreach_zero: bool,
    foreach_several: bool,
    answered: bool,
    timed_out: bool,
}

impl Seen {
    fn add(&mut self, o: &StepOutcome) {
        let (done, skipped) = (o.status == StepStatus::Done, o.status == StepStatus::Skipped);
        self.ran |= done;
        self.skipped |= skipped;
        match &o.items {
            Some(items) => {
                self.foreach_zero |= items.is_empty();
                self.foreach_several |= items.len() > 1;
                self.when_true |= items.contains(&StepStatus::Done);
                self.when_false |= items.contains(&StepStatus::Skipped);
            }
            None => {
                self.when_true |= done;
                self.when_false |= skipped;
            }
        }
    }
}

fn empty(cw: &CompiledWorkflow) -> WorkflowCoverage {
    let line = |span: crate::source::Span| cw.source.line_col(span.start as usize).line;
    let steps = cw
        .wf
        .steps
        .iter()
        .map(|s| StepCoverage {
            id: s.id.value.to_string(),
            line: line(s.span),
            when_line: s.when.as_ref().map(|w| line(w.loc.span)),
            foreach_line: s.foreach.as_ref().map(|f| line(f.loc.span)),
            wait: s.wait.as_ref().map(|w| match w.kind {
                WaitKind::Answer { .. } => "answer",
                WaitKind::Event { .. } => "event",
                WaitKind::Sleep { .. } | WaitKind::SleepUntil { .. } => "timer",
            }),
            ..StepCoverage::default()
        })
        .collect();
    let file = std::path::absolute(&cw.path).unwrap_or_else(|_| cw.path.clone()).display().to_string();
    WorkflowCoverage { workflow: cw.wf.id.clone(), file, tests: 0, steps }
}

/// The coverage of every workflow the report's tests ran, by workflow id:
/// the workflows under test and those their `uses:` steps ran.
pub fn collect(report: &Report) -> Vec<WorkflowCoverage> {
    let mut by_id: BTreeMap<String, WorkflowCoverage> = BTreeMap::new();
    for r in &report.results {
        let Some(cw) = report.files.get(r.file_index).and_then(|f| f.compiled.as_ref()) else { continue };
        by_id.entry(cw.wf.id.clone()).or_insert_with(|| empty(cw));
        let Some(outcome) = &r.outcome else { continue };
        // Per workflow, what this test saw of each step (across its child runs).
        let mut seen: BTreeMap<String, (Arc<CompiledWorkflow>, Vec<Seen>)> = BTreeMap::new();
        let runs =
            std::iter::once((cw, &outcome.steps)).chain(outcome.children.iter().map(|c| (&c.cw, &c.steps)));
        for (cw, steps) in runs {
            let (_, flags) = seen
                .entry(cw.wf.id.clone())
                .or_insert_with(|| (cw.clone(), vec![Seen::default(); cw.wf.steps.len()]));
            for (f, o) in flags.iter_mut().zip(steps) {
                f.add(o);
            }
        }
        for (path, how) in &outcome.waits_ended {
            // `review_each[1]/approve`: step `approve` of the child at `review_each[1]`.
            let (cw, step) = match path.rsplit_once('/') {
                Some((at, step)) => match outcome.children.iter().find(|c| c.path == at) {
                    Some(c) => (&c.cw, step),
                    None => continue,
                },
                None => (cw, path.as_str()),
            };
            let Some((_, flags)) = seen.get_mut(&cw.wf.id) else { continue };
            let Some(i) = cw.wf.steps.iter().position(|s| s.id.value == base_id(step)) else { continue };
            match *how {
                "answered" | "event" => flags[i].answered = true,
                _ => flags[i].timed_out = true,
            }
        }
        for (id, (cw, flags)) in seen {
            let cov = by_id.entry(id).or_insert_with(|| empty(&cw));
            cov.tests += 1;
            for (s, f) in cov.steps.iter_mut().zip(flags) {
                s.ran += usize::from(f.ran);
                s.skipped += usize::from(f.skipped);
                s.when_true += usize::from(f.when_true);
                s.when_false += usize::from(f.when_false);
                s.foreach_zero += usize::from(f.foreach_zero);
                s.foreach_several += usize::from(f.foreach_several);
                s.wait_answered += usize::from(f.answered);
                s.wait_timed_out += usize::from(f.timed_out);
            }
        }
    }
    by_id.into_values().collect()
}

fn mark(seen: bool) -> &'static str {
    if seen { "yes" } else { "NO" }
}

/// How a wait ended across the tests: `answered: yes  timed out: NO`,
/// `ended: yes` for a sleep, or `never reached`.
fn wait_line(s: &StepCoverage) -> String {
    match (s.wait, s.wait_answered > 0, s.wait_timed_out > 0) {
        (_, false, false) => "never reached".to_owned(),
        (Some("timer"), _, slept) => format!("ended: {}", mark(slept)),
        (_, answered, timed_out) => format!("answered: {}  timed out: {}", mark(answered), mark(timed_out)),
    }
}

/// The coverage as text, after the test report.
pub fn human(coverage: &[WorkflowCoverage]) -> String {
    let mut out = String::new();
    for w in coverage {
        let _ = writeln!(out, "\ncoverage of {} ({} test(s))", w.workflow, w.tests);
        let width = w.steps.iter().map(|s| s.id.len()).max().unwrap_or(0);
        for s in &w.steps {
            let _ = write!(out, "  {:<width$}  ran {:>3}  skipped {:>3}", s.id, s.ran, s.skipped);
            if s.when_line.is_some() {
                let _ =
                    write!(out, "  when true: {} false: {}", mark(s.when_true > 0), mark(s.when_false > 0));
            }
            if s.foreach_line.is_some() {
                let _ = write!(
                    out,
                    "  foreach zero: {} several: {}",
                    mark(s.foreach_zero > 0),
                    mark(s.foreach_several > 0)
                );
            }
            out.push('\n');
        }
        for s in w.steps.iter().filter(|s| s.wait.is_some()) {
            let _ = writeln!(out, "  wait {:<width$}  {}", s.id, wait_line(s));
        }
        let [steps, when, foreach, waits] = w.totals();
        let _ = write!(
            out,
            "  steps run {}/{}, when seen both ways {}/{}, foreach with zero and several items {}/{}",
            steps.0, steps.1, when.0, when.1, foreach.0, foreach.1
        );
        if waits.1 > 0 {
            let _ = write!(out, ", waits ended every way {}/{}", waits.0, waits.1);
        }
        out.push('\n');
    }
    out
}

/// An lcov block id: a step's `when` and `foreach` are `2n` and `2n + 1`
/// (as before waits were covered); waits come after every step's.
fn block_id(n: usize, block: usize, steps: usize) -> usize {
    if block < 2 { n * 2 + block } else { steps * 2 + n }
}

/// The coverage as lcov (`genhtml`, Codecov, editors' coverage gutters).
pub fn lcov(coverage: &[WorkflowCoverage]) -> String {
    let mut out = String::new();
    for w in coverage {
        let _ = writeln!(out, "TN:savant-think\nSF:{}", w.file);
        for s in &w.steps {
            let _ = writeln!(out, "FN:{},{}", s.line, s.id);
        }
        for s in &w.steps {
            let _ = writeln!(out, "FNDA:{},{}", s.ran, s.id);
        }
        let hit = w.steps.iter().filter(|s| s.ran > 0).count();
        let _ = writeln!(out, "FNF:{}\nFNH:{hit}", w.steps.len());
        let (mut found, mut hit_branches) = (0, 0);
        for (n, s) in w.steps.iter().enumerate() {
            // A wait's branches (answered, timed out) sit on the step's line.
            let wait_line = s.wait.filter(|w| *w != "timer").map(|_| s.line);
            let branches = [
                (s.when_line, [s.when_true, s.when_false]),
                (s.foreach_line, [s.foreach_zero, s.foreach_several]),
                (wait_line, [s.wait_answered, s.wait_timed_out]),
            ];
            for (block, (line, taken)) in branches.iter().enumerate() {
                let Some(line) = line else { continue };
                for (branch, count) in taken.iter().enumerate() {
                    let taken = if w.tests == 0 { "-".to_owned() } else { count.to_string() };
                    let _ =
                        writeln!(out, "BRDA:{line},{},{branch},{taken}", block_id(n, block, w.steps.len()));
                    found += 1;
                    hit_branches += usize::from(*count > 0);
                }
            }
        }
        let _ = writeln!(out, "BRF:{found}\nBRH:{hit_branches}");
        for s in &w.steps {
            let _ = writeln!(out, "DA:{},{}", s.line, s.ran);
        }
        let _ = writeln!(out, "LF:{}\nLH:{hit}\nend_of_record", w.steps.len());
    }
    out
}
