//! `upgrade`: move runs onto the workflow file as it is now, after a
//! static check (see `runtime::upgrade`). A run is upgraded under its lock
//! with one snapshot (an `upgraded` event ends its history), so a kill
//! leaves the old version or the new one; `--all` checks every run first
//! and changes nothing if one of them cannot be upgraded.

use super::*;
use crate::diagnostic::Diagnostic;
use crate::runtime::args::UpgradeRequest;
use crate::runtime::error_details::Conflict;
use crate::runtime::reply::{RunUpgrade, UpgradeDiagnostic, UpgradeReply};
use crate::runtime::upgrade::{UpgradeIssue, Upgraded};
use crate::source::SourceFile;
use std::collections::BTreeMap;

impl Engine {
    /// Upgrades one run (or every unfinished one) of `workflow` to the file
    /// as it is now. Any issue: `INCOMPATIBLE_UPGRADE` with the diagnostics
    /// and the plans, nothing changed.
    pub fn upgrade(&self, workflow: &str, req: &UpgradeRequest) -> EngineResult<UpgradeReply> {
        self.upgrade_or_refuse(workflow, req)?.map_err(|r| r.error)
    }

    /// [`Engine::upgrade`] for the CLI's report formats: a refusal comes
    /// with its diagnostics as `check` diagnostics (errors) in the new file.
    pub fn upgrade_report(
        &self,
        workflow: &str,
        req: &UpgradeRequest,
    ) -> Result<UpgradeReply, Box<UpgradeFailed>> {
        match self.upgrade_or_refuse(workflow, req) {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(refusal)) => {
                let report = Some(by_file(&refusal));
                Err(Box::new(UpgradeFailed { error: refusal.error, report }))
            }
            Err(error) => Err(Box::new(UpgradeFailed { error, report: None })),
        }
    }

    fn upgrade_or_refuse(
        &self,
        workflow: &str,
        req: &UpgradeRequest,
    ) -> EngineResult<Result<UpgradeReply, Refusal>> {
        let cw = self.workflow(workflow)?;
        let ids: Vec<String> = match &req.run_id {
            Some(id) => vec![id.clone()],
            None => {
                let keys = self.store.list(Some(&cw.wf.id)).map_err(store_error)?;
                keys.into_iter()
                    .filter(|k| {
                        self.list_entry(k).ok().flatten().and_then(|e| e.status)
                            == Some(EntryStatus::Run(RunStatus::Running))
                    })
                    .map(|k| k.run_id)
                    .collect()
            }
        };
        // Checked all first (each under its lock, released), then made.
        let (mut runs, mut sources) = (Vec::new(), Vec::new());
        let mut failed = false;
        for id in &ids {
            let (mut report, ok) = self.upgrade_one(&cw, id, req, true)?;
            failed |= !ok;
            failed |= !self.children_stay(&cw, id, &req.renames, &mut report)?;
            runs.push(report);
            sources.push(cw.clone());
            let (children, ok) = self.upgrade_children(&cw.wf.id, id, req, true, 1)?;
            failed |= !ok;
            for (child, child_cw) in children {
                runs.push(child);
                sources.push(child_cw);
            }
        }
        if failed {
            let message = format!(
                "{} of {} run(s) cannot be upgraded; nothing was changed",
                runs.iter().filter(|r| !r.diagnostics.is_empty()).count(),
                runs.len()
            );
            let error = EngineError::incompatible_upgrade(&cw.wf.id, message, runs.clone());
            return Ok(Err(Refusal { runs, sources, error }));
        }
        if !req.dry_run {
            runs.clear();
            for id in &ids {
                let (report, ok) = self.upgrade_one(&cw, id, req, false)?;
                if !ok {
                    let message =
                        "the run changed while it was upgraded; nothing was changed for it".to_owned();
                    let runs = vec![report];
                    let error = EngineError::incompatible_upgrade(&cw.wf.id, message, runs.clone());
                    return Ok(Err(Refusal { runs, sources: vec![cw], error }));
                }
                runs.push(report);
                let (children, _) = self.upgrade_children(&cw.wf.id, id, req, false, 1)?;
                runs.extend(children.into_iter().map(|(child, _)| child));
            }
        }
        Ok(Ok(UpgradeReply { workflow: cw.wf.id.clone(), to: cw.hash.clone(), dry_run: req.dry_run, runs }))
    }

    /// `check --runs` and the language server: for each unfinished run of
    /// `workflow` that the file as it is now could not be upgraded to, an
    /// `INCOMPATIBLE_UPGRADE` warning at its place in the file, naming the
    /// run. Nothing changes; a workflow that does not compile, or whose
    /// runs cannot be read, has none.
    pub fn stranded_runs(&self, workflow: &str) -> Vec<Diagnostic> {
        self.runs_against(workflow).diagnostics
    }

    /// The runs in flight of `workflow` against its file as it is now: the
    /// refusals of those that cannot take it ([`Engine::stranded_runs`]),
    /// and how many can (at another version, no refusal).
    pub fn runs_against(&self, workflow: &str) -> RunsAgainst {
        let mut out = RunsAgainst::default();
        let Ok(cw) = self.workflow(workflow) else { return out };
        let Ok(keys) = self.store.list(Some(&cw.wf.id)) else { return out };
        let request = UpgradeRequest { dry_run: true, ..UpgradeRequest::default() };
        for key in keys {
            if self.list_entry(&key).ok().flatten().and_then(|e| e.status)
                != Some(EntryStatus::Run(RunStatus::Running))
            {
                continue;
            }
            let Ok((mut report, mut ok)) = self.upgrade_one(&cw, &key.run_id, &request, true) else {
                continue;
            };
            ok &= self.children_stay(&cw, &key.run_id, &[], &mut report).unwrap_or(true);
            out.in_flight += 1;
            if ok {
                // At another version, it would move; at this one, nothing to do.
                out.upgradable += usize::from(report.from != report.to);
                continue;
            }
            out.diagnostics
                .extend(report.diagnostics.iter().map(|d| as_diagnostic(&cw.source, &key.run_id, d)));
        }
        out
    }

    /// The children follow their parent: each child run in flight below
    /// run `run_id` (a `uses:` unit not finished, at any depth) is checked
    /// (and unless `check_only`, upgraded) to its workflow as it is now,
    /// with the parent — one that cannot be refuses the whole upgrade,
    /// its report naming the child run. Finished children keep the version
    /// that made their result. Each report comes with the workflow it is
    /// against (its diagnostics are in that file).
    fn upgrade_children(
        &self,
        workflow: &str,
        run_id: &str,
        req: &UpgradeRequest,
        check_only: bool,
        depth: u32,
    ) -> Result<(Vec<ChildUpgrade>, bool), EngineError> {
        let (mut out, mut ok) = (Vec::new(), true);
        if depth > super::children::MAX_CHILD_DEPTH {
            return Ok((out, ok));
        }
        let units: Vec<(String, String)> = {
            let (_key, _lock, cached) = self.open_run(workflow, run_id)?;
            let m = &cached.machine;
            let open =
                super::children::uses_work(m).into_iter().filter(|(w, _)| !m.status_of(*w).is_finished());
            open.map(|(w, uses)| (uses.to_owned(), Self::child_run_id(m, w))).collect()
        };
        for (uses, child) in units {
            let running = self
                .open_run(&uses, &child)
                .is_ok_and(|(_, _, c)| c.machine.state.status == RunStatus::Running);
            let Ok(cw) = self.workflow(&uses) else { continue };
            if !running {
                continue;
            }
            let child_req =
                UpgradeRequest { run_id: Some(child.clone()), dry_run: req.dry_run, ..Default::default() };
            let (mut report, fine) = self.upgrade_one(&cw, &child, &child_req, check_only)?;
            ok &= fine;
            if check_only {
                ok &= self.children_stay(&cw, &child, &[], &mut report)?;
            }
            out.push((report, cw));
            let (below, fine) = self.upgrade_children(&uses, &child, req, check_only, depth + 1)?;
            ok &= fine;
            out.extend(below);
        }
        Ok((out, ok))
    }

    /// `USES_CHANGED`: each `uses:` unit of run `run_id` (at the version it
    /// is at) whose child run is running, and whose step (renamed by
    /// `renames`) the file as it is now (`cw`) points at another workflow
    /// or at none — the child would be left behind, running. Each is a
    /// diagnostic in `report` (then refused); whether there is none.
    fn children_stay(
        &self,
        cw: &CompiledWorkflow,
        run_id: &str,
        renames: &[String],
        report: &mut RunUpgrade,
    ) -> Result<bool, EngineError> {
        let renames: BTreeMap<&str, &str> = renames.iter().filter_map(|p| rename_pair(p).ok()).collect();
        let units: Vec<(String, String, String)> = {
            let (_key, _lock, cached) = self.open_run(&cw.wf.id, run_id)?;
            let m = &cached.machine;
            let open =
                super::children::uses_work(m).into_iter().filter(|(w, _)| !m.status_of(*w).is_finished());
            open.map(|(w, uses)| {
                (m.step(w.step).id.value.to_string(), uses.to_owned(), Self::child_run_id(m, w))
            })
            .collect()
        };
        let mut stay = true;
        for (step, uses, child) in units {
            let new_id = renames.get(step.as_str()).copied().unwrap_or(&step);
            let Some(now) = cw.wf.steps.iter().find(|s| s.id.value == new_id) else { continue };
            if now.uses.as_ref().is_some_and(|u| u.value == uses) {
                continue;
            }
            let running = self
                .open_run(&uses, &child)
                .is_ok_and(|(_, _, c)| c.machine.state.status == RunStatus::Running);
            if !running {
                continue;
            }
            let what = match &now.uses {
                Some(u) => format!("uses `{}`", u.value),
                None => "no longer uses a workflow".to_owned(),
            };
            let issue = UpgradeIssue {
                reason: crate::runtime::upgrade::RefusalReason::UsesChanged,
                step: new_id.to_owned(),
                span: now.uses.as_ref().map_or(now.id.span, |u| u.span),
                message: format!(
                    "`{step}` runs `{uses}` as child run `{child}`, which is still running; the new version {what}"
                ),
                help: format!(
                    "keep `uses: {uses}` until child run `{child}` has finished, then upgrade; or fork the run from `{new_id}` to run it on the new workflow"
                ),
            };
            report.diagnostics.push(diagnostic(cw, &issue));
            report.status = "refused".into();
            stay = false;
        }
        Ok(stay)
    }

    /// Checks (and unless `check_only`, makes) the upgrade of one run.
    fn upgrade_one(
        &self,
        cw: &Arc<CompiledWorkflow>,
        run_id: &str,
        req: &UpgradeRequest,
        check_only: bool,
    ) -> Result<(RunUpgrade, bool), EngineError> {
        let (key, _lock, mut cached) = self.open_run(&cw.wf.id, run_id)?;
        let out = self.upgrade_locked(cw, &key, &mut cached, req, check_only);
        self.put(&key, cached);
        out
    }

    fn upgrade_locked(
        &self,
        cw: &Arc<CompiledWorkflow>,
        key: &RunKey,
        cached: &mut Cached,
        req: &UpgradeRequest,
        check_only: bool,
    ) -> Result<(RunUpgrade, bool), EngineError> {
        let old = &cached.machine;
        expect_version(old, req.expected_version)?;
        // Well-formed whether or not this run needs them (with --all, runs
        // at other versions may).
        for pair in &req.renames {
            rename_pair(pair)?;
        }
        let from = old.state.workflow_hash.clone();
        if from == cw.hash {
            // Already there: by an upgrade that just won a race, or from the start.
            if let Some(Event { kind: EventKind::Upgraded { to, .. }, version, .. }) =
                old.state.history.last()
                && *to == cw.hash
                && req.expected_version.is_none_or(|v| v < *version)
                && !check_only
            {
                return Err(EngineError::with(
                    ErrorCode::StateConflict,
                    Conflict {
                        message: format!(
                            "run `{}` was already upgraded to this version (at version {version})",
                            key.run_id
                        ),
                        version: Some(*version),
                        ..Conflict::default()
                    },
                ));
            }
            let report = RunUpgrade {
                run_id: key.run_id.clone(),
                from: from.clone(),
                to: from,
                status: "unchanged".into(),
                plan: Default::default(),
                diagnostics: Vec::new(),
            };
            return Ok((report, true));
        }
        let renames = self.renames(&old.cw, cw, &req.renames)?;
        let mut valid = |i: usize, result: &Value| match &cw.wf.steps[i].success_schema {
            Some(schema) => self.validate_result(schema, result).is_ok_and(|e| e.is_empty()),
            None => true,
        };
        let Upgraded { mut machine, plan, issues } =
            Machine::upgrade(old, cw.clone(), &renames, req.force, &now(), &mut valid);
        let diagnostics: Vec<UpgradeDiagnostic> = issues.iter().map(|i| diagnostic(cw, i)).collect();
        let ok = diagnostics.is_empty();
        let status = match (ok, req.dry_run || check_only) {
            (false, _) => "refused",
            (true, true) => "would upgrade",
            (true, false) => "upgraded",
        };
        let report = RunUpgrade {
            run_id: key.run_id.clone(),
            from,
            to: cw.hash.clone(),
            status: status.into(),
            plan,
            diagnostics,
        };
        if !ok || check_only || req.dry_run {
            return Ok((report, ok));
        }
        machine.state.schemas = self.pin(cw)?;
        machine.state.updated_at = now();
        self.intend_timer(key, super::timers::deadline_of(&machine), !cached.shared)?;
        let snapshot = serde_json::to_value(&machine.state).unwrap_or(Value::Null);
        cached.stamp = self.store.write_snapshot(key, &snapshot).map_err(store_error)?;
        cached.machine = machine;
        cached.journal_len = 0;
        Ok((report, true))
    }

    /// `OLD=NEW` pairs, checked: OLD a step of the run's version, NEW one of
    /// the new version (`UNKNOWN_STEP` with a did-you-mean otherwise).
    fn renames(
        &self,
        old: &CompiledWorkflow,
        new: &CompiledWorkflow,
        pairs: &[String],
    ) -> Result<BTreeMap<String, String>, EngineError> {
        let mut out = BTreeMap::new();
        for pair in pairs {
            let (a, b) = rename_pair(pair)?;
            let steps = |cw: &CompiledWorkflow| {
                cw.wf.steps.iter().map(|s| s.id.value.to_string()).collect::<Vec<_>>()
            };
            let (olds, news) = (steps(old), steps(new));
            if !olds.iter().any(|s| s == a) {
                let message = format!("rename `{pair}`: no step `{a}` in the version the run is at");
                return Err(EngineError::unknown_step(a, message, olds.iter().map(String::as_str), None));
            }
            if !news.iter().any(|s| s == b) {
                let message = format!("rename `{pair}`: no step `{b}` in the workflow file as it is now");
                return Err(EngineError::unknown_step(b, message, news.iter().map(String::as_str), None));
            }
            out.insert(a.to_owned(), b.to_owned());
        }
        Ok(out)
    }
}

