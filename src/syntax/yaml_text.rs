//! Text scanning for the YAML reader: what saphyr's events do not say
//! (escapes, block headers, properties, quotes, alias names), read from the
//! file's bytes at the offsets the events give.

use crate::source::Span;

/// The byte offset of the first invalid escape (`\` and its character) in the
/// double-quoted scalar whose opening quote is at `quote`.
pub(super) fn first_bad_escape(text: &str, quote: usize) -> Option<usize> {
    let rest = text.get(quote..)?;
    let mut chars = rest.char_indices();
    if !matches!(chars.next(), Some((_, '"'))) {
        return None;
    }
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return None,
            '\\' => match chars.next() {
                Some((_, e)) if "0abt\tnvfre \"/\\N_LPxuU\n\r".contains(e) => {}
                Some(_) => return Some(quote + i),
                None => return None,
            },
            _ => {}
        }
    }
    None
}

/// Character index → byte offset: a mark every `STRIDE` characters, and the
/// last answer (events mostly move forward, a little at a time).
pub(super) struct CharOffsets<'a> {
    text: &'a str,
    ascii: bool,
    /// The byte offset of every `STRIDE`th character.
    marks: Vec<u32>,
    /// The last (character index, byte offset) answered.
    last: (usize, usize),
}

const STRIDE: usize = 64;

impl<'a> CharOffsets<'a> {
    pub(super) fn new(text: &'a str) -> CharOffsets<'a> {
        let ascii = text.is_ascii();
        let marks = if ascii {
            Vec::new()
        } else {
            text.char_indices().step_by(STRIDE).map(|(i, _)| i as u32).collect()
        };
        CharOffsets { text, ascii, marks, last: (0, 0) }
    }

    pub(super) fn byte(&mut self, index: usize) -> usize {
        let len = self.text.len();
        if self.ascii {
            return index.min(len);
        }
        let Some(&mark) = self.marks.get(index / STRIDE) else { return len };
        let mut from = (index - index % STRIDE, mark as usize);
        if self.last.0 <= index && self.last.0 > from.0 {
            from = self.last;
        }
        let byte = self.text[from.1..].char_indices().nth(index - from.0).map_or(len, |(i, _)| from.1 + i);
        self.last = (index, byte);
        byte
    }
}

/// Finds a block scalar's `|` / `>` in `from..to`, stepping over what may sit
/// before it: blanks, comments, indicators (`:`, `-`, `?`, `---`) and properties.
pub(super) fn find_block_header(bytes: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while i < to.min(bytes.len()) {
        match bytes[i] {
            b'|' | b'>' => return Some(i),
            b'#' => i = skip_line(bytes, i),
            b'&' | b'!' => i = skip_property(bytes, i),
            b' ' | b'\t' | b'\r' | b'\n' | b':' | b'-' | b'?' | b',' | b'[' | b'{' => i += 1,
            _ => return None,
        }
    }
    None
}

/// Skips anchors, tags, blanks and comments in front of a scalar.
pub(super) fn skip_properties(bytes: &[u8], start: usize, end: usize) -> usize {
    let mut i = start;
    while i < end {
        match bytes[i] {
            b'&' | b'!' => i = skip_property(bytes, i),
            b'#' => i = skip_line(bytes, i),
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            _ => break,
        }
    }
    i.min(end)
}

fn skip_property(bytes: &[u8], i: usize) -> usize {
    if bytes[i..].starts_with(b"!<") {
        return bytes[i..].iter().position(|&b| b == b'>').map_or(bytes.len(), |p| i + p + 1);
    }
    let rest = &bytes[i + 1..];
    let len = rest
        .iter()
        .position(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b',' | b'[' | b']' | b'{' | b'}'));
    i + 1 + len.unwrap_or(rest.len())
}

fn skip_line(bytes: &[u8], i: usize) -> usize {
    bytes[i..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |p| i + p)
}

/// For a quoted string opening at `at` after a key on the same line: the
/// first non-blank character of the first continuation line (up to and
/// including the closing quote) indented no more than that line. `None`
/// when the string starts its own line (its parent's indentation is not
/// known here) or no such line exists.
pub(super) fn under_indented_line(text: &str, at: usize) -> Option<Span> {
    let quote = text.get(at..)?.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let head = &text[line_start..at];
    if head.trim().is_empty() {
        return None;
    }
    let base = head.len() - head.trim_start_matches(' ').len();
    let close = closing_quote(text, at + 1, quote);
    let first_break = text[at..close].find('\n')? + at + 1;
    let mut offset = first_break;
    for line in text[first_break..(close + 1).min(text.len())].split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = line.trim_end_matches(['\n', '\r']);
        if !content.trim().is_empty() && indent <= base {
            let c = content[indent..].chars().next().map_or(1, char::len_utf8);
            return Some(Span::new(offset + indent, offset + indent + c));
        }
        offset += line.len();
    }
    None
}

/// The byte index of the quote closing a string whose body starts at
/// `from` (`''` and `\"` do not close it), or the end of the text.
fn closing_quote(text: &str, from: usize, quote: char) -> usize {
    let mut chars = text[from..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if quote == '"' && c == '\\' {
            chars.next();
        } else if c == quote {
            if quote == '\'' && chars.peek().is_some_and(|&(_, n)| n == '\'') {
                chars.next();
                continue;
            }
            return from + i;
        }
    }
    text.len()
}

/// The name of the alias written at `at` (`*name`).
pub(super) fn alias_name(text: &str, at: usize) -> &str {
    let rest = text.get(at..).unwrap_or("");
    let rest = rest.strip_prefix('*').unwrap_or(rest);
    let end = rest.find(|c: char| c.is_whitespace() || ",[]{}".contains(c)).unwrap_or(rest.len());
    let name = &rest[..end];
    name.char_indices().nth(64).map_or(name, |(i, _)| &name[..i])
}

/// A value short enough to quote in a message.
pub(super) fn shorten(value: &str) -> String {
    match value.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &value[..i]),
        None => value.to_owned(),
    }
}

/// The first tab in the indentation of a line at or after the line of
/// `at` (up to a few lines on): where a "found a tab" scan error really is.
pub(super) fn indentation_tab(text: &str, at: usize) -> Option<usize> {
    let line_start = text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let mut offset = line_start;
    for line in text[line_start..].split_inclusive('\n').take(4) {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let has_content = !line[indent..].trim().is_empty();
        if has_content && let Some(i) = line[..indent].find('\t') {
            return Some(offset + i);
        }
        offset += line.len();
    }
    None
}
