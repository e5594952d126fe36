//! Bounded waiting for a run's lock inside one process: who holds each key,
//! how many wait for it, and for how long a caller may wait
//! ([`LockPolicy`]). Every store takes a turn here first, so that however
//! many calls arrive for one run, at most `max_waiters` block on it (the
//! rest are told at once that the run is busy), none waits past
//! `timeout`, and only the holder goes on to the cross-process half of the
//! lock (a file lock, a PostgreSQL advisory lock).

use rustc_hash::FxBuildHasher;
use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a call waits for a busy run's lock, and how many calls may wait
/// for one run at once (`[state] lock_timeout`, `[state] max_lock_waiters`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockPolicy {
    /// The longest wait for one run's lock, in-process and across processes
    /// together; past it the call fails with `RUN_BUSY`.
    pub timeout: Duration,
    /// At most this many calls wait for one run's lock in a process; one
    /// more fails at once with `RUN_BUSY`.
    pub max_waiters: usize,
}

/// The default `[state] lock_timeout`.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);
/// The default `[state] max_lock_waiters`.
pub const DEFAULT_MAX_WAITERS: usize = 32;

impl Default for LockPolicy {
    fn default() -> LockPolicy {
        LockPolicy { timeout: DEFAULT_LOCK_TIMEOUT, max_waiters: DEFAULT_MAX_WAITERS }
    }
}

impl LockPolicy {
    /// When a wait that starts now must end.
    pub fn deadline(&self) -> Instant {
        Instant::now()
            .checked_add(self.timeout)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400))
    }
}

/// Why a turn was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Busy {
    /// `max_waiters` calls already wait.
    Crowded { waiters: usize },
    /// The lock stayed held for the whole `timeout`.
    TimedOut { waited: Duration },
}

impl Busy {
    /// A sentence for the error: why the run is busy and which setting says so.
    pub fn describe(&self) -> String {
        match self {
            Busy::Crowded { waiters } => {
                format!("{waiters} calls already wait for its lock ([state] max_lock_waiters = {waiters})")
            }
            Busy::TimedOut { waited } => format!(
                "another call held its lock for the whole {} ([state] lock_timeout)",
                humantime::format_duration(*waited)
            ),
        }
    }
}

/// Both tables hold at most the keys of calls in flight at once (a holder
/// each, `max_waiters` waiters each), so a fast hasher cannot be made to
/// build long chains; the std one (SipHash) cost more than the table's
/// work on every engine call (a lock path is hashed three times a call).
struct State<K> {
    held: HashSet<K, FxBuildHasher>,
    waiting: HashMap<K, usize, FxBuildHasher>,
}

/// Keys held by some caller of this process, and the callers waiting.
pub struct Turns<K: Hash + Eq + Clone> {
    state: Mutex<State<K>>,
    released: Condvar,
}

impl<K: Hash + Eq + Clone> Default for Turns<K> {
    fn default() -> Self {
        Turns {
            state: Mutex::new(State { held: HashSet::default(), waiting: HashMap::default() }),
            released: Condvar::new(),
        }
    }
}

/// A held turn: the key leaves the table when it is dropped.
pub struct Turn<K: Hash + Eq + Clone> {
    turns: Arc<Turns<K>>,
    key: K,
}

impl<K: Hash + Eq + Clone> Drop for Turn<K> {
    fn drop(&mut self) {
        let mut state = self.turns.lock();
        state.held.remove(&self.key);
        // A waiter counts itself under the mutex before it waits, so none is
        // missed; with none, no wake-up (a system call) is made.
        let waited = state.waiting.contains_key(&self.key);
        drop(state);
        if waited {
            self.turns.released.notify_all();
        }
    }
}

impl<K: Hash + Eq + Clone> Turns<K> {
    fn lock(&self) -> MutexGuard<'_, State<K>> {
        // A panic while holding this mutex cannot leave the table inconsistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True when some caller of this process holds `key`.
    pub fn is_held(&self, key: &K) -> bool {
        self.lock().held.contains(key)
    }

