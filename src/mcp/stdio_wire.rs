//! The stdio transport's writing half: each message rmcp hands to
//! `Transport::send` made one line (its JSON and `\n`) and written whole,
//! under one lock, to the client.
//!
//! A tool's result carries its reply twice, as `structuredContent` and as
//! the text of its one content block, and rmcp makes that text from the
//! very value (`CallToolResult::structured`: `value.to_string()`), so the
//! two are the same compact JSON. [`encode`] serialises such a result with
//! `structuredContent` left `null` and puts the text's bytes in its place:
//! the line is byte for byte what serde would write for the whole message
//! (a test checks), without walking the reply's value a second time. Any
//! other message is serialised as rmcp's own codec does (`to_writer`, `\n`).
//!
//! Over stdio the server does not even make the value when nothing else
//! reads it (no person to ask through the client): such a result carries
//! [`text_twin`] as `structuredContent`, a stand-in no reply is (a reply is
//! an object), and its text is written in its place the same way.

use memchr::memmem;
use rmcp::RoleServer;
use rmcp::model::{ContentBlock, JsonRpcMessage, ServerResult};
use rmcp::service::TxJsonRpcMessage;
use serde_json::Value;
use std::sync::LazyLock;

/// The key a tool result's structured reply is written under, with the
/// `null` it holds while the rest of the message is serialised.
const PLACEHOLDER: &[u8] = br#""structuredContent":null"#;

/// What a tool result made only as text carries as `structuredContent`:
/// "write my text here".
const TEXT_TWIN: &str = "savant-think: structuredContent is the text of content[0]";

/// The stand-in `structuredContent` of a result whose reply was made only
/// as text (`calls::structured`).
pub(super) fn text_twin() -> Value {
    Value::String(TEXT_TWIN.to_owned())
}

/// The one text block of a twin result, its text taken out while the rest
/// of the message is serialised.
const EMPTY_TEXT: &[u8] = br#"{"type":"text","text":""}"#;

/// One message as its line on the wire (ending in `\n`).
pub(super) fn encode(mut message: TxJsonRpcMessage<RoleServer>) -> std::io::Result<Vec<u8>> {
    let text = match &mut message {
        JsonRpcMessage::Response(response) => match &mut response.result {
            ServerResult::CallToolResult(result) => take_the_twin(result),
            _ => None,
        },
        _ => None,
    };
    let mut line = serde_json::to_vec(&message)?;
    if let Some(text) = text {
        line = with_text(&line, &text)?;
    }
    line.push(b'\n');
    Ok(line)
}

