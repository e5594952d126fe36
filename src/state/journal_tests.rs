use serde_json::json;

use super::journal::{EventJson, crc32c, encode, encode_json, parse, scan};

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
fn a_line_is_its_seq_fields_and_checksum_exactly() {
    // Written without `format!`: the bytes are what it would write.
    let event = json!({"version": 3, "type": "thought", "thought": "é\u{1}"});
    let fields = serde_json::to_string(&event).unwrap();
    for seq in [0, 1, 9, 10, 4_294_967_296, u64::MAX] {
        let line = encode(seq, &event).unwrap();
        let body = format!("{{\"seq\":{seq},{}}}", &fields[1..fields.len() - 1]);
        let crc = crc32c(body.as_bytes());
        let want = format!("{},\"crc32c\":\"{crc:08x}\"}}\n", &body[..body.len() - 1]);
        assert_eq!(std::str::from_utf8(&line).unwrap(), want);
    }
    // A checksum with leading zeros keeps all eight digits.
    let small = (0..5000u64)
        .map(|n| encode(1, &json!({"version": 1, "n": n})).unwrap())
        .find(|line| std::str::from_utf8(line).unwrap().contains("\"crc32c\":\"0"))
        .expect("one of 5,000 checksums starts with a zero");
    let text = std::str::from_utf8(&small).unwrap();
    let hex = &text[text.find("\"crc32c\":\"").unwrap() + 10..text.len() - 3];
    assert_eq!(hex.len(), 8, "{text}");
    assert_eq!(parse(&small).unwrap().len(), 1);
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

/// An event shaped as the engine's (`version`, `at`, the kind's tag and
/// fields flattened), serialised straight into an [`EventJson`], makes the
/// very line the same event made a `Value` (with `generation` set on it)
/// makes, so the journal, its checksum and a run's replay are unchanged.
#[test]
fn an_event_serialised_directly_makes_the_line_its_value_makes() {
    #[derive(serde::Serialize)]
    struct Event {
        version: u64,
        at: String,
        #[serde(flatten)]
        kind: Kind,
    }
    #[derive(serde::Serialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Kind {
        Result { step_id: String, result: serde_json::Value },
        Thought { thought: String },
    }
    let events = [
        Event {
            version: 7,
            at: "2026-11-29T15:00:00Z".into(),
            kind: Kind::Result {
                step_id: "s[2]".into(),
                result: json!({"ok": true, "text": "a \"quoted\"\nline é \u{1}", "n": [1, 2.5, -3], "z": {}}),
            },
        },
        Event { version: 8, at: "t".into(), kind: Kind::Thought { thought: String::new() } },
    ];
    for generation in [None, Some("g-1\"2")] {
        for (i, event) in events.iter().enumerate() {
            let direct = EventJson::new(event, event.version, generation).unwrap();
            let mut value = serde_json::to_value(event).unwrap();
            if let Some(g) = generation {
                value["generation"] = json!(g);
            }
            let seq = i as u64 + 1;
            let line = encode(seq, &value).unwrap();
            assert_eq!(
                String::from_utf8(encode_json(seq, &direct)).unwrap(),
                String::from_utf8(line).unwrap()
            );
            assert_eq!(direct, EventJson::from_value(&value).unwrap());
            let first = encode(1, &value).unwrap();
            assert_eq!(parse(&first).unwrap(), vec![(event.version, value)]);
        }
    }
    assert!(EventJson::new(&json!([1]), 1, None).is_err(), "an event is an object");
    assert!(EventJson::from_value(&json!({"type": "x"})).is_err(), "an event has a version");
}