/// An `OLD=NEW` rename's two step ids, trimmed.
fn rename_pair(pair: &str) -> Result<(&str, &str), EngineError> {
    match pair.split_once('=') {
        Some((a, b)) => Ok((a.trim(), b.trim())),
        None => Err(EngineError::message_help(
            ErrorCode::InvalidInput,
            format!("rename `{pair}` is not OLD=NEW"),
            Some("write --rename old_step=new_step".into()),
        )),
    }
}

/// An issue as a diagnostic in the new file (`check`'s JSON shape).
fn diagnostic(cw: &CompiledWorkflow, issue: &UpgradeIssue) -> UpgradeDiagnostic {
    let (start, end) =
        (cw.source.line_col(issue.span.start as usize), cw.source.line_col(issue.span.end as usize));
    UpgradeDiagnostic {
        file: cw.source.path.clone(),
        code: "INCOMPATIBLE_UPGRADE".into(),
        reason: issue.reason,
        severity: "error".into(),
        step: (!issue.step.is_empty()).then(|| issue.step.clone()),
        message: issue.message.clone(),
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
        help: issue.help.clone(),
    }
}

/// A child run's report, with the workflow it is against.
type ChildUpgrade = (RunUpgrade, Arc<CompiledWorkflow>);

/// Why [`Engine::upgrade_report`] failed: the error and, for a refusal,
/// its reasons as diagnostics in the new files.
#[derive(Debug)]
pub struct UpgradeFailed {
    /// The engine's error (`INCOMPATIBLE_UPGRADE` for a refusal).
    pub error: EngineError,
    /// For a refusal, each file a refused step is in (the workflow's own
    /// first, then those of its child runs' workflows, at any depth) and
    /// the diagnostics in it.
    pub report: Option<Vec<(SourceFile, Vec<Diagnostic>)>>,
}

