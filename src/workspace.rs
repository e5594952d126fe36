//! The I/O edge of checking: finding workflow files, reading them safely,
//! loading the schema directory. Everything below this works on text.

use crate::check::suppress::CheckSettings;
use crate::check::{self, Config, ToolManifest};
use crate::diagnostic::{Code, Diagnostic};
pub use crate::source::Limits;
use crate::source::{SourceFile, Span};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// An I/O problem that stops one path from being checked (exit code 2).
#[derive(Debug)]
pub struct IoError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for IoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// The project root for a command run from the working directory:
/// `explicit` (`--root`), else `savant_path` (the value of `SAVANT_PATH`,
/// which the caller reads: the library reads no environment variable), else
/// discovered upwards from `start` (or the working directory) by
/// [`crate::root::discover`]. An explicit root that is not a directory is an
/// error (a usage error for the CLI).
pub fn root_from(
    explicit: Option<&Path>,
    savant_path: Option<&OsStr>,
    start: Option<&Path>,
) -> Result<crate::root::ProjectRoot, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    crate::root::discover(explicit, savant_path, start, &cwd)
}

/// Whether `s` can name a workflow (`workflows/<s>.yaml`, `workflow://<s>`,
/// `id:`): 1 to 128 ASCII letters, digits, `_`, `.` and `-`, starting with
/// a letter or digit. Adapters ask here; the lowerer holds the rule.
pub fn valid_workflow_id(s: &str) -> bool {
    crate::ir::lower::valid_workflow_id(s)
}

fn is_workflow_file(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

/// Expands the given paths: files as given, directories recursively
/// (`*.yaml`, `*.yml`; hidden entries skipped), sorted within each directory.
pub fn collect_files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<IoError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    // Each directory is walked once, by identity: symlinks that loop back
    // (`a/self -> ..`) would otherwise multiply the walk without end.
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        match fs::metadata(p) {
            Ok(m) if m.is_dir() => walk_dir(p, &mut files, &mut errors, &mut seen, 0),
            Ok(_) => files.push(p.clone()),
            Err(e) => errors.push(IoError { path: p.clone(), message: describe(&e) }),
        }
    }
    (files, errors)
}

/// A directory's identity (device and inode; the canonical path elsewhere).
fn dir_identity(meta: &fs::Metadata, path: &Path) -> (u64, u64, PathBuf) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        (meta.dev(), meta.ino(), PathBuf::new())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0, crate::fsx::canonical(path).unwrap_or_else(|_| path.to_path_buf()))
    }
}

fn walk_dir(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    errors: &mut Vec<IoError>,
    seen: &mut std::collections::HashSet<(u64, u64, PathBuf)>,
    depth: usize,
) {
    if depth > 64 {
        errors.push(IoError {
            path: dir.to_path_buf(),
            message: "directories nested too deeply (limit 64)".into(),
        });
        return;
    }
    if let Ok(meta) = fs::metadata(dir)
        && !seen.insert(dir_identity(&meta, dir))
    {
        return;
    }
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push(IoError { path: dir.to_path_buf(), message: describe(&e) });
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    paths.sort();
    for p in paths {
        match fs::metadata(&p) {
            Ok(m) if m.is_dir() => walk_dir(&p, files, errors, seen, depth + 1),
            Ok(_) if is_workflow_file(&p) => files.push(p),
            Ok(_) => {}
            Err(e) if is_workflow_file(&p) => errors.push(IoError { path: p, message: describe(&e) }),
            Err(_) => {}
        }
    }
}

