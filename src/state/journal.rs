//! The journal's line format and its torn-tail rule, shared by `load` (which
//! reads every line) and `append` (which looks only at the last lines).
//!
//! The valid journal is the longest run of complete lines after which only a
//! torn tail remains. A torn tail is whatever follows the last newline, plus
//! the last complete line if it is not valid JSON. Any other bad line makes
//! the journal corrupt.

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

/// Parses a whole journal into `(version, event)` pairs, ignoring a torn
/// tail. Errors are messages for `StoreError::Corrupt`.
pub(super) fn parse(bytes: &[u8]) -> Result<Vec<(u64, Value)>, String> {
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(at) => &bytes[..at],
        None => return Ok(Vec::new()),
    };
    let lines: Vec<&[u8]> = complete.split(|&b| b == b'\n').collect();
    let mut events = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let value = match serde_json::from_slice::<Value>(line) {
            Ok(value) => value,
            Err(_) if i + 1 == lines.len() => break,
            Err(e) => return Err(format!("journal line {}: {e}", i + 1)),
        };
        let version = event_version(&value, i + 1)?;
        if let Some(&(last, _)) = events.last()
            && version <= last
        {
            return Err(format!("journal line {}: version {version} does not follow {last}", i + 1));
        }
        events.push((version, value));
    }
    Ok(events)
}

fn event_version(value: &Value, line: usize) -> Result<u64, String> {
    version_of(value).ok_or_else(|| format!("journal line {line}: event has no integer `version`"))
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

/// Applies the torn-tail rule to the end of `file`, reading only the last
/// line or two (so the cost does not grow with the journal).
pub(super) fn tail(file: &mut File, len: u64) -> Result<Tail, TailError> {
    let Some(last_nl) = newline_before(file, len)? else {
        return Ok(Tail { valid_len: 0, last_version: None, last_generation: None });
    };
    let start = line_start(file, last_nl)?;
    let line = read_range(file, start, last_nl)?;
    if let Ok(value) = serde_json::from_slice::<Value>(&line) {
        let version = event_version(&value, 0).map_err(|_| {
            TailError::Corrupt(format!("journal line at byte {start}: event has no integer `version`"))
        })?;
        let last_generation = generation_of(&value).cloned();
        return Ok(Tail { valid_len: last_nl + 1, last_version: Some(version), last_generation });
    }
    // The last complete line is torn; the one before it must be valid.
    if start == 0 {
        return Ok(Tail { valid_len: 0, last_version: None, last_generation: None });
    }
    let prev_start = line_start(file, start - 1)?;
    let prev = read_range(file, prev_start, start - 1)?;
    let value = serde_json::from_slice::<Value>(&prev)
        .map_err(|e| TailError::Corrupt(format!("journal line at byte {prev_start}: {e}")))?;
    let version = version_of(&value).ok_or_else(|| {
        TailError::Corrupt(format!("journal line at byte {prev_start}: event has no integer `version`"))
    })?;
    let last_generation = generation_of(&value).cloned();
    Ok(Tail { valid_len: start, last_version: Some(version), last_generation })
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
