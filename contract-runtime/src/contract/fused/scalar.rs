//! The scalar keywords of a plan node, checked on the value being written: `enum`, the
//! numeric bounds (compared exactly, integers against floats included, as the `Value`
//! path compares them), the string lengths and the string's pattern or format.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::miss::{Miss, R};
use super::plan::Typed;

#[derive(Clone, Copy)]
pub(super) enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    fn cmp(self, bound: &Number) -> Option<Ordering> {
        let exact = match self {
            Num::U(v) => Some(i128::from(v)),
            Num::I(v) => Some(i128::from(v)),
            Num::F(_) => None,
        };
        let bound_exact = bound.as_u64().map(i128::from).or_else(|| bound.as_i64().map(i128::from));
        match (exact, bound_exact) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            // A float against an integer: compared exactly, as the `Value` path does
            // (2^64 as a float is above u64::MAX, though both round to the same f64).
            (None, Some(b)) => float_vs_int(self.f64(), b),
            (Some(a), None) => float_vs_int(bound.as_f64()?, a).map(Ordering::reverse),
            (None, None) => self.f64().partial_cmp(&bound.as_f64()?),
        }
    }

    #[allow(clippy::cast_precision_loss)]
    fn f64(self) -> f64 {
        match self {
            Num::U(v) => v as f64,
            Num::I(v) => v as f64,
            Num::F(v) => v,
        }
    }

    fn equals(self, other: &Value) -> bool {
        match other {
            Value::Number(n) => self.cmp(n) == Some(Ordering::Equal),
            _ => false,
        }
    }
}

/// Orders a float against an integer without rounding either.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn float_vs_int(f: f64, i: i128) -> Option<Ordering> {
    // Every i128 lies inside [-2^127, 2^127), so a float beyond that is decided by sign.
    const LIMIT: f64 = 1.701_411_834_604_692_3e38;
    if f.is_nan() {
        return None;
    }
    if f >= LIMIT {
        return Some(Ordering::Greater);
    }
    if f < -LIMIT {
        return Some(Ordering::Less);
    }
    // The floor of a float in range is an integer the cast holds exactly.
    let floor = f.floor();
    let whole = floor as i128;
    Some(match whole.cmp(&i) {
        Ordering::Equal if floor < f => Ordering::Greater,
        other => other,
    })
}

pub(super) fn check_number(typed: &Typed, n: Num) -> R {
    if let Some(allowed) = &typed.allowed
        && !allowed.iter().any(|v| n.equals(v))
    {
        return Err(Miss::Invalid("enum"));
    }
    let test = |bound: &Option<Number>, ok: fn(Ordering) -> bool| match bound {
        None => true,
        Some(b) => n.cmp(b).is_some_and(ok),
    };
    if !test(&typed.minimum, Ordering::is_ge)
        || !test(&typed.maximum, Ordering::is_le)
        || !test(&typed.exclusive_minimum, Ordering::is_gt)
        || !test(&typed.exclusive_maximum, Ordering::is_lt)
    {
        return Err(Miss::Invalid("numeric bound"));
    }
    Ok(())
}

pub(super) fn check_str(typed: &Typed, s: &str) -> R {
    if let Some(allowed) = &typed.allowed
        && !allowed.iter().any(|v| v.as_str() == Some(s))
    {
        return Err(Miss::Invalid("enum"));
    }
    if typed.min_length.is_some() || typed.max_length.is_some() {
        let len = s.chars().count() as u64;
        if typed.min_length.is_some_and(|m| len < m) || typed.max_length.is_some_and(|m| len > m) {
            return Err(Miss::Invalid("length"));
        }
    }
    if let Some(leaf) = &typed.leaf
        && !leaf.is_valid(&Value::String(s.to_owned()))
    {
        return Err(Miss::Invalid("pattern or format"));
    }
    Ok(())
}

pub(super) fn check_scalar(typed: &Typed, v: &Value) -> R {
    match &typed.allowed {
        Some(allowed) if !allowed.contains(v) => Err(Miss::Invalid("enum")),
        _ => Ok(()),
    }
}
