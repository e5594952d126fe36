//! Helpers shared by the end-to-end tests (`mod common;`): scratch
//! directories and runs of the real binary under a watchdog.
//!
//! Each test crate uses only some of them.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_savant-think");
pub const CRATE: &str = env!("CARGO_MANIFEST_DIR");
/// A run that takes longer than this is a hang.
pub const WATCHDOG: Duration = Duration::from_secs(20);

/// A scratch directory under the system temp dir, removed (permissions
/// restored first) on drop.
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        // The test crate's name keeps the test binaries apart.
        let crate_name = env!("CARGO_CRATE_NAME");
        let path =
            std::env::temp_dir().join(format!("savant-think-{crate_name}-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Scratch { path }
    }

    /// Writes `rel` (creating its parent directories) and returns its path.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, contents).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        #[cfg(unix)]
        restore_permissions(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(unix)]
fn restore_permissions(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755));
            // Not through symlinks: a link back to a parent would loop.
            if p.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                restore_permissions(&p);
            }
        }
    }
}

/// How a run of the binary ended.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Outputs of hostile files can be megabytes: show the start of each.
        const SHOWN: usize = 3000;
        let cut = |s: &str| match s.char_indices().nth(SHOWN) {
            Some((at, _)) => format!("{}… ({} more bytes)", &s[..at], s.len() - at),
            None => s.to_owned(),
        };
        write!(
            f,
            "exit {:?} after {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code,
            self.elapsed,
            cut(&self.stdout),
            cut(&self.stderr)
        )
    }
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }
}

/// A command for the binary in `dir`, with no inherited `SAVANT_PATH`,
/// `NO_COLOR` or `COLUMNS`.
pub fn cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(dir).env_remove("SAVANT_PATH").env_remove("NO_COLOR").env_remove("COLUMNS");
    c
}

/// Runs `c` to completion, killing it and failing the test after [`WATCHDOG`].
pub fn run_cmd(mut c: Command) -> Run {
    let started = Instant::now();
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the binary");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > WATCHDOG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{c:?} hung: killed after {WATCHDOG:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned();
    Run { code: status.code(), stdout, stderr, elapsed: started.elapsed() }
}

/// Runs the binary with `args` in `dir` (see [`cmd`]).
pub fn run(dir: &Path, args: &[&str]) -> Run {
    run_cmd(cmd(dir, args))
}

/// The run ended by itself with exit status `code`.
pub fn assert_exit(r: &Run, code: i32) {
    assert_eq!(r.code, Some(code), "{r:?}");
}

/// A typed engine reply as the JSON a client sees.
pub fn j<T: serde::Serialize>(reply: T) -> serde_json::Value {
    serde_json::to_value(reply).expect("engine replies serialize")
}
