//! Maps an offset inside a scalar's decoded value back to a byte in the file.
//!
//! The scalar's source is decoded again, the way saphyr decodes it, while the
//! source range of every decoded character is recorded. When that decoding
//! reproduces the parser's value exactly, the table is exact; otherwise (a
//! construct this decoder does not know) the answer falls back to the start of
//! the scalar's content, which is approximate but never wrong by more than the
//! scalar.

use crate::source::Span;
use crate::syntax::node::ScalarStyle;
use std::sync::{Arc, Mutex, PoisonError};

/// `text` is the whole file, `span` the scalar's [`crate::syntax::node::Node::span`],
/// `value` its decoded value and `decoded` a byte offset into `value`
/// (`decoded == value.len()` is allowed: the end). Returns a byte offset into `text`.
pub fn map_offset(text: &str, span: Span, style: ScalarStyle, value: &str, decoded: usize) -> usize {
    let span = clamp_span(text, span);
    match decode_matching(text, span, style, value) {
        Some(table) => table.source_of(value, decoded),
        None => content_start(text, span, style),
    }
}

/// Maps a byte range of `value` to a span of `text` (both ends at once, one
/// decoding). The result is never reversed.
pub fn map_range(
    text: &str,
    span: Span,
    style: ScalarStyle,
    value: &str,
    range: std::ops::Range<usize>,
) -> Span {
    let span = clamp_span(text, span);
    let table = decode_matching(text, span, style, value);
    range_in(table.as_ref(), text, span, style, value, range)
}

fn range_in(
    table: Option<&Table>,
    text: &str,
    span: Span,
    style: ScalarStyle,
    value: &str,
    range: std::ops::Range<usize>,
) -> Span {
    let (start, end) = match table {
        Some(table) => (table.source_of(value, range.start), table.source_of(value, range.end)),
        None => {
            let at = content_start(text, span, style);
            (at, at)
        }
    };
    Span::new(start, end.max(start))
}

/// Maps spans inside the scalars of one file back to the file, like
/// [`map_range`], decoding each scalar once however many ranges of it are
/// mapped: it remembers the decode tables of the scalars most recently
/// mapped, so that many diagnostics in one long scalar cost one decoding,
/// not one each. Whoever maps spans of a file holds one (the lowerer, the
/// checker's context); the file itself holds none.
pub struct ScalarMap<'t> {
    text: &'t str,
    /// Most recently used last; at most [`ScalarMap::KEEP`].
    recent: Mutex<Vec<Arc<Memo>>>,
}

/// One decoded scalar: the key it was decoded for and its table (`None` when
/// the decoder could not reproduce the value).
struct Memo {
    span: Span,
    style: ScalarStyle,
    value: String,
    table: Option<Table>,
}

impl<'t> ScalarMap<'t> {
    const KEEP: usize = 4;

    /// A map of the scalars of `text` (a whole file), remembering nothing yet.
    pub fn new(text: &'t str) -> ScalarMap<'t> {
        ScalarMap { text, recent: Mutex::new(Vec::new()) }
    }

    /// The file text the spans are in.
    pub fn text(&self) -> &'t str {
        self.text
    }

    /// [`map_range`] on this file's text.
    pub fn map_range(
        &self,
        span: Span,
        style: ScalarStyle,
        value: &str,
        range: std::ops::Range<usize>,
    ) -> Span {
        let span = clamp_span(self.text, span);
        let memo = self.get(span, style, value);
        range_in(memo.table.as_ref(), self.text, span, style, value, range)
    }

    fn get(&self, span: Span, style: ScalarStyle, value: &str) -> Arc<Memo> {
        let found = {
            let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
            let at = recent.iter().rposition(|m| m.span == span && m.style == style && m.value == value);
            at.map(|i| {
                let memo = recent.remove(i);
                recent.push(memo.clone());
                memo
            })
        };
        if let Some(memo) = found {
            return memo;
        }
        let mut table = decode_matching(self.text, span, style, value);
        if let Some(t) = &mut table {
            // The key holds the value; the table need not hold it twice.
            t.value = String::new();
        }
        let memo = Arc::new(Memo { span, style, value: value.to_owned(), table });
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() >= Self::KEEP {
            recent.remove(0);
        }
        recent.push(memo.clone());
        memo
    }
}

