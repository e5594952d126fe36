//! Payload caps: oversized results are truncated with a visible marker,
//! never silently.

use serde_json::{Value, json};

/// Truncates strings longer than `max_string` bytes (at a char boundary) and,
/// if the whole value still serializes to more than `max_total` bytes,
/// replaces it with a preview. Returns what was truncated, if anything.
pub fn truncate(value: &mut Value, max_string: usize, max_total: usize) -> Option<String> {
    let mut strings = 0usize;
    truncate_strings(value, max_string, &mut strings, 0);
    if json_len(value) > max_total {
        let text = serde_json::to_string(value).unwrap_or_default();
        let cut = floor_char_boundary(&text, max_total.saturating_sub(64));
        let dropped = text.len() - cut;
        *value = json!({
            "truncated": true,
            "preview": format!("{}…(truncated {dropped} bytes)", &text[..cut]),
        });
        return Some(format!("the result was {} bytes, over the {max_total} byte cap", text.len()));
    }
    (strings > 0).then(|| format!("{strings} string(s) over the {max_string} byte cap were shortened"))
}

/// The length of `value` serialized as compact JSON, without building the text.
pub fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

fn truncate_strings(v: &mut Value, max: usize, count: &mut usize, depth: usize) {
    if depth > 128 {
        return;
    }
    match v {
        Value::String(s) if s.len() > max => {
            let cut = floor_char_boundary(s, max);
            let dropped = s.len() - cut;
            s.truncate(cut);
            s.push_str(&format!("…(truncated {dropped} bytes)"));
            *count += 1;
        }
        Value::Array(items) => items.iter_mut().for_each(|i| truncate_strings(i, max, count, depth + 1)),
        Value::Object(m) => m.values_mut().for_each(|i| truncate_strings(i, max, count, depth + 1)),
        _ => {}
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_strings_get_a_marker() {
        let mut v = json!({"a": "é".repeat(10), "b": "short"});
        let what = truncate(&mut v, 5, 1000);
        assert_eq!(v["a"], "éé…(truncated 16 bytes)");
        assert_eq!(v["b"], "short");
        assert!(what.unwrap().contains("1 string"));
    }

    #[test]
    fn oversized_results_become_a_preview() {
        let mut v = json!((0..1000).collect::<Vec<_>>());
        assert!(truncate(&mut v, 5000, 200).is_some());
        assert_eq!(v["truncated"], true);
        assert!(v["preview"].as_str().unwrap().contains("…(truncated "));
        let mut small = json!({"x": 1});
        assert!(truncate(&mut small, 5000, 200).is_none());
    }
}
