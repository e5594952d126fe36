//! `upgrade --format human|concise|sarif|github`: the upgrade's plan for
//! people, and a refusal's reasons as `check` diagnostics (errors, spans in
//! the new file of the workflow whose step each is about: a child run's in
//! its own workflow's file) in the chosen report format. `--format json` (the default)
//! is the engine tool's reply, as for every engine command.

use savant_think::report::{self, FileReport, Format, HumanOptions};
use savant_think::runtime::Engine;
use savant_think::runtime::args::UpgradeRequest;
use savant_think::runtime::engine::UpgradeFailed;
use savant_think::runtime::reply_runs::UpgradeReply;
use std::io::Write;
use std::process::ExitCode;

/// Upgrades (or, with `dry_run`, checks) and prints in `format` (not JSON).
pub fn run(engine: &Engine, workflow: &str, req: &UpgradeRequest, format: Format, color: bool) -> ExitCode {
    let opts = HumanOptions { color, width: super::output::width() };
    let (out, code) = match engine.upgrade_report(workflow, req) {
        Ok(reply) => {
            let mut out = match format {
                Format::Human | Format::Concise => plan_text(&reply),
                _ => String::new(),
            };
            out.push_str(&report::render(format, &[], &opts));
            (out, ExitCode::SUCCESS)
        }
        Err(failed) => match *failed {
            UpgradeFailed { error, report: Some(files) } => {
                // Each refusal in the file of the workflow whose step it is about.
                let reports: Vec<FileReport> =
                    files.iter().map(|(source, diagnostics)| FileReport { source, diagnostics }).collect();
                let mut out = report::render(format, &reports, &opts);
                if matches!(format, Format::Human | Format::Concise) {
                    let message = error.message_text().unwrap_or_default();
                    out.push_str(&format!("{}: {message}\n", error.code));
                }
                (out, ExitCode::from(1))
            }
            UpgradeFailed { error, report: None } => {
                let text = serde_json::to_string_pretty(&error.to_json()).unwrap_or_default();
                (format!("{text}\n"), ExitCode::from(1))
            }
        },
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    code
}

/// One paragraph per run: its status and what the upgrade does to its steps.
fn plan_text(reply: &UpgradeReply) -> String {
    // The first 12 hex digits of `sha256:…`, as `git` shortens a commit.
    let short = |h: &str| {
        let hex = h.strip_prefix("sha256:").or_else(|| h.strip_prefix("sha256-")).unwrap_or(h);
        hex.chars().take(12).collect::<String>()
    };
    let mut out = String::new();
    if reply.runs.is_empty() {
        out.push_str(&format!("no unfinished run of `{}` to upgrade\n", reply.workflow));
    }
    for run in &reply.runs {
        out.push_str(&format!(
            "run `{}`: {} ({} → {})\n",
            run.run_id,
            run.status,
            short(&run.from),
            short(&run.to)
        ));
        let p = &run.plan;
        for (what, steps) in [
            ("kept", &p.kept),
            ("added", &p.added),
            ("removed", &p.removed),
            ("re-issued", &p.reissued),
            ("ready", &p.ready),
        ] {
            if !steps.is_empty() {
                out.push_str(&format!("  {what:<9} {}\n", steps.join(", ")));
            }
        }
        for (old, new) in &p.renames {
            out.push_str(&format!("  renamed   {old} → {new}\n"));
        }
    }
    if reply.dry_run && !reply.runs.is_empty() {
        out.push_str("dry run: nothing was changed\n");
    }
    out
}
