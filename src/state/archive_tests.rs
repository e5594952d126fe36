//! Archived runs and objects, on every backend (see `tests::backends`).

use std::fs;

use serde_json::json;

use super::tests::{backends, key, seed};
use super::*;

fn gen_snapshot(version: u64, generation: &str) -> serde_json::Value {
    json!({"version": version, "generation": generation, "params": {}})
}

#[test]
fn archive_list_load_restore_and_delete() {
    for b in backends("archive") {
        let store = &*b.store;
        let k = key("wf", "r1");
        assert_eq!(store.archive(&k, "2026-01-01T00:00:00Z").unwrap(), None, "{}", b.name);
        {
            let _lock = store.lock(&k).unwrap();
            store.write_snapshot(&k, &gen_snapshot(1, "g1")).unwrap();
            store.append(&k, &json!({"version": 2, "generation": "g1", "x": 1})).unwrap();
        }
        let live = store.load(&k).unwrap().unwrap();
        let _lock = store.lock(&k).unwrap();
        let a = store.archive(&k, "2026-01-01T00:00:00Z").unwrap().unwrap();
        assert_eq!(a.archive_id, "v2-g1", "{}", b.name);
        // The same state archived again is the same entry.
        assert_eq!(store.archive(&k, "2026-01-01T00:00:00Z").unwrap().unwrap(), a, "{}", b.name);
        assert_eq!(store.archived(None).unwrap(), vec![a.clone()], "{}", b.name);
        assert_eq!(store.archived(Some("other")).unwrap(), vec![], "{}", b.name);
        let archived = store.load_archived(&k, "v2-g1").unwrap().unwrap();
        assert_eq!((archived.snapshot, archived.journal), (live.snapshot.clone(), live.journal.clone()));
        assert_eq!(store.load_archived(&k, "v9-g1").unwrap(), None, "{}", b.name);
        assert!(matches!(store.load_archived(&k, "../x"), Err(StoreError::InvalidId { .. })));

        // A new incarnation replaces the live run; the archive keeps the old one.
        store.write_snapshot(&k, &gen_snapshot(0, "g2")).unwrap();
        assert!(store.delete(&k).unwrap());
        assert!(store.restore(&k, "v2-g1").unwrap(), "{}", b.name);
        let back = store.load(&k).unwrap().unwrap();
        assert_eq!((back.snapshot, back.journal), (live.snapshot, live.journal), "{}", b.name);
        assert_eq!(store.archived(None).unwrap(), vec![], "restored entries leave the archive ({})", b.name);
        assert!(!store.restore(&k, "v2-g1").unwrap(), "{}", b.name);
        // The restored run takes appends of its generation.
        store.append(&k, &json!({"version": 3, "generation": "g1"})).unwrap();
        assert_eq!(store.load(&k).unwrap().unwrap().journal.len(), 2, "{}", b.name);

        store.archive(&k, "2026-01-02T00:00:00Z").unwrap().unwrap();
        assert!(store.delete_archived(&k, "v3-g1").unwrap(), "{}", b.name);
        assert!(!store.delete_archived(&k, "v3-g1").unwrap(), "{}", b.name);
    }
}

#[test]
fn objects_are_stored_once_and_checked_on_read() {
    for b in backends("objects") {
        let store = &*b.store;
        let bytes = b"id: w\nsteps: []\n";
        let hash = crate::runtime::workflow::sha256_hex(bytes);
        assert_eq!(store.get_object(&hash).unwrap(), None, "{}", b.name);
        store.put_object(&hash, bytes).unwrap();
        store.put_object(&hash, bytes).unwrap();
        assert_eq!(store.get_object(&hash).unwrap().as_deref(), Some(&bytes[..]), "{}", b.name);
        let stored = store.objects().unwrap();
        assert_eq!(stored.iter().map(|o| &o.hash).collect::<Vec<_>>(), [&hash], "{}", b.name);
        let first = stored[0].stored_at;
        std::thread::sleep(std::time::Duration::from_millis(20));
        store.put_object(&hash, bytes).unwrap();
        assert!(store.objects().unwrap()[0].stored_at > first, "a store refreshes the time ({})", b.name);
        // Bytes that are not the hash's are refused, never stored.
        let wrong = crate::runtime::workflow::sha256_hex(b"other");
        assert!(matches!(store.put_object(&wrong, bytes), Err(StoreError::Corrupt { .. })), "{}", b.name);
        assert!(matches!(store.get_object("sha256:../../x"), Err(StoreError::InvalidId { .. })));
        // Bytes the caller hashed: stored under the name, still checked on read.
        let other = b"id: v\nsteps: []\n";
        let other_hash = crate::runtime::workflow::sha256_hex(other);
        store.put_hashed_object(&other_hash, other).unwrap();
        assert_eq!(store.get_object(&other_hash).unwrap().as_deref(), Some(&other[..]), "{}", b.name);
        assert!(matches!(
            store.put_hashed_object("sha256:../../x", other),
            Err(StoreError::InvalidId { .. })
        ));
        assert!(store.delete_object(&other_hash).unwrap(), "{}", b.name);
        if let Some(files) = &b.files {
            let path = files.join("objects").join(hash.replacen(':', "-", 1));
            fs::write(&path, b"edited by hand").unwrap();
            assert!(matches!(store.get_object(&hash), Err(StoreError::Corrupt { .. })));
            fs::write(&path, bytes).unwrap();
        }
        assert!(store.delete_object(&hash).unwrap(), "{}", b.name);
        assert!(!store.delete_object(&hash).unwrap(), "{}", b.name);
        assert_eq!(store.objects().unwrap(), vec![], "{}", b.name);
    }
}

#[test]
fn a_restore_interrupted_before_its_rename_leaves_no_run() {
    for b in backends("restore-crash") {
        let Some(files) = &b.files else { continue };
        let store = &*b.store;
        let k = key("wf", "r1");
        seed(store, &k, 3);
        let _lock = store.lock(&k).unwrap();
        let a = store.archive(&k, "t").unwrap().unwrap();
        assert!(store.delete(&k).unwrap());
        // The journal written, the snapshot not yet renamed in.
        let journal = files.join("wf__r1.journal");
        fs::write(&journal, b"{\"version\":2}\n").unwrap();
        assert_eq!(store.load(&k).unwrap(), None);
        assert!(store.restore(&k, &a.archive_id).unwrap());
        assert_eq!(store.load(&k).unwrap().unwrap().journal.len(), 2);
    }
}
