//! Source files, byte spans and line/column mapping.

use std::fmt;

/// A half-open byte range `[start, end)` into a [`SourceFile`]'s text.
///
/// Offsets are `u32`: files are capped well below 4 GiB (see [`crate::Limits`]).
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
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path as the user should see it (relative when the user gave a relative path).
    pub path: String,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile { path: path.into(), text, line_starts }
    }

    /// Line and column of a byte offset. Offsets past the end clamp to the end;
    /// offsets inside a multi-byte character count as that character.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let column = self.text[start..].char_indices().take_while(|&(i, _)| start + i < offset).count();
        LineCol { line: line + 1, column: column + 1 }
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
}