/// A refused upgrade: each run's report, the workflow (new version) each
/// is against, and the error.
struct Refusal {
    runs: Vec<RunUpgrade>,
    sources: Vec<Arc<CompiledWorkflow>>,
    error: EngineError,
}

/// A refusal's diagnostics as errors, grouped by the file of the workflow
/// whose step each is about: a child's or grandchild's refusal points at
/// its own workflow's file, not the parent's.
fn by_file(refusal: &Refusal) -> Vec<(SourceFile, Vec<Diagnostic>)> {
    let mut files: Vec<(SourceFile, Vec<Diagnostic>)> = Vec::new();
    for (run, cw) in refusal.runs.iter().zip(&refusal.sources) {
        let at = match files.iter().position(|(source, _)| source.path == cw.source.path) {
            Some(at) => at,
            None => {
                files.push((cw.source.clone(), Vec::new()));
                files.len() - 1
            }
        };
        let diagnostics = run.diagnostics.iter().map(|d| as_diagnostic(&cw.source, &run.run_id, d));
        files[at].1.extend(diagnostics.map(|mut d| {
            d.severity = crate::diagnostic::Severity::Error;
            d
        }));
    }
    for (_, diagnostics) in &mut files {
        crate::check::sort(diagnostics);
    }
    files.retain(|(_, diagnostics)| !diagnostics.is_empty());
    files
}

/// One reason a run cannot be upgraded, as a `check` diagnostic (a
/// warning: `check --runs` reports it so; `upgrade` makes it an error)
/// naming the run.
fn as_diagnostic(source: &SourceFile, run_id: &str, d: &UpgradeDiagnostic) -> Diagnostic {
    use crate::source::{LineCol, Span};
    let at = |line, column| source.offset_of(LineCol { line, column });
    let (start, end) = (at(d.line, d.column), at(d.end_line, d.end_column));
    let message = format!("run `{run_id}` cannot be upgraded to this file: {}", d.message);
    Diagnostic::new(crate::diagnostic::Code::IncompatibleUpgrade, Span::new(start, end.max(start)), message)
        .with_help(d.help.clone())
}

/// The runs in flight of a workflow against its file ([`Engine::runs_against`]).
#[derive(Debug, Default)]
pub struct RunsAgainst {
    /// Why each run that cannot take the file cannot (INCOMPATIBLE_UPGRADE).
    pub diagnostics: Vec<Diagnostic>,
    /// Runs in flight (running).
    pub in_flight: usize,
    /// Of those, the ones at another version that can be upgraded to the file.
    pub upgradable: usize,
}