fn describe(e: &std::io::Error) -> String {
    // Our own errors (not a regular file, outside the root) say it best.
    if e.get_ref().is_some() {
        return e.to_string();
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Reads a file as a [`SourceFile`], refusing oversized files before reading
/// them and reporting bytes that are not UTF-8 as a diagnostic.
pub fn read_source(path: &Path, limits: &Limits) -> Result<(SourceFile, Vec<Diagnostic>), IoError> {
    let bytes = read_workflow_bytes(path, limits)
        .map_err(|e| IoError { path: path.to_path_buf(), message: describe(&e) })?;
    Ok(decode_source(path.to_string_lossy().into_owned(), bytes, limits))
}

/// A workflow file's bytes, as `check` and the engine read them: a regular
/// file (not blocking on a FIFO named `*.yaml`; a directory or device is
/// refused), at most one byte past the size cap (enough to know the file is
/// too large; [`decode_source`] reports it).
pub fn read_workflow_bytes(path: &Path, limits: &Limits) -> std::io::Result<Vec<u8>> {
    let file = crate::fsx::open_regular(path)?;
    // Spans are `u32`, so the cap never exceeds `Limits::MAX_SPANNED_BYTES`,
    // whatever `--max-file-size` says.
    let cap = limits.file_cap();
    // Sized to the file: a buffer grown by doubling holds up to twice the
    // text, and `check` keeps a file's text until it reports when the file
    // has diagnostics (with `--fix`, `--diff` or `--runs`, every file's).
    let size = file.metadata().map_or(0, |m| m.len()).min(cap as u64 + 1);
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take((cap as u64).saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A file's bytes as a [`SourceFile`], with `YAML_LIMIT` past the size cap
/// and `YAML_SYNTAX` at the first byte that is not UTF-8 (as `check` and the
/// engine both report them). For files, stdin and editor buffers alike.
pub fn decode_source(display: String, bytes: Vec<u8>, limits: &Limits) -> (SourceFile, Vec<Diagnostic>) {
    let cap = limits.file_cap();
    if bytes.len() > cap {
        let help = if cap < limits.max_file_bytes {
            format!("split the workflow: files over {cap} bytes cannot be checked")
        } else {
            "split the workflow, or raise the limit with `--max-file-size BYTES`".to_owned()
        };
        let d = Diagnostic::new(
            Code::YamlLimit,
            Span::point(0),
            format!("the file is larger than the {cap} byte limit"),
        )
        .with_help(help);
        return (SourceFile::new(display, ""), vec![d]);
    }
    match String::from_utf8(bytes) {
        Ok(text) => (SourceFile::new(display, text), Vec::new()),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let d = Diagnostic::new(
                Code::YamlSyntax,
                Span::new(at, at + '\u{FFFD}'.len_utf8()),
                "the file is not valid UTF-8",
            )
            .with_help("save the file as UTF-8");
            (SourceFile::new(display, text), vec![d])
        }
    }
}

/// Checks one file end to end.
pub fn check_file(path: &Path, config: &Config) -> Result<(SourceFile, Vec<Diagnostic>), IoError> {
    let (src, read_diags) = read_source(path, &config.limits)?;
    Ok(check_decoded(src, read_diags, config))
}

/// Checks each of `paths` with [`check_file`], on up to one thread per
/// core, and returns the results in the order of `paths`, each passed
/// through `then` on the thread that checked it (`check` suppresses there
/// and lets go of a clean file's text at once, so 500 files' texts are not
/// all held until the report). A file's check reads only that file and
/// `config`, so how the files are shared out changes the time and nothing
/// else.
pub fn check_files<R: Send>(
    paths: &[PathBuf],
    config: &Config,
    then: impl Fn(Result<(SourceFile, Vec<Diagnostic>), IoError>) -> R + Sync,
) -> Vec<R> {
    crate::parallel::map_in_order(paths, crate::parallel::cores(), |p| then(check_file(p, config)))
}

/// Checks a decoded source: the decoding diagnostics if any, else the checker's.
pub fn check_decoded(
    src: SourceFile,
    read_diags: Vec<Diagnostic>,
    config: &Config,
) -> (SourceFile, Vec<Diagnostic>) {
    if !read_diags.is_empty() {
        return (src, read_diags);
    }
    // A file of the project's table is checked once, as a callee or itself.
    let known = config.workflows.as_deref().and_then(|t| t.checked_file(&src, config)).map(<[_]>::to_vec);
    let diags = known.unwrap_or_else(|| check::check_source(&src, config));
    (src, diags)
}

/// Loads every `*.json` in a schema directory: name (file stem) → schema, or
/// why it cannot be used. A missing directory is an empty set.
/// The largest schema file read, in bytes.
pub const MAX_SCHEMA_BYTES: u64 = 8 * 1024 * 1024;

pub fn load_schemas(dir: &Path) -> BTreeMap<String, Result<Value, String>> {
    let mut out = BTreeMap::new();
    let Ok(entries) = fs::read_dir(dir) else { return out };
    for e in entries.filter_map(|e| e.ok()) {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) != Some("json") {
            continue;
        }
        let Some(name) = p.file_stem().and_then(|s| s.to_str()) else { continue };
        // Inside the project (the schema directory's parent), a regular file, capped.
        let project = dir.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let value = crate::fsx::confine_file(project, p.strip_prefix(project).unwrap_or(&p))
            .map_err(|e| e.reason())
            .and_then(|real| crate::fsx::read_capped(&real, MAX_SCHEMA_BYTES).map_err(|e| describe(&e)))
            .map_err(|why| format!("cannot read {}: {why}", p.display()))
            .and_then(|bytes| {
                serde_json::from_slice(&bytes).map_err(|e| format!("{} is not valid JSON: {e}", p.display()))
            })
            .and_then(|v: Value| {
                if v.is_object() || v.is_boolean() {
                    Ok(v)
                } else {
                    Err(format!("{} is not a JSON Schema (an object)", p.display()))
                }
            });
        out.insert(name.to_owned(), value);
    }
    out
}

/// Reads `JSON`, `@FILE` or `-` (stdin) into a JSON value.
pub fn json_arg(text: &str, what: &str) -> Result<Value, String> {
    let too_large = |from: &str| {
        format!(
            "PAYLOAD_TOO_LARGE: {what} from {from} is larger than {MAX_JSON_ARG_BYTES} bytes (nothing was read past that)"
        )
    };
    let bytes = if text == "-" {
        let mut b = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::io::stdin(), MAX_JSON_ARG_BYTES + 1),
            &mut b,
        )
        .map_err(|e| format!("cannot read {what} from stdin: {e}"))?;
        if b.len() as u64 > MAX_JSON_ARG_BYTES {
            return Err(too_large("stdin"));
        }
        b
    } else if let Some(path) = text.strip_prefix('@') {
        match crate::fsx::read_capped(Path::new(path), MAX_JSON_ARG_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData && e.to_string().contains("limit") => {
                return Err(too_large(path));
            }
            Err(e) => return Err(format!("cannot read {what} from {path}: {e}")),
        }
    } else {
        text.as_bytes().to_vec()
    };
    crate::lean_json::from_slice(&bytes).map_err(|e| match e {
        crate::lean_json::Refused::Json(e) => format!("{what} is not valid JSON: {e}"),
        crate::lean_json::Refused::TooDense(e) => format!("PAYLOAD_TOO_LARGE: {what} was not read: {e}"),
    })
}

