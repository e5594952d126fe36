//! Checking a new version of a file from the last one, for the language
//! server: when an edit falls inside one item of `steps:`, only that item's
//! lines are parsed and lowered again; the rest of the workflow is reused,
//! its spans moved by the edit's length. The checks then run over the whole
//! workflow, as [`super::analyze`]'s do.
//!
//! The result is exactly [`super::analyze`]'s for the new text (a
//! differential test in `tests/it/lsp_incremental.rs` holds the two
//! together): whenever the edit might read differently in the whole file
//! than on its own, [`reanalyze`] declines and the caller checks the whole
//! text. It declines when the last version had a YAML diagnostic; when the
//! edit is outside a step's lines or in the last step; when the edited
//! lines are not one block item at the step's indentation (a line at or
//! left of the `-`, a tab in an indentation, a lone carriage return);
//! when they hold a YAML diagnostic on their own or an alias (`*`) is
//! anywhere in the file; and when the file's size, nodes or expression
//! bytes would pass their limits.
//!
//! The checks, too, run again only over the edited step when what the
//! other steps see of it is unchanged (its face, see `check::recheck`),
//! or over it and the few steps that read the dependency graph when only
//! the names it reads or its `deps` changed, or over it and the steps that
//! mention or hold its old or new names when only its id, capture name or
//! loop variable changed (a rename, see `check::rename`); otherwise every
//! check runs over the whole workflow.

pub use super::recheck::Stopped;
use super::recheck::{Change, Checked, Face, move_diagnostic};
use super::{Config, Cx, default_id, no_document, run_checks, sort};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::lower::{Item, Parts, expr_budget, lower_item, lower_parts, move_spans, move_step};
use crate::ir::{Step, Workflow};
use crate::source::{Limits, SourceFile};
use crate::syntax::node::NodeKind;
use crate::syntax::yaml;

/// What a check keeps for checking the next version: the lowering
/// diagnostics by item of `steps:`. Present only when the file read without
/// a YAML diagnostic.
#[derive(Clone, Debug)]
pub struct State {
    head: Vec<Diagnostic>,
    items: Vec<Item>,
    head_expr_bytes: usize,
    nodes: usize,
    /// The checks' diagnostics by step, when they can be reused.
    checked: Option<Checked>,
    /// How many versions had only their edited step (and the steps it
    /// may affect) checked.
    rechecked: usize,
}

impl State {
    /// Forgets the checks' diagnostics (the configuration they were
    /// checked with changed): the next version runs every check.
    pub fn forget_checks(&mut self) {
        self.checked = None;
    }

    /// How many versions since the first had only their edited step (and
    /// the steps it may affect, see `check::recheck`) checked, not every
    /// step (for tests: the path is taken).
    pub fn rechecked(&self) -> usize {
        self.rechecked
    }
}

/// Every check over `cx`, appended to `diags` and sorted; also kept by
/// step when `keep` and that gives the same ([`Checked::run`]). Checking
/// step by step stops when `stop` says so.
fn check_all(
    cx: &mut Cx,
    diags: &mut Vec<Diagnostic>,
    keep: bool,
    stop: &dyn Fn() -> bool,
) -> Result<Option<Checked>, Stopped> {
    let kept = if keep { Checked::run(cx, stop)? } else { None };
    Ok(match kept {
        Some(checked) => Some(reported(checked, diags)),
        None => {
            run_checks(cx, diags);
            None
        }
    })
}

/// `checked`'s diagnostics appended to `diags` and sorted, as one run of
/// every check reports them.
fn reported(checked: Checked, diags: &mut Vec<Diagnostic>) -> Checked {
    diags.extend(checked.diagnostics().cloned());
    sort(diags);
    checked
}

/// What [`analyze`] returns: the workflow, the diagnostics, the state.
pub type Analyzed = (Option<Workflow>, Vec<Diagnostic>, Option<State>);

/// [`super::analyze`], and the state for [`reanalyze`].
pub fn analyze(src: &SourceFile, config: &Config) -> Analyzed {
    // Never stopped.
    analyze_until(src, config, &|| false).unwrap_or_default()
}

