//! The journal's line format and its torn-tail rule, shared by `load` (which
//! reads every line), `append` (which looks only at the last lines) and
//! `repair` (which says where the damage starts).
//!
//! Each line is one JSON object, the event with two fields added:
//!
//! ```text
//! {"seq":3,"version":4,…,"crc32c":"1a2b3c4d"}
//! ```
//!
//! `seq` is the line's number in the file (1-based), so a line dropped,
//! repeated or moved is seen; `crc32c` is the CRC32C (Castagnoli) of the
//! line without its `,"crc32c":"…"` part (that is, of the bytes before it
//! followed by `}`), as eight lowercase hex digits, always last. A changed
//! character that leaves the JSON valid no longer passes for the event that
//! was acknowledged.
//!
//! Journals written before checksums existed have plain event lines. Such a
//! line is still read (checked as before: JSON with a growing `version`),
//! but only *before* the first checksummed line: once a journal has one,
//! every later line must have one too. An old journal is rewritten in the new
//! format at the run's next snapshot (which empties the journal).
//!
//! The valid journal is the longest run of good lines after which only a
//! torn tail remains. A torn tail is whatever follows the last newline, plus
//! the last complete line if it is not valid JSON (a write the crash cut
//! short). Any other bad line — a middle line that is not JSON, a checksum
//! that does not match, a sequence number that is not the line's number, a
//! version that does not grow, a plain line after a checksummed one — makes
//! the journal corrupt, and the error names the line.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use serde_json::Value;

/// The version of a snapshot or event: its top-level integer `version`.
pub(super) fn version_of(value: &Value) -> Option<u64> {
    value.get("version")?.as_u64()
}

/// The incarnation a snapshot or event belongs to: its top-level
/// `generation`, or `None` (files written before generations existed, whose
/// events belong to the snapshot they sit beside).
pub(super) fn generation_of(value: &Value) -> Option<&Value> {
    value.get("generation")
}

/// The fields a line adds to its event; an event may not carry them itself.
const SEQ: &str = "seq";
const CRC: &str = "crc32c";

/// `,"crc32c":"` — the checksum's field starts every line's last 21 bytes.
const CRC_PREFIX: &[u8] = b",\"crc32c\":\"";
const CRC_SUFFIX_LEN: usize = CRC_PREFIX.len() + 8 + 2;

/// An event as the journal takes it: its compact JSON text (an object
/// without a top-level `seq` or `crc32c`) and the `version` and
/// `generation` in it. The engine serialises its typed event straight into
/// one ([`EventJson::new`]) instead of through a `serde_json::Value`.
#[derive(Clone, Debug, PartialEq)]
pub struct EventJson {
    json: Vec<u8>,
    version: u64,
    generation: Option<Value>,
}

impl EventJson {
    /// `event` serialised, with `"generation"` added as its last field when
    /// given: the same bytes as the event made a `Value`, `generation` set
    /// on it, then serialised (the event must not have a `generation`,
    /// `seq` or `crc32c` field of its own; it is a caller's bug if it has).
    pub fn new(
        event: &impl serde::Serialize,
        version: u64,
        generation: Option<&str>,
    ) -> Result<EventJson, String> {
        let mut json = Vec::with_capacity(256);
        serde_json::to_writer(&mut json, event).map_err(|e| e.to_string())?;
        if json.first() != Some(&b'{') || json.last() != Some(&b'}') {
            return Err("an event must be a JSON object".into());
        }
        let generation = generation.map(|g| Value::String(g.to_owned()));
        if let Some(g) = &generation {
            json.pop();
            json.extend_from_slice(if json.len() > 1 { b",\"generation\":" } else { b"\"generation\":" });
            serde_json::to_writer(&mut json, g).map_err(|e| e.to_string())?;
            json.push(b'}');
        }
        debug_assert_eq!(
            serde_json::from_slice::<Value>(&json).ok().as_ref().and_then(version_of),
            Some(version),
            "the event's own version"
        );
        Ok(EventJson { json, version, generation })
    }