/// The largest JSON a command-line argument may give through `@FILE` or
/// `-` (stdin): checked before anything is parsed.
pub const MAX_JSON_ARG_BYTES: u64 = 16 * 1024 * 1024;

/// Reads and parses a tool manifest (`check --tools FILE`): a regular file
/// under [`ToolManifest::MAX_BYTES`] (a FIFO or `/dev/zero` is an error, not
/// a hang).
pub fn load_manifest(path: &Path) -> Result<ToolManifest, String> {
    let text = crate::fsx::read_capped(path, ToolManifest::MAX_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(|_| std::io::Error::other("not valid UTF-8")))
        .map_err(|e| format!("cannot read tool manifest {}: {e}", path.display()))?;
    ToolManifest::parse(&text).map_err(|e| format!("tool manifest {}: {e}", path.display()))
}

/// Reads `tools.lock.json` at `root` when there is one: its tools as the
/// checker's table, and the file with its `INVALID_TOOL_LOCK` diagnostics
/// (what is broken is left out of the table; a file that cannot be read
/// is one diagnostic and an empty table).
pub fn load_lock(root: &Path) -> Option<(crate::check::lock::LockTable, SourceFile, Vec<Diagnostic>)> {
    use crate::check::lock::{FILE_NAME, ToolLock};
    let path = root.join(FILE_NAME);
    let bytes = match crate::fsx::read_capped(&path, ToolManifest::MAX_BYTES) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        other => other,
    };
    let shown = path.display().to_string();
    let broken = |why: String| {
        let d = Diagnostic::new(Code::InvalidToolLock, Span::point(0), format!("{FILE_NAME}: {why}"));
        Some((Default::default(), SourceFile::new(shown.clone(), ""), vec![d]))
    };
    let text = match bytes.map(String::from_utf8) {
        Ok(Ok(text)) => text,
        Ok(Err(_)) => return broken("the file is not valid UTF-8".into()),
        Err(e) => return broken(format!("cannot read it: {e}")),
    };
    let src = SourceFile::new(shown, text);
    let (lock, diags) = ToolLock::parse(&src);
    Some((lock.into(), src, diags))
}

/// The events savant-think.toml declares (`[events.NAME]`), each with its
/// payload's schema: what `check::Config::events` holds for `wait_for:`.
pub fn declared_events(
    config: &crate::config::EngineConfig,
) -> std::sync::Arc<BTreeMap<String, Option<Value>>> {
    std::sync::Arc::new(config.events.iter().map(|(name, e)| (name.clone(), e.schema.clone())).collect())
}

