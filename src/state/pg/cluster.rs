//! A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` in a
//! temporary directory, `pg_ctl start` on a free 127.0.0.1 port (its socket
//! in the same directory), stopped and removed on drop. As root (CI), the
//! server runs as the `postgres` system user that Debian's package creates,
//! since PostgreSQL refuses to run as root.
//!
//! Not part of the supported API: it exists so that the library's unit
//! tests, the integration tests and the benchmarks share one helper.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// With this set to `1`, a missing PostgreSQL fails the tests that need it
/// instead of skipping them (CI sets it).
pub const REQUIRE_ENV: &str = "SAVANT_REQUIRE_PG";

/// A running cluster; stopped and removed on drop.
pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

/// The directory with `initdb` and `pg_ctl`: the newest Debian version
/// under /usr/lib/postgresql, else the `PATH`.
pub fn find_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
}

/// True when this process runs as root (the owner of `/proc/self` is the
/// effective user).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

impl Cluster {
    /// Starts a cluster with the binaries in `bin`; `settings` are extra
    /// `-c name=value` server settings.
    pub fn start(bin: &Path, settings: &[&str]) -> Result<Cluster, String> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "savant-pg-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let as_postgres = is_root();
        let mut cluster = Cluster { dir, bin: bin.to_path_buf(), port: 0, as_postgres };
        if as_postgres {
            chown_to_postgres(&cluster.dir)?;
        }
        let data = cluster.dir.join("data");
        cluster.run(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "-A".as_ref(),
                "trust".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
                "--no-locale".as_ref(),
                "--no-sync".as_ref(),
            ],
        )?;
        let mut last = String::new();
        for _ in 0..5 {
            cluster.port = free_port()?;
            let mut options = format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300",
                cluster.port,
                cluster.dir.display()
            );
            for setting in settings {
                options.push_str(&format!(" -c {setting}"));
            }
            let log = cluster.dir.join("server.log");
            match cluster.run(
                "pg_ctl",
                &[
                    "-D".as_ref(),
                    data.as_os_str(),
                    "-l".as_ref(),
                    log.as_os_str(),
                    "-o".as_ref(),
                    options.as_ref(),
                    "-w".as_ref(),
                    "-t".as_ref(),
                    "60".as_ref(),
                    "start".as_ref(),
                ],
            ) {
                Ok(()) => {
                    cluster.watchdog();
                    return Ok(cluster);
                }
                Err(e) => {
                    let log = std::fs::read_to_string(&log).unwrap_or_default();
                    last = format!("{e}\nserver log:\n{log}");
                }
            }
        }
        Err(last)
    }

    /// Restarts the server (`pg_ctl restart -m fast`, with the options it
    /// was started with): sessions end (SQLSTATE 57P01), new connections
    /// are refused while it stops and starts (57P03, or no listener).
    pub fn restart(&self) -> Result<(), String> {
        let data = self.dir.join("data");
        let log = self.dir.join("server.log");
        let args = ["-D".as_ref(), data.as_os_str(), "-l".as_ref(), log.as_os_str()];
        let how = ["-m", "fast", "-w", "-t", "60", "restart"].map(std::ffi::OsStr::new);
        self.run("pg_ctl", &[&args[..], &how[..]].concat())
    }

    /// The postmaster's process id, from its `postmaster.pid`.
    pub fn pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.dir.join("data").join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// `Ok` while the server runs; once it has gone, which process, on
    /// which port, and the last lines of its log. (The postmaster is not our
    /// child, so how it ended is in its log, not an exit status.)
    pub fn alive(&self) -> Result<(), String> {
        let pid = self.pid();
        let running = pid.is_some_and(|pid| {
            // A zombie (state Z) has exited: only its parent has not reaped it yet.
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
            })
        });
        if running {
            return Ok(());
        }
        let log = self.dir.join("server.log");
        let text = std::fs::read(&log).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n");
        Err(format!(
            "PostgreSQL (the test cluster's postmaster{}, port {}) is no longer running; \
             the last lines of its log ({}):\n{}",
            pid.map(|p| format!(" pid {p}")).unwrap_or_default(),
            self.port,
            log.display(),
            if tail.trim().is_empty() { "(its log is empty)" } else { &tail }
        ))
    }

    /// The port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The binaries' directory (for `pgbench`).
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// Stops (`SIGSTOP`) or resumes (`SIGCONT`) the server and every process
    /// it started, as a frozen database host would be: connections stay
    /// open, nothing answers. For the tests of `[state] db_timeout`.
    pub fn freeze(&self, frozen: bool) -> Result<(), String> {
        let postmaster = self.pid().ok_or("no postmaster.pid")?;
        let mut pids = vec![postmaster];
        for entry in std::fs::read_dir("/proc").map_err(|e| e.to_string())?.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // `pid (comm) state ppid …`; comm may hold spaces, so read after the last `)`.
            let ppid =
                stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
            if ppid == Some(postmaster) {
                pids.push(pid);
            }
        }
        let signal = if frozen { "-STOP" } else { "-CONT" };
        let status = Command::new("kill")
            .arg(signal)
            .args(pids.iter().map(u32::to_string))
            .status()
            .map_err(|e| format!("cannot run kill: {e}"))?;
        if status.success() { Ok(()) } else { Err(format!("kill {signal} {pids:?} failed")) }
    }

    /// The URL of database `db` as the superuser `postgres`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Creates schema `name` in database `postgres` and returns a URL whose
    /// connections use it (`search_path`), so that tests sharing the
    /// cluster do not see each other's runs.
    pub fn fresh_schema(&self, name: &str) -> Result<String, String> {
        super::offload(|| {
            let mut client =
                postgres::Client::connect(&self.url("postgres"), postgres::NoTls).map_err(|e| {
                    let why = self.alive().err().unwrap_or_else(|| "it is running".to_owned());
                    format!("cannot connect to the test cluster: {e} ({why})")
                })?;
            client
                .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE; CREATE SCHEMA \"{name}\""))
                .map_err(|e| format!("cannot create schema {name}: {e}"))
        })?;
        Ok(format!("{}?options=-csearch_path%3D{name}", self.url("postgres")))
    }

    /// Runs one of the cluster's programs (as `postgres` when root).
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> Result<(), String> {
        let exe = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = command
            .args(args)
            .current_dir(&self.dir)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// A detached shell that stops the server and removes the directory
    /// once this process is gone, however it ended (a panic that aborts, a
    /// kill): a static cluster is never dropped.
    fn watchdog(&self) {
        let script = r#"while kill -0 "$1" 2>/dev/null; do sleep 1; done
$5 "$2" -D "$3" -m immediate -w stop >/dev/null 2>&1
rm -rf "$4""#;
        let run_as = if self.as_postgres { "runuser -u postgres --" } else { "" };
        let _ = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(std::process::id().to_string())
            .arg(self.bin.join("pg_ctl"))
            .arg(self.dir.join("data"))
            .arg(&self.dir)
            .arg(run_as)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }

    fn stop(&self) {
        let data = self.dir.join("data");
        let _ = self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-m".as_ref(),
                "immediate".as_ref(),
                "-w".as_ref(),
                "stop".as_ref(),
            ],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("no free port: {e}"))
}

