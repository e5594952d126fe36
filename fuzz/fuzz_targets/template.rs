//! Any string as an interpolated template (`text <<expr>> text`): never
//! panics, and every segment and error span lies inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use savant_think::syntax::ast::Segment;
use savant_think::syntax::template::parse_template;

fuzz_target!(|text: &str| {
    let len = text.len() as u32;
    let (template, errors) = parse_template(text);
    for segment in &template.segments {
        if let Segment::Interp { expr, span } = segment {
            assert!(span.start <= span.end && span.end <= len, "segment span {span:?}");
            assert!(
                span.start <= expr.span.start && expr.span.end <= span.end,
                "{:?} outside {span:?}",
                expr.span
            );
        }
    }
    for e in &errors {
        assert!(e.span.start <= e.span.end && e.span.end <= len, "error span {:?}", e.span);
    }
    let _ = template.as_single_expr();
    let _ = template.has_interpolation();
});
