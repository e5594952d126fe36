use serde_json::json;

use super::journal::{crc32c, encode, parse, scan};

#[test]
fn crc32c_matches_the_standard_check_value() {
    assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    assert_eq!(crc32c(b""), 0);
}

#[test]
fn lines_are_json_numbered_and_checksummed() {
    let event = json!({"version": 2, "type": "thought", "thought": "a \"quoted\"\nline"});
    let line = encode(1, &event).unwrap();
    let text = std::str::from_utf8(&line).unwrap();
    assert!(text.starts_with(r#"{"seq":1,"version":2,"#) && text.ends_with("\"}\n"), "{text}");
    let as_json: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(as_json["seq"], 1);
    assert_eq!(parse(&line).unwrap(), vec![(2, event.clone())]);
    assert!(encode(1, &json!({"version": 2, "seq": 1})).is_err(), "the line's own fields are reserved");
    assert!(encode(1, &json!([1])).is_err());
}

#[test]
fn damage_is_located() {
    let mut bytes = Vec::new();
    for (i, v) in [2, 3, 4].iter().enumerate() {
        bytes.extend(encode(i as u64 + 1, &json!({"version": v, "result": "ok"})).unwrap());
    }
    let first = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut changed = bytes.clone();
    let at = first + changed[first..].windows(2).position(|w| w == b"ok").unwrap();
    changed[at] = b'O';
    let s = scan(&changed);
    let damage = s.damage.unwrap();
    assert_eq!((damage.line, damage.offset, s.good_len, s.events.len()), (2, first, first, 1));
    assert!(damage.message.starts_with("journal line 2: checksum mismatch"), "{}", damage.message);
    // A torn tail is not damage.
    let torn = [&bytes[..], b"{\"seq\":4,\"vers"].concat();
    let s = scan(&torn);
    assert_eq!((s.damage, s.good_len, s.events.len()), (None, bytes.len(), 3));
}