/// The project's workflows (`<root>/workflows/*.yaml`, by file stem) as
/// callees of `uses:`, read with the rules of [`read_source`] (a file that
/// cannot be read or decoded is left out: its own check reports it).
/// With `also` (the files being checked), `None` when no workflow of the
/// project has a `uses:` step and no file of `also` does either
/// ([`uses_workflows`]): then nothing needs the table, and a project
/// without sub-workflows pays nothing for it. Without, the table is always
/// built (the language server's, for a buffer that may gain a `uses:`).
pub fn load_workflows(
    root: &Path,
    config: &Config,
    also: Option<&[&SourceFile]>,
) -> Option<std::sync::Arc<check::workflows::WorkflowTable>> {
    let dir = root.join("workflows");
    let mut sources = Vec::new();
    let mut uses = false;
    let mut names: Vec<_> =
        fs::read_dir(&dir).into_iter().flatten().filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    for path in names {
        let Some(name) = path.file_name().and_then(OsStr::to_str) else { continue };
        let Some(stem) = name.strip_suffix(".yaml").or_else(|| name.strip_suffix(".yml")) else { continue };
        if !valid_workflow_id(stem) {
            continue;
        }
        let Ok((src, diags)) = read_source(&path, &config.limits) else { continue };
        if !diags.is_empty() {
            continue;
        }
        // Asked only while no workflow so far has a `uses:` step.
        uses = uses || also.is_some() && uses_workflows(&src, &config.limits);
        let shown = relative_to_root(&path, root);
        sources.push(check::workflows::WorkflowSource { id: stem.to_owned(), path: shown, text: src.text });
    }
    let needed = match also {
        Some(also) => uses || also.iter().any(|src| uses_workflows(src, &config.limits)),
        None => true,
    };
    needed.then(|| check::workflows::WorkflowTable::build(sources, config))
}

/// Whether the workflow in `src` has a step that runs another workflow
/// (`uses:`): its YAML parsed and read as the lowerer reads a step
/// ([`crate::ir::uses_workflows`]); a file that does not parse has none.
///
/// A key that reads `uses` is spelled `uses` in the text, whatever its
/// style (plain, quoted, a block scalar, behind a tag or an anchor), except
/// in a double-quoted scalar with an escape (`"\x75ses"`, a `\` line
/// break). A text with neither `uses` nor `\` has no such key, and is not
/// parsed: the answer is the parse's, without parsing the file a second time
/// (`check` parses it again to check it), which was a third of the time
/// `check` spent on a large file (docs/PERFORMANCE.md, issue 48 point 3).
pub fn uses_workflows(src: &SourceFile, limits: &Limits) -> bool {
    if !src.text.contains("uses") && !src.text.contains('\\') {
        return false;
    }
    crate::syntax::yaml::parse(src, limits).root.is_some_and(|root| crate::ir::uses_workflows(&root))
}

/// The workflow files of a project and their modification times: a change
/// (an edit, a file added or removed) makes the language server read the
/// project's workflows again.
pub fn workflows_stamp(root: &Path) -> Vec<(std::ffi::OsString, Option<std::time::SystemTime>)> {
    let mut stamp: Vec<_> = fs::read_dir(root.join("workflows"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name(), e.metadata().and_then(|m| m.modified()).ok()))
        .collect();
    stamp.sort();
    stamp
}

/// The codes `settings` ignore for the file at `path` in the project at
/// `root` (what `check` and the language server both apply).
pub fn ignored_in(settings: &CheckSettings, path: &Path, root: &Path) -> Vec<Code> {
    settings.ignored_for(&relative_to_root(path, root))
}

/// Whether `[check] exclude` skips `path` (compared relative to `root`).
pub fn excluded_in(settings: &CheckSettings, path: &Path, root: &Path) -> bool {
    !settings.exclude.is_empty() && settings.excluded(&relative_to_root(path, root))
}

/// `path` relative to the project root with `/` separators (as
/// `[check]` globs see it).
pub fn root_relative(path: &Path, root: &Path) -> String {
    relative_to_root(path, root)
}

/// `path` relative to the project root with `/` separators, for per-file
/// ignores: compared canonically when both exist (symlinks, `..`), else as
/// given (an editor's unsaved file).
fn relative_to_root(path: &Path, root: &Path) -> String {
    let rel = match (crate::fsx::canonical(path), crate::fsx::canonical(root)) {
        (Ok(file), Ok(root)) => file.strip_prefix(&root).map(Path::to_path_buf).unwrap_or(file),
        _ => path.strip_prefix(root).unwrap_or(path).to_path_buf(),
    };
    rel.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uses(text: &str) -> bool {
        uses_workflows(&SourceFile::new("w.yaml", text), &Limits::default())
    }

    #[test]
    fn a_uses_key_is_found_whatever_its_spelling_and_nothing_else_counts() {
        let steps = |step: &str| format!("id: w\nsteps:\n  - id: a\n    {step}\n");
        assert!(uses(&steps("uses: child")));
        assert!(uses(&steps("'uses': child")));
        // An escaped letter: no `uses` in the text, yet the key reads `uses`.
        assert!(uses(&steps("\"\\x75ses\": child")));
        // `uses` in the text but not as a step's key.
        assert!(!uses(&steps("call: notes.think\n    with: {uses: 1}  # uses: x")));
        assert!(!uses("id: w\nuses: child\nsteps: []\n"));
        // Neither `uses` nor an escape: no step can run a workflow.
        assert!(!uses(&steps("call: notes.think")));
        assert!(!uses(&steps("\"call\": \"notes.think\"")));
    }
}
