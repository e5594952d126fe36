//! The stdio transport: rmcp's newline-delimited JSON-RPC transport behind a
//! reader that enforces the message cap itself, so that a request line over
//! the cap is answered (JSON-RPC `-32600`, with the request's id when it can
//! be read from the line's first [`ID_SCAN_BYTES`]) instead of being dropped
//! silently, which would leave the client waiting forever. Lines rmcp would
//! drop or answer without their id (not JSON, not JSON-RPC 2.0, params of
//! the wrong shape) are answered here too (`malformed`). Replies are
//! written by `stdio_wire` (a tool's result serialised once), each line
//! whole under one lock; the few lines rmcp's reader writes itself (an
//! `Invalid request` to a well-formed line of no known shape) reach the
//! client through the same lock. A `tools/call` request is read here into
//! rmcp's own request type (`stdio_shape::tools_call`, skipping rmcp's try
//! of every other request type first) when every earlier line has been
//! returned by rmcp's reader, so messages keep their order (`Lanes`).

use rmcp::RoleServer;
use rmcp::model::{ErrorCode, ErrorData, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{Mutex, mpsc};

/// How much of an oversized line is searched for its `"id"`.
pub const ID_SCAN_BYTES: usize = 64 * 1024;

/// A line answered here, never handed to rmcp: its id (when it can be
/// read) and the error.
struct Refusal {
    id: Option<RequestId>,
    error: ErrorData,
}

/// The client's side: written one whole line at a time; `None` once closed.
type Out<W> = Arc<Mutex<Option<W>>>;

/// rmcp's transport over `read`/`write`, with lines over `max` bytes answered.
pub struct BoundedStdio<W: AsyncWrite + Send + Unpin + 'static> {
    /// rmcp's reader; what it writes goes to `out` through a pipe.
    inner: AsyncRwTransport<RoleServer, DuplexStream, DuplexStream>,
    refused: mpsc::Receiver<Refusal>,
    /// `tools/call` requests read here (`stdio_shape::tools_call`), in
    /// their place among the lines rmcp reads (see [`Lanes`]).
    read: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    /// Lines handed to rmcp's reader whose message it has not returned.
    pending: Arc<AtomicUsize>,
    out: Out<W>,
}

/// Where `forward` sends what it does not pass to rmcp's reader: refused
/// lines, and `tools/call` requests it read itself — only while every line
/// passed before was returned by rmcp's reader (`pending` is 0), so that
/// messages reach the server in the order they were sent. A line rmcp
/// reads but does not return (a notification it ignores, one it answers
/// `Invalid request`) keeps `pending` above 0: then every later line goes
/// through rmcp's reader, as before this path existed.
struct Lanes {
    refused: mpsc::Sender<Refusal>,
    read: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    pending: Arc<AtomicUsize>,
}

impl<W: AsyncWrite + Send + Unpin + 'static> BoundedStdio<W> {
    /// Starts the reader tasks (needs a tokio runtime).
    pub fn new<R: AsyncRead + Send + Unpin + 'static>(read: R, write: W, max: usize) -> BoundedStdio<W> {
        let (pipe_in, pipe_out) = tokio::io::duplex(64 * 1024);
        let (inner_write, inner_lines) = tokio::io::duplex(64 * 1024);
        let (refused_tx, refused) = mpsc::channel(16);
        let (read_tx, read_rx) = mpsc::channel(16);
        let pending = Arc::new(AtomicUsize::new(0));
        let out = Arc::new(Mutex::new(Some(write)));
        let lanes = Lanes { refused: refused_tx, read: read_tx, pending: pending.clone() };
        tokio::spawn(forward(BufReader::new(read), pipe_in, lanes, max));
        tokio::spawn(relay(BufReader::new(inner_lines), out.clone()));
        let inner =
            AsyncRwTransport::new_server(pipe_out, inner_write).with_max_line_length(max.saturating_add(2));
        BoundedStdio { inner, refused, read: read_rx, pending, out }
    }
}

