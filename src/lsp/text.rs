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
}