/// [`analyze`], abandoned when `stop` says so (asked between steps while
/// the checks run step by step).
pub fn analyze_until(
    src: &SourceFile,
    config: &Config,
    stop: &dyn Fn() -> bool,
) -> Result<Analyzed, Stopped> {
    let parsed = yaml::parse(src, &config.limits);
    let mut diags = parsed.diagnostics;
    let Some(root) = parsed.root else {
        return Ok((None, no_document(diags), None));
    };
    let clean = diags.is_empty();
    let Parts { wf, head, items, head_expr_bytes, nodes } = lower_parts(src, root, &default_id(&src.path));
    diags.extend(head.iter().cloned());
    diags.extend(items.iter().flat_map(|i| i.diags.iter().cloned()));
    let mut cx = Cx::new(src, &wf, config);
    let checked = check_all(&mut cx, &mut diags, clean, stop)?;
    drop(cx);
    let state = clean.then_some(State { head, items, head_expr_bytes, nodes, checked, rechecked: 0 });
    Ok((Some(wf), diags, state))
}

/// Checks `new` from the check of `old` (its workflow and state): `wf`
/// and `state` become those of `new`, and the diagnostics
/// [`super::analyze`] gives for `new` are returned. `None` leaves both
/// unchanged when the edit cannot be checked this way (see the module's
/// doc): the caller checks the whole text.
pub fn reanalyze(
    old: &SourceFile,
    wf: &mut Workflow,
    state: &mut State,
    new: &SourceFile,
    config: &Config,
) -> Option<Vec<Diagnostic>> {
    // Never stopped.
    reanalyze_until(old, wf, state, new, config, &|| false)?.ok()
}

/// [`reanalyze`], abandoned (`Some(Err)`) when `stop` says so (asked
/// between steps while the checks run step by step): `wf` and `state` are
/// then of neither version, to be dropped.
pub fn reanalyze_until(
    old: &SourceFile,
    wf: &mut Workflow,
    state: &mut State,
    new: &SourceFile,
    config: &Config,
    stop: &dyn Fn() -> bool,
) -> Option<Result<Vec<Diagnostic>, Stopped>> {
    let Relowered { index, step, item, at, edit_end, delta } =
        relower(&old.text, new, &config.limits, state)?;
    let k = state.items[..index].iter().filter(|i| i.lowered).count();
    let mut old = state.items[index].lowered.then(|| wf.steps.remove(k));
    move_spans(wf, at, delta);
    // How what the other steps see of the step changed (its spans after
    // the edit moved, as the reused diagnostics' labels into it will be).
    if let Some(old) = &mut old {
        move_step(old, edit_end, delta);
    }
    let change = match (&old, &step) {
        (Some(old), Some(new)) => Change::of(&Face::of(old), &Face::of(new)),
        _ => Change::Names,
    };
    if let Some(step) = step {
        wf.steps.insert(k, step);
    }
    state.items[index] = item;
    for d in &mut state.head {
        move_diagnostic(d, at, delta);
    }
    for i in &mut state.items[index + 1..] {
        i.span = i.span.moved(at, delta);
        i.diags.iter_mut().for_each(|d| move_diagnostic(d, at, delta));
    }
    let mut diags: Vec<Diagnostic> = state.head.clone();
    diags.extend(state.items.iter().flat_map(|i| i.diags.iter().cloned()));
    let errors = diags.iter().any(|d| d.code == Code::ExprSyntax);
    let had_errors = std::mem::replace(&mut wf.has_expr_errors, errors);
    let reuse = state.checked.take().filter(|_| had_errors == errors);
    let mut cx = Cx::new(new, wf, config);
    let rechecked = match (reuse, &old) {
        (Some(c), Some(old)) => c.recheck(&mut cx, k, old, change, edit_end, delta),
        _ => None,
    };
    state.checked = match rechecked {
        Some(checked) => {
            state.rechecked += 1;
            Some(reported(checked, &mut diags))
        }
        None => match check_all(&mut cx, &mut diags, true, stop) {
            Ok(checked) => checked,
            Err(stopped) => return Some(Err(stopped)),
        },
    };
    drop(cx);
    Some(Ok(diags))
}

