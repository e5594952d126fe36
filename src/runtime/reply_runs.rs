//! The answers about stored runs as a whole (listing, deleting, restoring,
//! pruning, upgrading: the plan and its refusal reasons live here, below
//! the upgrade itself), re-exported by `reply`: typed like every reply.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::runtime::record::RunStatus;
use std::collections::BTreeMap;

/// think_state_list's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RunList {
    /// Each run: {workflow, run_id, status, version, updated_at}.
    pub runs: Vec<RunEntry>,
}

/// A listed run's status: its run's, or what the listing knows instead.
/// Serialized as its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryStatus {
    /// `running`, `done` or `failed`: the run's own status.
    Run(RunStatus),
    /// `archived`: an archived copy (prune's candidates).
    Archived,
    /// `unreadable`: the run's state cannot be read.
    Unreadable,
    /// A name this version does not know, as the stored snapshot has it.
    Unknown(String),
}

impl EntryStatus {
    /// The status's name: `running`, `done`, `failed`, `archived`, `unreadable`, ….
    pub fn as_str(&self) -> &str {
        match self {
            EntryStatus::Run(s) => s.as_str(),
            EntryStatus::Archived => "archived",
            EntryStatus::Unreadable => "unreadable",
            EntryStatus::Unknown(s) => s,
        }
    }

    /// The status a stored snapshot names.
    pub fn from_name(name: &str) -> EntryStatus {
        [RunStatus::Running, RunStatus::Done, RunStatus::Failed]
            .into_iter()
            .find(|s| s.as_str() == name)
            .map_or_else(|| EntryStatus::Unknown(name.to_owned()), EntryStatus::Run)
    }
}

impl From<RunStatus> for EntryStatus {
    fn from(s: RunStatus) -> EntryStatus {
        EntryStatus::Run(s)
    }
}

impl std::fmt::Display for EntryStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EntryStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One stored run.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RunEntry {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// running, done, failed, or unreadable.
    #[schemars(with = "Option<String>")]
    pub status: Option<EntryStatus>,
    /// The state version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// When it last changed (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Why the status may be stale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why the run cannot be read: an error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the run cannot be read: the details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// An archived run: which copy (give it to state get / restore).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_id: Option<String>,
    /// An archived run: when it was archived (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
    /// A sub-workflow's run: the run and the `uses:` step that started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<crate::runtime::record::ParentRun>,
    /// What the run's steps wait for (absent when none waits).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<crate::runtime::reply_waits::WaitView>,
}

/// Orders `runs` so that each sub-workflow's run follows its parent (and its
/// own children follow it), in the order of the parent's steps and items;
/// runs whose parent is not in the list keep their place. Returns each
/// run's depth below the first listed ancestor (0 for a run shown at the top).
pub fn group_children(runs: &mut Vec<RunEntry>) -> Vec<usize> {
    use std::collections::{BTreeMap, HashSet};
    let present: HashSet<(String, String)> =
        runs.iter().map(|r| (r.workflow.clone(), r.run_id.clone())).collect();
    let parent_of = |r: &RunEntry| {
        r.parent.as_ref().map(|p| (p.workflow.clone(), p.run_id.clone())).filter(|k| present.contains(k))
    };
    // The order of a parent's children: its step, then the item's index.
    let order = |r: &RunEntry| {
        let step = r.parent.as_ref().map_or("", |p| p.step_id.as_str());
        let (base, item) = match step.parse::<crate::runtime::work_id::WorkId>() {
            Ok(id) => (id.step, id.item.unwrap_or(0)),
            Err(_) => (crate::runtime::work_id::WorkId::base(step).to_owned(), usize::MAX),
        };
        (base, item, r.run_id.clone())
    };
    let mut children: BTreeMap<(String, String), Vec<RunEntry>> = BTreeMap::new();
    let mut top = Vec::new();
    for r in runs.drain(..) {
        match parent_of(&r) {
            Some(k) => children.entry(k).or_default().push(r),
            None => top.push(r),
        }
    }
    for list in children.values_mut() {
        list.sort_by_key(|r| order(r));
    }
    fn place(
        r: RunEntry,
        depth: usize,
        children: &mut BTreeMap<(String, String), Vec<RunEntry>>,
        out: &mut Vec<RunEntry>,
        depths: &mut Vec<usize>,
    ) {
        let key = (r.workflow.clone(), r.run_id.clone());
        out.push(r);
        depths.push(depth);
        for child in children.remove(&key).unwrap_or_default() {
            place(child, depth + 1, children, out, depths);
        }
    }
    let mut depths = Vec::new();
    for r in top {
        place(r, 0, &mut children, runs, &mut depths);
    }
    // A cycle of parents (a damaged store) leaves runs unplaced: list them last.
    for (_, list) in std::mem::take(&mut children) {
        for r in list {
            runs.push(r);
            depths.push(0);
        }
    }
    depths
}

