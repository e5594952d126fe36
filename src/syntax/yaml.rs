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

use crate::diagnostic::{Code, Diagnostic};
use crate::source::Limits;
use crate::source::{SourceFile, Span};
use crate::syntax::node::{Entry, Node, NodeKind, Scalar, ScalarStyle};

#[path = "yaml_text.rs"]
mod text;
use text::{
    CharOffsets, alias_name, find_block_header, first_bad_escape, indentation_tab, shorten, skip_properties,
    under_indented_line,
};

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
    if let Some((at, c)) = first_non_printable(text) {
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

/// The first character outside [`is_printable`]. Most files are printable
/// ASCII: their bytes are scanned as bytes, characters only from the first
/// other byte on.
fn first_non_printable(text: &str) -> Option<(usize, char)> {
    let bytes = text.as_bytes();
    let from =
        bytes.iter().position(|&b| !matches!(b, b'\t' | b'\n' | b'\r' | b' '..=b'~')).unwrap_or(bytes.len());
    // Every byte before `from` is ASCII: `from` is a character boundary.
    text[from..].char_indices().map(|(i, c)| (from + i, c)).find(|&(_, c)| !is_printable(c))
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
    /// Nodes written in the file so far (scalars and collections).
    nodes: usize,
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
            nodes: 0,
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
        if matches!(event, Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..)) {
            self.nodes += 1;
            if self.nodes > self.limits.max_nodes {
                let message = format!("the file holds more than {} YAML nodes", self.limits.max_nodes);
                let span = if end > start { Span::new(start, end) } else { self.char_span(start) };
                self.diagnostics.push(Diagnostic::new(Code::YamlLimit, span, message).with_help(
                    "split the workflow, or move large data out of it (a params default, a schema file)",
                ));
                return Err(Stop { keep_root: false });
            }
        }
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
        } else if info.contains("tab")
            && let Some(tab) = indentation_tab(self.text, at)
        {
            // saphyr points near the end of the line before; the fault is the tab.
            let d = Diagnostic::new(
                Code::YamlSyntax,
                Span::new(tab, tab + 1),
                "invalid YAML: tabs are not allowed for indentation",
            )
            .with_help("indent with spaces (YAML forbids tabs in indentation)");
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

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
