//! YAML text → [`Node`] tree with spans, on saphyr-parser's event stream.
//!
//! Events are consumed in one loop with an explicit stack of open collections,
//! so deep nesting costs heap, not call stack, and stops at
//! [`Limits::max_depth`]. Anchored nodes are shared (`Rc`) while the file is
//! read; an alias costs the number of nodes it stands for against
//! [`Limits::max_alias_nodes`] and the bytes of the scalars in it against
//! [`Limits::max_alias_bytes`], so a "billion laughs" file (many small nodes)
//! or a few aliases of a huge string (few nodes, many bytes) stop after a few
//! aliases and little memory. Only the finished tree is expanded.
//!
//! saphyr reports positions in characters; they are turned into byte offsets
//! here. Its spans are adjusted so that a scalar's span is the scalar as
//! written: anchors and tags are left out, a block scalar's span starts at its
//! `|` / `>` header and ends after its last content character.

use std::collections::HashMap;
use std::rc::Rc;

use saphyr_parser::{Event, Parser, ScalarStyle as SaphyrStyle, ScanError};

use crate::Limits;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::{SourceFile, Span};
use crate::syntax::node::{Entry, Node, NodeKind, Scalar, ScalarStyle};

/// The result of reading a file: the tree (when there is a document) and the
/// problems found. Parsing never fails outright.
#[derive(Debug, Default)]
pub struct Parsed {
    pub root: Option<Node>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads one workflow file. An empty file (or only comments) gives no root and
/// no diagnostics. After a syntax error or a limit the root is `None`; after a
/// second document the first one is kept.
pub fn parse(src: &SourceFile, limits: &Limits) -> Parsed {
    let text = src.text.as_str();
    let cap = limits.file_cap();
    if text.len() > cap {
        let message = format!("the file is {} bytes, more than the limit of {cap} bytes", text.len());
        return Parsed {
            root: None,
            diagnostics: vec![Diagnostic::new(Code::YamlLimit, Span::point(0), message)],
        };
    }
    let mut diagnostics = Vec::new();
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| !is_printable(c)) {
        diagnostics.push(non_printable(at, c));
        // saphyr reads NUL as the end of the input: nothing after it would be seen.
        if c == '\0' {
            return Parsed { root: None, diagnostics };
        }
    }
    let mut builder = Builder::new(text, limits);
    let root = builder.run();
    diagnostics.append(&mut builder.diagnostics);
    // Drop the anchors' references so that anchored nodes can be moved, not cloned.
    drop(builder);
    Parsed { root: root.map(into_node), diagnostics }
}

/// YAML's `c-printable` set: every other character must be escaped.
fn is_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
        || c >= '\u{10000}'
}

fn non_printable(at: usize, c: char) -> Diagnostic {
    let code = c as u32;
    let escape = if code <= 0xff { format!("\\x{code:02X}") } else { format!("\\u{code:04X}") };
    Diagnostic::new(
        Code::YamlSyntax,
        Span::new(at, at + c.len_utf8()),
        format!("the control character U+{code:04X} is not allowed in YAML"),
    )
    .with_help(format!("write it as an escape in a double-quoted string: \"{escape}\""))
}

/// A node while the file is read: children may be shared with an anchor.
struct Tmp {
    kind: TmpKind,
    span: Span,
}

enum TmpKind {
    Scalar(Scalar),
    Seq(Vec<Item>),
    Map(Vec<(Item, Item)>),
}

enum Item {
    Own(Tmp),
    Shared(Rc<Tmp>),
}

impl Item {
    fn tmp(&self) -> &Tmp {
        match self {
            Item::Own(tmp) => tmp,
            Item::Shared(rc) => rc,
        }
    }
}

