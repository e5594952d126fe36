//! The timer index on every store that keeps one (the file store, and
//! PostgreSQL when installed): shared by a second store on the same state
//! (another process or replica), set only at the run's current stamp,
//! claimed on PostgreSQL, gone with its run.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::state::tests::{backends, key, seed};
use crate::state::{MemStore, StateStore, TimerIndex};

/// A whole second `offset` seconds from now (both stores keep it exactly).
fn at(offset: i64) -> SystemTime {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    UNIX_EPOCH + Duration::from_secs((now + offset) as u64)
}

#[test]
fn the_timer_index_is_shared_set_at_the_current_stamp_and_gone_with_its_run() {
    for b in backends("timer-index") {
        let (a, other) = (&b.store, (b.open)(false));
        let (k1, k2) = (key("wf", "t1"), key("wf", "t2"));
        seed(a.as_ref(), &k1, 1);
        seed(a.as_ref(), &k2, 1);
        assert!(a.keeps_timers(), "{}", b.name);
        assert_eq!(other.timer_stats().unwrap(), (0, None), "{}", b.name);
        assert_eq!(other.due_timers(10, Duration::from_secs(5)).unwrap().runs, vec![], "{}", b.name);

        let s1 = a.stamp(&k1).unwrap().unwrap();
        let s2 = a.stamp(&k2).unwrap().unwrap();
        // Taken once: a slow test may cross a second between two calls of `at`.
        let (past, far) = (at(-5), at(3600));
        assert!(a.set_timer(&k1, &s1, Some(past)).unwrap(), "{}", b.name);
        assert!(a.set_timer(&k2, &s2, Some(far)).unwrap(), "{}", b.name);
        // Seen by the other store: both entries, one due.
        assert_eq!(other.timer_stats().unwrap(), (2, Some(past)), "{}", b.name);
        let due = other.due_timers(10, Duration::from_secs(5)).unwrap();
        assert_eq!(due.runs, vec![k1.clone()], "{}", b.name);
        assert!(due.now.is_some_and(|now| now >= past), "{}", b.name);
        // PostgreSQL claims a due run for the lease: no one gets it again.
        let again = a.due_timers(10, Duration::from_secs(5)).unwrap().runs;
        match b.name {
            "postgres" => assert_eq!(again, vec![], "claimed"),
            _ => assert_eq!(again, vec![k1.clone()], "{}: no claims", b.name),
        }

        // The run moves on: an entry for its old state is refused.
        {
            let _lock = a.lock(&k1).unwrap();
            a.append(&k1, &json!({"version": 2})).unwrap();
        }
        assert!(!a.set_timer(&k1, &s1, None).unwrap(), "{}: a stale stamp", b.name);
        assert_eq!(other.timer_stats().unwrap().0, 2, "{}", b.name);
        let s1 = a.stamp(&k1).unwrap().unwrap();
        // Set again at the current stamp (and its claim ended): due again.
        assert!(other.set_timer(&k1, &s1, Some(at(-1))).unwrap(), "{}", b.name);
        assert_eq!(a.due_timers(10, Duration::from_secs(5)).unwrap().runs, vec![k1.clone()], "{}", b.name);
        assert!(other.set_timer(&k1, &s1, None).unwrap(), "{}", b.name);
        assert_eq!(a.timer_stats().unwrap(), (1, Some(far)), "{}", b.name);

        // A deleted run leaves the index; clearing is unconditional.
        {
            let _lock = a.lock(&k2).unwrap();
            assert!(a.delete(&k2).unwrap());
        }
        assert_eq!(other.timer_stats().unwrap(), (0, None), "{}", b.name);
        assert!(!a.set_timer(&k2, &s2, Some(at(1))).unwrap(), "{}: no run", b.name);
        assert!(a.set_timer(&k1, &s1, Some(at(1))).unwrap());
        a.clear_timer(&k1).unwrap();
        assert_eq!(other.timer_stats().unwrap(), (0, None), "{}", b.name);
    }
}

#[test]
fn the_memory_store_keeps_no_index() {
    let store = MemStore::new();
    let k = key("wf", "m1");
    seed(&store, &k, 1);
    let stamp = store.stamp(&k).unwrap().unwrap();
    assert!(!store.keeps_timers());
    assert!(!store.set_timer(&k, &stamp, Some(at(-1))).unwrap());
    assert_eq!(store.due_timers(10, Duration::from_secs(1)).unwrap().runs, vec![]);
}
