//! PostgreSQL-only behaviour: opening (bad URLs, an unreachable server,
//! migrations raced by replicas, a newer schema), the lock across stores and
//! dead connections, and calls made from inside an async runtime. The
//! behaviour shared with the file store is in `state::tests`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;

use super::cluster;
use super::*;
use crate::state::{ArchiveStore, ObjectStore, RunKey, StateStore};

fn key() -> RunKey {
    RunKey::new("wf", "r1").unwrap()
}

/// A URL of a fresh schema `name` in the shared cluster, or `None` (the
/// test `name` is skipped, saying why).
fn fresh(name: &str) -> Option<String> {
    Some(cluster::for_test(&format!("state::pg::tests ({name})"))?.fresh_schema(name).unwrap())
}

#[test]
fn bad_urls_are_clear_errors_without_a_server() {
    for (url, code, needle) in [
        ("mysql://u@h/db", "STATE_URL_INVALID", "\"mysql\""),
        ("postgres://u@h:notaport/db", "STATE_URL_INVALID", "not a valid PostgreSQL URL"),
        ("postgres://u:secret@h/db?bogus=1", "STATE_URL_INVALID", "unknown option `bogus`"),
        ("postgres://", "STATE_URL_INVALID", "names no host"),
        ("postgresql:///db", "STATE_URL_INVALID", "names no host"),
        ("postgres://u:secret@127.0.0.1:1/db?connect_timeout=5", "STATE_UNAVAILABLE", "127.0.0.1:1"),
    ] {
        let e = crate::state::open(std::path::Path::new("."), Some(url), &Default::default()).err().unwrap();
        assert_eq!(e.code, code, "{url}: {e}");
        assert!(e.message.contains(needle), "{url}: {e}");
        assert!(!e.hint.is_empty() && !e.to_string().contains("secret"), "{url}: {e}");
    }
    // No URL (or a blank one) is the file store.
    assert!(crate::state::open(std::path::Path::new("."), Some("  "), &Default::default()).is_ok());
}

#[test]
fn replicas_starting_together_migrate_once() {
    let Some(url) = fresh("t_pg_migrate") else { return };
    let opened: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PgStore::open(&url, true).map(|_| ()))
        })
        .collect();
    for o in opened {
        o.join().unwrap().unwrap();
    }
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let rows = client.query("SELECT version FROM savant_schema_version ORDER BY version", &[]).unwrap();
    let applied: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(applied, (1..=schema::SCHEMA_VERSION).collect::<Vec<_>>());
}

#[test]
fn a_newer_schema_is_refused() {
    let Some(url) = fresh("t_pg_newer") else { return };
    PgStore::open(&url, true).unwrap();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.execute("INSERT INTO savant_schema_version (version) VALUES (999)", &[]).unwrap();
    let e = PgStore::open(&url, true).unwrap_err();
    assert_eq!(e.code, "STATE_SCHEMA_NEWER", "{e}");
    assert!(e.message.contains("999"), "{e}");
}

/// The grants docs/deploy.md gives a replica's role, for schema `schema`.
fn grant_dml(admin: &mut postgres::Client, schema: &str, role: &str) {
    admin
        .batch_execute(&format!(
            "GRANT USAGE ON SCHEMA \"{schema}\" TO {role};
             GRANT SELECT, INSERT, UPDATE, DELETE ON \"{schema}\".savant_runs, \"{schema}\".savant_events,
                 \"{schema}\".savant_archive, \"{schema}\".savant_objects, \"{schema}\".savant_timers TO {role};
             GRANT SELECT ON \"{schema}\".savant_schema_version TO {role};
             GRANT USAGE ON SEQUENCE \"{schema}\".savant_stamp TO {role};"
        ))
        .unwrap();
}

