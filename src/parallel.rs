//! Work shared out over threads, with results in the order of the work:
//! `check` over many files and `test` over many tests.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The stack of each helper thread: the main thread's usual size, so that
/// deep input (a deeply nested file) handled on any thread is handled as
/// it is on the main one.
const STACK: usize = 8 << 20;

/// Maps `f` over `items` on up to `threads` threads and returns the
/// results in the order of `items`, whichever thread finished first. The
/// calling thread is one of the workers; with `threads` ≤ 1, one item, or
/// no thread to be had, it does all the work itself. Each thread takes the
/// next item not yet taken, so a slow item holds up only its own thread.
///
/// A panic in `f` is not swallowed: once every thread has stopped, it is
/// raised again on the calling thread, so no result is ever silently
/// missing.
pub fn map_in_order<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { return mine };
            mine.push((i, f(item)));
        }
    };
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().stack_size(STACK).spawn_scoped(s, work).ok())
            .collect();
        // If this thread panics, the scope still joins the helpers first.
        let mut done = work();
        for helper in helpers {
            match helper.join() {
                Ok(theirs) => done.extend(theirs),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The number of threads to use when none is asked for: one per core.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_order_of_the_items() {
        let items: Vec<u64> = (0..500).collect();
        // Uneven work, so threads finish out of order.
        let out = map_in_order(&items, 4, |&n| {
            if n % 7 == 0 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            n * 2
        });
        assert_eq!(out, items.iter().map(|n| n * 2).collect::<Vec<_>>());
    }

    #[test]
    fn every_item_is_mapped_once_whatever_the_thread_count() {
        for threads in [0, 1, 2, 3, 64] {
            let count = AtomicUsize::new(0);
            let out = map_in_order(&[1, 2, 3], threads, |n| {
                count.fetch_add(1, Ordering::Relaxed);
                n + 1
            });
            assert_eq!(out, [2, 3, 4], "threads = {threads}");
            assert_eq!(count.load(Ordering::Relaxed), 3, "threads = {threads}");
        }
        assert!(map_in_order(&[] as &[u8], 4, |n| *n).is_empty());
    }

    #[test]
    fn a_panic_in_any_thread_reaches_the_caller() {
        let items: Vec<u32> = (0..64).collect();
        for bad in [0, 37, 63] {
            let caught = std::panic::catch_unwind(|| {
                map_in_order(&items, 3, |&n| {
                    assert!(n != bad, "item {n} failed");
                    n
                })
            });
            let panic = caught.expect_err("the panic was swallowed");
            let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
            assert_eq!(message, format!("item {bad} failed"));
        }
    }
}
