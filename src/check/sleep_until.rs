//! `TYPE_MISMATCH` of `sleep_until:` (its own file: the rest of the code
//! is `type_mismatch.rs`)
//!
//! *What it does*: `sleep_until:` must be a timestamp: written out, an
//! RFC 3339 time (`2026-11-29T10:00:00Z`, an offset `+02:00`) or a date
//! (`2026-11-29`), as the runtime parses it (`ir::lower::parse_time`); a
//! lone `<<expr>>` whose type is known must be a string.
//!
//! *Why is this bad?* The run would fail at the step, when it starts to
//! sleep, instead of at `check`.

use crate::check::Cx;
use crate::check::infer::{Infer, loop_item_type};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::ast::Segment;
use crate::ir::{ExprSite, Type, WaitKind};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let Some(WaitKind::SleepUntil { at }) = step.wait.as_deref().map(|w| &w.kind) else { continue };
        let segments = &at.template.segments;
        let interpolates = segments.iter().any(|s| matches!(s, Segment::Interp { .. }));
        if !interpolates {
            if crate::ir::lower::parse_time(&at.text).is_none() {
                out.push(
                    Diagnostic::new(
                        Code::TypeMismatch,
                        at.loc.span,
                        format!("`sleep_until` must be a timestamp, found `{}`", at.text.trim()),
                    )
                    .with_help(
                        "write an RFC 3339 time, like `2026-11-29T10:00:00Z`, or a date, like `2026-11-29`",
                    ),
                );
            }
            continue;
        }
        // `<<expr>>` alone: its value is the timestamp.
        let [Segment::Interp { expr, .. }] = segments.as_slice() else { continue };
        let loop_item = loop_item_type(cx, i);
        let mut inf = Infer {
            cx,
            step: i,
            site: ExprSite::Template,
            loc: &at.loc,
            text: &at.text,
            loop_item,
            out: None,
        };
        let t = inf.infer(expr);
        if matches!(t, Type::Any | Type::String | Type::Null) {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::TypeMismatch,
                cx.file_span(&at.loc, &at.text, expr.span),
                format!("`sleep_until` must be a timestamp (an RFC 3339 string), found {}", t.article()),
            )
            .with_help("give it a string such as `2026-11-29T10:00:00Z`"),
        );
    }
}