impl std::fmt::Debug for ScalarMap<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ScalarMap { .. }")
    }
}

/// The decoded value and, for each of its bytes (and its end), the source byte
/// it came from.
#[derive(Default)]
struct Table {
    value: String,
    /// `source[i]` is the source byte of value byte `i`; one more entry for the end.
    source: Vec<usize>,
    /// The source byte just after the last decoded character.
    last_end: Option<usize>,
}

impl Table {
    fn push(&mut self, c: char, start: usize, end: usize) {
        self.value.push(c);
        self.source.extend(std::iter::repeat_n(start, c.len_utf8()));
        self.last_end = Some(end);
    }

    fn push_breaks(&mut self, breaks: &[(usize, usize)]) {
        for &(at, len) in breaks {
            self.push('\n', at, at + len);
        }
    }

    fn source_of(&self, value: &str, decoded: usize) -> usize {
        let mut decoded = decoded.min(value.len());
        while !value.is_char_boundary(decoded) {
            decoded -= 1;
        }
        self.source.get(decoded).copied().unwrap_or(0)
    }
}

fn clamp_span(text: &str, span: Span) -> Span {
    let mut end = (span.end as usize).min(text.len());
    let mut start = (span.start as usize).min(end);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Span::new(start.min(end), end)
}

/// Where the content begins: after the opening quote, else the span's start.
fn content_start(text: &str, span: Span, style: ScalarStyle) -> usize {
    let start = span.start as usize;
    let quoted = matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted);
    if quoted && span.len() >= 2 && matches!(text.as_bytes()[start], b'\'' | b'"') {
        start + 1
    } else {
        start
    }
}

