//! Opening files without following an attacker's symlink or blocking on a
//! FIFO, and confining reads to the project root.
//!
//! - State files (snapshot, journal, lock, temp snapshot) are opened with
//!   `O_NOFOLLOW` and must be regular files: a symlink planted at
//!   `.savant/state/<run>.journal` is refused, never truncated or appended to.
//! - Files read as input (workflows, schemas, manifests, config) are opened
//!   with `O_NONBLOCK` and must be regular files, so a FIFO named `x.yaml`
//!   is an error instead of a hang.
//! - [`confine()`] (in `confine.rs`) is the one place a path given by a user
//!   is resolved against the project root and refused unless it stays
//!   inside; [`canonical`] and [`same_file`] the one place files are
//!   compared by identity. `canonicalize` appears nowhere else.

mod confine;
mod rotate;
pub use confine::{MAX_PATH_BYTES, PathError, canonical, confine, confine_file, normalize, same_file};
pub use rotate::{RotatingFile, Rotation, append_rotating, rotate_if_full};

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Opens `path` with `options`, not following a final symlink, and checks
/// the result is a regular file.
pub fn open_nofollow(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| {
        // ELOOP: the final component is a symlink.
        #[cfg(unix)]
        let is_link = e.raw_os_error() == Some(libc::ELOOP);
        #[cfg(not(unix))]
        let is_link = false;
        if is_link {
            io::Error::new(io::ErrorKind::InvalidInput, "it is a symbolic link, which state files may not be")
        } else {
            e
        }
    })?;
    regular(file)
}

/// Opens `path` for reading without blocking on a FIFO or device, and checks
/// it is a regular file (symlinks are followed: confine the path first).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    regular(options.open(path)?)
}

fn regular(file: File) -> io::Result<File> {
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"))
    }
}

/// Reads a whole regular file of at most `cap` bytes.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("larger than the {cap}-byte limit")));
    }
    Ok(bytes)
}

/// Replaces `target` with `bytes` so that a reader (or a crash) sees the old
/// file or the new one, never half of either: a sibling temporary file,
/// created exclusively (a planted symlink there is refused), written,
/// fsync'd, given the old file's permissions, renamed over `target`; then
/// the directory is fsync'd. `tag` names the temporary (`.<name>.<tag>.tmp`).
pub fn replace_file(target: &Path, bytes: &[u8], tag: &str) -> io::Result<()> {
    use std::io::Write;
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = target.with_file_name(format!(".{name}.{tag}-{}.tmp", std::process::id()));
    let written = (|| {
        let create = || OpenOptions::new().write(true).create_new(true).open(&tmp);
        // Debris of a crashed write with the same pid: removing it removes
        // a link, never what a link points at.
        let mut file = match create() {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&tmp)?;
                create()?
            }
            other => other?,
        };
        file.write_all(bytes)?;
        if let Ok(meta) = std::fs::metadata(target) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    #[cfg(unix)]
    if let Some(dir) = target.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// What `stat` says about a file: enough to tell that it changed, or was
/// replaced, without reading it. All zero for a missing file. The one file
/// identity of the crate: the engine's workflow cache and the state store's
/// stamps both use it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, Default)]
pub struct FileIdentity {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: u64,
    /// Status change time, nanoseconds since the epoch (0 off Unix).
    pub ctime_ns: u64,
}

impl FileIdentity {
    pub fn from_metadata(meta: &std::fs::Metadata) -> FileIdentity {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ctime_ns = u64::try_from(meta.ctime()).unwrap_or(0).saturating_mul(1_000_000_000)
                + u64::try_from(meta.ctime_nsec()).unwrap_or(0);
            FileIdentity { dev: meta.dev(), ino: meta.ino(), len: meta.len(), mtime_ns, ctime_ns }
        }
        #[cfg(not(unix))]
        {
            FileIdentity { dev: 0, ino: 0, len: meta.len(), mtime_ns, ctime_ns: 0 }
        }
    }

    /// The identity of the file `path` names (symlinks followed).
    pub fn of(path: &Path) -> Option<FileIdentity> {
        std::fs::metadata(path).ok().map(|m| FileIdentity::from_metadata(&m))
    }

    /// Whether the file was last modified at least a second before `read_at`
    /// (file times move in clock ticks: a write just after a read in the same
    /// tick would leave them unchanged).
    pub fn settled_before(&self, read_at: std::time::SystemTime) -> bool {
        let mtime = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(self.mtime_ns);
        read_at.duration_since(mtime).is_ok_and(|d| d >= std::time::Duration::from_secs(1))
    }
}

#[cfg(all(test, unix))]
mod tests;
