//! The checks' diagnostics kept by step, for the language server
//! ([`super::incremental`]): after an edit inside one step, only the steps
//! whose diagnostics can change are checked again ([`Scope::Step`]) and the
//! other steps' diagnostics are reused, moved with the text. Which steps
//! that is depends on how what the other steps see of the edited step (its
//! [`Face`]) changed ([`Change`]): not at all, only the edited step; only
//! in the names it reads and its `deps`, also the steps whose diagnostics
//! read the dependency graph; only in its id, capture name or loop
//! variable (a rename), the steps those names can reach (`check::rename`);
//! only in what types its capture (its `call`, `uses` or schema), the
//! steps that mention its id or capture, and `outputs:` if it does;
//! otherwise (a `foreach` added or removed, a name and a type at once) what
//! those three check again together, and the whole-workflow parts in full.
//!
//! The result equals a run of every check over the whole workflow because:
//! a check visiting one step reads of the others only what their faces
//! hold (ids, captures, loop variables and their spans, what types a
//! capture, the names a step reads and its `deps`, which make the
//! dependency graph); the whole-workflow parts (unused captures,
//! `outputs:`, cycles) depend on the faces too, except a cycle's labels,
//! which point into the steps: those are computed again whenever there is
//! a cycle. When only the names a step reads or its `deps` change, the
//! indexes of names (ids, captures, loop variables) and the capture types
//! stay as they were; only the graph's edges into the edited step change.
//! A check visiting another step reads the graph only for that step's own
//! edges (`DESTRUCTIVE_CALL`: unchanged) or through `depends_on`, which
//! walks the graph (`LEGACY_INTERPOLATION`'s fix, offered on every `{{…}}`
//! it reports): the steps with that code are checked again. Of the
//! whole-workflow parts, `outputs:` reads only the indexes; the cycles and
//! unused captures are computed again when there is a cycle (one made by
//! the edit passes through the step), else updated for the few steps at
//! the ends of the changed edges (`check::rewire`). When only its names
//! change, the indexes differ only at those names: what else is checked
//! again, and why that is enough, is `check::rename`'s doc.
//! The did-you-mean memos of `UNRESOLVED_VAR` and `UNKNOWN_DEP`,
//! shared by every step in a whole run, stop suggesting past a cap of
//! distinct names; below it they are only a cache, so the diagnostics are
//! kept only while there are fewer of those codes than the cap (and none
//! cut short with "… and N more"). The sort breaks ties (same span, same
//! code: one check) in the order pushed, which is the same step by step as
//! check by check as long as no two steps share text: with an alias in the
//! file nothing is kept.

use super::rename::{self, Readers};
use super::rewire::{self, Reads};
use super::{CHECKS, Cx, Scope};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{SchemaRef, Step, Str};
use crate::source::Span;
use serde_json::Value;

/// Distinct names `UNRESOLVED_VAR` and `UNKNOWN_DEP` each suggest for per
/// run (their `MAX_SUGGESTIONS`).
const SUGGESTION_CAP: usize = 256;

/// Steps a rename looks for a new cycle through, one walk each, at most.
const WALKS: usize = 16;

/// Every check's diagnostics: each step's own, and the rest.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    steps: Vec<Vec<Diagnostic>>,
    whole: Vec<Diagnostic>,
    /// Who reads each name, counted at the first [`Change::Reads`] or
    /// [`Change::Rename`] and kept up to date by the next ones.
    reads: Option<Reads>,
    /// Which steps mention each name, indexed at the first
    /// [`Change::Rename`] and kept up to date by every edit after it.
    readers: Option<Readers>,
}

impl Checked {
    /// Runs every check step by step, then the whole-workflow parts;
    /// `None` when that could differ from one run over everything (see the
    /// module's doc): the caller runs that instead. Abandoned (`Err`) as
    /// soon as `stop`, asked before each step, says so.
    pub fn run(cx: &mut Cx, stop: &dyn Fn() -> bool) -> Result<Option<Checked>, Stopped> {
        if cx.src.text.contains('*') {
            return Ok(None);
        }
        let mut steps = Vec::with_capacity(cx.wf.steps.len());
        for k in 0..cx.wf.steps.len() {
            if stop() {
                return Err(Stopped);
            }
            steps.push(one(cx, Scope::Step(k)));
        }
        let whole = one(cx, Scope::Whole);
        Ok(Some(Checked { steps, whole, reads: None, readers: None }).filter(Checked::below_caps))
    }