/// Issue 47.4: `state migrate` as the owner is explicit and idempotent; a
/// role with DML grants only is refused on an unmigrated database with
/// `STATE_SCHEMA_OLDER` (no table created), and serves once migrated.
#[test]
fn a_dml_only_role_serves_after_an_explicit_migration() {
    let Some(url) = fresh("t_pg_dml") else { return };
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "DO $$ BEGIN CREATE ROLE t_pg_dml_app LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
             GRANT USAGE ON SCHEMA t_pg_dml TO t_pg_dml_app;",
        )
        .unwrap();
    let app = url.replacen("postgres://postgres@", "postgres://t_pg_dml_app@", 1);
    let options = crate::state::StoreOptions::default();

    let e = PgStore::open_with(&app, &options).unwrap_err();
    assert_eq!(e.code, "STATE_SCHEMA_OLDER", "{e}");
    assert!(e.message.contains("has no savant-think schema"), "{e}");
    assert!(e.message.contains("42501"), "the database's refusal is named: {e}");
    assert!(e.hint.contains("savant-think state migrate"), "{e}");
    let tables: i64 =
        admin.query_one("SELECT count(*) FROM pg_tables WHERE schemaname = 't_pg_dml'", &[]).unwrap().get(0);
    assert_eq!(tables, 0, "nothing was created");

    let done = PgStore::migrate(&url, &options).unwrap();
    assert_eq!((done.from, done.to), (0, SCHEMA_VERSION));
    assert_eq!(done.applied, (1..=SCHEMA_VERSION).collect::<Vec<_>>());
    assert!(!done.database.contains("options"), "{done:?}");
    let again = PgStore::migrate(&url, &options).unwrap();
    assert_eq!((again.from, again.to, again.applied.len()), (SCHEMA_VERSION, SCHEMA_VERSION, 0));

    grant_dml(&mut admin, "t_pg_dml", "t_pg_dml_app");
    let store = PgStore::open_with(&app, &options).unwrap();
    store.write_snapshot(&key(), &json!({"version": 0, "steps": []})).unwrap();
    store.append(&key(), &json!({"version": 1, "event": "x"})).unwrap();
    let loaded = store.load(&key()).unwrap().unwrap();
    assert_eq!(loaded.journal.len(), 1);
    let bytes = b"workflow bytes";
    let hash = crate::state::sha256_hex(bytes);
    store.put_object(&hash, bytes).unwrap();
    assert_eq!(store.get_object(&hash).unwrap().as_deref(), Some(&bytes[..]));
    let archived = store.archive_loaded(&key(), Some(loaded), "2026-01-01T00:00:00Z").unwrap();
    assert!(archived.is_some());
    assert!(store.delete(&key()).unwrap());

    // An older schema (a release with a new migration) is refused the same way.
    admin.execute("DELETE FROM savant_schema_version WHERE version = $1", &[&SCHEMA_VERSION]).unwrap();
    let e = PgStore::open_with(&app, &options).unwrap_err();
    assert_eq!(e.code, "STATE_SCHEMA_OLDER", "{e}");
    assert!(e.message.contains(&format!("has schema version {}", SCHEMA_VERSION - 1)), "{e}");
}