/// Decodes the scalar's source and returns the table when it reproduces `value`.
fn decode_matching(text: &str, span: Span, style: ScalarStyle, value: &str) -> Option<Table> {
    let (start, end) = (span.start as usize, span.end as usize);
    let finish = |mut table: Table, empty_at: usize| {
        let end = table.last_end.unwrap_or(empty_at);
        table.source.push(end);
        (table.value == value).then_some(table)
    };
    match style {
        ScalarStyle::Plain => finish(decode_flow(text, start, end, Quoting::Plain)?, start),
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
            let (quote, quoting) = match style {
                ScalarStyle::SingleQuoted => (b'\'', Quoting::Single),
                _ => (b'"', Quoting::Double),
            };
            let bytes = text.as_bytes();
            if end < start + 2 || bytes[start] != quote || bytes[end - 1] != quote {
                return None;
            }
            finish(decode_flow(text, start + 1, end - 1, quoting)?, start + 1)
        }
        ScalarStyle::Literal | ScalarStyle::Folded => {
            let header = BlockHeader::parse(text, start)?;
            // The indentation depends on the parent's, which is not known here
            // when an indentation indicator is given: try the auto-detected one
            // first, then every small candidate.
            let auto = header.auto_indent(text);
            std::iter::once(auto)
                .chain((0..=auto.min(64) + 9).filter(|&i| i != auto))
                .find_map(|indent| finish(header.decode(text, indent)?, header.body))
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quoting {
    Plain,
    Single,
    Double,
}

/// Decodes a plain or quoted scalar's content (`start..end` excludes quotes),
/// folding line breaks the way saphyr's scanner does.
fn decode_flow(text: &str, start: usize, end: usize, quoting: Quoting) -> Option<Table> {
    let bytes = text.as_bytes();
    let mut out = Table::default();
    let mut pending: Vec<(char, usize)> = Vec::new();
    let mut leading_blanks = false;
    let mut leading_break: Option<(usize, usize)> = None;
    let mut trailing: Vec<(usize, usize)> = Vec::new();
    let mut i = start;
    while i < end {
        let c = text[i..].chars().next()?;
        match c {
            ' ' | '\t' => {
                if !leading_blanks {
                    pending.push((c, i));
                }
                i += 1;
                continue;
            }
            '\n' | '\r' => {
                let len = break_len(bytes, i);
                if leading_blanks {
                    trailing.push((i, len));
                } else {
                    pending.clear();
                    leading_break = Some((i, len));
                    leading_blanks = true;
                }
                i += len;
                continue;
            }
            _ => {}
        }
        // A content character: first join what the whitespace before it means.
        if leading_blanks {
            fold(&mut out, leading_break.take(), &mut trailing);
            leading_blanks = false;
        } else {
            for (w, at) in pending.drain(..) {
                out.push(w, at, at + 1);
            }
        }
        match (quoting, c) {
            (Quoting::Single, '\'') => {
                if bytes.get(i + 1) != Some(&b'\'') {
                    return None;
                }
                out.push('\'', i, i + 2);
                i += 2;
            }
            (Quoting::Double, '\\') if matches!(bytes.get(i + 1), Some(b'\n' | b'\r')) => {
                // An escaped line break: the break and the next line's
                // indentation vanish; empty lines after it still count.
                i += 1 + break_len(bytes, i + 1);
                leading_blanks = true;
                leading_break = None;
            }
            (Quoting::Double, '\\') => {
                let (decoded, len) = unescape(text, i)?;
                out.push(decoded, i, i + len);
                i += len;
            }
            _ => {
                out.push(c, i, i + c.len_utf8());
                i += c.len_utf8();
            }
        }
    }
    // Whitespace before a closing quote counts like whitespace before content.
    if leading_blanks {
        fold(&mut out, leading_break, &mut trailing);
    } else {
        for (w, at) in pending {
            out.push(w, at, at + 1);
        }
    }
    Some(out)
}

/// Line folding in flow scalars: one break becomes a space, each further
/// (empty) line a newline; after an escaped break only the empty lines count.
fn fold(out: &mut Table, leading_break: Option<(usize, usize)>, trailing: &mut Vec<(usize, usize)>) {
    match leading_break {
        Some((at, len)) if trailing.is_empty() => out.push(' ', at, at + len),
        _ => out.push_breaks(trailing),
    }
    trailing.clear();
}

fn break_len(bytes: &[u8], i: usize) -> usize {
    if bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) == Some(&b'\n') { 2 } else { 1 }
}

/// Decodes the escape sequence starting with the `\` at `at`: the character and
/// the escape's length in bytes.
fn unescape(text: &str, at: usize) -> Option<(char, usize)> {
    let kind = text[at + 1..].chars().next()?;
    let simple = match kind {
        '0' => '\0',
        'a' => '\x07',
        'b' => '\x08',
        't' | '\t' => '\t',
        'n' => '\n',
        'v' => '\x0b',
        'f' => '\x0c',
        'r' => '\r',
        'e' => '\x1b',
        ' ' => ' ',
        '"' => '"',
        '/' => '/',
        '\\' => '\\',
        'N' => '\u{85}',
        '_' => '\u{a0}',
        'L' => '\u{2028}',
        'P' => '\u{2029}',
        'x' | 'u' | 'U' => {
            let digits = match kind {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let hex = text.get(at + 2..at + 2 + digits)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
            return Some((c, 2 + digits));
        }
        _ => return None,
    };
    Some((simple, 1 + kind.len_utf8()))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Chomping {
    Strip,
    Clip,
    Keep,
}

/// The header of a `|` or `>` block scalar and where its body begins.
struct BlockHeader {
    folded: bool,
    chomping: Chomping,
    /// Whether the header line ends with a line break (else the file ends there).
    header_break: bool,
    /// The byte where the first body line begins (the end of the text if none).
    body: usize,
}

impl BlockHeader {
    fn parse(text: &str, start: usize) -> Option<BlockHeader> {
        let bytes = text.as_bytes();
        let folded = match bytes.get(start)? {
            b'|' => false,
            b'>' => true,
            _ => return None,
        };
        let mut chomping = Chomping::Clip;
        let mut i = start + 1;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'+' => chomping = Chomping::Keep,
                b'-' => chomping = Chomping::Strip,
                b'1'..=b'9' => {}
                _ => break,
            }
            i += 1;
        }
        // The rest of the header line is blanks and perhaps a comment.
        let line_end =
            bytes[i..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(bytes.len(), |p| i + p);
        let rest = text[i..line_end].trim_start_matches([' ', '\t']);
        if !rest.is_empty() && !rest.starts_with('#') {
            return None;
        }
        let header_break = line_end < bytes.len();
        let body = if header_break { line_end + break_len(bytes, line_end) } else { line_end };
        Some(BlockHeader { folded, chomping, header_break, body })
    }

    /// The indentation saphyr would detect: the widest leading blank line or
    /// the first content line's indentation.
    fn auto_indent(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        let (mut i, mut widest) = (self.body, 0);
        loop {
            let line = i;
            while bytes.get(i) == Some(&b' ') {
                i += 1;
            }
            widest = widest.max(i - line);
            match bytes.get(i) {
                Some(b'\n' | b'\r') => i += break_len(bytes, i),
                _ => return widest,
            }
        }
    }

    /// Decodes the body with content indentation `indent`, following saphyr's
    /// `scan_block_scalar`.
    fn decode(&self, text: &str, indent: usize) -> Option<Table> {
        let bytes = text.as_bytes();
        let mut out = Table::default();
        let mut trailing: Vec<(usize, usize)> = Vec::new();
        let mut leading_break: Option<(usize, usize)> = None;
        let mut leading_blank = false;
        let mut i = self.body;
        let mut line_start = skip_indent(bytes, &mut i, indent, &mut trailing);
        let mut had_content = false;
        while i - line_start == indent && i < bytes.len() && !matches!(bytes[i], b'\n' | b'\r') {
            if indent == 0 && is_document_marker(bytes, i) {
                break;
            }
            let trailing_blank = matches!(bytes[i], b' ' | b'\t');
            match leading_break {
                Some((at, len)) if self.folded && !leading_blank && !trailing_blank => {
                    if trailing.is_empty() {
                        out.push(' ', at, at + len);
                    }
                    out.push_breaks(&trailing);
                }
                _ => {
                    out.push_breaks(leading_break.as_slice());
                    out.push_breaks(&trailing);
                }
            }
            leading_break = None;
            trailing.clear();
            leading_blank = trailing_blank;
            had_content = true;
            while i < bytes.len() && !matches!(bytes[i], b'\n' | b'\r') {
                let c = text[i..].chars().next()?;
                out.push(c, i, i + c.len_utf8());
                i += c.len_utf8();
            }
            if i >= bytes.len() {
                break;
            }
            let len = break_len(bytes, i);
            leading_break = Some((i, len));
            i += len;
            line_start = skip_indent(bytes, &mut i, indent, &mut trailing);
        }
        let at_eof = i >= bytes.len();
        let column = text.get(line_start..i).map_or(0, |s| s.chars().count());
        if !had_content && at_eof {
            // Saphyr's special case: a body of only empty lines up to the end.
            if self.chomping == Chomping::Keep {
                if trailing.is_empty() && column > 0 && self.header_break {
                    out.push('\n', i, i);
                }
                out.push_breaks(&trailing);
            }
            return Some(out);
        }
        if self.chomping != Chomping::Strip {
            out.push_breaks(leading_break.as_slice());
            if at_eof && column >= indent.max(1) {
                out.push('\n', i, i);
            }
        }
        if self.chomping == Chomping::Keep {
            out.push_breaks(&trailing);
        }
        Some(out)
    }
}

/// Skips at most `indent` spaces and every empty line (recording its break).
/// Returns where the line `*i` now stands on begins.
fn skip_indent(bytes: &[u8], i: &mut usize, indent: usize, breaks: &mut Vec<(usize, usize)>) -> usize {
    loop {
        let line = *i;
        while *i - line < indent && bytes.get(*i) == Some(&b' ') {
            *i += 1;
        }
        match bytes.get(*i) {
            Some(b'\n' | b'\r') => {
                let len = break_len(bytes, *i);
                breaks.push((*i, len));
                *i += len;
            }
            _ => return line,
        }
    }
}

fn is_document_marker(bytes: &[u8], i: usize) -> bool {
    let marker = bytes.get(i..i + 3);
    (marker == Some(b"---") || marker == Some(b"..."))
        && bytes.get(i + 3).is_none_or(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;
    use crate::source::SourceFile;
    use crate::syntax::node::{Node, NodeKind};
    use crate::syntax::yaml::parse;

    /// Parses `yaml`, takes the value of key `key` in the root mapping, and
    /// checks that every occurrence of `needle` in the value maps to text that
    /// starts with `expect` in the file (`needle` itself unless told otherwise).
    fn check(yaml: &str, key: &str, needle: &str, expect: &str) -> Node {
        let src = SourceFile::new("t.yaml", yaml);
        let parsed = parse(&src, &Limits::default());
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let node = parsed.root.expect("a document").get(key).expect("the key").clone();
        let NodeKind::Scalar(s) = &node.kind else { panic!("not a scalar: {node:?}") };
        let at = s.value.find(needle).unwrap_or_else(|| panic!("{needle:?} not in {:?}", s.value));
        let mapped = map_offset(yaml, node.span, s.style, &s.value, at);
        assert!(
            yaml[mapped..].starts_with(expect),
            "{needle:?} in {:?} mapped to {mapped}: {:?}",
            s.value,
            &yaml[mapped..]
        );
        // The decoder reproduces the value: no fallback happened.
        assert!(decode_matching(yaml, node.span, s.style, &s.value).is_some(), "fallback for {:?}", s.value);
        node
    }

    #[test]
    fn plain_scalars() {
        check("when: a && b == c\n", "when", "b ==", "b ==");
        check("k: héllo 😀 wörld\n", "k", "wörld", "wörld");
        check("k: first line\n  second   line\n\n  third\n", "k", "third", "third");
        check("k: first line\n  second   line\n", "k", "second", "second");
        check("k: a\n  b\n", "k", " ", "\n");
    }

    #[test]
    fn single_quoted_scalars() {
        check("k: 'it''s a ''test'' é'\n", "k", "test", "test''");
        check("k: 'it''s'\n", "k", "'", "''");
        check("k: 'one\n  two\n\n  three'\n", "k", "three", "three");
        check("k: 'a  \n  b'\n", "k", "b", "b'");
    }

    #[test]
    fn double_quoted_scalars() {
        check("when: \"a && \\\"b\\\" == c\"\n", "when", "\"b", "\\\"b");
        check("when: \"a && \\\"b\\\" == c\"\n", "when", "== c", "== c");
        check("k: \"\\x41\\u00e9\\U0001F600 tail\"\n", "k", "tail", "tail");
        check("k: \"\\x41\\u00e9\\U0001F600 tail\"\n", "k", "😀", "\\U0001F600");
        check("k: \"tab\\there \\\\ x\"\n", "k", "x", "x\"");
        check("k: \"a \\\n   b\"\n", "k", "b", "b\"");
        check("k: \"one\n  two\n\n  three é\"\n", "k", "three", "three");
        check("k: \"é😀 \\n z\"\n", "k", "z", "z");
        check("k: \"a\r\n  b\"\r\n", "k", "b", "b");
    }

    #[test]
    fn literal_block_scalars() {
        check("k: |\n  line one\n    indented two\n  three\n", "k", "three", "three");
        check("k: |-\n  a\n  é b\n", "k", "b", "b\n");
        check("k: |+2\n    deep\n  x\n\n\nnext: 1\n", "k", "x", "x\n");
        check("k: |2 # comment\n    deep\n  x\n", "k", "deep", "deep");
        check("k: &anchor |\n\n  after blank\n", "k", "after", "after");
        check("list:\n  - |\n    item\n    more\nk: |\n   three spaces\n", "k", "spaces", "spaces");
        check("k: |\n  no final newline", "k", "final", "final");
        check("k: |\r\n  crlf\r\n  x\r\n", "k", "x", "x");
    }

    #[test]
    fn folded_block_scalars() {
        check("k: >\n  folded\n  line é\n\n  para\n", "k", "line", "line");
        check("k: >\n  folded\n  line\n\n  para\n", "k", "para", "para");
        check("k: >-\n  a\n    more indented\n  b\n", "k", "b", "b\n");
        check("k: >-\n  a\n  b\n", "k", " ", "\n  b");
        check("k: >+1\n  x\n   y\n", "k", "y", "y");
    }

    #[test]
    fn offsets_at_the_ends_and_out_of_range_are_safe() {
        let yaml = "k: \"ab\"\n";
        let n = check(yaml, "k", "a", "a");
        let s = n.as_scalar().unwrap();
        assert_eq!(map_offset(yaml, n.span, s.style, &s.value, 2), 6, "the end is the closing quote");
        assert_eq!(map_offset(yaml, n.span, s.style, &s.value, 99), 6);
        // A value the decoder cannot reproduce falls back to the content start.
        assert_eq!(map_offset(yaml, n.span, s.style, "zz", 1), 4);
        // Nonsense spans and styles never panic.
        for style in [
            ScalarStyle::Plain,
            ScalarStyle::SingleQuoted,
            ScalarStyle::DoubleQuoted,
            ScalarStyle::Literal,
            ScalarStyle::Folded,
        ] {
            for (a, b) in [(0, 0), (0, 100), (50, 60), (3, 2), (1, 8)] {
                let at = map_offset("é: \"\\u\"", Span { start: a, end: b }, style, "x", 5);
                assert!(at <= 9);
            }
        }
        let range = map_range(yaml, n.span, s.style, &s.value, 0..2);
        assert_eq!(&yaml[range.range()], "ab");
    }

    /// The remembering map answers as a fresh decoding, for interleaved
    /// scalars, more scalars than it keeps, and values it cannot reproduce.
    #[test]
    fn a_scalar_map_answers_as_a_fresh_decoding() {
        let yaml = "a: \"x \\\"y\\\" <<z>>\"\nb: |\n  one\n  two <<w>>\nc: 'it''s'\nd: plain\n  folded\ne: >\n  f\n  g\n";
        let parsed = parse(&SourceFile::new("t.yaml", yaml), &Limits::default());
        let root = parsed.root.expect("a document");
        let map = ScalarMap::new(yaml);
        for round in 0..3 {
            for key in ["a", "b", "c", "a", "d", "e", "b"] {
                let node = root.get(key).unwrap();
                let s = node.as_scalar().unwrap();
                for value in [s.value.as_str(), "not the value"] {
                    for i in 0..=value.len() {
                        let fresh = map_range(yaml, node.span, s.style, value, i..value.len());
                        let cached = map.map_range(node.span, s.style, value, i..value.len());
                        assert_eq!(cached, fresh, "round {round}, {key}, {value:?}, {i}");
                    }
                }
            }
        }
        assert!(map.recent.lock().unwrap().len() <= ScalarMap::KEEP);
        // A map of another text with the same spans answers for that text.
        let other = yaml.replace("<<z>>", "<<q>>").replace('x', "é");
        let node = root.get("a").unwrap();
        let s = node.as_scalar().unwrap();
        let fresh = map_range(&other, node.span, s.style, &s.value, 0..1);
        assert_eq!(ScalarMap::new(&other).map_range(node.span, s.style, &s.value, 0..1), fresh);
    }

    /// Every scalar of every document maps each of its characters onto the
    /// same character in the file (or the escape / line break it came from).
    #[test]
    fn every_scalar_of_tricky_documents_maps_exactly() {
        let docs = [
            "- |\n  in a list\n- &a >-\n  anchored\n  folded\n- !!str |\n  tagged\n- ['a''b', \"c\\\"d\", e f]\n",
            "--- |\n  document\n  scalar\n...\n",
            "? |\n  block key\n: value\n",
            "outer:\n  inner: |2\n      two extra\n    base\n  next: >1\n     one extra\n    x\n",
            "k: plain\twith\ttabs\n  and\t continued\n",
            "k: a#b c\n",
            "k: {x: \"multi\n  line\", y: plain\n  flow}\n",
            "a: 1\r\nb: |\r\n  crlf\r\n  block\r\nc: \"crlf\r\n  quoted\"\r\n",
            "k: \"\\ttab\\\n  \\ escaped\\ \\\"  \"\n",
            "k: ' trailing  \n\n  '\n",
            "k: |+\n  keep\n\n\nz: 1\n",
            "k: >\n  a\n\n   more\n  b\n",
            "k: >\n\n  leading\n\n",
            "k: |\n  # not a comment\n  x\n# a comment\n",
        ];
        for yaml in docs {
            let parsed = parse(&SourceFile::new("t.yaml", yaml), &Limits::default());
            assert!(parsed.diagnostics.is_empty(), "{yaml:?}: {:?}", parsed.diagnostics);
            let mut todo = vec![parsed.root.expect("a document")];
            while let Some(node) = todo.pop() {
                let s = match node.kind {
                    NodeKind::Scalar(s) => s,
                    NodeKind::Seq(items) => {
                        todo.extend(items);
                        continue;
                    }
                    NodeKind::Map(entries) => {
                        todo.extend(entries.into_iter().flat_map(|e| [e.key, e.value]));
                        continue;
                    }
                };
                assert!(
                    decode_matching(yaml, node.span, s.style, &s.value).is_some(),
                    "{:?} in {yaml:?}",
                    s.value
                );
                for (i, c) in s.value.char_indices() {
                    let at = map_offset(yaml, node.span, s.style, &s.value, i);
                    let found = yaml[at..].chars().next().unwrap();
                    let ok = found == c || found == '\\' || (c.is_whitespace() && found.is_whitespace());
                    assert!(ok, "{c:?} of {:?} mapped to {found:?} in {yaml:?}", s.value);
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn every_char_maps_to_itself_in_simple_scalars(word in "[a-zé😀]{1,12}", style in 0..5usize) {
            let yaml = match style {
                0 => format!("k: x {word} y\n"),
                1 => format!("k: 'x {word} y'\n"),
                2 => format!("k: \"x\\t{word} y\"\n"),
                3 => format!("k: |\n  x\n  {word} y\n"),
                _ => format!("k: >\n  x\n  {word} y\n"),
            };
            let node = check(&yaml, "k", &word, &word);
            let s = node.as_scalar().unwrap();
            for (i, c) in s.value.char_indices().filter(|&(_, c)| !c.is_whitespace()) {
                let mapped = map_offset(&yaml, node.span, s.style, &s.value, i);
                proptest::prop_assert!(yaml[mapped..].starts_with(c));
            }
        }

        #[test]
        fn never_panics(text in "[ a:\"'\\\\|>#\n\t-é]{0,40}", a in 0u32..50, b in 0u32..50, d in 0usize..50) {
            for style in [ScalarStyle::Plain, ScalarStyle::DoubleQuoted, ScalarStyle::Literal] {
                let at = map_offset(&text, Span { start: a.min(b), end: a.max(b) }, style, "x", d);
                proptest::prop_assert!(at <= text.len());
            }
        }
    }
}
#[cfg(test)]
mod flow_context {
    /// In flow collections saphyr's scalar spans can end past the scalar;
    /// offsets must still land on the right characters.
    #[test]
    fn scalars_inside_flow_mappings_map_exactly() {
        let text = "a: { d: \"<<x.y>>\" , s: '<<p.q>>' , p: <<m.n>> , l: [ \"<<u.v>>\" ] }\n";
        let src = crate::source::SourceFile::new("t", text);
        let root = crate::syntax::yaml::parse(&src, &crate::Limits::default()).root.unwrap();
        let a = root.get("a").unwrap();
        let nodes = [
            a.get("d").unwrap(),
            a.get("s").unwrap(),
            a.get("p").unwrap(),
            &a.get("l").unwrap().as_seq().unwrap()[0],
        ];
        for (n, want) in nodes.into_iter().zip(["x.y", "p.q", "m.n", "u.v"]) {
            let s = n.as_scalar().unwrap();
            let off = super::map_offset(text, n.span, s.style, &s.value, 2);
            assert_eq!(&text[off..off + 3], want, "{:?}", s.style);
        }
    }
}
