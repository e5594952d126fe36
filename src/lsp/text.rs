//! Byte offsets ↔ LSP positions in the negotiated encoding.
//!
//! LSP counts a position's `character` in UTF-16 code units unless client
//! and server agree on UTF-8 (`general.positionEncodings`, LSP 3.17). Lines
//! break at `\n`, `\r\n` and a lone `\r`, as [`SourceFile`] counts them.

use crate::source::{SourceFile, Span};
use lsp_types::{Position, Range};

/// The position encoding agreed at `initialize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    fn width(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
        }
    }
}

fn floor_char(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The position of a byte offset (clamped to the text and to a character start).
pub fn position(src: &SourceFile, offset: usize, enc: Encoding) -> Position {
    let offset = floor_char(&src.text, offset);
    let line = src.line_index(offset);
    let (bounds, _) = src.line_bounds(line);
    let end = offset.min(bounds.end).max(bounds.start);
    let character = src.text[bounds.start..end].chars().map(|c| enc.width(c)).sum::<usize>();
    Position { line: line as u32, character: character as u32 }
}

pub fn range(src: &SourceFile, span: Span, enc: Encoding) -> Range {
    Range { start: position(src, span.start as usize, enc), end: position(src, span.end as usize, enc) }
}

/// The byte offset of a position. A line past the end is the text's end; a
/// character past the line's end is the line's end; a position inside a
/// character (half a surrogate pair) is that character's start.
pub fn offset(src: &SourceFile, pos: Position, enc: Encoding) -> usize {
    let line = pos.line as usize;
    if line >= src.line_count() {
        return src.text.len();
    }
    let (bounds, _) = src.line_bounds(line);
    let mut units = 0usize;
    for (i, c) in src.text[bounds.clone()].char_indices() {
        let w = enc.width(c);
        if units + w > pos.character as usize {
            return bounds.start + i;
        }
        units += w;
    }
    bounds.end
}

/// The byte offset of a position in `text`, as [`offset`] finds it in a
/// [`SourceFile`], without a line index (an edit is applied before the
/// text is indexed again).
pub fn offset_in(text: &str, pos: Position, enc: Encoding) -> usize {
    let bytes = text.as_bytes();
    let mut start = 0;
    for _ in 0..pos.line {
        let Some(i) = bytes[start..].iter().position(|&b| b == b'\n' || b == b'\r') else {
            return text.len();
        };
        let at = start + i;
        start = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') { at + 2 } else { at + 1 };
    }
    let mut units = 0usize;
    for (i, c) in text[start..].char_indices() {
        let w = enc.width(c);
        if c == '\n' || c == '\r' || units + w > pos.character as usize {
            return start + i;
        }
        units += w;
    }
    text.len()
}

/// Applies one change of a `didChange`: `range` replaced by `new` (a range
/// past the end is clamped to it, a reversed one read forwards), or the
/// whole text when there is no range.
pub fn apply(text: &mut String, range: Option<Range>, new: &str, enc: Encoding) {
    let Some(range) = range else {
        new.clone_into(text);
        return;
    };
    let (a, b) = (offset_in(text, range.start, enc), offset_in(text, range.end, enc));
    text.replace_range(a.min(b)..a.max(b), new);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emoji_is_two_utf16_units_and_four_utf8_bytes() {
        let src = SourceFile::new("x.yaml", "a: 1\nb: \"😀 é x\"\r\nc");
        let x = src.text.find('x').unwrap();
        assert_eq!(position(&src, x, Encoding::Utf16), Position { line: 1, character: 9 });
        assert_eq!(position(&src, x, Encoding::Utf8), Position { line: 1, character: 12 });
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            assert_eq!(offset(&src, position(&src, x, enc), enc), x);
        }
        assert_eq!(position(&src, src.text.len(), Encoding::Utf16), Position { line: 2, character: 1 });
        assert_eq!(offset(&src, Position { line: 9, character: 0 }, Encoding::Utf16), src.text.len());
        // Past the end of line 0: its end, not the next line.
        assert_eq!(offset(&src, Position { line: 0, character: 99 }, Encoding::Utf16), 4);
    }

    fn edit(text: &str, range: ((u32, u32), (u32, u32)), new: &str, enc: Encoding) -> String {
        let pos = |(line, character)| Position { line, character };
        let mut text = text.to_owned();
        apply(&mut text, Some(Range { start: pos(range.0), end: pos(range.1) }), new, enc);
        text
    }

    #[test]
    fn offset_in_agrees_with_the_line_index() {
        let text = "a: 1\nb: \"😀 é 中文 x\"\r\nc\rd\n\n";
        let src = SourceFile::new("x.yaml", text);
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            for line in 0..7 {
                for character in 0..20 {
                    let pos = Position { line, character };
                    assert_eq!(offset_in(text, pos, enc), offset(&src, pos, enc), "{pos:?} {enc:?}");
                }
            }
        }
    }

    #[test]
    fn a_range_edit_counts_in_the_negotiated_encoding() {
        let text = "x: \"😀中b\"\ny: 2\n";
        // After the emoji (2 UTF-16 units, 4 bytes) and the CJK character (1 unit, 3 bytes).
        assert_eq!(edit(text, ((0, 7), (0, 7)), "Z", Encoding::Utf16), "x: \"😀中Zb\"\ny: 2\n");
        assert_eq!(edit(text, ((0, 11), (0, 11)), "Z", Encoding::Utf8), "x: \"😀中Zb\"\ny: 2\n");
        // Deleting the emoji; a position inside it (half a surrogate pair) is its start.
        assert_eq!(edit(text, ((0, 4), (0, 6)), "", Encoding::Utf16), "x: \"中b\"\ny: 2\n");
        assert_eq!(edit(text, ((0, 5), (0, 6)), "", Encoding::Utf16), "x: \"中b\"\ny: 2\n");
        // Across a line break.
        assert_eq!(edit(text, ((0, 9), (1, 1)), "", Encoding::Utf16), "x: \"😀中b\": 2\n");
    }

    #[test]
    fn edits_out_of_range_are_clamped() {
        let text = "a: 1\nb: 2";
        assert_eq!(edit(text, ((0, 99), (0, 120)), "!", Encoding::Utf16), "a: 1!\nb: 2");
        assert_eq!(edit(text, ((9, 0), (12, 3)), "\nc: 3", Encoding::Utf8), "a: 1\nb: 2\nc: 3");
        assert_eq!(edit(text, ((1, 0), (0, 3)), "", Encoding::Utf16), "a: b: 2");
        assert_eq!(edit("", ((3, 3), (0, 0)), "x", Encoding::Utf16), "x");
    }

    #[test]
    fn several_changes_apply_in_order() {
        let mut text = "id: 😀\n".to_owned();
        let r = |a: (u32, u32), b: (u32, u32)| {
            Some(Range {
                start: Position { line: a.0, character: a.1 },
                end: Position { line: b.0, character: b.1 },
            })
        };
        apply(&mut text, r((0, 6), (0, 6)), "é", Encoding::Utf16);
        apply(&mut text, r((0, 7), (0, 7)), "\nsteps: []", Encoding::Utf16);
        apply(&mut text, r((0, 0), (0, 2)), "ID", Encoding::Utf16);
        assert_eq!(text, "ID: 😀é\nsteps: []\n");
        apply(&mut text, None, "whole", Encoding::Utf8);
        assert_eq!(text, "whole");
    }
}