/// Writes `line` (one whole message and its `\n`) to the client.
async fn write_line<W: AsyncWrite + Unpin>(out: &Out<W>, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    let Some(w) = out.as_mut() else {
        return Err(std::io::Error::new(std::io::ErrorKind::NotConnected, "Transport is closed"));
    };
    w.write_all(line).await?;
    w.flush().await
}

/// Passes the lines rmcp's reader writes on to the client, each whole.
async fn relay<W: AsyncWrite + Unpin>(mut lines: BufReader<DuplexStream>, out: Out<W>) {
    let mut line = Vec::new();
    while matches!(lines.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
        if write_line(&out, &line).await.is_err() {
            break;
        }
        line.clear();
    }
}

/// Copies whole lines of at most `max` bytes to `pipe`; reports longer ones.
async fn forward<R: AsyncRead + Unpin>(
    mut read: BufReader<R>,
    mut pipe: DuplexStream,
    lanes: Lanes,
    max: usize,
) {
    let mut line: Vec<u8> = Vec::new();
    // Some(head, size) while skipping the rest of an oversized line.
    let mut skipping: Option<(Vec<u8>, usize)> = None;
    loop {
        let (consumed, ended) = {
            let chunk = match read.fill_buf().await {
                Ok(c) if !c.is_empty() => c,
                _ => break,
            };
            let newline = chunk.iter().position(|b| *b == b'\n');
            let take = newline.map_or(chunk.len(), |i| i + 1);
            let part = &chunk[..take];
            if let Some((head, size)) = skipping.as_mut() {
                let room = ID_SCAN_BYTES.saturating_sub(head.len()).min(part.len());
                head.extend_from_slice(&part[..room]);
                *size += part.len();
            } else if line.len() + part.len() > max {
                let size = line.len() + part.len();
                let mut head = std::mem::take(&mut line);
                head.truncate(ID_SCAN_BYTES);
                let room = ID_SCAN_BYTES.saturating_sub(head.len()).min(part.len());
                head.extend_from_slice(&part[..room]);
                skipping = Some((head, size));
            } else {
                line.extend_from_slice(part);
            }
            (take, newline.is_some())
        };
        read.consume(consumed);
        if !ended {
            continue;
        }
        if let Some((head, size)) = skipping.take() {
            let id = find_id(&head);
            tracing::warn!(bytes = size, max, id = ?id, "refused a message over the size limit");
            let error = ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!("the message is over the {max}-byte limit and was not read"),
                Some(json!({"max_message_bytes": max, "received_bytes_at_least": size,
                            "help": "send smaller messages, or start the server with a larger --max-message-bytes"})),
            );
            if lanes.refused.send(Refusal { id, error }).await.is_err() {
                break;
            }
        } else {
            let whole = std::mem::take(&mut line);
            if let Some(refusal) = malformed(&whole) {
                tracing::debug!(id = ?refusal.id, error = %refusal.error.message, "refused a malformed message");
                if lanes.refused.send(refusal).await.is_err() {
                    break;
                }
            } else if let Some(call) = (lanes.pending.load(Ordering::Acquire) == 0)
                .then(|| super::stdio_shape::tools_call(&whole))
                .flatten()
            {
                if lanes.read.send(call).await.is_err() {
                    break;
                }
            } else {
                lanes.pending.fetch_add(1, Ordering::AcqRel);
                if pipe.write_all(&whole).await.is_err() {
                    break;
                }
            }
        }
    }
    if !line.is_empty() {
        let _ = pipe.write_all(&line).await;
    }
    let _ = pipe.shutdown().await;
}

/// A whole line that is not a message rmcp can answer with its id: not
/// JSON (`-32700`), not JSON-RPC 2.0 (`-32600`), or params of the wrong
/// shape (`-32602`, naming the field; rmcp would say `Method not found`).
/// Blank lines and arrays are left to rmcp.
fn malformed(line: &[u8]) -> Option<Refusal> {
    if line.iter().all(u8::is_ascii_whitespace) || super::stdio_shape::plainly_well_formed(line) {
        return None;
    }
    refusal(line)
}

