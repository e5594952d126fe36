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
#[path = "scalar_tests.rs"]
mod tests;