    /// After step `k` (`old`, its spans moved) was lowered again and the
    /// text moved by `delta` bytes at `at` (where the edit ended in the old
    /// text: labels into the step after it move too), its face changed by
    /// `change`: checks step `k` again, and what else `change` may have
    /// changed (see the module's doc); the rest is moved. `None` as for
    /// [`Checked::run`], and when the number of steps changed: the caller
    /// checks every step. The index of who mentions each name, when there
    /// is one, is updated for every change.
    pub fn recheck(
        self,
        cx: &mut Cx,
        k: usize,
        old: &Step,
        change: Change,
        at: u32,
        delta: i64,
    ) -> Option<Checked> {
        let mut checked = self.recheck_faces(cx, k, old, change, at, delta)?;
        checked.rewait(cx);
        Some(checked)
    }

    /// `DUPLICATE_WAIT` between two steps reads their waits and whether
    /// either depends on the other, which any edit may change: computed
    /// again after every edit (a scan of the steps; a walk of the graph
    /// only for two `wait_for:` steps on one event and key).
    fn rewait(&mut self, cx: &Cx) {
        self.whole.retain(|d| d.code != Code::DuplicateWait);
        super::duplicate_wait::parallel(cx, &mut self.whole);
    }

    /// [`Checked::recheck`] but for `DUPLICATE_WAIT` between steps.
    fn recheck_faces(
        mut self,
        cx: &mut Cx,
        k: usize,
        old: &Step,
        change: Change,
        at: u32,
        delta: i64,
    ) -> Option<Checked> {
        if self.steps.len() != cx.wf.steps.len() || cx.src.text.contains('*') {
            return None;
        }
        for d in self.steps.iter_mut().skip(k + 1).flatten().chain(&mut self.whole) {
            move_diagnostic(d, at, delta);
        }
        if let Some(readers) = &mut self.readers {
            readers.replace(k, old, &cx.wf.steps[k]);
        }
        if change == Change::Rename {
            return self.renamed(cx, k, old).filter(Checked::below_caps);
        }
        if change == Change::Retype {
            return Some(self.retyped(cx, k)).filter(Checked::below_caps);
        }
        if change == Change::Names {
            return Some(self.reshaped(cx, k, old)).filter(Checked::below_caps);
        }
        self.steps[k] = one(cx, Scope::Step(k));
        if change == Change::Reads {
            // The steps that walk the graph, which lost or gained the edges into `k`.
            for j in 0..self.steps.len() {
                if j != k && self.steps[j].iter().any(|d| d.code == Code::LegacyInterpolation) {
                    self.steps[j] = one(cx, Scope::Step(j));
                }
            }
        }
        let cycles = self.whole.iter().any(|d| d.code == Code::CyclicDependency);
        if cycles || (change == Change::Reads && rewire::on_cycle(cx, k)) {
            self.whole = one(cx, Scope::Whole);
            self.reads = None;
        } else if change == Change::Reads {
            match &mut self.reads {
                Some(reads) => reads.unused(cx, old, &cx.wf.steps[k], &mut self.whole),
                None => {
                    self.whole = one(cx, Scope::Whole);
                    self.reads = Some(Reads::of(cx));
                }
            }
        }
        Some(self).filter(Checked::below_caps)
    }

    /// After step `k`, once `old`, was renamed ([`Change::Rename`]): checks
    /// again the steps and whole-workflow parts a rename may change (see
    /// `check::rename`).
    fn renamed(mut self, cx: &mut Cx, k: usize, old: &Step) -> Option<Checked> {
        let wf = cx.wf;
        let names = rename::names(old, &wf.steps[k]);
        let readers = self.readers.get_or_insert_with(|| Readers::of(&wf.steps));
        // The steps whose edges in may have changed, and the ends they come from.
        let mut wired = readers.of_names(&names);
        wired.push(k);
        let mut holders = rename::holders(&wf.steps, &names);
        holders.push(k);
        self.check_again(cx, wired.iter().chain(&holders).copied());
        // Each look for a cycle may walk the whole graph: past a few, one
        // run of the whole-workflow checks costs less.
        wired.sort_unstable();
        wired.dedup();
        let cycles = self.whole.iter().any(|d| d.code == Code::CyclicDependency)
            || wired.len() > WALKS
            || wired.iter().any(|&j| rewire::on_cycle(cx, j));
        if cycles || self.whole_reads(cx, &names) {
            self.whole = one(cx, Scope::Whole);
        } else {
            let reads = self.reads.get_or_insert_with(|| Reads::of(cx));
            holders.sort_unstable();
            holders.dedup();
            rename::unused(cx, reads, &holders, &mut self.whole);
        }
        Some(self)
    }

