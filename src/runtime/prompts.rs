//! Driver prompts: a registry maps a version to a markdown text.
//!
//! The bundled prompts (this repository's `prompts/`) are compiled into the
//! binary, so every project has them. A project's own
//! `<root>/prompts/prompts.yml` adds versions and overrides bundled ones by
//! name; its `latest:` wins. A project without `prompts/` is not an error.
//! Project prompt files are read only from inside the project root (no
//! absolute paths, no `..`, no symlink leaving the root), as regular files
//! under a size cap.

use crate::runtime::EngineError;
use crate::runtime::ErrorCode;
use crate::runtime::error_details::PromptNotFound;
use crate::runtime::reply::{PromptList, PromptVersion};
use crate::runtime::workflow::sha256_hex;
use crate::source::SourceFile;
use serde_json::Value;
use std::path::Path;

/// The bundled registry and its files, as shipped in `prompts/`.
const BUNDLED_REGISTRY: &str = include_str!("../../prompts/prompts.yml");
const BUNDLED_FILES: &[(&str, &str)] = &[
    ("driver_stable.md", include_str!("../../prompts/driver_stable.md")),
    ("driver_code_review.md", include_str!("../../prompts/driver_code_review.md")),
];

/// The largest project prompt file or `prompts.yml` read, in bytes.
pub const MAX_PROMPT_BYTES: u64 = 1024 * 1024;

/// Where a prompt version comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Compiled into the binary.
    Bundled,
    /// The project's `prompts/prompts.yml`.
    Project,
}

impl Origin {
    /// `bundled` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Bundled => "bundled",
            Origin::Project => "project",
        }
    }
}

/// One version of the registry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The version's name (`stable`).
    pub version: String,
    /// The markdown file's name as the registry gives it.
    pub file: String,
    /// Where it comes from.
    pub origin: Origin,
}

impl Entry {
    /// Where the text is read from, for people: `prompts/x.md` or `bundled:x.md`.
    pub fn location(&self) -> String {
        match self.origin {
            Origin::Bundled => format!("bundled:{}", self.file),
            Origin::Project => format!("prompts/{}", self.file),
        }
    }
}

/// The prompt registry: bundled versions (in their file order), then the
/// project's new ones; a project version with a bundled name replaces it in
/// place. `latest` is the project's `latest:`, else the bundled one.
pub struct Registry {
    /// Every version, in registry order.
    pub entries: Vec<Entry>,
    /// The project's `latest:`, else the bundled one.
    pub latest: Option<String>,
}

impl Registry {
    /// The latest version's name: `latest:`, else the last entry.
    pub fn latest(&self) -> Option<&str> {
        self.latest.as_deref().or_else(|| self.entries.last().map(|e| e.version.as_str()))
    }

    /// The entry of `version`.
    pub fn get(&self, version: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.version == version)
    }

    /// The version names, in registry order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.version.as_str()).collect()
    }
}

/// `(versions, latest)` of one `prompts.yml` text.
fn parse_registry(path: &str, text: String) -> (Vec<(String, String)>, Option<String>) {
    let src = SourceFile::new(path, text);
    let parsed = crate::syntax::yaml::parse(&src, &crate::source::Limits::default());
    let root_node = parsed.root.map(|r| r.to_json()).unwrap_or(Value::Null);
    let versions = root_node.get("versions").and_then(Value::as_object).cloned().unwrap_or_default();
    let list = versions.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect();
    let latest = root_node.get("latest").and_then(Value::as_str).map(str::to_owned);
    (list, latest)
}

fn io_error(path: &Path, message: impl std::fmt::Display) -> EngineError {
    EngineError::message(ErrorCode::PromptNotFound, format!("cannot read {}: {message}", path.display()))
}

/// Reads a file of the project's `prompts/` directory: it must resolve inside
/// the project root, be a regular file and fit the cap. `Ok(None)` when it
/// does not exist.
fn read_project_file(root: &Path, name: &str) -> Result<Option<String>, EngineError> {
    let relative = Path::new(name);
    let dir = root.join("prompts");
    let path = dir.join(relative);
    if relative.is_absolute() || relative.components().any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(io_error(
            &path,
            "a prompt file must be a relative path inside prompts/ (no `..`, no absolute path)",
        ));
    }
    let resolved = match crate::fsx::confine_file(root, &Path::new("prompts").join(relative)) {
        Ok(p) => p,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(io_error(&path, e.reason())),
    };
    let meta = std::fs::metadata(&resolved).map_err(|e| io_error(&path, e))?;
    if meta.len() > MAX_PROMPT_BYTES {
        return Err(io_error(&path, format!("larger than the {MAX_PROMPT_BYTES}-byte cap")));
    }
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(&resolved)
        .and_then(|f| f.take(MAX_PROMPT_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| io_error(&path, e))?;
    Ok(Some(text))
}

