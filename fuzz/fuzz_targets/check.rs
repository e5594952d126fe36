//! Any bytes, read as a workflow file: the checker never panics, every span
//! it reports lies inside the text, the report renders in every format
//! (JSON and SARIF as valid JSON), and applying the fixes gives a text that
//! checks without panicking too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use savant_think::check::fix;
use savant_think::source::Span;
use savant_think::{Format, check_str};

const FORMATS: [Format; 5] = [Format::Human, Format::Json, Format::Sarif, Format::Github, Format::Concise];

fn in_text(span: Span, len: usize) -> bool {
    span.start <= span.end && span.end as usize <= len
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let checked = check_str("fuzz.yaml", &text);
    for d in &checked.diagnostics {
        assert!(in_text(d.span, text.len()), "{:?} span {:?} outside {} bytes", d.code, d.span, text.len());
        for label in &d.labels {
            assert!(in_text(label.span, text.len()), "{:?} label {:?} outside the text", d.code, label.span);
        }
        if let Some(f) = &d.fix {
            assert!(in_text(f.span, text.len()), "{:?} fix {:?} outside the text", d.code, f.span);
        }
    }
    for format in FORMATS {
        let out = checked.render(format);
        if matches!(format, Format::Json | Format::Sarif) {
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&out) {
                panic!("{format:?} output is not JSON: {e}");
            }
        }
    }
    let _ = checked.summary();
    if let Some(applied) = fix::apply(&text, &checked.diagnostics) {
        let _ = check_str("fuzz.yaml", &applied.text);
    }
});