    /// After what types step `k`'s capture changed, and nothing else of
    /// its face ([`Change::Retype`]): the names, the graph and who reads
    /// what are as they were, so another step's diagnostics can change
    /// only if it mentions the step's id or capture (a field of it, its
    /// `steps.X`, a `deps` entry: also the dependents, whose
    /// `DESTRUCTIVE_CALL` looks at the calls of what they depend on), and
    /// the whole-workflow parts only through `outputs:`. The steps that
    /// hold those names and those with a did-you-mean are checked again
    /// too, as after a rename.
    fn retyped(mut self, cx: &mut Cx, k: usize) -> Checked {
        let wf = cx.wf;
        let step = &wf.steps[k];
        let names = rename::names(step, step);
        let readers = self.readers.get_or_insert_with(|| Readers::of(&wf.steps));
        let mentions = readers.of_names(&names);
        self.check_again(cx, mentions.into_iter().chain(rename::holders(&wf.steps, &names)).chain([k]));
        if self.whole_reads(cx, &names) {
            self.whole = one(cx, Scope::Whole);
        }
        self
    }

    /// After any other change of step `k`'s face ([`Change::Names`]: a
    /// `foreach` added or removed, a name and what types it at once, …):
    /// what a rename, a retype and a change of reads each check again,
    /// together — the steps that mention or hold the old or new names,
    /// those with a did-you-mean or a graph walk — and the whole-workflow
    /// parts in full, since the names, the types and the graph may all
    /// have changed.
    fn reshaped(mut self, cx: &mut Cx, k: usize, old: &Step) -> Checked {
        let wf = cx.wf;
        let names = rename::names(old, &wf.steps[k]);
        let readers = self.readers.get_or_insert_with(|| Readers::of(&wf.steps));
        let mentions = readers.of_names(&names);
        self.check_again(cx, mentions.into_iter().chain(rename::holders(&wf.steps, &names)).chain([k]));
        self.whole = one(cx, Scope::Whole);
        self.reads = None;
        self
    }

    /// Checks again the steps `more`, and those with a diagnostic whose
    /// did-you-mean compares against every name or that walks the graph.
    fn check_again(&mut self, cx: &mut Cx, more: impl Iterator<Item = usize>) {
        let suggesting = [Code::UnresolvedVar, Code::UnknownDep, Code::LegacyInterpolation];
        let mut again: Vec<usize> = (0..self.steps.len())
            .filter(|&j| self.steps[j].iter().any(|d| suggesting.contains(&d.code)))
            .chain(more)
            .collect();
        again.sort_unstable();
        again.dedup();
        for j in again {
            self.steps[j] = one(cx, Scope::Step(j));
        }
    }

    /// Whether the whole-workflow parts may read `names` beyond the unused
    /// captures: `outputs:` mentions one, or they report anything else.
    fn whole_reads(&self, cx: &Cx, names: &[&str]) -> bool {
        self.whole.iter().any(|d| d.code != Code::UnusedCapture) || rename::outputs_mention(cx, names)
    }

    /// The diagnostics, in the order a run over everything would push them
    /// up to ties of the sort (see the module's doc).
    pub fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.steps.iter().flatten().chain(&self.whole)
    }

    fn below_caps(&self) -> bool {
        let mut suggesting = 0;
        for d in self.diagnostics().filter(|d| matches!(d.code, Code::UnresolvedVar | Code::UnknownDep)) {
            if d.message.starts_with("… and ") {
                return false;
            }
            suggesting += 1;
        }
        suggesting < SUGGESTION_CAP
    }
}

/// Every check over `scope`.
fn one(cx: &mut Cx, scope: Scope) -> Vec<Diagnostic> {
    cx.scope = scope;
    let mut out = Vec::new();
    for (_, check) in CHECKS {
        check(cx, &mut out);
    }
    cx.scope = Scope::All;
    out
}

/// A diagnostic after `delta` bytes were inserted (or removed) at `at`.
pub fn move_diagnostic(d: &mut Diagnostic, at: u32, delta: i64) {
    d.span = d.span.moved(at, delta);
    d.labels.iter_mut().for_each(|l| l.span = l.span.moved(at, delta));
    if let Some(f) = &mut d.fix {
        f.span = f.span.moved(at, delta);
    }
}

