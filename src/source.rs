//! Source files, byte spans and line/column mapping.

use std::fmt;

/// A half-open byte range `[start, end)` into a [`SourceFile`]'s text.
///
/// Offsets are `u32`: files are capped well below 4 GiB (see [`Limits`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        debug_assert!(start <= end, "span {start}..{end} is reversed");
        Span { start: start as u32, end: end as u32 }
    }

    /// An empty span at `offset`.
    pub fn point(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// Shifts both ends by `base` bytes.
    pub fn offset(self, base: usize) -> Span {
        Span::new(self.start as usize + base, self.end as usize + base)
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The span after `delta` bytes were inserted (or removed, when
    /// negative) at `at`: each end at or after `at` moves by `delta`.
    pub fn moved(self, at: u32, delta: i64) -> Span {
        let m =
            |x: u32| if x >= at { (i64::from(x) + delta).clamp(0, i64::from(u32::MAX)) as u32 } else { x };
        Span { start: m(self.start), end: m(self.end) }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A 1-based line and 1-based column counted in Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// One workflow file: its display path, its text and a line index.
///
/// Line breaks are `\r\n`, `\n` and a lone `\r`, as YAML (and saphyr) count
/// them. A byte order mark at the start of the file is not a column.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path as the user should see it (relative when the user gave a relative path).
    pub path: String,
    pub text: String,
    /// The byte offset where each line starts (`u32`, as spans are).
    line_starts: Vec<u32>,
    /// `char_marks[k]` is the number of characters that start before byte
    /// `k * CHAR_MARK_STRIDE`; empty when the text is ASCII (a character is
    /// a byte). Makes [`SourceFile::line_col`] cost O(log n + stride), however
    /// long the line.
    char_marks: Vec<u32>,
}

/// Bytes between two entries of [`SourceFile::char_marks`].
const CHAR_MARK_STRIDE: usize = 256;

/// Whether `b` begins a UTF-8 character (is not a continuation byte).
fn starts_char(b: u8) -> bool {
    (b as i8) >= -0x40
}

impl SourceFile {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        if !bytes.contains(&b'\r') {
            // Only `\n` breaks: found with `memchr` (a language server
            // indexes the whole text after every keystroke).
            line_starts.extend(text.match_indices('\n').map(|(i, _)| i as u32 + 1));
        } else {
            for (i, &b) in bytes.iter().enumerate() {
                // `\r\n` is one break: it ends at its `\n`.
                if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                    line_starts.push(i as u32 + 1);
                }
            }
        }
        let mut char_marks = Vec::new();
        if !text.is_ascii() {
            let mut count = 0u32;
            for chunk in bytes.chunks(CHAR_MARK_STRIDE) {
                char_marks.push(count);
                count += chunk.iter().filter(|&&b| starts_char(b)).count() as u32;
            }
            char_marks.push(count);
        }
        SourceFile { path: path.into(), text, line_starts, char_marks }
    }

    /// The number of characters that start before byte `offset` (at most the text's length).
    fn chars_before(&self, offset: usize) -> usize {
        if self.char_marks.is_empty() {
            return offset;
        }
        let k = offset / CHAR_MARK_STRIDE;
        let tail = &self.text.as_bytes()[k * CHAR_MARK_STRIDE..offset];
        self.char_marks[k] as usize + tail.iter().filter(|&&b| starts_char(b)).count()
    }

    /// The 0-based line of a byte offset (clamped to the text).
    pub(crate) fn line_index(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        self.line_starts.partition_point(|&s| s as usize <= offset) - 1
    }

    /// The number of lines: one more than the number of line breaks.
    pub(crate) fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The byte range of 0-based line `line`'s content (without its line
    /// break), and where the next line begins (the text's end for the last).
    pub(crate) fn line_bounds(&self, line: usize) -> (std::ops::Range<usize>, usize) {
        let start = self.line_starts[line] as usize;
        let next = self.line_starts.get(line + 1).map_or(self.text.len(), |&s| s as usize);
        let bytes = self.text.as_bytes();
        let mut end = next;
        if end > start && bytes[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        (start..end, next)
    }

    /// Line and column of a byte offset. Offsets past the end clamp to the end;
    /// offsets inside a multi-byte character count as that character.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = self.line_index(offset);
        let start = self.line_starts[line] as usize;
        let mut column = self.chars_before(offset) - self.chars_before(start);
        if line == 0 && offset > 0 && self.text.starts_with('\u{feff}') {
            column -= 1;
        }
        LineCol { line: line + 1, column: column + 1 }
    }

    /// The byte offset of a 1-based line and column in characters: the
    /// inverse of [`SourceFile::line_col`] (a leading BOM is not a column).
    /// Past a line's end it is that line's end; past the last line, the
    /// text's end.
    pub fn offset_of(&self, at: LineCol) -> usize {
        let Some(line) = at.line.checked_sub(1).filter(|l| *l < self.line_count()) else {
            return self.text.len();
        };
        let (content, _) = self.line_bounds(line);
        let mut skip = at.column.saturating_sub(1);
        if line == 0 && self.text.starts_with('\u{feff}') {
            skip += 1;
        }
        self.text[content.clone()].char_indices().nth(skip).map_or(content.end, |(i, _)| content.start + i)
    }

    /// The text of a span, clamped to the file and to character boundaries.
    pub fn slice(&self, span: Span) -> &str {
        let mut start = (span.start as usize).min(self.text.len());
        let mut end = (span.end as usize).min(self.text.len());
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        &self.text[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_not_bytes() {
        let f = SourceFile::new("x.yaml", "a: 1\nb: \"é<<x>>\"\n");
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(5), LineCol { line: 2, column: 1 });
        // `<` after "é" (2 bytes) is byte 5 + 4 + 2 = 11, character column 6.
        assert_eq!(f.line_col(11), LineCol { line: 2, column: 6 });
        assert_eq!(f.line_col(1000), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn offset_of_is_the_inverse_of_line_col() {
        for text in ["a: 1\nb: \"é<<x>>\"\n", "\u{feff}id: é\r\nsteps: []\r\n", "x"] {
            let f = SourceFile::new("x.yaml", text);
            // Every character but a BOM and the `\n` of a `\r\n` (one break, not a column).
            let skipped = |i: usize| {
                (i == 0 && text.starts_with('\u{feff}'))
                    || (text[..i].ends_with('\r') && text[i..].starts_with('\n'))
            };
            for (offset, _) in text.char_indices().filter(|(i, _)| !skipped(*i)) {
                assert_eq!(f.offset_of(f.line_col(offset)), offset, "{text:?} at {offset}");
            }
        }
        let f = SourceFile::new("x.yaml", "ab\ncd\n");
        assert_eq!(f.offset_of(LineCol { line: 1, column: 9 }), 2, "past the line: its end");
        assert_eq!(f.offset_of(LineCol { line: 9, column: 1 }), 6, "past the text: its end");
    }

    #[test]
    fn lone_cr_crlf_and_lf_are_each_one_line_break() {
        let f = SourceFile::new("x.yaml", "a\rb\r\nc\nd\r\r");
        let at = |offset| {
            let LineCol { line, column } = f.line_col(offset);
            (line, column)
        };
        assert_eq!(
            [at(0), at(1), at(2), at(3), at(4), at(5), at(7), at(8), at(9)],
            [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 1), (4, 1), (4, 2), (5, 1)]
        );
        assert_eq!(f.line_count(), 6);
        assert_eq!(f.line_bounds(1), (2..3, 5));
        assert_eq!(f.line_bounds(4), (9..9, 10));
        assert_eq!(f.line_bounds(5), (10..10, 10));
    }

    #[test]
    fn a_byte_order_mark_is_not_a_column() {
        let f = SourceFile::new("x.yaml", "\u{feff}ab\nc");
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(3), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(4), LineCol { line: 1, column: 2 });
        assert_eq!(f.line_col(6), LineCol { line: 2, column: 1 });
    }

    #[test]
    fn columns_on_long_lines_count_characters() {
        let line = "é😀x".repeat(1000);
        let text = format!("a\n{line}\n{line}");
        let f = SourceFile::new("x.yaml", text.as_str());
        for (i, (at, _)) in text.char_indices().enumerate().step_by(7) {
            let expected = text[..at].rsplit('\n').next().unwrap().chars().count() + 1;
            assert_eq!(f.line_col(at).column, expected, "char {i} at byte {at}");
        }
        // Inside a character: counts as that character.
        assert_eq!(f.line_col(3).column, 2);
    }

    proptest::proptest! {
        /// The index answers as a plain walk over the characters does.
        #[test]
        fn line_col_matches_a_character_walk(text in "\u{feff}?([a\r\né😀\t]|x{300}){0,24}") {
            let f = SourceFile::new("x.yaml", text.as_str());
            let (mut line, mut column) = (1, 1);
            let mut chars = text.char_indices().peekable();
            while let Some((at, c)) = chars.next() {
                for offset in at..at + c.len_utf8() {
                    let bom = at == 0 && c == '\u{feff}';
                    let expected = if offset == at || bom { (line, column) } else { (line, column + 1) };
                    let LineCol { line: l, column: k } = f.line_col(offset);
                    proptest::prop_assert_eq!((l, k), expected, "offset {} of {:?}", offset, text);
                }
                match c {
                    '\r' if chars.peek().map(|&(_, c)| c) == Some('\n') => column += 1,
                    '\r' | '\n' => (line, column) = (line + 1, 1),
                    '\u{feff}' if at == 0 => {}
                    _ => column += 1,
                }
            }
            proptest::prop_assert_eq!(f.line_col(text.len()), LineCol { line, column });
            proptest::prop_assert_eq!(f.line_count(), line);
        }
    }
}

/// Safety limits applied while reading a workflow file: its size (enforced
/// by the reader, [`crate::workspace::read_source`]) and what parsing it may
/// build (depth and alias expansion, enforced by `syntax::yaml`). Here, under
/// both, because the size cap is bounded by what a [`Span`] can address.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Files larger than this many bytes are refused (default 8 MiB).
    pub max_file_bytes: usize,
    /// Maximum nesting depth of YAML collections (default 128).
    pub max_depth: usize,
    /// Maximum number of nodes produced by alias expansion in one file
    /// (default 100,000): a "billion laughs" file stops here.
    pub max_alias_nodes: usize,
    /// Maximum number of scalar bytes produced by alias expansion in one file
    /// (default 64 MiB, 8× the default file cap, independent of
    /// `max_file_bytes`): each alias costs the decoded length of every scalar
    /// it repeats, so a few aliases of a large string stop here even though
    /// they are few nodes.
    pub max_alias_bytes: usize,
    /// Maximum number of YAML nodes written in one file (default 500,000;
    /// a 10,000-step workflow holds about 100,000): memory grows with the
    /// nodes, not the bytes, so a file of a few bytes per node (`[1,1,1,…]`)
    /// stops here instead of costing hundreds of bytes per input byte.
    pub max_nodes: usize,
}

impl Limits {
    /// The largest file that can be read at all, whatever `max_file_bytes`
    /// says: spans are `u32` byte offsets.
    pub const MAX_SPANNED_BYTES: usize = u32::MAX as usize - 1;

    /// The effective size cap: `max_file_bytes`, at most [`Limits::MAX_SPANNED_BYTES`].
    pub fn file_cap(&self) -> usize {
        self.max_file_bytes.min(Limits::MAX_SPANNED_BYTES)
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_file_bytes: 8 * 1024 * 1024,
            max_depth: 128,
            max_alias_nodes: 100_000,
            max_alias_bytes: 64 * 1024 * 1024,
            max_nodes: 500_000,
        }
    }
}