/// The bundled registry merged with the project's `prompts/prompts.yml`.
pub fn registry(root: &Path) -> Result<Registry, EngineError> {
    let (bundled, bundled_latest) = parse_registry("bundled:prompts.yml", BUNDLED_REGISTRY.to_owned());
    let mut entries: Vec<Entry> =
        bundled.into_iter().map(|(version, file)| Entry { version, file, origin: Origin::Bundled }).collect();
    let mut latest = bundled_latest;
    if let Some(text) = read_project_file(root, "prompts.yml")? {
        let (own, own_latest) = parse_registry("prompts/prompts.yml", text);
        for (version, file) in own {
            let entry = Entry { version, file, origin: Origin::Project };
            match entries.iter_mut().find(|e| e.version == entry.version) {
                Some(slot) => *slot = entry,
                None => entries.push(entry),
            }
        }
        if own_latest.is_some() {
            latest = own_latest;
        }
    }
    Ok(Registry { entries, latest })
}

/// The text of one registry entry.
fn text_of(root: &Path, entry: &Entry) -> Result<Option<String>, EngineError> {
    match entry.origin {
        Origin::Bundled => {
            Ok(BUNDLED_FILES.iter().find(|(f, _)| *f == entry.file).map(|(_, t)| (*t).to_owned()))
        }
        Origin::Project => read_project_file(root, &entry.file),
    }
}

/// `{version, hash: "sha256:…", source, prompt_md}`; default the latest.
pub fn driver_prompt(
    root: &Path,
    version: Option<&str>,
) -> Result<crate::runtime::reply::DriverPrompt, EngineError> {
    let registry = registry(root)?;
    let want = version.map(str::to_owned).or_else(|| registry.latest().map(str::to_owned));
    let not_found = |v: &str, why: Option<String>| {
        let mut message = format!("no driver prompt `{v}`");
        if let Some(why) = why {
            message = format!("{message}: {why}");
        }
        EngineError::with(
            ErrorCode::PromptNotFound,
            PromptNotFound {
                version: v.to_owned(),
                message,
                available: registry.names().into_iter().map(str::to_owned).collect(),
            },
        )
    };
    let Some(want) = want else { return Err(not_found("", None)) };
    let Some(entry) = registry.get(&want) else { return Err(not_found(&want, None)) };
    let md = match text_of(root, entry) {
        Ok(Some(md)) => md,
        Ok(None) => return Err(not_found(&want, Some(format!("{} does not exist", entry.location())))),
        Err(e) => {
            let why = e.message_text().map(str::to_owned);
            return Err(not_found(&want, why));
        }
    };
    Ok(crate::runtime::reply::DriverPrompt {
        version: want,
        hash: sha256_hex(md.as_bytes()),
        source: entry.origin.as_str().to_owned(),
        prompt_md: md,
    })
}

/// Every version with its origin and file: what `prompt --list` shows.
pub fn list(root: &Path) -> Result<PromptList, EngineError> {
    let registry = registry(root)?;
    let versions = registry
        .entries
        .iter()
        .map(|e| PromptVersion {
            version: e.version.clone(),
            source: e.origin.as_str().to_owned(),
            file: e.location(),
        })
        .collect();
    Ok(PromptList { latest: registry.latest().map(str::to_owned), versions })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_version_has_its_text() {
        let (versions, latest) = parse_registry("bundled", BUNDLED_REGISTRY.to_owned());
        assert!(!versions.is_empty());
        for (version, file) in &versions {
            assert!(
                BUNDLED_FILES.iter().any(|(f, _)| f == file),
                "bundled version `{version}` names missing {file}"
            );
        }
        let latest = latest.expect("the bundled registry names its latest");
        assert!(versions.iter().any(|(v, _)| *v == latest));
    }
}
