//! A temporary project root, removed on drop.

use savant_think::runtime::{Engine, EngineConfig};
use savant_think::state::FileStore;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory under the system temp dir (`SAVANT_BENCH_DIR` chooses
/// another file system), unique to the test binary, the process and the
/// call; removed (permissions restored first) on drop.
pub struct Root {
    pub path: PathBuf,
    /// Environment set on every command run in the root (see [`Root::env`]).
    env: Vec<(String, String)>,
}

impl Root {
    pub fn new(name: &str) -> Root {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        // The crate's name keeps test and bench binaries apart.
        let crate_name = env!("CARGO_CRATE_NAME");
        let base = std::env::var_os("SAVANT_BENCH_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
        let path = base.join(format!("savant-think-{crate_name}-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Root { path, env: Vec::new() }
    }

    /// A root with `workflows/<id>.yaml` for each `(id, text)`.
    pub fn with_workflows(name: &str, workflows: &[(&str, &str)]) -> Root {
        let root = Root::new(name);
        std::fs::create_dir_all(root.path.join("workflows")).unwrap();
        for (id, text) in workflows {
            root.workflow(id, text);
        }
        root
    }

    /// Copies the crate's `schemas/` and `prompts/` into the root.
    pub fn crate_files(self) -> Root {
        self.copy_from_crate(&["schemas", "prompts"])
    }

    /// Copies the crate's bundled `workflows/`, `schemas/` and `prompts/`.
    pub fn bundled(self) -> Root {
        self.copy_from_crate(&["workflows", "schemas", "prompts"])
    }

    fn copy_from_crate(self, dirs: &[&str]) -> Root {
        for sub in dirs {
            copy_dir(&Path::new(super::CRATE).join(sub), &self.path.join(sub));
        }
        self
    }

    /// Sets `key=value` in the environment of every [`Root::command`].
    pub fn env(mut self, key: &str, value: &str) -> Root {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// `rel` under the root.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }

    /// Writes `rel` (creating its parent directories) and returns its path.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, contents).unwrap();
        p
    }

    /// Writes `workflows/<id>.yaml`.
    pub fn workflow(&self, id: &str, text: &str) -> PathBuf {
        self.write(&format!("workflows/{id}.yaml"), text)
    }

    /// An engine on the root, configured as the root says.
    pub fn engine(&self) -> Engine {
        Engine::new(&self.path).unwrap()
    }

    /// An engine whose store fsyncs or not, whatever the root or
    /// `SAVANT_STATE_FSYNC` say.
    pub fn engine_fsync(&self, fsync: bool) -> Engine {
        let mut config = EngineConfig::default();
        config.state.fsync = fsync;
        Engine::with_store(self.path.clone(), config, Box::new(FileStore::new(&self.path, fsync)))
    }

    /// `program args…` in the root, with the root's environment and no
    /// inherited `SAVANT_PATH`; stdin closed, stdout and stderr captured.
    pub fn process(&self, program: &str, args: &[&str]) -> Command {
        let mut c = Command::new(program);
        c.args(args)
            .current_dir(&self.path)
            .env_remove("SAVANT_PATH")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// The binary with `args` in the root (see [`Root::process`]).
    pub fn command(&self, args: &[&str]) -> Command {
        self.process(super::BIN, args)
    }

    /// Starts the binary with `args` (see [`Root::command`]).
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.command(args).spawn().unwrap()
    }

    /// Runs the binary with `args`, which must exit 0 with JSON on stdout.
    pub fn ok(&self, args: &[&str]) -> Value {
        let out = self.command(args).output().unwrap();
        let v = reply(&out, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {v}");
        v
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        #[cfg(unix)]
        restore_permissions(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The JSON a run of the binary printed.
pub fn reply(out: &std::process::Output, args: &[&str]) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?} (exit {:?}) printed no JSON ({e}): {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Copies the tree `from` into `to` (created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
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
