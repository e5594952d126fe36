//! Any string as an expression: the parser never panics, and every span it
//! returns (of the expression or of the error) lies inside the text; with a
//! base offset the spans move by exactly that offset.
#![no_main]

use libfuzzer_sys::fuzz_target;
use savant_think::syntax::expr::{parse_expr, parse_expr_at};

fuzz_target!(|text: &str| {
    let len = text.len() as u32;
    let base = 1000;
    match (parse_expr(text), parse_expr_at(text, base as usize)) {
        (Ok(expr), Ok(shifted)) => {
            assert!(expr.span.start <= expr.span.end && expr.span.end <= len, "span {:?}", expr.span);
            assert_eq!(
                (expr.span.start + base, expr.span.end + base),
                (shifted.span.start, shifted.span.end)
            );
        }
        (Err(e), Err(shifted)) => {
            assert!(e.span.start <= e.span.end && e.span.end <= len, "error span {:?}", e.span);
            assert_eq!(e.message, shifted.message);
            assert_eq!((e.span.start + base, e.span.end + base), (shifted.span.start, shifted.span.end));
        }
        (a, b) => panic!("the base offset changed the outcome: {a:?} vs {b:?}"),
    }
});