    /// `event`, a JSON object with an integer `version`, serialised.
    pub(super) fn from_value(event: &Value) -> Result<EventJson, String> {
        let version = version_of(event).ok_or("refusing to append an event without an integer `version`")?;
        let json = object_json(event)?;
        Ok(EventJson { json, version, generation: generation_of(event).cloned() })
    }

    /// The event's `version`.
    pub(super) fn version(&self) -> u64 {
        self.version
    }

    /// The event's `generation` (see [`generation_of`]).
    pub(super) fn generation(&self) -> Option<&Value> {
        self.generation.as_ref()
    }

    /// The event's JSON text.
    pub fn json(&self) -> &[u8] {
        &self.json
    }
}

/// The line (with its newline) for `event` as line `seq` of a journal.
pub(super) fn encode(seq: u64, event: &Value) -> Result<Vec<u8>, String> {
    Ok(encode_object(seq, &object_json(event)?))
}

/// The compact JSON of `event`, which must be an object without the
/// line's own fields.
fn object_json(event: &Value) -> Result<Vec<u8>, String> {
    let Some(object) = event.as_object() else { return Err("an event must be a JSON object".into()) };
    if object.contains_key(SEQ) || object.contains_key(CRC) {
        return Err(format!("an event may not have a top-level `{SEQ}` or `{CRC}` field"));
    }
    serde_json::to_vec(event).map_err(|e| e.to_string())
}

/// [`encode`] of an event already serialised.
pub(super) fn encode_json(seq: u64, event: &EventJson) -> Vec<u8> {
    encode_object(seq, &event.json)
}

/// [`encode`] of `bytes`, the compact JSON of an event.
fn encode_object(seq: u64, bytes: &[u8]) -> Vec<u8> {
    // `{…}`: the event's fields go between `{"seq":N,` and the checksum.
    let fields = &bytes[1..bytes.len() - 1];
    let mut body = Vec::with_capacity(bytes.len() + 48);
    // Written piece by piece, not with `format!` (two a journal line).
    body.extend_from_slice(b"{\"");
    body.extend_from_slice(SEQ.as_bytes());
    body.extend_from_slice(b"\":");
    body.extend_from_slice(itoa::Buffer::new().format(seq).as_bytes());
    if !fields.is_empty() {
        body.push(b',');
        body.extend_from_slice(fields);
    }
    body.push(b'}');
    let crc = crc32c(&body);
    body.pop();
    body.extend_from_slice(CRC_PREFIX);
    // `{crc:08x}`: eight lowercase hex digits.
    for shift in (0..8).rev() {
        body.push(b"0123456789abcdef"[(crc >> (shift * 4)) as usize & 0xf]);
    }
    body.extend_from_slice(b"\"}\n");
    body
}

/// One line read back.
enum Line {
    /// A checksummed line: its sequence number and the event.
    Checked(u64, Value),
    /// A line written before checksums.
    Plain(Value),
}

/// Why a line is bad.
enum LineError {
    /// Not JSON at all (a torn write, if it is the last line).
    NotJson(String),
    /// JSON, but not what was written.
    Damaged(String),
}

fn decode(line: &[u8]) -> Result<Line, LineError> {
    if let Some((body, crc)) = split_checksum(line) {
        if crc32c(&body) != crc {
            return Err(match serde_json::from_slice::<Value>(line) {
                Ok(_) => {
                    LineError::Damaged("checksum mismatch: the line was changed after it was written".into())
                }
                Err(e) => LineError::NotJson(e.to_string()),
            });
        }
        let Ok(Value::Object(mut object)) = serde_json::from_slice::<Value>(&body) else {
            return Err(LineError::Damaged("a checksummed line that is not a JSON object".into()));
        };
        let Some(seq) = object.shift_remove(SEQ).and_then(|s| s.as_u64()) else {
            return Err(LineError::Damaged(format!("a checksummed line without an integer `{SEQ}`")));
        };
        return Ok(Line::Checked(seq, Value::Object(object)));
    }
    let value = serde_json::from_slice::<Value>(line).map_err(|e| LineError::NotJson(e.to_string()))?;
    if value.get(CRC).is_some() || value.get(SEQ).is_some() {
        return Err(LineError::Damaged(format!("the `{CRC}` field is damaged")));
    }
    Ok(Line::Plain(value))
}