/// Expands the finished tree. Recursion is bounded by [`Limits::max_depth`]:
/// both collections and aliases were checked against it.
fn into_node(item: Item) -> Node {
    let tmp = match item {
        Item::Own(tmp) => tmp,
        Item::Shared(rc) => match Rc::try_unwrap(rc) {
            Ok(tmp) => tmp,
            Err(rc) => return clone_node(&rc),
        },
    };
    let kind = match tmp.kind {
        TmpKind::Scalar(s) => NodeKind::Scalar(s),
        TmpKind::Seq(items) => NodeKind::Seq(items.into_iter().map(into_node).collect()),
        TmpKind::Map(entries) => NodeKind::Map(
            entries.into_iter().map(|(k, v)| Entry { key: into_node(k), value: into_node(v) }).collect(),
        ),
    };
    Node { kind, span: tmp.span }
}

fn clone_node(tmp: &Tmp) -> Node {
    let kind = match &tmp.kind {
        TmpKind::Scalar(s) => NodeKind::Scalar(s.clone()),
        TmpKind::Seq(items) => NodeKind::Seq(items.iter().map(|i| clone_node(i.tmp())).collect()),
        TmpKind::Map(entries) => NodeKind::Map(
            entries
                .iter()
                .map(|(k, v)| Entry { key: clone_node(k.tmp()), value: clone_node(v.tmp()) })
                .collect(),
        ),
    };
    Node { kind, span: tmp.span }
}

/// What a node costs once aliases are expanded.
#[derive(Clone, Copy)]
struct Size {
    /// Nodes, the node itself included.
    nodes: usize,
    /// Bytes of scalar values (keys included).
    bytes: usize,
    /// Nesting depth: 0 for a scalar, 1 plus the deepest item's for a collection.
    depth: usize,
}

impl Size {
    const EMPTY_COLLECTION: Size = Size { nodes: 1, bytes: 0, depth: 1 };

    fn scalar(value: &str) -> Size {
        Size { nodes: 1, bytes: value.len(), depth: 0 }
    }

    /// Adds an item to a collection of this size.
    fn add(&mut self, item: Size) {
        self.nodes = self.nodes.saturating_add(item.nodes);
        self.bytes = self.bytes.saturating_add(item.bytes);
        self.depth = self.depth.max(item.depth + 1);
    }
}

/// An anchored node with its expanded size.
struct Anchored {
    node: Rc<Tmp>,
    size: Size,
}

/// An open collection.
struct Frame {
    body: Body,
    anchor: usize,
    flow: bool,
    /// Where the collection starts (`[`, `{`, the first `-` or the first key).
    start: usize,
    /// The end of the last item so far.
    end: usize,
    /// The collection's size so far, aliases expanded.
    size: Size,
}

enum Body {
    Seq(Vec<Item>),
    /// `key` waits for its value; `seen` indexes the keys of large mappings.
    Map {
        entries: Vec<(Item, Item)>,
        key: Option<Item>,
        seen: Option<HashMap<String, Span>>,
    },
}

/// Mappings with this many entries get a key index for duplicate detection.
const INDEX_FROM: usize = 16;

fn key_text(key: &Tmp) -> Option<&String> {
    match &key.kind {
        TmpKind::Scalar(s) => Some(&s.value),
        _ => None,
    }
}

/// Reading stopped; the reason is already in the diagnostics.
struct Stop {
    keep_root: bool,
}