/// `line` (a tool result serialised with its text block empty and its
/// `structuredContent` `null`) with `text` put in both places: escaped
/// between the block's quotes, as it is in place of the `null`.
///
/// The first `"structuredContent":null` is the result's own field, and the
/// first empty text block its one block: inside a JSON string every `"` is
/// escaped, so neither pattern can start inside one, and the fields before
/// them (`jsonrpc`, `id`, `resultType`, the block) hold no such key.
fn with_text(line: &[u8], text: &str) -> std::io::Result<Vec<u8>> {
    let missing = || std::io::Error::other("a tool result without its text block or structuredContent");
    static FINDERS: LazyLock<[memmem::Finder<'static>; 2]> =
        LazyLock::new(|| [memmem::Finder::new(EMPTY_TEXT), memmem::Finder::new(PLACEHOLDER)]);
    let block = FINDERS[0].find(line).ok_or_else(missing)?;
    let value = FINDERS[1].find(line).ok_or_else(missing)?;
    // Two splices in the line's order, whichever field rmcp wrote first:
    // the escaped text goes between the empty string's quotes (replacing
    // nothing), the text itself replaces the `null`.
    let escaped = (block + EMPTY_TEXT.len() - br#""}"#.len(), 0, true);
    let raw = (value + PLACEHOLDER.len() - b"null".len(), b"null".len(), false);
    let mut splices = [escaped, raw];
    splices.sort_unstable_by_key(|&(at, ..)| at);
    let mut whole = Vec::with_capacity(line.len() + 2 * text.len() + text.len() / 4 + 1);
    let mut from = 0;
    for (at, replaced, escape) in splices {
        whole.extend_from_slice(&line[from..at]);
        if escape {
            push_escaped(&mut whole, text);
        } else {
            whole.extend_from_slice(text.as_bytes());
        }
        from = at + replaced;
    }
    whole.extend_from_slice(&line[from..]);
    Ok(whole)
}

/// `text` written as the contents of a JSON string, as serde_json escapes
/// a string. A tool's text is compact JSON, which has no byte below 0x20
/// (serde writes those inside strings as escapes), so that is a backslash
/// before each `"` and `\`; any other text is escaped by serde itself.
fn push_escaped(out: &mut Vec<u8>, text: &str) {
    if text.bytes().any(|b| b < 0x20) {
        // Serialising a `&str` cannot fail.
        let quoted = serde_json::to_string(text).unwrap_or_default();
        out.extend_from_slice(quoted.as_bytes().get(1..quoted.len().saturating_sub(1)).unwrap_or_default());
        return;
    }
    let text = text.as_bytes();
    let mut from = 0;
    for at in memchr::memchr2_iter(b'"', b'\\', text) {
        out.extend_from_slice(&text[from..at]);
        out.push(b'\\');
        // The character itself starts the next piece.
        from = at;
    }
    out.extend_from_slice(&text[from..]);
}

/// The text of `result`'s one content block when it is the compact JSON of
/// its `structuredContent` ([`null_the_twin`]): then the block's text is
/// taken out and `structuredContent` is `null`, both to be written from
/// it. Otherwise `None`, and the result is left as it was.
fn take_the_twin(result: &mut rmcp::model::CallToolResult) -> Option<String> {
    if !null_the_twin(result) {
        return None;
    }
    let Some(ContentBlock::Text(block)) = result.content.first_mut() else { return None };
    Some(std::mem::take(&mut block.text))
}

/// Whether `result`'s one content block is the compact JSON of its
/// `structuredContent` (as `CallToolResult::structured` and
/// `structured_error` make them); if so its `structuredContent` is now
/// `null`, to be filled from the text. Any other shape is left untouched.
fn null_the_twin(result: &mut rmcp::model::CallToolResult) -> bool {
    let [block] = result.content.as_slice() else { return false };
    let Some(text) = block.as_text().filter(|t| t.meta.is_none() && t.annotations.is_none()) else {
        return false;
    };
    let Some(value) = result.structured_content.as_ref().filter(|v| !v.is_null()) else { return false };
    // Debug builds (the tests) check the promise this path relies on.
    if value.as_str() == Some(TEXT_TWIN) {
        debug_assert!(
            serde_json::from_str::<Value>(&text.text).is_ok_and(|v| v.is_object()),
            "a reply made as text only is not a JSON object"
        );
    } else {
        debug_assert_eq!(value.to_string(), text.text, "structuredContent and its text differ");
    }
    result.structured_content = Some(Value::Null);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock, ErrorData, JsonRpcResponse, RequestId};
    use serde_json::json;

    fn response(id: RequestId, result: CallToolResult) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: Default::default(),
            id,
            result: ServerResult::CallToolResult(result),
        })
    }

    fn as_serde(message: &TxJsonRpcMessage<RoleServer>) -> Vec<u8> {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        line
    }

    #[test]
    fn a_tool_result_is_written_as_serde_writes_it() {
        let reply = json!({
            "workflow": "w", "run_id": "r\"structuredContent\":null",
            "instruction": {"step_id": "a", "input": {"text": "line\nnext \"quoted\" \\ é \u{1}", "n": [1, 2.5, -3]}},
            "structuredContent": null, "done": false,
        });
        let legacy = |mut r: CallToolResult| {
            r.result_type = None;
            r
        };
        let mut with_meta = CallToolResult::structured(json!({"a": 1}));
        with_meta.meta = Some(serde_json::from_value(json!({"structuredContent": null})).unwrap());
        let cases = [
            response(RequestId::Number(7), CallToolResult::structured(reply.clone())),
            response(
                RequestId::String("structuredContent\":null".into()),
                legacy(CallToolResult::structured(reply)),
            ),
            response(
                RequestId::Number(8),
                CallToolResult::structured_error(json!({"error": "X", "details": {}})),
            ),
            response(RequestId::Number(9), with_meta),
            response(RequestId::Number(10), CallToolResult::structured(json!(null))),
            response(RequestId::Number(11), CallToolResult::success(vec![ContentBlock::text("plain")])),
            TxJsonRpcMessage::<RoleServer>::error(
                ErrorData::invalid_request("no", None),
                Some(RequestId::Number(3)),
            ),
        ];
        for message in cases {
            let expected = as_serde(&message);
            let line = encode(message).unwrap();
            assert_eq!(String::from_utf8(line).unwrap(), String::from_utf8(expected).unwrap());
        }
    }

    #[test]
    fn text_is_escaped_as_serde_escapes_a_string() {
        for text in [
            "",
            r#"{"a":"b\"c\\d","e":[1,"\u0001\n"]}"#,
            r#""""\\"#,
            "é 日本 \u{7f} plain",
            "raw control \u{1}\n\t bytes \"and\" \\ quotes",
        ] {
            let mut out = Vec::new();
            push_escaped(&mut out, text);
            let quoted = Value::from(text).to_string();
            assert_eq!(String::from_utf8(out).unwrap(), quoted[1..quoted.len() - 1], "{text:?}");
        }
    }

    #[test]
    fn the_text_goes_in_both_places_whichever_comes_first() {
        let text = r#"{"a":"q\"x"}"#;
        let escaped = r#"{\"a\":\"q\\\"x\"}"#;
        let block_first = br#"{"r":{"content":[{"type":"text","text":""}],"structuredContent":null},"id":"\"structuredContent\":null"}"#;
        let value_first = br#"{"r":{"structuredContent":null,"content":[{"type":"text","text":""}]}}"#;
        assert_eq!(
            String::from_utf8(with_text(block_first, text).unwrap()).unwrap(),
            format!(
                r#"{{"r":{{"content":[{{"type":"text","text":"{escaped}"}}],"structuredContent":{text}}},"id":"\"structuredContent\":null"}}"#
            )
        );
        assert_eq!(
            String::from_utf8(with_text(value_first, text).unwrap()).unwrap(),
            format!(
                r#"{{"r":{{"structuredContent":{text},"content":[{{"type":"text","text":"{escaped}"}}]}}}}"#
            )
        );
        assert!(with_text(br#"{"structuredContent":null}"#, text).is_err(), "no text block");
        assert!(
            with_text(br#"{"content":[{"type":"text","text":""}]}"#, text).is_err(),
            "no structuredContent"
        );
    }
}