/// Splits a checksummed line into the bytes its checksum covers and the
/// checksum; `None` for a line that does not end like one.
fn split_checksum(line: &[u8]) -> Option<(Vec<u8>, u32)> {
    let at = line.len().checked_sub(CRC_SUFFIX_LEN)?;
    let suffix = &line[at..];
    if !suffix.starts_with(CRC_PREFIX) || !suffix.ends_with(b"\"}") {
        return None;
    }
    let hex = std::str::from_utf8(&suffix[CRC_PREFIX.len()..CRC_PREFIX.len() + 8]).ok()?;
    if !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    let crc = u32::from_str_radix(hex, 16).ok()?;
    let mut body = line[..at].to_vec();
    body.push(b'}');
    Some((body, crc))
}

/// Where a journal stops being good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Damage {
    /// The first bad line (1-based).
    pub line: usize,
    /// Its byte offset.
    pub offset: usize,
    /// What is wrong with it, naming the line.
    pub message: String,
}

/// A whole journal read line by line.
#[derive(Debug)]
pub(super) struct Scan {
    /// The good events: `(version, event)`, the added fields removed.
    pub events: Vec<(u64, Value)>,
    /// The bytes of the good lines (the journal is good up to here).
    pub good_len: usize,
    /// The first bad line, if a line other than a torn tail is bad.
    pub damage: Option<Damage>,
}

/// Reads a whole journal, stopping at the first bad line (a torn tail is
/// not damage).
pub(super) fn scan(bytes: &[u8]) -> Scan {
    let mut out = Scan { events: Vec::new(), good_len: 0, damage: None };
    let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else { return out };
    let lines: Vec<&[u8]> = bytes[..end].split(|&b| b == b'\n').collect();
    let mut checked = false;
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        let fail = |message: String| {
            Some(Damage { line: n, offset: out.good_len, message: format!("journal line {n}: {message}") })
        };
        let value = match decode(line) {
            Err(LineError::NotJson(_)) if n == lines.len() => break,
            Err(LineError::NotJson(e)) => {
                out.damage = fail(format!("not JSON: {e}"));
                break;
            }
            Err(LineError::Damaged(m)) => {
                out.damage = fail(m);
                break;
            }
            Ok(Line::Plain(_)) if checked => {
                out.damage = fail("a line without a checksum after one with a checksum".into());
                break;
            }
            Ok(Line::Plain(value)) => value,
            Ok(Line::Checked(seq, _)) if seq != n as u64 => {
                out.damage = fail(format!(
                    "sequence number {seq} where {n} was expected (a line is missing, repeated or out of order)"
                ));
                break;
            }
            Ok(Line::Checked(_, value)) => {
                checked = true;
                value
            }
        };
        let Some(version) = version_of(&value) else {
            out.damage = fail("event has no integer `version`".into());
            break;
        };
        if let Some(&(last, _)) = out.events.last()
            && version <= last
        {
            out.damage = fail(format!("version {version} does not follow {last}"));
            break;
        }
        out.events.push((version, value));
        out.good_len += line.len() + 1;
    }
    out
}

/// Parses a whole journal into `(version, event)` pairs, ignoring a torn
/// tail. Errors are messages for `StoreError::Corrupt`.
pub(super) fn parse(bytes: &[u8]) -> Result<Vec<(u64, Value)>, String> {
    let scan = scan(bytes);
    match scan.damage {
        Some(damage) => Err(damage.message),
        None => Ok(scan.events),
    }
}

/// What `append` needs to know about the end of a journal of `len` bytes.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Tail {
    /// Where the valid journal ends; bytes after it are a torn tail.
    pub valid_len: u64,
    /// The version of the last valid event, if any.
    pub last_version: Option<u64>,
    /// The generation of the last valid event (`None` if it has none, or if
    /// there is no event).
    pub last_generation: Option<Value>,
    /// The sequence number of the next line (the number of valid lines + 1).
    pub next_seq: u64,
}

/// Errors from [`tail`]: an I/O failure, or a corrupt line.
pub(super) enum TailError {
    Io(std::io::Error),
    Corrupt(String),
}

