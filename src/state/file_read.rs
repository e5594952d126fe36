//! The file store's optimistic read of a run (`FileStore::load` retries
//! it): the snapshot and the journal read, and kept only if the run's stamp
//! did not change meanwhile.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};

use super::{FileStore, Paths, file_id};
use crate::state::{FileId, Stamp, StoreError};

/// The outcome of one optimistic read of a run.
pub(super) enum Attempt {
    Missing,
    /// The run changed while being read.
    Changed,
    Read {
        snapshot: Vec<u8>,
        journal: Vec<u8>,
        stamp: Stamp,
    },
}

impl FileStore {
    /// One optimistic read of a run: the bytes are kept only if the stamp
    /// did not change while they were read.
    pub(super) fn read_once(&self, p: &Paths) -> Result<Attempt, StoreError> {
        let mut snapshot = match crate::fsx::open_nofollow(&p.snapshot, OpenOptions::new().read(true)) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Attempt::Missing),
            Err(e) => return Err(StoreError::io(&p.snapshot, e)),
        };
        let snapshot_id = file_id(&snapshot.metadata().map_err(|e| StoreError::io(&p.snapshot, e))?);
        let journal = match crate::fsx::open_nofollow(&p.journal, OpenOptions::new().read(true)) {
            Ok(file) => {
                let meta = file.metadata().map_err(|e| StoreError::io(&p.journal, e))?;
                Some((file, file_id(&meta)))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(StoreError::io(&p.journal, e)),
        };
        let journal_id = journal.as_ref().map_or_else(FileId::default, |(_, id)| *id);
        let before = Stamp { snapshot: snapshot_id, journal: journal_id };

        let mut snapshot_bytes = Vec::with_capacity(snapshot_id.len as usize);
        snapshot.read_to_end(&mut snapshot_bytes).map_err(|e| StoreError::io(&p.snapshot, e))?;
        let mut journal_bytes = Vec::with_capacity(journal_id.len as usize);
        if let Some((file, id)) = journal {
            // Read exactly the bytes the stamp describes.
            file.take(id.len).read_to_end(&mut journal_bytes).map_err(|e| StoreError::io(&p.journal, e))?;
        }
        if self.stamp_of(p)? != Some(before) {
            return Ok(Attempt::Changed);
        }
        Ok(Attempt::Read { snapshot: snapshot_bytes, journal: journal_bytes, stamp: before })
    }
}