/// The lock excludes another store (replica) until dropped, and a replica
/// whose connection dies (a crash) releases it.
#[test]
fn the_lock_spans_replicas_and_dies_with_its_connection() {
    let Some(url) = fresh("t_pg_lock") else { return };
    let (a, b) = (Arc::new(PgStore::open(&url, true).unwrap()), Arc::new(PgStore::open(&url, true).unwrap()));
    let held = a.lock(&key()).unwrap();
    let got = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (b, got) = (Arc::clone(&b), Arc::clone(&got));
        std::thread::spawn(move || {
            let lock = b.lock(&key()).unwrap();
            got.store(true, Ordering::SeqCst);
            lock
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    assert!(!got.load(Ordering::SeqCst), "the second replica waits");
    drop(held);
    let second = waiter.join().unwrap();
    assert!(got.load(Ordering::SeqCst));

    // Kill the backend that holds the lock, as a replica crash would close it.
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let killed = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted \
             AND objid = ($1::bigint & 4294967295)::oid",
            &[&lock_id(&key())],
        )
        .unwrap();
    assert_eq!(killed.len(), 1, "one backend held the lock");
    let relocked = a.lock(&key()).unwrap();
    drop(relocked);
    drop(second);
    // Both stores still work: the broken connection was thrown away.
    let _lock = b.lock(&key()).unwrap();
    b.write_snapshot(&key(), &json!({"version": 1})).unwrap();
    assert_eq!(a.load(&key()).unwrap().unwrap().snapshot, json!({"version": 1}));
}

/// The stamp read with the lock, in the same round trip, is read under it:
/// it is the stamp of the other replica's last write, released only after
/// that write committed; a run that does not exist gives its lock back.
#[test]
fn the_lock_reads_the_stamp_under_it() {
    let Some(url) = fresh("t_pg_lock_stamp") else { return };
    let (a, b) = (PgStore::open(&url, true).unwrap(), PgStore::open(&url, true).unwrap());
    assert!(b.lock_existing(&key()).unwrap().is_none(), "no run yet");
    {
        // Free again: the lock of the missing run was given back.
        let _lock = a.lock(&key()).unwrap();
        a.write_snapshot(&key(), &json!({"version": 1})).unwrap();
    }
    for v in 2..8 {
        let (writer, reader) = if v % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let written = {
            let lock = writer.lock_existing(&key()).unwrap().expect("the run exists");
            assert!(lock.stamp().is_some());
            writer.append(&key(), &json!({"version": v})).unwrap()
        };
        let lock = reader.lock_existing(&key()).unwrap().expect("the run exists");
        assert_eq!(lock.stamp(), Some(written), "version {v}");
        assert_eq!(reader.stamp(&key()).unwrap(), Some(written));
    }
}

/// A replica waits for another's lock at most `lock_timeout` (RUN_BUSY,
/// naming the run), and a crowd of callers in one replica is bounded by
/// `max_lock_waiters` without holding connections while they wait.
#[test]
fn lock_waits_are_bounded_across_and_within_replicas() {
    let Some(url) = fresh("t_pg_busy") else { return };
    let lock = crate::state::LockPolicy { timeout: Duration::from_millis(300), max_waiters: 2 };
    let options = crate::state::StoreOptions { lock, pool_size: 2, ..Default::default() };
    let (a, b) =
        (PgStore::open_with(&url, &options).unwrap(), Arc::new(PgStore::open_with(&url, &options).unwrap()));
    let held = a.lock(&key()).unwrap();
    match b.lock(&key()).err() {
        Some(StoreError::Busy { run, message }) => {
            assert_eq!(run, key().to_string());
            assert!(message.contains("lock_timeout"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // Ten callers in replica b at once: two may wait (and time out), the
    // rest are refused at once; every one is answered.
    let answers: Vec<_> = (0..10)
        .map(|_| {
            let b = Arc::clone(&b);
            std::thread::spawn(move || b.lock(&key()).map(drop))
        })
        .collect();
    let answers: Vec<_> = answers.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(answers.iter().all(|a| matches!(a, Err(StoreError::Busy { .. }))), "{answers:?}");
    let crowded = answers.iter().filter(|a| format!("{a:?}").contains("max_lock_waiters")).count();
    assert!(crowded >= 1, "{answers:?}");
    // Meanwhile b's reads and writes of other runs go on.
    let other = RunKey::new("wf", "other").unwrap();
    let _other = b.lock(&other).unwrap();
    b.write_snapshot(&other, &json!({"version": 1})).unwrap();
    drop(held);
    let _now = b.lock(&key()).unwrap();
}

/// Calls from an async task (the MCP server's resource reads) move off the
/// worker thread instead of panicking, on both runtime flavors.
#[test]
fn calls_from_async_tasks_work() {
    let Some(url) = fresh("t_pg_async") else { return };
    let store = Arc::new(PgStore::open(&url, true).unwrap());
    for multi in [true, false] {
        let mut builder = if multi {
            tokio::runtime::Builder::new_multi_thread()
        } else {
            tokio::runtime::Builder::new_current_thread()
        };
        let runtime = builder.enable_all().build().unwrap();
        let (store, url) = (Arc::clone(&store), url.clone());
        // In a spawned task: on a worker thread of the multi-thread runtime.
        let task = runtime.spawn(async move {
            let k = key();
            let lock = store.lock(&k).unwrap();
            store.write_snapshot(&k, &json!({"version": 1})).unwrap();
            store.append(&k, &json!({"version": 2})).unwrap();
            drop(lock);
            assert_eq!(store.load(&k).unwrap().unwrap().journal.len(), 1);
            assert_eq!(store.list(None).unwrap(), vec![k.clone()]);
            // The last store, with its idle connections, dropped on a worker.
            let last = PgStore::open(&url, true).unwrap();
            last.stamp(&k).unwrap();
            drop(last);
        });
        runtime.block_on(task).expect("no panic in the task");
    }
}

/// A database restart breaks every pooled connection; the next calls
/// reconnect instead of failing forever.
#[test]
fn stale_connections_are_replaced() {
    let Some(url) = fresh("t_pg_stale") else { return };
    // Its own application name, so that only its connections are killed.
    let store = PgStore::open(&format!("{url}&application_name=t_pg_stale"), true).unwrap();
    {
        let _lock = store.lock(&key()).unwrap();
        store.write_snapshot(&key(), &json!({"version": 1})).unwrap();
    }
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 't_pg_stale' AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap();
    // pg_terminate_backend only signals: wait until the backends are gone,
    // so that the pooled connections are stale (dead), not dying mid-query.
    for _ in 0..500 {
        let left: i64 = admin
            .query_one("SELECT count(*) FROM pg_stat_activity WHERE application_name = 't_pg_stale'", &[])
            .unwrap()
            .get(0);
        if left == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(store.stamp(&key()).unwrap().is_some(), "reads retry on a new connection");
    let _lock = store.lock(&key()).unwrap();
    store.append(&key(), &json!({"version": 2})).unwrap();
}

/// An append without the lock is made only while no session holds the
/// run's lock and the run's stamp is still the caller's: one statement
/// that checks both, takes nothing it keeps (the lock is free right after)
/// and writes nothing when either fails.
#[test]
fn an_unlocked_append_needs_the_lock_free_and_the_stamp_unchanged() {
    let Some(url) = fresh("t_pg_unlocked") else { return };
    // Its own run: advisory locks are per database, not per schema, and the
    // other tests lock `key()` at the same time.
    let key = || RunKey::new("wf", "unlocked").unwrap();
    let (a, b) = (PgStore::open(&url, true).unwrap(), PgStore::open(&url, true).unwrap());
    assert!(a.appends_unlocked());
    let gone = b.append_unlocked(&key(), &json!({"version": 2}), &stamp_of(1, 0)).unwrap();
    assert_eq!(gone, None, "no run");
    let first = {
        let _lock = a.lock(&key()).unwrap();
        a.write_snapshot(&key(), &json!({"version": 1})).unwrap()
    };
    let held = a.lock(&key()).unwrap();
    assert_eq!(b.append_unlocked(&key(), &json!({"version": 2}), &first).unwrap(), None, "locked by a");
    drop(held);
    let second =
        b.append_unlocked(&key(), &json!({"version": 2}), &first).unwrap().expect("free and unchanged");
    assert_ne!(second, first);
    assert_eq!(a.stamp(&key()).unwrap(), Some(second));
    // A stale view (the first stamp) is refused, the current one is not.
    assert_eq!(a.append_unlocked(&key(), &json!({"version": 3}), &first).unwrap(), None, "stale");
    let third = a.append_unlocked(&key(), &json!({"version": 3}), &second).unwrap().expect("current");
    // The transaction's lock ended with it: b takes the lock at once.
    let lock = b.lock_existing(&key()).unwrap().expect("the run exists");
    assert_eq!(lock.stamp(), Some(third));
    drop(lock);
    let loaded = b.load(&key()).unwrap().unwrap();
    assert_eq!(loaded.journal, vec![json!({"version": 2}), json!({"version": 3})]);
    // The append's own checks still hold: a version not above the last.
    let e = b.append_unlocked(&key(), &json!({"version": 3}), &third).unwrap_err();
    assert!(e.to_string().contains("after version 3"), "{e}");
}

/// A test cluster whose server dies is said so plainly: which process, on
/// which port, and its log's tail (issue 40) — not a later connection error.
#[test]
fn a_killed_test_cluster_says_it_is_gone() {
    if cluster::for_test("state::pg::tests::a_killed_test_cluster_says_it_is_gone").is_none() {
        return;
    }
    let own = cluster::Cluster::start(&cluster::find_bin().unwrap(), &[]).unwrap();
    assert_eq!(own.alive(), Ok(()));
    let pid = own.pid().expect("the postmaster's pid").to_string();
    assert!(std::process::Command::new("kill").args(["-KILL", &pid]).status().unwrap().success());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let err = loop {
        match own.alive() {
            Err(e) => break e,
            Ok(()) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(()) => panic!("pid {pid} was killed, yet the cluster reads as alive"),
        }
    };
    assert!(err.contains(&format!("pid {pid}, port {}) is no longer running", own.port())), "{err}");
    assert!(err.contains("the last lines of its log"), "{err}");
    let e = own.fresh_schema("after").unwrap_err();
    assert!(e.contains("is no longer running"), "{e}");
}
