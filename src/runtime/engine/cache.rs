//! The engine's in-memory run cache, bounded: at most `[state] cached_runs`
//! runs (default [`crate::config::DEFAULT_CACHED_RUNS`]) are kept between calls, the least
//! recently used dropped first. A run dropped is read from the store again
//! (snapshot + journal) by the next call that needs it, so the bound costs a
//! re-read, never an answer. Without it a long-lived `serve` kept every run
//! it had ever touched (issue 46.3: about 8–16 KB per finished four-step
//! run, 240 MB after 30,000 runs).
//!
//! Eviction is in batches: once the cache holds more than its bound, the
//! least recently used eighth is dropped at once (one selection over the
//! use counters), so an insert costs O(1) amortised rather than a scan.

use std::collections::HashMap;
use std::hash::Hash;

/// A map with a bound on its length, least recently used out first.
pub(super) struct RunCache<K, V> {
    entries: HashMap<K, (u64, V)>,
    /// Bumped on every insert: an entry's use is the tick it was put back at.
    tick: u64,
    bound: usize,
}

impl<K: Hash + Eq, V> RunCache<K, V> {
    /// An empty cache of at most `bound` entries (0 keeps nothing).
    pub(super) fn new(bound: usize) -> RunCache<K, V> {
        RunCache { entries: HashMap::new(), tick: 0, bound }
    }

    /// Takes an entry out (a call works on it until it puts it back).
    pub(super) fn remove(&mut self, key: &K) -> Option<V> {
        self.entries.remove(key).map(|(_, v)| v)
    }

    /// Puts an entry (back) as the most recently used; past the bound the
    /// least recently used are dropped.
    pub(super) fn insert(&mut self, key: K, value: V) {
        if self.bound == 0 {
            return;
        }
        self.tick += 1;
        self.entries.insert(key, (self.tick, value));
        if self.entries.len() > self.bound {
            self.evict();
        }
    }

    /// Drops the least recently used entries down to 7/8 of the bound.
    fn evict(&mut self) {
        let keep = self.bound - self.bound / 8;
        let drop = self.entries.len() - keep;
        let mut ticks: Vec<u64> = self.entries.values().map(|(t, _)| *t).collect();
        // Ticks are unique: the `drop` smallest go.
        let (_, &mut newest_dropped, _) = ticks.select_nth_unstable(drop - 1);
        self.entries.retain(|_, (t, _)| *t > newest_dropped);
        // Give the table's memory back when it had grown past its bound
        // (a burst of distinct runs): it is sized for the bound again.
        if self.entries.capacity() > 2 * self.bound.max(16) {
            self.entries.shrink_to(self.bound);
        }
    }

    /// How many entries are kept.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_at_most_its_bound_and_drops_the_least_recently_used() {
        let mut c = RunCache::new(8);
        for i in 0..8 {
            c.insert(i, i * 10);
        }
        assert_eq!(c.len(), 8);
        // 0 is used again: it is now the most recent.
        let v = c.remove(&0).unwrap();
        c.insert(0, v);
        c.insert(8, 80);
        // Past the bound: down to 7 (8 - 8/8), the two oldest (1, 2) out.
        assert_eq!(c.len(), 7);
        assert_eq!(c.remove(&1), None);
        assert_eq!(c.remove(&2), None);
        assert_eq!(c.remove(&0), Some(0), "the one used again stays");
        assert_eq!(c.remove(&8), Some(80));
        assert_eq!(c.remove(&3), Some(30));
    }

    #[test]
    fn never_grows_with_the_number_of_keys_seen() {
        let mut c = RunCache::new(100);
        for i in 0..100_000u32 {
            c.insert(i, [0u8; 16]);
            assert!(c.len() <= 100, "{} entries after {i}", c.len());
        }
        assert!(c.len() >= 88, "it still caches: {}", c.len());
        assert!(c.entries.capacity() <= 400, "capacity {}", c.entries.capacity());
        // The newest are the ones kept.
        assert!(c.remove(&99_999).is_some() && c.remove(&0).is_none());
    }

    #[test]
    fn a_bound_of_zero_keeps_nothing() {
        let mut c = RunCache::new(0);
        c.insert("run", 1);
        assert_eq!((c.len(), c.remove(&"run")), (0, None));
    }
}
