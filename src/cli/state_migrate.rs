//! `savant-think state migrate`: applies the PostgreSQL schema migrations
//! the state database lacks, as an explicit step an administrator runs
//! with a role that may create tables, so the replicas can run with DML
//! grants only (docs/deploy.md, Migrations and grants).

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct MigrateArgs {
    /// The database (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`). Default: $SAVANT_STATE_URL, else `[state] url` of savant-think.toml.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// human (a sentence; the default) or json (`{database, from, to, applied}`).
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Project root, for `[state] url` (default: discovered, see `savant-think root`).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// How `state migrate` prints what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A sentence.
    Human,
    /// `{database, from, to, applied}`.
    Json,
}

/// Migrates, then says what was done: exit 0; a database that cannot be
/// used or migrated: the error's code, message and hint, exit 1; no URL
/// anywhere: exit 2.
pub fn run(args: MigrateArgs) -> ExitCode {
    let (url, options) = match target(&args) {
        Ok(t) => t,
        Err(m) => return crate::fail(m),
    };
    match migrate(&url, &options) {
        Ok((json, sentence)) => {
            match args.format {
                Format::Json => println!("{json:#}"),
                Format::Human => println!("{sentence}"),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {}\n  hint: {}", e.code, e.message, e.hint);
            ExitCode::FAILURE
        }
    }
}

/// The URL (`--url`, else the environment, else the project's
/// `[state] url`) and the project's store settings (timeouts).
fn target(args: &MigrateArgs) -> Result<(String, savant_think::state::StoreOptions), String> {
    let root = super::env::root(args.root.as_deref())?;
    let config = savant_think::config::EngineConfig::load_with(&root, &super::env::overrides())
        .map_err(|e| format!("{}: {}", e.path.display(), e.message))?;
    let url = args.url.clone().filter(|u| !u.trim().is_empty()).or(config.state.url.clone());
    match url {
        Some(url) => Ok((url, config.state.store_options())),
        None => Err(format!(
            "no PostgreSQL database to migrate: give --url postgres://…, or set {} or [state] url \
             (the file store needs no migration)",
            savant_think::state::URL_ENV
        )),
    }
}

/// What was done, as JSON and as a sentence.
#[cfg(feature = "postgres")]
fn migrate(
    url: &str,
    options: &savant_think::state::StoreOptions,
) -> Result<(serde_json::Value, String), savant_think::state::OpenError> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(savant_think::state::OpenError::new(
            "STATE_URL_INVALID",
            "the state URL is not a postgres:// URL",
            "write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE (see docs/deploy.md)",
        ));
    }
    let done = savant_think::state::pg::PgStore::migrate(url, options)?;
    let versions: Vec<String> = done.applied.iter().map(i32::to_string).collect();
    let sentence = match done.applied.as_slice() {
        [] => format!("{}: schema version {}, nothing to do", done.database, done.to),
        _ => format!(
            "{}: migrated from schema version {} to {} (applied {})",
            done.database,
            done.from,
            done.to,
            versions.join(", ")
        ),
    };
    Ok((serde_json::to_value(&done).unwrap_or_default(), sentence))
}

#[cfg(not(feature = "postgres"))]
fn migrate(
    _: &str,
    _: &savant_think::state::StoreOptions,
) -> Result<(serde_json::Value, String), savant_think::state::OpenError> {
    Err(savant_think::state::OpenError::new(
        "STATE_URL_INVALID",
        "this build of savant-think has no PostgreSQL support",
        "use a build with the `postgres` feature",
    ))
}
