//! The running count of one walk: bytes so far against the limits, and the sizes of
//! scalars as serde_json writes them.

use super::{Limits, NonFinite, ProblemKind};

pub(super) fn too_deep(limits: &Limits, path: &[String]) -> NonFinite {
    let mut err = NonFinite::new(ProblemKind::TooDeep { limit: limits.max_depth });
    err.0.path = path.iter().rev().cloned().collect();
    err
}

pub(super) fn number_len(n: &serde_json::Number) -> usize {
    if let Some(u) = n.as_u64() {
        digits(u)
    } else if let Some(i) = n.as_i64() {
        digits(i.unsigned_abs()) + 1
    } else {
        // The longest form serde_json writes for an f64.
        24
    }
}

pub(super) fn digits(mut n: u64) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

pub(super) struct State {
    pub(super) limits: Limits,
    pub(super) bytes: usize,
}

impl State {
    pub(super) fn add(&mut self, n: usize) -> Result<(), NonFinite> {
        self.bytes = self.bytes.saturating_add(n);
        if self.bytes > self.limits.max_bytes {
            Err(NonFinite::new(ProblemKind::TooLarge { limit: self.limits.max_bytes }))
        } else {
            Ok(())
        }
    }

    /// A string counts its UTF-8 length and its quotes; escapes are not counted here
    /// (that would read every byte of every string), so the walk's size is a lower
    /// bound, and the pipeline checks the exact length of the JSON it writes as well.
    pub(super) fn string(&mut self, s: &str) -> Result<(), NonFinite> {
        self.add(s.len().saturating_add(2))
    }
}
