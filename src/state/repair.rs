//! `state repair`: a run's journal checked line by line, and cut back to its
//! last good event when asked (after a backup of the whole file).
//!
//! Only the file store's journal is a file of lines that can be damaged in
//! place; PostgreSQL keeps each event in a row of its own (written in one
//! transaction, its version the key) and the memory store in memory, so
//! [`StateStore::check_journal`](super::StateStore::check_journal) answers
//! `None` there.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read};
use std::path::PathBuf;

use super::file::{FileStore, sync_dir};
use super::journal;
use super::{RunKey, StoreError};

/// How many characters of a cut line a report shows.
const PREVIEW: usize = 120;

/// What `state repair` found in a journal, and did to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalCheck {
    /// The journal file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// How many lines are good (kept).
    pub good_lines: usize,
    /// The first damaged line and what is wrong with it (`None`: no line is
    /// damaged; a torn tail is not damage).
    pub damage: Option<(usize, String)>,
    /// The bytes after the last good line (damaged lines, the lines after
    /// them, a torn tail): what a repair cuts.
    pub cut_bytes: u64,
    /// The lines a repair cuts: their number and their first characters.
    pub cut_lines: Vec<(usize, String)>,
    /// Where the whole journal was copied before it was cut (only when it was).
    pub backup: Option<PathBuf>,
}

impl FileStore {
    /// See [`StateStore::check_journal`](super::StateStore::check_journal).
    pub(super) fn check_journal_file(
        &self,
        key: &RunKey,
        apply: bool,
    ) -> Result<Option<JournalCheck>, StoreError> {
        key.validate()?;
        let path = self.dir().join(format!("{}__{}.journal", key.workflow, key.run_id));
        let io = |e| StoreError::io(&path, e);
        // A dry run only reads (a read-only state directory can be checked).
        let mut file = match crate::fsx::open_nofollow(&path, OpenOptions::new().read(true).write(apply)) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let empty = JournalCheck {
                    path: path.clone(),
                    bytes: 0,
                    good_lines: 0,
                    damage: None,
                    cut_bytes: 0,
                    cut_lines: Vec::new(),
                    backup: None,
                };
                return Ok(Some(empty));
            }
            Err(e) => return Err(io(e)),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let scan = journal::scan(&bytes);
        let rest = &bytes[scan.good_len..];
        let good_lines = scan.events.len();
        let cut_lines = rest
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .enumerate()
            .map(|(i, l)| (good_lines + i + 1, String::from_utf8_lossy(l).chars().take(PREVIEW).collect()))
            .collect();
        let mut check = JournalCheck {
            path: path.clone(),
            bytes: bytes.len() as u64,
            good_lines,
            damage: scan.damage.map(|d| (d.line, d.message)),
            cut_bytes: rest.len() as u64,
            cut_lines,
            backup: None,
        };
        if !apply || rest.is_empty() {
            return Ok(Some(check));
        }
        let backup = self.free_backup_name(&path)?;
        self.write_durably(&backup, &bytes)?;
        self.forget_journal(&path);
        file.set_len(scan.good_len as u64).map_err(io)?;
        // The length alone may repeat a length seen before: a fresh mtime
        // keeps the run's stamp new (best effort, as in `append`).
        let _ =
            file.set_modified(super::file::next_mtime(file.metadata().ok().and_then(|m| m.modified().ok())));
        if self.fsync() {
            file.sync_all().map_err(io)?;
            sync_dir(self.dir())?;
        }
        check.backup = Some(backup);
        Ok(Some(check))
    }

    /// `<journal>.bak`, or `.bak.2`, `.bak.3`, … when taken: a backup is
    /// never overwritten.
    fn free_backup_name(&self, journal: &std::path::Path) -> Result<PathBuf, StoreError> {
        let name = journal.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for n in 1..10_000u32 {
            let candidate = match n {
                1 => journal.with_file_name(format!("{name}.bak")),
                n => journal.with_file_name(format!("{name}.bak.{n}")),
            };
            match fs::symlink_metadata(&candidate) {
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(candidate),
                Err(e) => return Err(StoreError::io(&candidate, e)),
                Ok(_) => {}
            }
        }
        Err(StoreError::Io {
            path: journal.to_path_buf(),
            message: "too many journal backups; remove some".into(),
        })
    }
}
