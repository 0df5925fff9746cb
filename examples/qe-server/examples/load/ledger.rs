//! Every call's answers counted by the id they carry, and the resident sets of the
//! processes under load sampled as the answers arrive.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

use super::procfs::rss_kib;

/// The resident sets (KiB) of the watched processes once `calls` answers had arrived;
/// `None` for a process `/proc` no longer shows.
pub(super) struct Sample {
    pub(super) calls: u64,
    pub(super) rss_kib: Vec<Option<u64>>,
}

/// The answers of one run: how many carried each id `1..=calls`, counted apart from the
/// drivers' own bookkeeping (which matches answers to requests), so that a lost or a
/// doubled answer shows here whatever the driver made of it.
pub(super) struct Ledger {
    counts: Vec<AtomicU8>,
    answered: AtomicU64,
    stray: AtomicU64,
    every: u64,
    watched: Mutex<Vec<(String, u32)>>,
    samples: Mutex<Vec<Sample>>,
}

impl Ledger {
    /// A ledger for ids `1..=calls` that samples the watched processes every `every`
    /// answers (never with 0).
    pub(super) fn new(calls: u64, every: u64) -> Self {
        let len = usize::try_from(calls).expect("the call count fits in memory");
        Self {
            counts: (0..len).map(|_| AtomicU8::new(0)).collect(),
            answered: AtomicU64::new(0),
            stray: AtomicU64::new(0),
            every,
            watched: Mutex::default(),
            samples: Mutex::default(),
        }
    }

    /// Samples process `pid`, under `name`, from now on.
    pub(super) fn watch(&self, name: &str, pid: u32) {
        self.watched.lock().expect("not poisoned").push((name.to_owned(), pid));
    }

    /// The first sample: the watched processes before the first call.
    pub(super) fn start(&self) {
        if self.every > 0 {
            self.sample(0);
        }
    }

    /// An answer carrying `id` (`None`: an id that is not a whole number).
    pub(super) fn answer(&self, id: Option<u64>) {
        let slot = id.and_then(|id| usize::try_from(id.checked_sub(1)?).ok()).and_then(|i| self.counts.get(i));
        match slot {
            Some(count) => {
                let _ = count.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(1));
            }
            None => {
                self.stray.fetch_add(1, Ordering::Relaxed);
            }
        }
        let answered = self.answered.fetch_add(1, Ordering::Relaxed) + 1;
        if self.every > 0 && answered.is_multiple_of(self.every) {
            self.sample(answered);
        }
    }

    fn sample(&self, calls: u64) {
        let rss_kib = self.watched.lock().expect("not poisoned").iter().map(|&(_, pid)| rss_kib(pid)).collect();
        self.samples.lock().expect("not poisoned").push(Sample { calls, rss_kib });
    }

    /// Ids no answer carried.
    pub(super) fn lost(&self) -> u64 {
        self.counts.iter().filter(|n| n.load(Ordering::Relaxed) == 0).count() as u64
    }

    /// Ids more than one answer carried.
    pub(super) fn duplicated(&self) -> u64 {
        self.counts.iter().filter(|n| n.load(Ordering::Relaxed) > 1).count() as u64
    }

    /// Answers whose id is no call's.
    pub(super) fn stray(&self) -> u64 {
        self.stray.load(Ordering::Relaxed)
    }

    /// The watched processes' names and, per process, its `(calls, KiB)` samples.
    pub(super) fn series(&self) -> Vec<(String, Vec<(u64, u64)>)> {
        let watched = self.watched.lock().expect("not poisoned");
        let samples = self.samples.lock().expect("not poisoned");
        watched
            .iter()
            .enumerate()
            .map(|(p, (name, _))| {
                let points = samples.iter().filter_map(|s| Some((s.calls, (*s.rss_kib.get(p)?)?))).collect();
                (name.clone(), points)
            })
            .collect()
    }
}
