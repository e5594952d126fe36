//! A quick reading of a stdio line that settles, for the common request,
//! that `stdio::malformed` would let it pass, without building the line's
//! JSON as a value (a `think_next`'s result can be megabytes, and rmcp
//! parses the line again anyway). [`plainly_well_formed`] is `true` only
//! for a line the full check passes: an object, `jsonrpc` `"2.0"`,
//! `params` absent or an object, and for `tools/call` a string `name` and
//! `arguments` absent, `null` or an object. Anything else, or anything it
//! is not sure of (a duplicate key, deep nesting, a number serde's value
//! parser might refuse), is `false`: the full check decides, as before.
//! [`tools_call`] reads a `tools/call` request into rmcp's own type for
//! the transport, instead of rmcp's reader trying every request type.

use memchr::memmem;
use rmcp::RoleServer;
use rmcp::model::{CallToolRequest, ClientRequest, JsonRpcMessage, JsonRpcRequest};
use rmcp::service::RxJsonRpcMessage;
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use std::borrow::Cow;
use std::sync::LazyLock;

/// Nesting deeper than this is left to the full check (serde's own
/// recursion limit is 128).
const DEPTH: usize = 100;

/// The top level of a request, its other fields skipped unread.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "params")]
    params: Option<Params>,
}

/// What the check needs of `params`: that it is an object whose `name` is a
/// string and whose `arguments` is an object or `null` (when present).
struct Params {
    named: bool,
}

fn params<'de, D: de::Deserializer<'de>>(d: D) -> Result<Option<Params>, D::Error> {
    d.deserialize_map(ParamsVisitor).map(Some)
}

struct ParamsVisitor;

impl<'de> Visitor<'de> for ParamsVisitor {
    type Value = Params;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
        let mut named = false;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "name" => {
                    map.next_value::<Cow<'de, str>>()?;
                    named = true;
                }
                "arguments" => {
                    map.next_value::<Option<ObjectOnly>>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Params { named })
    }
}

/// An object, its entries skipped unread; anything else is an error.
struct ObjectOnly;

impl<'de> Deserialize<'de> for ObjectOnly {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<ObjectOnly, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ObjectOnly;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ObjectOnly, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ObjectOnly)
            }
        }
        d.deserialize_map(V)
    }
}

/// `true` when `stdio::malformed` would pass `line` (see the module);
/// `false` when unsure.
pub(super) fn plainly_well_formed(line: &[u8]) -> bool {
    let start = line.iter().position(|b| !b.is_ascii_whitespace());
    if start.is_none_or(|i| line[i] != b'{') || !plain_text(line) || std::str::from_utf8(line).is_err() {
        return false;
    }
    let Ok(head) = serde_json::from_slice::<Head>(line) else { return false };
    if head.jsonrpc != "2.0" {
        return false;
    }
    head.method.as_deref() != Some("tools/call") || head.params.is_some_and(|p| p.named)
}

/// A `tools/call` request read straight into rmcp's own request type
/// (`JsonRpcRequest<CallToolRequest>`, with its `_meta` handling), as
/// rmcp's reader would read it but without trying the thirteen request
/// types before it in rmcp's untagged `ClientRequest` (each a serde error
/// made and dropped). `None` for any other line, or one this reading
/// refuses: rmcp's reader then reads it as before.
pub(super) fn tools_call(line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    static METHOD: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"\"tools/call\""));
    if line.first() != Some(&b'{') || METHOD.find(line).is_none() {
        return None;
    }
    let call: JsonRpcRequest<CallToolRequest> = serde_json::from_slice(line).ok()?;
    let JsonRpcRequest { jsonrpc, id, request } = call;
    Some(JsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc,
        id,
        request: ClientRequest::CallToolRequest(request),
    }))
}

/// The line's nesting is at most [`DEPTH`] and its numbers are integers
/// or decimals of at most 19 digits in a row with no exponent, so that
/// where serde's value parser would refuse the line (too deep, a number out
/// of range) the full check sees it.
fn plain_text(line: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escaped, mut digits, mut prev) = (0usize, false, false, 0usize, 0u8);
    for &b in line {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            prev = b;
            continue;
        }
        digits = if b.is_ascii_digit() { digits + 1 } else { 0 };
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            // Outside strings an `e` follows a digit or `.` only in an exponent.
            b'e' | b'E' if prev.is_ascii_digit() || prev == b'.' => return false,
            _ => {}
        }
        if depth > DEPTH || digits > 19 {
            return false;
        }
        prev = b;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_call_is_read_as_rmcps_reader_reads_it() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"think_next","arguments":{"run_id":"r","result_snapshot":{"a":[1,2.5,"x"]}}}}"#,
            r#"{"jsonrpc":"2.0","id":"s-1","method":"tools/call","params":{"name":"ping_tool","_meta":{"progressToken":3}}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t","arguments":null,"task":{"ttl":1000}},"extra":1}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}\r\n",
        ];
        for line in lines {
            let ours = tools_call(line.as_bytes()).unwrap_or_else(|| panic!("not read: {line}"));
            let rmcps: RxJsonRpcMessage<RoleServer> = serde_json::from_str(line).unwrap();
            assert!(
                matches!(&ours, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_)))
            );
            assert_eq!(serde_json::to_value(&ours).unwrap(), serde_json::to_value(&rmcps).unwrap(), "{line}");
        }
        for other in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"note":"tools/call"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}"#,
            r#" {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}",
            "[]",
            "",
        ] {
            assert!(tools_call(other.as_bytes()).is_none(), "read: {other}");
        }
    }

    #[test]
    fn common_requests_pass_quickly() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "think_next", "arguments": {"workflow": "w", "result": {"ok": true, "n": [1, -2.5, 0]}}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":null}}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\",\"params\":{\"s\":\"\\\"}{[é\"}}\n",
        ] {
            assert!(plainly_well_formed(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_full_check() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"x","params":{{"a":{}1{}}}}}"#,
            "[".repeat(101),
            "]".repeat(101)
        );
        for line in [
            "",
            "  ",
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"{}"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[]}}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":1E400}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":1e400}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":123456789012345678901234567890}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
            &deep,
        ] {
            assert!(!plainly_well_formed(line.as_bytes()), "{line}");
        }
        assert!(!plainly_well_formed(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}"));
    }
}