fn chown_to_postgres(dir: &Path) -> Result<(), String> {
    let out = Command::new("chown")
        .arg("postgres:")
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run chown: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "running as root, but cannot hand {} to a `postgres` user to run PostgreSQL as \
             (install Debian's postgresql package): {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The cluster shared by the tests of this process, started on first use
/// and stopped by its watchdog when the process exits (statics are never
/// dropped); `None` (after a note on stderr) when
/// PostgreSQL is not installed and `SAVANT_REQUIRE_PG` is not `1`.
///
/// # Panics
/// When PostgreSQL is required but missing, or installed but fails to start.
pub fn shared() -> Option<&'static Cluster> {
    static SHARED: OnceLock<Option<Cluster>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            // In CI (`CI` set, not `0`/`false`) a missing PostgreSQL fails too.
            let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
            let required = ci || std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1");
            let Some(bin) = find_bin() else {
                assert!(!required, "CI or {REQUIRE_ENV}=1, but PostgreSQL (initdb) is not installed");
                // Straight to stderr: the test harness captures `eprintln!`.
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "note: PostgreSQL is not installed (no initdb): skipping the PostgreSQL store tests \
                     (install Debian's postgresql, or set {REQUIRE_ENV}=1 to fail instead)"
                );
                return None;
            };
            let cluster =
                Cluster::start(&bin, &[]).unwrap_or_else(|e| panic!("the test cluster did not start: {e}"));
            Some(cluster)
        })
        .as_ref()
        .inspect(|cluster| {
            // A cluster that died under an earlier test is said so plainly,
            // not as every later test's connection error.
            if let Err(e) = cluster.alive() {
                panic!("{e}");
            }
        })
}

/// The one way a test gets the [`shared`] cluster: `None` after printing
/// `note: TEST SKIPPED: why` on stderr when PostgreSQL is not installed, so
/// no test passes silently by testing less. In CI (`CI` set) or with
/// [`REQUIRE_ENV`] set to `1`, a missing PostgreSQL fails instead (in
/// [`shared`]). `test` names the test (or the part of it) that is skipped.
///
/// # Panics
/// As [`shared`].
pub fn for_test(test: &str) -> Option<&'static Cluster> {
    let cluster = shared();
    if cluster.is_none() {
        // Straight to stderr: the test harness captures `eprintln!`.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "note: {test} SKIPPED: PostgreSQL is not installed (no initdb); install Debian's postgresql, \
             or set {REQUIRE_ENV}=1 to fail instead"
        );
    }
    cluster
}
