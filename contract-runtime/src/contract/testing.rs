//! What the layer's tests share: a small deterministic generator of test inputs.

/// A xorshift generator: the same inputs on every run, from a seed.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or_default()
    }

    /// One of `items`.
    pub(crate) fn one<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// `true` `in_ten` times in ten.
    pub(crate) fn chance(&mut self, in_ten: usize) -> bool {
        self.below(10) < in_ten
    }
}
