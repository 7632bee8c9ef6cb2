//! A bounded memo: what a pure function of a text gave, kept so that a hot path computes it once per text, shared
//! by threads. Used by the store (what a held statement's SQL says) and the inbox (a pinned key decoded).
//!
//! Bounded by count and emptied when full, rather than evicting one entry at a time: the texts that come back (a
//! write's usual statements, a realm's few peer keys) are few and are computed again at once, and an input that
//! brings endless new texts (lists of varying length) cannot grow it. A value depends on its text alone, so an entry
//! can never be stale: a changed input is a new text.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Values computed from texts, at most `capacity` of them.
#[derive(Debug)]
pub struct BoundedMemo<V> {
    entries: Mutex<HashMap<String, V>>,
    capacity: usize,
}

impl<V: Clone> BoundedMemo<V> {
    /// An empty memo that keeps at most `capacity` values.
    pub fn new(capacity: usize) -> BoundedMemo<V> {
        BoundedMemo {
            entries: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    /// The value of `text`, computed by `compute` when it is not kept. A failure is returned and not kept, so the
    /// same text fails again the same way.
    pub fn get_or_try_insert<E>(&self, text: &str, compute: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        if let Some(value) = self.lock().get(text) {
            return Ok(value.clone());
        }
        // Computed without the lock, so that other threads' lookups do not wait for it; two threads computing the
        // same text at once both get the same value, and one of them is kept.
        let value = compute()?;
        let mut entries = self.lock();
        if entries.len() >= self.capacity {
            entries.clear();
        }
        entries.insert(text.to_owned(), value.clone());
        Ok(value)
    }

    /// The value of `text`, computed by `compute` when it is not kept.
    pub fn get_or_insert(&self, text: &str, compute: impl FnOnce() -> V) -> V {
        match self.get_or_try_insert(text, || Ok::<V, std::convert::Infallible>(compute())) {
            Ok(value) => value,
            Err(never) => match never {},
        }
    }

    /// How many values are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, V>> {
        // A poisoned lock only means another thread panicked while it held it; every change is one insert or one
        // clear, so the map is still whole.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_text_is_computed_once_until_the_bound_empties_the_memo() {
        let memo = BoundedMemo::new(2);
        let computed = Cell::new(0);
        let length = |text: &str| {
            computed.set(computed.get() + 1);
            text.len()
        };
        assert_eq!(memo.get_or_insert("one", || length("one")), 3);
        assert_eq!(memo.get_or_insert("one", || length("one")), 3);
        assert_eq!(computed.get(), 1);
        assert_eq!(memo.get_or_insert("three", || length("three")), 5);
        assert_eq!(memo.len(), 2);
        // Full: the next new text empties it first.
        assert_eq!(memo.get_or_insert("seven", || length("seven")), 5);
        assert_eq!(memo.len(), 1);
        assert_eq!(memo.get_or_insert("one", || length("one")), 3);
        assert_eq!(computed.get(), 4);
    }

    #[test]
    fn a_failure_is_returned_every_time_and_never_kept() {
        let memo: BoundedMemo<u32> = BoundedMemo::new(4);
        let calls = Cell::new(0);
        let parse = |text: &str| {
            calls.set(calls.get() + 1);
            text.parse::<u32>()
        };
        assert!(memo.get_or_try_insert("x", || parse("x")).is_err());
        assert!(memo.get_or_try_insert("x", || parse("x")).is_err());
        assert_eq!(calls.get(), 2);
        assert!(memo.is_empty());
        assert_eq!(memo.get_or_try_insert("12", || parse("12")), Ok(12));
        assert_eq!(memo.get_or_try_insert("12", || parse("12")), Ok(12));
        assert_eq!(calls.get(), 3);
    }
}