/// [`malformed`]'s full check, over the line parsed as a value.
fn refusal(line: &[u8]) -> Option<Refusal> {
    let refuse = |id, code, message: String| Some(Refusal { id, error: ErrorData::new(code, message, None) });
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            // Too deep or not UTF-8 is not JSON either (serde's recursion limit).
            return refuse(find_id(line), ErrorCode::PARSE_ERROR, format!("Parse error: {e}"));
        }
    };
    let Value::Object(m) = &value else { return None };
    let id = m.get("id").and_then(request_id);
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return refuse(id, ErrorCode::INVALID_REQUEST, "Invalid Request: `jsonrpc` must be \"2.0\"".into());
    }
    let method = m.get("method").and_then(Value::as_str)?;
    let params = m.get("params");
    if params.is_some_and(|p| !p.is_object()) {
        return refuse(
            id,
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: `params` of {method} must be an object"),
        );
    }
    if method == "tools/call" {
        let p = params.unwrap_or(&Value::Null);
        if !p.get("name").is_some_and(Value::is_string) {
            return refuse(
                id,
                ErrorCode::INVALID_PARAMS,
                "Invalid params: tools/call needs `name`, the tool's name (a string)".into(),
            );
        }
        if p.get("arguments").is_some_and(|a| !a.is_object() && !a.is_null()) {
            return refuse(
                id,
                ErrorCode::INVALID_PARAMS,
                "Invalid params: tools/call `arguments` must be an object (not a JSON-encoded string)".into(),
            );
        }
    }
    None
}

/// A JSON-RPC id: a whole number or a string.
fn request_id(v: &Value) -> Option<RequestId> {
    match v {
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        Value::String(s) => Some(RequestId::String(s.as_str().into())),
        _ => None,
    }
}