impl RunEntry {
    pub(crate) fn new(key: &crate::state::RunKey, status: Option<EntryStatus>) -> RunEntry {
        RunEntry {
            workflow: key.workflow.clone(),
            run_id: key.run_id.clone(),
            status,
            version: None,
            updated_at: None,
            note: None,
            error: None,
            details: None,
            archive_id: None,
            archived_at: None,
            parent: None,
            waiting: Vec::new(),
        }
    }
}

/// think_state_delete's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Deleted {
    /// Always true: a missing run is UNKNOWN_RUN.
    pub deleted: bool,
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// Where the run went: its archived copy (see think_state_list with
    /// archived: true); absent when it was purged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_id: Option<String>,
}

/// think_state_repair's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Repaired {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// Whether the journal was cut (apply: true and something to cut).
    pub applied: bool,
    /// The journal as found (absent for a store that keeps no journal file:
    /// PostgreSQL, memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalReport>,
    /// Whether the run loads (after the repair, when one was made).
    pub healthy: bool,
    /// Why it does not: `{error, details}` (e.g. STATE_CORRUPT naming the
    /// damaged file and line, or a snapshot that does not fit its workflow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<Value>,
}

/// A journal checked line by line.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct JournalReport {
    /// The journal file.
    pub file: String,
    /// Its size in bytes, as found.
    pub bytes: u64,
    /// The good lines (kept).
    pub good_lines: usize,
    /// The first damaged line (1-based), if a line other than a torn last
    /// line is damaged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub damaged_line: Option<usize>,
    /// What is wrong with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub damage: Option<String>,
    /// The bytes after the last good line: what a repair cuts.
    pub cut_bytes: u64,
    /// The lines a repair cuts (or cut): `{line, text}` (the first 120 characters).
    pub cut_lines: Vec<CutLine>,
    /// Where the whole journal was copied before it was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup: Option<String>,
}

/// A journal line a repair cuts.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct CutLine {
    /// Its number (1-based).
    pub line: usize,
    /// Its first characters.
    pub text: String,
}

/// think_state_restore's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Restored {
    /// Always true: a missing archived run is UNKNOWN_RUN.
    pub restored: bool,
    /// The workflow id.
    pub workflow: String,
    /// The run id, live again.
    pub run_id: String,
    /// The archived copy it came from (now out of the archive).
    pub archive_id: String,
}

/// think_state_prune's answer: what was removed (or, with dry_run, would be).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Pruned {
    /// True when nothing was removed: the lists say what would be.
    pub dry_run: bool,
    /// The runs and archived copies removed.
    pub runs: Vec<PrunedRun>,
    /// The objects (pinned workflow and schema versions) no run uses any more, removed.
    pub objects: Vec<String>,
    /// Why objects were not collected, if they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One run or archived copy `state prune` removed.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct PrunedRun {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// An archived copy: which.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_id: Option<String>,
    /// done, failed, running or archived.
    #[schemars(with = "Option<String>")]
    pub status: Option<EntryStatus>,
    /// When it last changed (an archived copy: when it was archived).
    pub updated_at: Option<String>,
}

impl PrunedRun {
    pub(crate) fn of(entry: RunEntry) -> PrunedRun {
        PrunedRun {
            workflow: entry.workflow,
            run_id: entry.run_id,
            archive_id: entry.archive_id,
            status: entry.status,
            updated_at: entry.updated_at,
        }
    }
}

/// think_upgrade's answer: each run's upgrade.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct UpgradeReply {
    /// The workflow id.
    pub workflow: String,
    /// The version the runs move to (sha256 of the file as it is now).
    pub to: String,
    /// True when nothing was changed: the plans say what would be.
    pub dry_run: bool,
    /// Each run.
    pub runs: Vec<RunUpgrade>,
}