struct Builder<'a> {
    text: &'a str,
    limits: &'a Limits,
    chars: CharOffsets<'a>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    /// What the aliases read so far expand to.
    alias_nodes: usize,
    alias_bytes: usize,
    /// The byte where the previous event ended: a block scalar's header lies after it.
    last_end: usize,
    documents: usize,
    root: Option<Item>,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> Builder<'a> {
    fn new(text: &'a str, limits: &'a Limits) -> Builder<'a> {
        Builder {
            text,
            limits,
            chars: CharOffsets::new(text),
            stack: Vec::new(),
            anchors: HashMap::new(),
            alias_nodes: 0,
            alias_bytes: 0,
            last_end: 0,
            documents: 0,
            root: None,
            diagnostics: Vec::new(),
        }
    }

    fn run(&mut self) -> Option<Item> {
        let mut parser = Parser::new_from_str(self.text);
        while let Some(next) = parser.next_event() {
            let step = match next {
                Ok((event, span)) => {
                    let start = self.chars.byte(span.start.index());
                    let end = self.chars.byte(span.end.index()).max(start);
                    let step = self.event(event, start, end);
                    self.last_end = end;
                    step
                }
                Err(error) => Err(self.scan_error(&error)),
            };
            if let Err(stop) = step {
                return if stop.keep_root { self.root.take() } else { None };
            }
        }
        self.root.take()
    }

    fn event(&mut self, event: Event<'_>, start: usize, end: usize) -> Result<(), Stop> {
        match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => Ok(()),
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents == 1 {
                    return Ok(());
                }
                let span = if end > start { Span::new(start, end) } else { self.char_span(start) };
                self.diagnostics.push(
                    Diagnostic::new(Code::YamlSyntax, span, "a workflow file holds one YAML document")
                        .with_help("remove the `---` line, or put each document in its own file"),
                );
                Err(Stop { keep_root: true })
            }
            Event::Scalar(value, style, anchor, tag) => {
                let style = match style {
                    SaphyrStyle::Plain => ScalarStyle::Plain,
                    SaphyrStyle::SingleQuoted => ScalarStyle::SingleQuoted,
                    SaphyrStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
                    SaphyrStyle::Literal => ScalarStyle::Literal,
                    SaphyrStyle::Folded => ScalarStyle::Folded,
                };
                let span = self.scalar_span(style, start, end, anchor != 0 || tag.is_some());
                // saphyr's owned values keep the scanner's buffer capacity
                // (about 128 bytes for a short scalar): keep only the text.
                let value = String::from(&*value);
                let size = Size::scalar(&value);
                let scalar = Scalar { value, style };
                self.insert(Tmp { kind: TmpKind::Scalar(scalar), span }, anchor, size)
            }
            Event::SequenceStart(anchor, _) => self.open(Body::Seq(Vec::new()), anchor, start, end),
            Event::MappingStart(anchor, _) => {
                let body = Body::Map { entries: Vec::new(), key: None, seen: None };
                self.open(body, anchor, start, end)
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(end),
            Event::Alias(id) => self.alias(id, start, end),
        }
    }

    fn open(&mut self, body: Body, anchor: usize, start: usize, end: usize) -> Result<(), Stop> {
        // saphyr's span covers the properties and, for a flow collection, the
        // `[` / `{`; a block collection's span ends where its first item begins.
        let flow = end > start && matches!(self.text.as_bytes()[end - 1], b'[' | b'{');
        let first = if flow { end - 1 } else { end };
        if self.stack.len() >= self.limits.max_depth {
            let message = format!("the YAML is nested more than {} levels deep", self.limits.max_depth);
            self.diagnostics.push(Diagnostic::new(Code::YamlLimit, self.char_span(first), message));
            return Err(Stop { keep_root: false });
        }
        self.stack.push(Frame { body, anchor, flow, start: first, end: first, size: Size::EMPTY_COLLECTION });
        Ok(())
    }

    fn close(&mut self, end: usize) -> Result<(), Stop> {
        let Some(frame) = self.stack.pop() else { return Ok(()) };
        let end = if frame.flow { end } else { frame.end };
        let span = Span::new(frame.start, end.max(frame.start));
        // These vectors end up in the tree (`into_node` collects them in
        // place): drop the capacity left over from growing them.
        let kind = match frame.body {
            Body::Seq(mut items) => {
                items.shrink_to_fit();
                TmpKind::Seq(items)
            }
            Body::Map { mut entries, .. } => {
                entries.shrink_to_fit();
                TmpKind::Map(entries)
            }
        };
        self.insert(Tmp { kind, span }, frame.anchor, frame.size)
    }

    fn alias(&mut self, id: usize, start: usize, end: usize) -> Result<(), Stop> {
        let span = Span::new(start, end);
        let Some(anchored) = self.anchors.get(&id) else {
            // saphyr knows the anchor, so its node is still open: the alias is inside it.
            let name = alias_name(self.text, start);
            let message = format!("the alias `*{name}` is inside the node its anchor names");
            self.diagnostics.push(Diagnostic::new(Code::YamlSyntax, span, message));
            return Err(Stop { keep_root: false });
        };
        let (node, size) = (Rc::clone(&anchored.node), anchored.size);
        self.alias_nodes = self.alias_nodes.saturating_add(size.nodes);
        self.alias_bytes = self.alias_bytes.saturating_add(size.bytes);
        let over = if self.alias_nodes > self.limits.max_alias_nodes {
            Some(format!("aliases expand to more than {} nodes in this file", self.limits.max_alias_nodes))
        } else if self.alias_bytes > self.limits.max_alias_bytes {
            Some(format!("aliases expand to more than {} bytes in this file", self.limits.max_alias_bytes))
        } else {
            None
        };
        if let Some(message) = over {
            self.diagnostics.push(
                Diagnostic::new(Code::YamlLimit, span, message)
                    .with_label(node.span, "this anchored node is repeated by each alias"),
            );
            return Err(Stop { keep_root: false });
        }
        if self.stack.len() + size.depth > self.limits.max_depth {
            let message = format!(
                "through this alias the YAML is nested more than {} levels deep",
                self.limits.max_depth
            );
            self.diagnostics.push(Diagnostic::new(Code::YamlLimit, span, message));
            return Err(Stop { keep_root: false });
        }
        self.attach(Item::Shared(node), size, end)
    }

    /// Adds a finished node to the open collection (or makes it the root),
    /// remembering it first if it is anchored.
    fn insert(&mut self, tmp: Tmp, anchor: usize, size: Size) -> Result<(), Stop> {
        let end = tmp.span.end as usize;
        let item = if anchor == 0 {
            Item::Own(tmp)
        } else {
            let node = Rc::new(tmp);
            self.anchors.insert(anchor, Anchored { node: Rc::clone(&node), size });
            Item::Shared(node)
        };
        self.attach(item, size, end)
    }

    fn attach(&mut self, item: Item, size: Size, end: usize) -> Result<(), Stop> {
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(item);
            return Ok(());
        };
        frame.size.add(size);
        frame.end = frame.end.max(end);
        let (entries, pending, seen) = match &mut frame.body {
            Body::Seq(items) => {
                items.push(item);
                return Ok(());
            }
            Body::Map { entries, key, seen } => (entries, key, seen),
        };
        let Some(key) = pending.take() else {
            *pending = Some(item);
            return Ok(());
        };
        let k = key.tmp();
        let TmpKind::Scalar(s) = &k.kind else {
            let message = "a mapping key must be a single value, not a list or a mapping";
            self.diagnostics.push(Diagnostic::new(Code::YamlSyntax, k.span, message));
            return Ok(());
        };
        // Small mappings (most of them) are searched; large ones get an index.
        let first = match seen {
            Some(index) => index.get(&s.value).copied(),
            None => {
                entries.iter().map(|(k, _)| k.tmp()).find(|k| key_text(k) == Some(&s.value)).map(|k| k.span)
            }
        };
        if let Some(first) = first {
            let message = format!("duplicate key `{}`", shorten(&s.value));
            self.diagnostics.push(
                Diagnostic::new(Code::YamlSyntax, k.span, message).with_label(first, "first defined here"),
            );
            return Ok(());
        }
        if let Some(index) = seen {
            index.insert(s.value.clone(), k.span);
        } else if entries.len() >= INDEX_FROM {
            let index = entries.iter().map(|(k, _)| k.tmp()).chain([k]);
            *seen = Some(index.filter_map(|k| Some((key_text(k)?.clone(), k.span))).collect());
        }
        entries.push((key, item));
        Ok(())
    }

    /// The scalar as written (see the module documentation).
    fn scalar_span(&self, style: ScalarStyle, start: usize, end: usize, properties: bool) -> Span {
        let bytes = self.text.as_bytes();
        match style {
            ScalarStyle::Literal | ScalarStyle::Folded => {
                // saphyr's span starts at the first content line (or at the
                // properties): the header is between the previous event and it.
                let header = find_block_header(bytes, self.last_end.min(start), end).unwrap_or(start);
                let trimmed = self.text[header..end.max(header)].trim_end_matches([' ', '\t', '\r', '\n']);
                let mut end = header + trimmed.len();
                // Trailing blanks of the last content line are content.
                while matches!(bytes.get(end), Some(b' ' | b'\t')) {
                    end += 1;
                }
                Span::new(header, end)
            }
            _ => {
                let start = if properties { skip_properties(bytes, start, end) } else { start };
                // In flow collections saphyr's end can run past the scalar
                // (over the blank before `}` or `,`): trim it back to the
                // closing quote, or to the last non-blank of a plain scalar.
                let raw = &self.text[start..end.max(start)];
                let len = match style {
                    ScalarStyle::SingleQuoted => raw.rfind('\'').map_or(raw.len(), |i| i + 1),
                    ScalarStyle::DoubleQuoted => raw.rfind('"').map_or(raw.len(), |i| i + 1),
                    _ => raw.trim_end_matches([' ', '\t', '\r', '\n']).len(),
                };
                Span::new(start, start + len)
            }
        }
    }

    fn scan_error(&mut self, error: &ScanError) -> Stop {
        let at = self.chars.byte(error.marker().index());
        let info = error.info();
        let mut span = self.char_span(at);
        let (code, message) = if info.contains("unknown anchor") {
            let name = alias_name(self.text, at);
            if self.text.get(at..).is_some_and(|rest| rest.starts_with('*')) {
                span = Span::new(at, at + 1 + name.len());
            }
            (Code::YamlSyntax, format!("unknown alias `*{name}`: no anchor `&{name}` is defined before it"))
        } else if info.contains("invalid indentation in quoted scalar")
            && let Some(line) = under_indented_line(self.text, at)
        {
            // saphyr points at the string's opening quote; the fault is a later line.
            let message = "invalid YAML: this line of a quoted string is not indented more than its key";
            let d = Diagnostic::new(Code::YamlSyntax, line, message)
                .with_label(self.char_span(at), "the string starts here")
                .with_help("indent the line further, or write the string as a block scalar (`|`)");
            self.diagnostics.push(d);
            return Stop { keep_root: false };
        } else if info.contains("unknown escape character")
            && let Some(bad) = first_bad_escape(self.text, at)
        {
            // saphyr points at the opening quote; point at the escape itself.
            let next = self.text[bad + 1..].chars().next().map_or(1, char::len_utf8);
            let escape = &self.text[bad..bad + 1 + next];
            let help = if escape == "\\<" {
                "in a double-quoted YAML string `\\` starts a YAML escape: write `\\\\<<` for a literal `<<`, or use single quotes ('… \\<< …')"
                    .to_owned()
            } else {
                format!("`{escape}` is not a YAML escape: write `\\\\` for a backslash, or use single quotes")
            };
            let d = Diagnostic::new(
                Code::YamlSyntax,
                Span::new(bad, bad + 1 + next),
                format!("invalid YAML: unknown escape `{escape}` in a double-quoted string"),
            )
            .with_label(self.char_span(at), "the string starts here")
            .with_help(help);
            self.diagnostics.push(d);
            return Stop { keep_root: false };
        } else if info.contains("recursion limit exceeded") {
            (Code::YamlLimit, "flow collections (`[`, `{`) are nested more than 255 levels deep".to_owned())
        } else {
            (Code::YamlSyntax, format!("invalid YAML: {info}"))
        };
        self.diagnostics.push(Diagnostic::new(code, span, message));
        Stop { keep_root: false }
    }

    /// The character at `at` (an empty span at a line break or the end).
    fn char_span(&self, at: usize) -> Span {
        match self.text.get(at..).and_then(|rest| rest.chars().next()) {
            Some(c) if c != '\n' && c != '\r' => Span::new(at, at + c.len_utf8()),
            _ => Span::point(at.min(self.text.len())),
        }
    }
}