/// A check abandoned because its result was no longer wanted (a newer
/// version of the text arrived).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stopped;

/// How an edited step's [`Face`] changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Not at all: the other steps see the same step.
    Same,
    /// Only in the names it reads and its `deps` (the graph's edges into it).
    Reads,
    /// Only in its id, capture or loop variable (names and spans): not in
    /// what types its capture, the names it reads or its `deps`.
    Rename,
    /// Only in what types its capture (`call`, `uses`, `success_schema`,
    /// a `model.generate` schema, a `wait_for:` event) or whether its wait
    /// fails on timeout: not in its names, the names it reads,
    /// its `deps` or its loop.
    Retype,
    /// Otherwise (a `foreach` added or removed, a name and what types it
    /// at once, …): the union of the above is checked again, and the
    /// whole-workflow parts in full.
    Names,
}

impl Change {
    /// How the face changed from `old` to `new` (spans as after the edit).
    pub fn of(old: &Face, new: &Face) -> Change {
        if old == new {
            return Change::Same;
        }
        let typed = old.call == new.call
            && old.uses == new.uses
            && old.schema == new.schema
            && old.generated == new.generated
            && old.event == new.event
            && old.fails_after == new.fails_after;
        let names = old.id == new.id && old.capture == new.capture && old.looping == new.looping;
        // A loop's `foreach:` (its span) is not a name.
        let foreach = |f: &Face| f.looping.map(|(_, _, span)| span);
        let renamed = old.deps == new.deps && old.reads == new.reads && foreach(old) == foreach(new);
        match (typed, names) {
            (true, true) => Change::Reads,
            (true, false) if renamed => Change::Rename,
            (false, true) if renamed => Change::Retype,
            _ => Change::Names,
        }
    }
}

/// What the checks of the other steps, and the whole-workflow parts, read
/// of a step. Two steps with equal faces (spans included) leave every
/// other step's diagnostics as they were.
#[derive(Debug, PartialEq)]
pub struct Face<'s> {
    id: &'s Str,
    capture: Option<&'s Str>,
    call: Option<&'s str>,
    uses: Option<&'s str>,
    /// A foreach step's loop variable, its `as:` and its `foreach:`.
    looping: Option<(&'s str, Option<Span>, Span)>,
    schema: Option<Schema<'s>>,
    /// A `model.generate` step's result schema (from its input).
    generated: Option<Value>,
    deps: Vec<&'s str>,
    /// The root names its expressions read, and the `X` of `steps.X`.
    reads: Vec<(&'s str, bool)>,
    /// The event a `wait_for:` step waits for: its payload schema types
    /// the capture.
    event: Option<&'s str>,
    /// An `await:` or `wait_for:` that fails when its `timeout:` passes
    /// (no `on_timeout:`): its readers are told (`UNHANDLED_TIMEOUT`).
    fails_after: Option<crate::ir::WaitTimeout>,
}

#[derive(Debug, PartialEq)]
enum Schema<'s> {
    Named(&'s str),
    Inline(&'s Value),
}

impl<'s> Face<'s> {
    pub fn of(step: &'s Step) -> Face<'s> {
        let reads = rewire::reads(step);
        Face {
            id: &step.id,
            capture: step.capture_as.as_ref(),
            call: step.call.as_ref().map(|c| c.value.as_str()),
            uses: step.uses.as_ref().map(|u| u.value.as_str()),
            looping: step
                .foreach
                .as_ref()
                .map(|f| (step.loop_var_name(), step.loop_var.as_ref().map(|v| v.span), f.loc.span)),
            schema: step.success_schema.as_ref().map(|s| match s {
                SchemaRef::Named(n) => Schema::Named(n.value.as_str()),
                SchemaRef::Inline { schema, .. } => Schema::Inline(schema),
            }),
            generated: super::manifest::model_generate_output(step),
            deps: step.deps.iter().map(|d| d.value.as_str()).collect(),
            reads,
            event: match step.wait.as_deref().map(|w| &w.kind) {
                Some(crate::ir::WaitKind::Event { event, .. }) => Some(event.value.as_str()),
                _ => None,
            },
            fails_after: step.wait.as_deref().filter(|w| w.on_timeout().is_none()).and_then(|w| w.timeout()),
        }
    }
}
