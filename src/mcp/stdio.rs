//! The stdio transport: rmcp's newline-delimited JSON-RPC transport behind a
//! reader that enforces the message cap itself, so that a request line over
//! the cap is answered (JSON-RPC `-32600`, with the request's id when it can
//! be read from the line's first [`ID_SCAN_BYTES`]) instead of being dropped
//! silently, which would leave the client waiting forever.

use rmcp::RoleServer;
use rmcp::model::{ErrorCode, ErrorData, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// How much of an oversized line is searched for its `"id"`.
pub const ID_SCAN_BYTES: usize = 64 * 1024;

/// An oversized line: its id (if found) and its size so far.
struct Oversized {
    id: Option<RequestId>,
    bytes: usize,
}

/// rmcp's transport over `read`/`write`, with lines over `max` bytes answered.
pub struct BoundedStdio<W: AsyncWrite + Send + Unpin + 'static> {
    inner: AsyncRwTransport<RoleServer, DuplexStream, W>,
    oversized: mpsc::Receiver<Oversized>,
    max: usize,
}

impl<W: AsyncWrite + Send + Unpin + 'static> BoundedStdio<W> {
    /// Starts the reader task (needs a tokio runtime).
    pub fn new<R: AsyncRead + Send + Unpin + 'static>(read: R, write: W, max: usize) -> BoundedStdio<W> {
        let (pipe_in, pipe_out) = tokio::io::duplex(64 * 1024);
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(forward(BufReader::new(read), pipe_in, tx, max));
        let inner = AsyncRwTransport::new_server(pipe_out, write).with_max_line_length(max.saturating_add(2));
        BoundedStdio { inner, oversized: rx, max }
    }
}

/// Copies whole lines of at most `max` bytes to `pipe`; reports longer ones.
async fn forward<R: AsyncRead + Unpin>(
    mut read: BufReader<R>,
    mut pipe: DuplexStream,
    report: mpsc::Sender<Oversized>,
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
            let oversized = Oversized { id: find_id(&head), bytes: size };
            if report.send(oversized).await.is_err() {
                break;
            }
        } else {
            let whole = std::mem::take(&mut line);
            if pipe.write_all(&whole).await.is_err() {
                break;
            }
        }
    }
    if !line.is_empty() {
        let _ = pipe.write_all(&line).await;
    }
    let _ = pipe.shutdown().await;
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
                        return match value {
                            Some(Ok(Value::Number(n))) => n.as_i64().map(RequestId::Number),
                            Some(Ok(Value::String(s))) => Some(RequestId::String(s.into())),
                            _ => None,
                        };
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
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            tokio::select! {
                biased;
                Some(big) = self.oversized.recv() => {
                    tracing::warn!(bytes = big.bytes, max = self.max, id = ?big.id, "refused a message over the size limit");
                    let error = ErrorData::new(
                        ErrorCode::INVALID_REQUEST,
                        format!("the message is over the {}-byte limit and was not read", self.max),
                        Some(json!({"max_message_bytes": self.max, "received_bytes_at_least": big.bytes,
                                    "help": "send smaller messages, or start the server with a larger --max-message-bytes"})),
                    );
                    if self.inner.send(TxJsonRpcMessage::<RoleServer>::error(error, big.id)).await.is_err() {
                        return None;
                    }
                }
                message = self.inner.receive() => return message,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