/// The byte offset of the first invalid escape (`\` and its character) in the
/// double-quoted scalar whose opening quote is at `quote`.
fn first_bad_escape(text: &str, quote: usize) -> Option<usize> {
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
struct CharOffsets<'a> {
    text: &'a str,
    ascii: bool,
    /// The byte offset of every `STRIDE`th character.
    marks: Vec<u32>,
    /// The last (character index, byte offset) answered.
    last: (usize, usize),
}

const STRIDE: usize = 64;

impl<'a> CharOffsets<'a> {
    fn new(text: &'a str) -> CharOffsets<'a> {
        let ascii = text.is_ascii();
        let marks = if ascii {
            Vec::new()
        } else {
            text.char_indices().step_by(STRIDE).map(|(i, _)| i as u32).collect()
        };
        CharOffsets { text, ascii, marks, last: (0, 0) }
    }

    fn byte(&mut self, index: usize) -> usize {
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
fn find_block_header(bytes: &[u8], from: usize, to: usize) -> Option<usize> {
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
fn skip_properties(bytes: &[u8], start: usize, end: usize) -> usize {
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
fn under_indented_line(text: &str, at: usize) -> Option<Span> {
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
fn alias_name(text: &str, at: usize) -> &str {
    let rest = text.get(at..).unwrap_or("");
    let rest = rest.strip_prefix('*').unwrap_or(rest);
    let end = rest.find(|c: char| c.is_whitespace() || ",[]{}".contains(c)).unwrap_or(rest.len());
    let name = &rest[..end];
    name.char_indices().nth(64).map_or(name, |(i, _)| &name[..i])
}

/// A value short enough to quote in a message.
fn shorten(value: &str) -> String {
    match value.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &value[..i]),
        None => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str) -> Parsed {
        parse(&SourceFile::new("t.yaml", yaml), &Limits::default())
    }

    /// The text of the span of `node`.
    fn text<'t>(yaml: &'t str, node: &Node) -> &'t str {
        &yaml[node.span.range()]
    }

    #[test]
    fn scalar_spans_are_the_scalars_as_written() {
        let yaml = "a: plain value\nb: 'it''s'\nc: \"x \\\"y\\\" z\"\nd: |\n  line1\n  line2\n\n\
                    e: >-\n  f1\n  f2\nh: multi\n  line plain\nk: &A val\nm: !!str 12\nn: &B |2 # c|>\n   x\n";
        let parsed = read(yaml);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let root = parsed.root.unwrap();
        let cases = [
            ("a", "plain value"),
            ("b", "'it''s'"),
            ("c", "\"x \\\"y\\\" z\""),
            ("d", "|\n  line1\n  line2"),
            ("e", ">-\n  f1\n  f2"),
            ("h", "multi\n  line plain"),
            ("k", "val"),
            ("m", "12"),
            ("n", "|2 # c|>\n   x"),
        ];
        for (key, expect) in cases {
            assert_eq!(text(yaml, root.get(key).unwrap()), expect, "key {key}");
        }
        let keys: Vec<_> = root.as_map().unwrap().iter().map(|e| text(yaml, &e.key)).collect();
        assert_eq!(keys, ["a", "b", "c", "d", "e", "h", "k", "m", "n"]);
    }

    #[test]
    fn spans_are_byte_offsets_after_multibyte_text() {
        let yaml = "é😀: ünïcødé\nk: \"😀 x\"\nl: |\n  ü\n";
        let root = read(yaml).root.unwrap();
        assert_eq!(text(yaml, root.get("k").unwrap()), "\"😀 x\"");
        assert_eq!(text(yaml, root.get("é😀").unwrap()), "ünïcødé");
        assert_eq!(text(yaml, root.get("l").unwrap()), "|\n  ü");
    }

    #[test]
    fn collection_spans_run_from_start_to_last_item() {
        let yaml = "# c\nf: &x [1, {x: y}]\ng:\n  - p\n  - q   # c\nm:\n  a: 1\n  b: [2]\n";
        let root = read(yaml).root.unwrap();
        assert_eq!(text(yaml, &root), &yaml[4..yaml.len() - 1]);
        assert_eq!(text(yaml, root.get("f").unwrap()), "[1, {x: y}]");
        assert_eq!(text(yaml, root.get("g").unwrap()), "- p\n  - q");
        assert_eq!(text(yaml, root.get("m").unwrap()), "a: 1\n  b: [2]");
    }

    #[test]
    fn empty_block_scalars_and_empty_values() {
        let yaml = "b: |\nc: >\n\nd:\ne: &a\nf: *a\n";
        let parsed = read(yaml);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let root = parsed.root.unwrap();
        assert_eq!(text(yaml, root.get("b").unwrap()), "|");
        assert_eq!(text(yaml, root.get("c").unwrap()), ">");
        assert!(root.get("d").unwrap().is_null());
        assert!(root.get("f").unwrap().is_null());
    }

    #[test]
    fn an_under_indented_quoted_line_is_pointed_at() {
        // The original system's files had this; saphyr reports the opening quote.
        let yaml = "s:\n  - id: a\n    text: 'it''s a\n\n'\n    b: \"x\\\"\n  y\"\n";
        let parsed = read(yaml);
        let d = &parsed.diagnostics[0];
        assert_eq!(d.message, "invalid YAML: this line of a quoted string is not indented more than its key");
        assert_eq!(d.span, Span::new(yaml.find("\n'").unwrap() + 1, yaml.find("\n'").unwrap() + 2));
        assert_eq!(d.labels[0].span.start as usize, yaml.find("'it").unwrap());
        // A string on its own line keeps saphyr's position.
        let parsed = read("k:\n  'a\nb'\n");
        assert_eq!(parsed.diagnostics[0].message, "invalid YAML: invalid indentation in quoted scalar");
    }

    #[test]
    fn duplicate_keys_keep_the_first() {
        let yaml = "a: 1\nb: 2\na: 3\n";
        let parsed = read(yaml);
        assert_eq!(parsed.diagnostics.len(), 1);
        let d = &parsed.diagnostics[0];
        assert_eq!((d.code, d.message.as_str()), (Code::YamlSyntax, "duplicate key `a`"));
        assert_eq!(d.span, Span::new(10, 11));
        assert_eq!(d.labels[0].span, Span::new(0, 1));
        assert_eq!(d.labels[0].message, "first defined here");
        let root = parsed.root.unwrap();
        assert_eq!(root.as_map().unwrap().len(), 2);
        assert_eq!(root.get("a").unwrap().as_scalar().unwrap().value, "1");
    }

    #[test]
    fn aliases_are_expanded() {
        let yaml = "base: &b {x: 1, y: [2]}\nuse: *b\nagain: *b\n";
        let parsed = read(yaml);
        assert!(parsed.diagnostics.is_empty());
        let root = parsed.root.unwrap();
        assert_eq!(root.get("use"), root.get("base"));
        assert_eq!(root.get("again").unwrap().get("y").unwrap().as_seq().unwrap().len(), 1);
    }

    #[test]
    fn empty_and_comment_only_files_have_no_root() {
        for yaml in ["", "# only a comment\n", "\n\n   \n"] {
            let parsed = read(yaml);
            assert!(parsed.root.is_none() && parsed.diagnostics.is_empty(), "{yaml:?}");
        }
    }

    #[test]
    fn a_second_document_is_an_error() {
        let yaml = "a: 1\n---\nb: 2\n";
        let parsed = read(yaml);
        assert_eq!(parsed.diagnostics.len(), 1);
        assert_eq!(parsed.diagnostics[0].message, "a workflow file holds one YAML document");
        assert_eq!(parsed.diagnostics[0].span, Span::new(5, 8));
        assert!(parsed.root.unwrap().get("a").is_some());
    }

    #[test]
    fn char_offsets_convert_indices() {
        let text = "aé😀".repeat(100);
        let mut offsets = CharOffsets::new(&text);
        let expected: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        for (index, byte) in expected.iter().enumerate() {
            assert_eq!(offsets.byte(index), *byte);
        }
        for index in [5, 299, 3, 170, 171, 64, 63, 0, 300] {
            assert_eq!(offsets.byte(index), expected[index], "{index}");
        }
        assert_eq!(offsets.byte(10_000), text.len());
    }
}
