//! A real browser for the inspector's tests: Debian's `chromium`, headless,
//! driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
//! JSON messages ended by NUL on file descriptors 3 and 4), so no websocket
//! client and no crate beyond `libc`. Each page collects its console
//! errors, uncaught exceptions and failed loads.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The browser binary the tests use, if installed.
pub fn chromium() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// A headless chromium, killed on drop.
pub struct Browser {
    child: Child,
    to: std::io::PipeWriter,
    from: Receiver<Value>,
    next_id: u64,
    /// Events received while waiting for answers: `(session, method, params)`.
    pub events: Vec<(Option<String>, String, Value)>,
    profile: std::path::PathBuf,
    /// Chromium's stderr, for the report when it dies.
    log: std::path::PathBuf,
}

/// One tab, attached.
pub struct Page {
    pub session: String,
    pub target: String,
}

/// How long one protocol call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

impl Browser {
    /// Starts chromium (None when it is not installed).
    pub fn start() -> Option<Browser> {
        let binary = chromium()?;
        let profile = std::env::temp_dir().join(format!("savant-chromium-{}-{}", std::process::id(), next()));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).ok()?;
        let log = profile.with_extension("log");
        let stderr = std::fs::File::create(&log).ok()?;
        let (their_in, to) = std::io::pipe().ok()?;
        let (from, their_out) = std::io::pipe().ok()?;
        let (fd_in, fd_out) = (their_in.as_raw_fd(), their_out.as_raw_fd());
        let mut command = Command::new(binary);
        command
            .args([
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--mute-audio",
                "--window-size=1400,900",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        // SAFETY: only async-signal-safe calls between fork and exec: the
        // child's ends of the two pipes become its descriptors 3 and 4.
        // Copied above 10 first: a pipe may itself be 3 or 4 (then `dup2`
        // onto itself would keep close-on-exec, or overwrite the other).
        unsafe {
            command.pre_exec(move || {
                let high_in = libc::fcntl(fd_in, libc::F_DUPFD, 10);
                let high_out = libc::fcntl(fd_out, libc::F_DUPFD, 10);
                if high_in < 0 || high_out < 0 || libc::dup2(high_in, 3) < 0 || libc::dup2(high_out, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(high_in);
                libc::close(high_out);
                Ok(())
            });
        }
        let child = command.spawn().ok()?;
        drop(their_in);
        drop(their_out);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(from);
            loop {
                let mut message = Vec::new();
                match reader.read_until(0, &mut message) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        message.pop();
                        if let Ok(v) = serde_json::from_slice::<Value>(&message)
                            && tx.send(v).is_err()
                        {
                            break;
                        }
                    }
                }
            }
        });
        Some(Browser { child, to, from: rx, next_id: 0, events: Vec::new(), profile, log })
    }

    /// Sends a command (to a page's session, or to the browser) and waits
    /// for its answer; events that arrive meanwhile are kept.
    pub fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.alive(method)?;
        if let Err(e) = self.to.write_all(&bytes) {
            // The pipe breaks as the process ends, before it can be reaped.
            self.reaped(method)?;
            return Err(format!("{method}: cannot write to chromium: {e}"));
        }
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = match self.from.recv_timeout(left) {
                Ok(v) => v,
                Err(RecvTimeoutError::Timeout) => {
                    self.alive(method)?;
                    return Err(format!(
                        "{method}: no answer in {CALL_TIMEOUT:?} (chromium is still running)"
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // The pipe closes as the process ends: give it a moment to be reaped.
                    self.reaped(method)?;
                    return Err(format!("{method}: chromium closed its pipe but is still running"));
                }
            };
            if v["id"].as_u64() == Some(id) {
                return match v.get("error") {
                    Some(e) => Err(format!("{method}: {e}")),
                    None => Ok(v["result"].clone()),
                };
            }
            if let Some(m) = v["method"].as_str() {
                let session = v["sessionId"].as_str().map(str::to_owned);
                self.events.push((session, m.to_owned(), v["params"].clone()));
            }
        }
    }

    /// After its pipe broke: the report of chromium's end once it can be
    /// reaped (polled for up to two seconds), `Ok` if it still runs then.
    fn reaped(&mut self, method: &str) -> Result<(), String> {
        for _ in 0..40 {
            self.alive(method)?;
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Chromium's process id (a test kills it to see the report).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Ok` while chromium runs; once it has died, which process, how it
    /// ended and the tail of its stderr.
    fn alive(&mut self, method: &str) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Err(format!(
                "{method}: {}",
                super::peer::died("chromium", self.child.id(), status, &self.log)
            )),
            _ => Ok(()),
        }
    }

    /// A new tab at `url`, attached, with console and log events on.
    pub fn open(&mut self, url: &str) -> Page {
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"})).unwrap();
        let target = target["targetId"].as_str().unwrap().to_owned();
        let attached =
            self.call(None, "Target.attachToTarget", json!({"targetId": target, "flatten": true})).unwrap();
        let page = Page { session: attached["sessionId"].as_str().unwrap().to_owned(), target };
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            self.call(Some(&page.session), domain, json!({})).unwrap();
        }
        self.goto(&page, url);
        page
    }

    /// Navigates `page` to `url`.
    pub fn goto(&mut self, page: &Page, url: &str) {
        self.call(Some(&page.session), "Page.navigate", json!({"url": url})).unwrap();
    }

    /// The value of a JavaScript expression in the page (promises awaited).
    pub fn eval(&mut self, page: &Page, expression: &str) -> Value {
        let r = self
            .call(
                Some(&page.session),
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .unwrap();
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expression}: threw {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expression` is truthy in the page; its value then.
    pub fn wait_for(&mut self, page: &Page, expression: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let r = self.call(
                Some(&page.session),
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            );
            if let Ok(r) = r
                && r.get("exceptionDetails").is_none()
            {
                let v = r["result"]["value"].clone();
                if !matches!(v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("") {
                    return v;
                }
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {expression}; console: {:?}",
                self.errors(page)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The page's console errors, uncaught exceptions and failed loads so far.
    pub fn errors(&mut self, page: &Page) -> Vec<String> {
        // Drain what arrived since the last call.
        let _ = self.call(None, "Browser.getVersion", json!({}));
        self.events
            .iter()
            .filter(|(s, _, _)| s.as_deref() == Some(page.session.as_str()))
            .filter_map(|(_, method, p)| match method.as_str() {
                "Runtime.exceptionThrown" => Some(format!("exception: {}", p["exceptionDetails"])),
                "Runtime.consoleAPICalled" if matches!(p["type"].as_str(), Some("error" | "assert")) => {
                    Some(format!("console.{}: {}", p["type"], p["args"]))
                }
                "Log.entryAdded" if p["entry"]["level"] == "error" => {
                    Some(format!("log: {} {}", p["entry"]["text"], p["entry"]["url"]))
                }
                _ => None,
            })
            .collect()
    }

    /// A PNG of the page as it is.
    pub fn screenshot(&mut self, page: &Page) -> Vec<u8> {
        let r = self.call(Some(&page.session), "Page.captureScreenshot", json!({"format": "png"})).unwrap();
        decode_base64(r["data"].as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.call(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
        let _ = std::fs::remove_file(&self.log);
    }
}

fn next() -> usize {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn decode_base64(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let digits: Vec<u8> = s.bytes().filter_map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &d)| acc | (u32::from(d) << (18 - 6 * i)));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len().saturating_sub(1)]);
    }
    out
}