    /// Waits until `key` is free, then holds it; refused when too many wait
    /// already or `deadline` passes first.
    pub fn take(self: &Arc<Self>, key: &K, policy: &LockPolicy, deadline: Instant) -> Result<Turn<K>, Busy> {
        let mut state = self.lock();
        if state.held.contains(key) {
            let waiters = state.waiting.get(key).copied().unwrap_or(0);
            if waiters >= policy.max_waiters {
                return Err(Busy::Crowded { waiters });
            }
            *state.waiting.entry(key.clone()).or_insert(0) += 1;
            let started = Instant::now();
            while state.held.contains(key) {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                state =
                    self.released.wait_timeout(state, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
            }
            match state.waiting.get_mut(key) {
                Some(n) if *n > 1 => *n -= 1,
                _ => {
                    state.waiting.remove(key);
                }
            }
            if state.held.contains(key) {
                return Err(Busy::TimedOut { waited: started.elapsed().max(policy.timeout) });
            }
        }
        state.held.insert(key.clone());
        Ok(Turn { turns: Arc::clone(self), key: key.clone() })
    }
}

/// Sleeps between polls of a lock held by another process: 1 ms, doubling
/// to 25 ms, never past `deadline`. False when the deadline has passed.
pub fn back_off(attempt: &mut u32, deadline: Instant) -> bool {
    let now = Instant::now();
    if now >= deadline {
        return false;
    }
    let pause = Duration::from_millis(1u64 << (*attempt).min(5)).min(Duration::from_millis(25));
    *attempt += 1;
    std::thread::sleep(pause.min(deadline - now));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    #[test]
    fn a_free_key_is_taken_at_once_and_released_on_drop() {
        let turns: Arc<Turns<u32>> = Arc::default();
        let policy = LockPolicy::default();
        let turn = turns.take(&1, &policy, policy.deadline()).unwrap();
        assert!(turns.is_held(&1));
        drop(turn);
        assert!(!turns.is_held(&1));
    }

    #[test]
    fn a_waiter_times_out_with_the_timeout_it_waited() {
        let turns: Arc<Turns<u32>> = Arc::default();
        let policy = LockPolicy { timeout: Duration::from_millis(50), max_waiters: 4 };
        let _held = turns.take(&1, &policy, policy.deadline()).unwrap();
        let err = turns.take(&1, &policy, policy.deadline()).err().unwrap();
        assert!(matches!(err, Busy::TimedOut { waited } if waited >= Duration::from_millis(50)), "{err:?}");
        assert!(err.describe().contains("lock_timeout"), "{}", err.describe());
        // Another key is not affected.
        assert!(turns.take(&2, &policy, policy.deadline()).is_ok());
    }

    #[test]
    fn past_max_waiters_callers_are_refused_at_once_not_queued() {
        let turns: Arc<Turns<u32>> = Arc::default();
        let policy = LockPolicy { timeout: Duration::from_secs(30), max_waiters: 3 };
        let held = turns.take(&7, &policy, policy.deadline()).unwrap();
        let callers = 40;
        let start = Arc::new(Barrier::new(callers + 1));
        let returned = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let threads: Vec<_> = (0..callers)
            .map(|_| {
                let (turns, start, returned) =
                    (Arc::clone(&turns), Arc::clone(&start), Arc::clone(&returned));
                std::thread::spawn(move || {
                    start.wait();
                    let result = turns.take(&7, &policy, policy.deadline()).map(drop);
                    returned.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    result
                })
            })
            .collect();
        start.wait();
        // Every caller past the three waiters is answered while the key is held.
        while returned.load(std::sync::atomic::Ordering::SeqCst) < callers - 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(turns.lock().waiting.get(&7), Some(&3));
        drop(held);
        let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let crowded = results.iter().filter(|r| matches!(r, Err(Busy::Crowded { waiters: 3 }))).count();
        assert_eq!(crowded, callers - 3, "{results:?}");
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 3);
        assert!(turns.lock().waiting.is_empty());
    }
}