impl From<std::io::Error> for TailError {
    fn from(e: std::io::Error) -> TailError {
        TailError::Io(e)
    }
}

const EMPTY: Tail = Tail { valid_len: 0, last_version: None, last_generation: None, next_seq: 1 };

/// Applies the torn-tail rule to the end of `file`, reading only the last
/// line or two (so the cost does not grow with the journal, except once for
/// a journal whose last line has no checksum: its lines are counted).
pub(super) fn tail(file: &mut File, len: u64) -> Result<Tail, TailError> {
    let Some(last_nl) = newline_before(file, len)? else { return Ok(EMPTY) };
    let start = line_start(file, last_nl)?;
    let line = read_range(file, start, last_nl)?;
    match decode(&line) {
        Ok(line) => return tail_at(file, line, start, last_nl + 1),
        Err(LineError::Damaged(m)) => return Err(corrupt_at(start, &m)),
        Err(LineError::NotJson(_)) => {}
    }
    // The last complete line is torn; the one before it must be valid.
    if start == 0 {
        return Ok(EMPTY);
    }
    let prev_start = line_start(file, start - 1)?;
    let prev = read_range(file, prev_start, start - 1)?;
    match decode(&prev) {
        Ok(line) => tail_at(file, line, prev_start, start),
        Err(LineError::Damaged(m) | LineError::NotJson(m)) => Err(corrupt_at(prev_start, &m)),
    }
}

/// The tail whose last valid line, starting at `start`, is `line`, ending
/// (newline included) at `valid_len`.
fn tail_at(file: &mut File, line: Line, start: u64, valid_len: u64) -> Result<Tail, TailError> {
    let (seq, value) = match line {
        Line::Checked(seq, value) => (seq, value),
        Line::Plain(value) => (count_lines(file, valid_len)?, value),
    };
    let version = version_of(&value).ok_or_else(|| corrupt_at(start, "event has no integer `version`"))?;
    Ok(Tail {
        valid_len,
        last_version: Some(version),
        last_generation: generation_of(&value).cloned(),
        next_seq: seq + 1,
    })
}

fn corrupt_at(start: u64, message: &str) -> TailError {
    TailError::Corrupt(format!("journal line at byte {start}: {message}"))
}

/// The number of newlines before offset `end`.
fn count_lines(file: &mut File, end: u64) -> std::io::Result<u64> {
    file.seek(SeekFrom::Start(0))?;
    let mut count = 0;
    let mut buf = vec![0; 64 * 1024];
    let mut left = end;
    while left > 0 {
        let want = buf.len().min(left as usize);
        file.read_exact(&mut buf[..want])?;
        count += buf[..want].iter().filter(|&&b| b == b'\n').count() as u64;
        left -= want as u64;
    }
    Ok(count)
}

/// Where the line ending at the newline at `nl` starts.
fn line_start(file: &mut File, nl: u64) -> std::io::Result<u64> {
    Ok(newline_before(file, nl)?.map_or(0, |at| at + 1))
}

/// The offset of the last newline before offset `end`, reading backwards in
/// chunks.
fn newline_before(file: &mut File, end: u64) -> std::io::Result<Option<u64>> {
    const CHUNK: u64 = 8 * 1024;
    let mut buf = Vec::new();
    let mut hi = end;
    while hi > 0 {
        let lo = hi.saturating_sub(CHUNK);
        buf.resize((hi - lo) as usize, 0);
        file.seek(SeekFrom::Start(lo))?;
        file.read_exact(&mut buf)?;
        if let Some(at) = buf.iter().rposition(|&b| b == b'\n') {
            return Ok(Some(lo + at as u64));
        }
        hi = lo;
    }
    Ok(None)
}

fn read_range(file: &mut File, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0; (end - start) as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut buf)?;
    Ok(buf)
}

/// CRC32C (Castagnoli), as iSCSI and ext4's metadata use it (the `crc32c`
/// crate: the CPU's instruction where there is one).
pub(super) fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// A journal's events as lines, numbered from 1 (an archived run restored).
pub(super) fn encode_all(events: &[Value]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for (i, event) in events.iter().enumerate() {
        out.extend(encode(i as u64 + 1, event)?);
    }
    Ok(out)
}
