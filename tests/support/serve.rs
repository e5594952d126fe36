//! `savant-think serve --http` as a child process, killed on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running `serve --http`, killed on drop.
pub struct Server {
    pub child: Child,
    /// host:port
    pub addr: String,
    /// What it wrote on stderr after its address, line by line, when
    /// started with [`Server::start_logged`].
    pub log: Option<Arc<Mutex<Vec<String>>>>,
}

impl Server {
    /// `serve --http 127.0.0.1:0 --root <root>` with no inherited token;
    /// add arguments and environment before [`Server::start`].
    pub fn command(root: &Path) -> Command {
        Server::command_of(Path::new(super::BIN), root)
    }

    /// [`Server::command`] with another build of the binary (a bench's A/B).
    pub fn command_of(bin: &Path, root: &Path) -> Command {
        let mut c = Command::new(bin);
        c.args(["serve", "--http", "127.0.0.1:0", "--root"])
            .arg(root)
            .env_remove("SAVANT_THINK_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }

    /// Starts `command` and waits for the address it prints on stderr;
    /// stderr is drained from then on, its lines that mention an error
    /// echoed when `echo_errors`.
    pub fn start(command: Command, echo_errors: bool) -> Server {
        Server::start_keeping(command, echo_errors, None)
    }

    /// [`Server::start`], keeping every later line of stderr in
    /// [`Server::log`].
    pub fn start_logged(command: Command) -> Server {
        Server::start_keeping(command, false, Some(Arc::default()))
    }

    fn start_keeping(
        mut command: Command,
        echo_errors: bool,
        log: Option<Arc<Mutex<Vec<String>>>>,
    ) -> Server {
        let mut child = command.stderr(Stdio::piped()).spawn().expect("start savant-think serve");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("http://").nth(1) {
                    let _ = tx.send(rest.split('/').next().unwrap_or_default().to_owned());
                } else if echo_errors && line.contains("error") {
                    eprintln!("serve: {line}");
                }
                if let Some(kept) = &kept {
                    kept.lock().unwrap_or_else(|e| e.into_inner()).push(line);
                }
            }
        });
        let addr = rx.recv_timeout(Duration::from_secs(30)).expect("serve prints its address");
        Server { child, addr, log }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One raw HTTP/1.1 POST to /mcp: (status, headers, body).
pub fn post(addr: &str, content_type: &str, body: &str, extra: &[(&str, &str)]) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, head.to_owned(), body.to_owned())
}
