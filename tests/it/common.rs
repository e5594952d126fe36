//! Helpers shared by the end-to-end tests (`mod common;`): runs of the real
//! binary under a watchdog; temporary roots come from `crate::support`
//! (shared with the benches) and are re-exported here.
//!
//! Each test crate uses only some of them.
#![allow(dead_code, unused_imports)]

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use crate::support::{BIN, CRATE, Root};
/// A run that takes longer than this is a hang.
pub const WATCHDOG: Duration = Duration::from_secs(20);

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
pub fn run_cmd(c: Command) -> Run {
    run_cmd_within(c, WATCHDOG)
}

/// [`run_cmd`] with another watchdog (a client program that drives a whole
/// session takes longer than one command of the binary).
pub fn run_cmd_within(mut c: Command, watchdog: Duration) -> Run {
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
        if started.elapsed() > watchdog {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{c:?} hung: killed after {watchdog:?}");
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

/// Runs the binary with `args` twice at once in `root`; each run's JSON.
pub fn race(root: &Root, args: &[&str]) -> Vec<serde_json::Value> {
    let children: Vec<_> =
        (0..2).map(|_| root.command(args).stdout(Stdio::piped()).spawn().unwrap()).collect();
    children
        .into_iter()
        .map(|c| serde_json::from_slice(&c.wait_with_output().unwrap().stdout).unwrap())
        .collect()
}
