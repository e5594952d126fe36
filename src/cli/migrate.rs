//! `savant-think migrate`: its arguments, output and exit status. `main.rs`
//! only parses them and calls [`MigrateArgs::run`]; the work is
//! `savant_think::migrate::files::run`.

use savant_think::Limits;
use savant_think::migrate::files::{self, Mode, RunResult};
use savant_think::migrate::{Outcome, report};
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `savant-think migrate` (its help text is below).
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct MigrateArgs {
    /// Files or directories (searched recursively for *.yaml and *.yml).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Rewrite the files that need migration in place.
    #[arg(long, conflicts_with_all = ["out", "check"])]
    pub write: bool,
    /// Write every file under DIR, keeping paths relative to each directory
    /// argument: migrated files rewritten, the others copied unchanged.
    #[arg(long, value_name = "DIR", conflicts_with = "check")]
    pub out: Option<PathBuf>,
    /// Write nothing; exit 1 if any file needs migration (or is not a
    /// readable workflow). For CI.
    #[arg(long)]
    pub check: bool,
    /// Summary format: `human`, or `json` ({version, files:[{file, status,
    /// dialect, written, changes, literals, errors, text?}], io_errors,
    /// summary}); in a dry run each migrated file's `text` is included.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Refuse files larger than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
    pub max_file_size: usize,
}

const AFTER_HELP: &str = "\
Without --write or --out nothing is written: the migrated YAML goes to stdout
(a dry run: one file is printed even if it needs nothing or cannot be
migrated; of several files,
each migrated one starts with `--- # PATH`) and the summary to stderr. Files that need no migration are never rewritten, so migrating a
migrated file changes nothing. Migrated files keep their key order but lose
their comments. Files that are not valid YAML are reported and left unchanged
(--out copies them, so `check` on the output reports them too).

Exit status: 0 done; 1 with --check when a file needs migration or cannot be
read as a workflow; 2 on a usage or I/O error (an unreadable input, an output
that cannot be written, two inputs for one output, an --out that would
overwrite an input).

Examples:
  savant-think migrate old/review.yaml            # print the migrated YAML
  savant-think migrate legacy/ --out migrated/    # write every file under migrated/
  savant-think migrate workflows/ --write         # rewrite in place
  savant-think migrate workflows/ --check         # CI: exit 1 if anything needs migrating";

/// The summary's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
}

impl MigrateArgs {
    /// Runs the command on the process's stdout and stderr; returns the exit status.
    pub fn run(&self) -> u8 {
        let mut out = std::io::stdout().lock();
        let mut err = std::io::stderr().lock();
        self.run_with(&mut out, &mut err)
    }

    /// Runs the command, writing to `out` and `err`.
    pub fn run_with(&self, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
        let mode = match (&self.out, self.write) {
            (Some(dir), _) => Mode::Out(dir.clone()),
            (None, true) => Mode::Write,
            (None, false) => Mode::DryRun,
        };
        let limits = Limits { max_file_bytes: self.max_file_size, ..Limits::default() };
        let result = files::run(&self.paths, &mode, &limits);
        let dry_run = mode == Mode::DryRun && !self.check;
        // A closed pipe is not worth a panic: write errors are ignored.
        match self.format {
            Format::Json => {
                let v = report::json(&result, dry_run);
                let _ = writeln!(out, "{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            }
            Format::Human if dry_run => {
                print_texts(&result, out);
                let _ = err.write_all(report::human(&result).as_bytes());
            }
            Format::Human => {
                let _ = out.write_all(report::human(&result).as_bytes());
            }
        }
        if result.files.is_empty() && result.io_errors.is_empty() {
            let _ = writeln!(err, "warning: no *.yaml or *.yml files found");
        }
        let counts = report::Counts::of(&result);
        if !result.io_errors.is_empty() {
            2
        } else if self.check && counts.migrated + counts.failed > 0 {
            1
        } else {
            0
        }
    }
}

/// The texts of a dry run: for one file its text (migrated, or as it is
/// when it needs nothing, so `migrate a.yaml > b.yaml` always works); for
/// several, each migrated one as a YAML document headed `--- # PATH`.
fn print_texts(result: &RunResult, out: &mut dyn Write) {
    let several = result.files.len() > 1;
    // A lone file that needs nothing, or cannot be migrated (its errors are
    // in the summary), is printed as it is: `> new.yaml` never makes an
    // empty file.
    if let [f] = result.files.as_slice()
        && let Outcome::Current { .. } | Outcome::Failed { .. } = f.migration.outcome
    {
        let _ = out.write_all(f.source.text.as_bytes());
        return;
    }
    for f in &result.files {
        if let Outcome::Migrated { text, .. } = &f.migration.outcome {
            if several {
                let _ = writeln!(out, "--- # {}", f.path.display());
            }
            let _ = out.write_all(text.as_bytes());
        }
    }
}