/// One item of `steps:` read again.
struct Relowered {
    index: usize,
    step: Option<Step>,
    item: Item,
    /// Where the old item's lines ended, where the edit ended in the old
    /// text (what follows is unchanged), and how much longer the text is.
    at: u32,
    edit_end: u32,
    delta: i64,
}

/// The start of the line `offset` is on (lines break at `\n`; a lone `\r`
/// is refused where it matters, see [`block_item`]).
fn line_start(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// The column of the `-` when `text[line..item]` is blanks, `-` and at
/// least one blank: the start of a block sequence item's line.
fn dash_column(text: &str, line: usize, item: usize) -> Option<usize> {
    let prefix = text.get(line..item)?;
    let dash = prefix.len() - prefix.trim_start_matches(' ').len();
    let rest = &prefix[dash..];
    (rest.len() >= 2 && rest.starts_with('-') && rest[1..].bytes().all(|b| b == b' ')).then_some(dash)
}

/// Whether `chunk` (whole lines, the first holding the `-` at column
/// `dash`) is one block item: every other line blank or indented past the
/// `-` with spaces, no tab in an indentation, no lone `\r`.
fn block_item(chunk: &str, dash: usize) -> bool {
    let bytes = chunk.as_bytes();
    if bytes.iter().enumerate().any(|(i, &b)| b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
        return false;
    }
    chunk.split('\n').skip(1).all(|line| {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let body = line.trim_start_matches(' ');
        if body.starts_with('\t') {
            return false;
        }
        body.is_empty() || line.len() - body.len() > dash
    })
}

fn relower(old: &str, new: &SourceFile, limits: &Limits, state: &State) -> Option<Relowered> {
    let text = new.text.as_str();
    let (a, b) = (old.as_bytes(), text.as_bytes());
    if a == b || b.len() > limits.file_cap() || b.contains(&b'*') {
        return None;
    }
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let most = a.len().min(b.len()) - prefix;
    let suffix = a.iter().rev().zip(b.iter().rev()).take(most).take_while(|(x, y)| x == y).count();
    let old_end = a.len() - suffix;
    // The item whose lines hold the edit, and the next one (the last item
    // is not re-read: what follows it is not an item).
    let index =
        state.items.partition_point(|i| line_start(old, i.span.start as usize) <= prefix).checked_sub(1)?;
    let (this, next) = (&state.items[index], state.items.get(index + 1)?);
    let start = line_start(old, this.span.start as usize);
    let end = line_start(old, next.span.start as usize);
    let dash = dash_column(old, start, this.span.start as usize)?;
    if old_end > end || dash_column(old, end, next.span.start as usize) != Some(dash) {
        return None;
    }
    let delta = b.len() as i64 - a.len() as i64;
    let new_end = usize::try_from(end as i64 + delta).ok()?;
    let chunk = text.get(start..new_end)?;
    if !chunk.ends_with('\n') || !block_item(chunk, dash) {
        return None;
    }
    // On its own the item is one level less deep: the same depth limit.
    let own = Limits { max_depth: limits.max_depth.checked_sub(1)?, ..limits.clone() };
    let parsed = yaml::parse(&SourceFile::new(new.path.clone(), chunk), &own);
    if !parsed.diagnostics.is_empty() {
        return None;
    }
    let mut node = match parsed.root?.kind {
        NodeKind::Seq(items) if items.len() == 1 => items.into_iter().next()?,
        _ => return None,
    };
    node.offset(start);
    // The item still starts on the first line, after a `-` in the same column.
    if line_start(text, node.span.start as usize) != start
        || dash_column(text, start, node.span.start as usize) != Some(dash)
    {
        return None;
    }
    let (step, item) = lower_item(new, &node);
    let bytes = |items: &[Item]| state.head_expr_bytes + items.iter().map(|i| i.expr_bytes).sum::<usize>();
    let old_bytes = bytes(&state.items);
    let new_bytes = old_bytes - this.expr_bytes + item.expr_bytes;
    let nodes = state.nodes - this.nodes + item.nodes;
    if old_bytes > expr_budget(a.len()) || new_bytes > expr_budget(b.len()) || nodes > limits.max_nodes {
        return None;
    }
    Some(Relowered { index, step, item, at: end as u32, edit_end: old_end as u32, delta })
}