/// The top-level `"id"` of a JSON-RPC message, read from the start of its
/// text (which may be cut anywhere): a bounded scan, no full parse.
pub fn find_id(head: &[u8]) -> Option<RequestId> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < head.len() && head[j] != b'"' {
                    j += if head[j] == b'\\' { 2 } else { 1 };
                }
                if j >= head.len() {
                    return None;
                }
                let key = &head[start..j];
                i = j + 1;
                if depth == 1 && key == b"id" {
                    let rest = &head[i..];
                    let colon = rest.iter().position(|b| !b.is_ascii_whitespace())?;
                    if rest[colon] == b':' {
                        let value = serde_json::Deserializer::from_slice(&rest[colon + 1..])
                            .into_iter::<Value>()
                            .next();
                        return value.and_then(Result::ok).as_ref().and_then(request_id);
                    }
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

impl<W: AsyncWrite + Send + Unpin + 'static> Transport<RoleServer> for BoundedStdio<W> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let (out, line) = (self.out.clone(), super::stdio_wire::encode(item));
        async move { write_line(&out, &line?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            tokio::select! {
                biased;
                Some(refusal) = self.refused.recv() => {
                    let answer = TxJsonRpcMessage::<RoleServer>::error(refusal.error, refusal.id);
                    if self.send(answer).await.is_err() {
                        return None;
                    }
                }
                // Sent before any line rmcp's reader still holds (`Lanes`).
                Some(call) = self.read.recv() => return Some(call),
                message = self.inner.receive() => {
                    // One line, one message (`fetch_update` keeps it at 0).
                    let _ = self.pending.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
                    return message;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await?;
        drop(self.out.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `tools/call` request line (no newline).
    fn call_line(id: u32) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t"}}}}"#)
    }

    /// A `ping` request line (no newline).
    fn ping_line(id: u32) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
    }

    #[test]
    fn malformed_lines_are_refused_with_their_id_and_the_rest_pass() {
        let code = |line: &str| malformed(line.as_bytes()).map(|r| (r.error.code.0, r.id));
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"ping","params":{{"a":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(
            code(&deep),
            Some((-32700, Some(RequestId::Number(4)))),
            "too deep is not JSON, the id is kept"
        );
        assert_eq!(malformed(b"\xff\n").map(|r| r.error.code.0), Some(-32700), "not UTF-8 is not JSON");
        assert_eq!(code("  "), None);
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            None,
            "batches are rmcp's to answer"
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#), None);
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#),
            Some((-32600, Some(RequestId::String("a".into()))))
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}"#), None);
        assert_eq!(code(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), None);
    }

    #[test]
    fn a_line_passed_quickly_passes_the_full_check() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"think_next","arguments":{"result":{"a":[1,2.5,{"b":null}]}}}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t","arguments":null,"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","name":3}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":-1.5e400}}"#,
        ];
        let mut quick = 0;
        for line in lines {
            if super::super::stdio_shape::plainly_well_formed(line.as_bytes()) {
                quick += 1;
                assert!(refusal(line.as_bytes()).is_none(), "{line}");
            } else {
                assert_eq!(
                    malformed(line.as_bytes()).map(|r| r.error.code),
                    refusal(line.as_bytes()).map(|r| r.error.code)
                );
            }
        }
        assert_eq!(quick, 5, "the well-formed lines take the quick path");
    }

    #[test]
    fn the_id_is_found_at_the_top_level_only() {
        assert_eq!(
            find_id(br#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"xxx"#),
            Some(RequestId::Number(9))
        );
        assert_eq!(find_id(br#"{"id" : "a\"b","method""#), Some(RequestId::String("a\"b".into())));
        assert_eq!(find_id(br#"{"params":{"id":3,"x":"#), None);
        assert_eq!(find_id(br#"{"method":"x","params":{"pad":"yyyy"#), None);
        assert_eq!(find_id(br#"{"pad":"\"id\":4","id":5}"#), Some(RequestId::Number(5)));
        assert_eq!(find_id(b"not json at all"), None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn messages_keep_their_order_across_both_readers() {
        use rmcp::model::{ClientRequest, JsonRpcMessage};
        let (mut client, server_in) = tokio::io::duplex(1 << 16);
        let mut stdio = BoundedStdio::new(server_in, tokio::io::sink(), 1 << 20);
        // Calls (read here) after pings (read by rmcp), sent at once.
        let (call, ping) = (call_line, ping_line);
        let lines = [ping(1), call(2), call(3), ping(4), call(5), ping(6), call(7)];
        client.write_all((lines.join("\n") + "\n").as_bytes()).await.unwrap();
        let mut seen = Vec::new();
        for _ in 0..lines.len() {
            let Some(JsonRpcMessage::Request(r)) = stdio.receive().await else { panic!("not a request") };
            let is_call = matches!(r.request, ClientRequest::CallToolRequest(_));
            seen.push((r.id.to_string(), is_call));
        }
        let expected: Vec<_> =
            [(1, false), (2, true), (3, true), (4, false), (5, true), (6, false), (7, true)]
                .iter()
                .map(|(id, call)| (id.to_string(), *call))
                .collect();
        assert_eq!(seen, expected);
    }

    #[tokio::test]
    async fn a_call_is_read_here_only_when_rmcp_holds_no_earlier_line() {
        use tokio::io::AsyncReadExt;
        let (refused, _refused_rx) = mpsc::channel(4);
        let (read, mut read_rx) = mpsc::channel(4);
        let pending = Arc::new(AtomicUsize::new(0));
        let lanes = Lanes { refused, read, pending: pending.clone() };
        let (pipe_in, mut pipe_out) = tokio::io::duplex(1 << 16);
        let input = format!("{}\n{}\n{}\n", call_line(1), ping_line(2), call_line(3));
        forward(BufReader::new(input.as_bytes()), pipe_in, lanes, 1 << 20).await;
        let Some(rmcp::model::JsonRpcMessage::Request(first)) = read_rx.recv().await else {
            panic!("no call read")
        };
        assert_eq!(first.id, RequestId::Number(1));
        assert!(read_rx.try_recv().is_err(), "the call after the ping must wait its turn in rmcp's reader");
        let mut piped = String::new();
        pipe_out.read_to_string(&mut piped).await.unwrap();
        assert_eq!(piped, format!("{}\n{}\n", ping_line(2), call_line(3)));
        assert_eq!(pending.load(Ordering::Acquire), 2);
    }
}