/// One run's upgrade.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RunUpgrade {
    /// The run id.
    pub run_id: String,
    /// The version it was at.
    pub from: String,
    /// The version it moves to.
    pub to: String,
    /// upgraded, would upgrade, unchanged (already there) or refused.
    pub status: String,
    /// Steps kept, added, removed, re-issued, now ready.
    pub plan: UpgradePlan,
    /// Why it cannot be upgraded (INCOMPATIBLE_UPGRADE, spans in the new file).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<UpgradeDiagnostic>,
}

/// Why an upgrade is refused, serialized as its stable code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalReason {
    /// `CALL_CHANGED`: a step that ran calls another tool in the new version.
    CallChanged,
    /// `RESULT_NO_LONGER_VALID`: an accepted result fails the new success schema.
    ResultNoLongerValid,
    /// `DEPENDS_ON_UNRUN_STEP`: a step that ran depends on one that had not finished.
    DependsOnUnrunStep,
    /// `ITEM_GONE`: a foreach item with a result is no longer expanded.
    ItemGone,
    /// `RUN_FINISHED`: the run is done or failed (and `force` is not given).
    RunFinished,
    /// `WAIT_REMOVED`: the run waits at a step the new version removes.
    WaitRemoved,
    /// `WAIT_CHANGED`: the run waits (or waited) at a step that the new
    /// version no longer waits at, or waits for something else or with an
    /// answer typed otherwise.
    WaitChanged,
    /// `USES_CHANGED`: a `uses:` step whose child run is running now uses
    /// another workflow (or none) in the new version.
    UsesChanged,
}

impl RefusalReason {
    /// The stable code: `CALL_CHANGED`, `RESULT_NO_LONGER_VALID`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::CallChanged => "CALL_CHANGED",
            RefusalReason::ResultNoLongerValid => "RESULT_NO_LONGER_VALID",
            RefusalReason::DependsOnUnrunStep => "DEPENDS_ON_UNRUN_STEP",
            RefusalReason::ItemGone => "ITEM_GONE",
            RefusalReason::RunFinished => "RUN_FINISHED",
            RefusalReason::WaitRemoved => "WAIT_REMOVED",
            RefusalReason::WaitChanged => "WAIT_CHANGED",
            RefusalReason::UsesChanged => "USES_CHANGED",
        }
    }
}

impl std::fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RefusalReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What an upgrade does to a run's steps (new step ids, sorted).
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct UpgradePlan {
    /// Steps whose results (or skips) carry over.
    pub kept: Vec<String>,
    /// Steps of the new version that are not in the old one.
    pub added: Vec<String>,
    /// Steps of the old version that are gone (their results are dropped).
    pub removed: Vec<String>,
    /// Steps that were issued and not answered: issued again, with their new instruction.
    pub reissued: Vec<String>,
    /// The steps ready after the upgrade.
    pub ready: Vec<String>,
    /// Old step id → new step id.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub renames: BTreeMap<String, String>,
}

/// One reason an upgrade is refused, as a diagnostic in the new file (the
/// shape of `check --format json`'s, plus `reason` and `step`).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct UpgradeDiagnostic {
    /// The workflow file.
    pub file: String,
    /// Always INCOMPATIBLE_UPGRADE.
    pub code: String,
    /// CALL_CHANGED, RESULT_NO_LONGER_VALID, DEPENDS_ON_UNRUN_STEP, ITEM_GONE, RUN_FINISHED,
    /// WAIT_REMOVED, WAIT_CHANGED or USES_CHANGED.
    #[schemars(with = "String")]
    pub reason: RefusalReason,
    /// Always error.
    pub severity: String,
    /// The step it is about (new id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// What is wrong.
    pub message: String,
    /// 1-based line of the start.
    pub line: usize,
    /// 1-based column of the start (characters).
    pub column: usize,
    /// 1-based line of the end.
    pub end_line: usize,
    /// 1-based column of the end.
    pub end_column: usize,
    /// How to go on.
    pub help: String,
}

/// think_test's reply: the test report of `savant-think test --format json`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TestReply {
    /// The test files read: {file, workflow, tests}.
    pub files: Value,
    /// Problems in the test files: {file, code, severity, message, line, column, help, …}.
    pub diagnostics: Value,
    /// Paths that could not be read: {path, message}.
    pub io_errors: Value,
    /// Each test: {file, name, line, verdict (passed | failed | error), mismatches [{path, expected, actual, message}], error {code, message, help, step_id}, outcome {status, ran, skipped, inputs, captures, …}}.
    pub tests: Value,
    /// {total, passed, failed, errors, ok, unmatched_filter?}: ok is false when the filter selected no test.
    pub summary: Value,
}
