//! Content-addressed objects: the bytes of the workflow files (and named
//! schemas) runs are pinned to, stored once under their SHA-256 and shared
//! by every run that uses them.
//!
//! The file store keeps each in `<state>/objects/sha256-<hex>`, written
//! through a temporary file of its own, fsync'd and renamed into place: an
//! object is whole or absent, and two writers of the same object write the
//! same bytes. An object already there is never written again. Reading one
//! checks its hash, so an object changed by hand is `STATE_CORRUPT`, never
//! silently run.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read};
use std::path::PathBuf;

use super::file::{file_names, remove, sync_dir};
use super::{FileStore, StoreError};

/// One stored object: its hash, and when it was last stored (a store of
/// an object already there refreshes the time, so a collector that spares
/// young objects never removes one a run is being pinned to).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredObject {
    /// `sha256:<hex>`.
    pub hash: String,
    /// When it was last stored.
    pub stored_at: std::time::SystemTime,
}

/// `sha256:<hex>` of `bytes`: an object's name, and the hash every pinned
/// workflow, schema and prompt is known by.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// True for `sha256:` and 64 lowercase hex digits.
pub fn valid_object_hash(hash: &str) -> bool {
    hash.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

pub(super) fn check_hash(hash: &str) -> Result<(), StoreError> {
    if valid_object_hash(hash) {
        Ok(())
    } else {
        Err(StoreError::InvalidId { what: "object hash", value: hash.to_owned() })
    }
}

/// Checks that `bytes` are the object `hash` names.
pub(super) fn verify(hash: &str, bytes: &[u8], place: impl Into<PathBuf>) -> Result<(), StoreError> {
    let actual = sha256_hex(bytes);
    if actual == hash {
        return Ok(());
    }
    Err(StoreError::corrupt(place, format!("object {hash} holds bytes that hash to {actual}")))
}
/// The object half of a [`super::StateStore`]: content-addressed bytes.
pub trait ObjectStore {
    /// Stores `bytes` under `hash` (`sha256:<hex>` of them) unless an object
    /// with that hash is there already (then only its stored time is
    /// refreshed). Durable before returning.
    fn put_object(&self, hash: &str, bytes: &[u8]) -> Result<(), StoreError>;

    /// [`put_object`](Self::put_object) for bytes whose `hash` the caller
    /// computed from these very bytes in this process ([`sha256_hex`]): a
    /// store may skip hashing them again to check the name. Reading an
    /// object back still checks it. By default, `put_object`.
    fn put_hashed_object(&self, hash: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.put_object(hash, bytes)
    }

    /// The bytes stored under `hash`, or `None`. Bytes that no longer hash
    /// to `hash` are `StoreError::Corrupt`.
    fn get_object(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Every stored object, sorted by hash.
    fn objects(&self) -> Result<Vec<StoredObject>, StoreError>;

    /// Removes an object; true if it existed.
    fn delete_object(&self, hash: &str) -> Result<bool, StoreError>;
}

impl FileStore {
    fn objects_dir(&self) -> PathBuf {
        self.dir().join("objects")
    }

    fn object_path(&self, hash: &str) -> Result<PathBuf, StoreError> {
        check_hash(hash)?;
        self.check_confined()?;
        Ok(self.objects_dir().join(hash.replacen(':', "-", 1)))
    }

    /// Stores checked bytes at `path` unless an object is there already.
    fn store_object(&self, path: PathBuf, bytes: &[u8]) -> Result<(), StoreError> {
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            // Already stored: refresh its time (see `StoredObject`).
            let file = crate::fsx::open_nofollow(&path, OpenOptions::new().write(true));
            return file
                .and_then(|f| f.set_modified(std::time::SystemTime::now()))
                .map_err(|e| StoreError::io(&path, e));
        }
        self.write_durably(&path, bytes)
    }
}

impl ObjectStore for FileStore {
    fn put_object(&self, hash: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.object_path(hash)?;
        verify(hash, bytes, &path)?;
        self.store_object(path, bytes)
    }

    fn put_hashed_object(&self, hash: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.object_path(hash)?;
        debug_assert_eq!(sha256_hex(bytes), hash, "put_hashed_object: bytes that do not hash to the name");
        self.store_object(path, bytes)
    }

    fn get_object(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.object_path(hash)?;
        let mut file = match crate::fsx::open_nofollow(&path, OpenOptions::new().read(true)) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| StoreError::io(&path, e))?;
        verify(hash, &bytes, &path)?;
        Ok(Some(bytes))
    }

    fn objects(&self) -> Result<Vec<StoredObject>, StoreError> {
        self.check_confined()?;
        let dir = self.objects_dir();
        let mut out = Vec::new();
        for entry in file_names(&dir)? {
            let Some(hash) = entry.to_str().map(|n| n.replacen('-', ":", 1)) else { continue };
            if !valid_object_hash(&hash) {
                continue;
            }
            let Ok(meta) = fs::symlink_metadata(dir.join(&entry)) else { continue };
            let stored_at = meta.modified().map_err(|e| StoreError::io(dir.join(&entry), e))?;
            out.push(StoredObject { hash, stored_at });
        }
        out.sort_by(|a, b| a.hash.cmp(&b.hash));
        Ok(out)
    }

    fn delete_object(&self, hash: &str) -> Result<bool, StoreError> {
        let path = self.object_path(hash)?;
        let existed = remove(&path)?;
        if existed && self.fsync() {
            sync_dir(&self.objects_dir())?;
        }
        Ok(existed)
    }
}
