//! Single faults: where a payload can be broken, and how.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value};

use crate::strategies::{json_leaf, text};
use crate::Seen;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

pub(crate) fn pointer(path: &[Seg]) -> String {
    path.iter()
        .map(|seg| match seg {
            Seg::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            Seg::Index(i) => format!("/{i}"),
        })
        .collect()
}

pub(crate) fn at_mut<'v>(value: &'v mut Value, path: &[Seg]) -> &'v mut Value {
    path.iter().fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get_mut(k.as_str()).expect("the path exists"),
        Seg::Index(i) => v.get_mut(*i).expect("the path exists"),
    })
}

/// Every location of `value` (the root first) with the value found there.
pub(crate) fn locations(value: &Value) -> Vec<(Vec<Seg>, &Value)> {
    fn walk<'v>(value: &'v Value, path: &mut Vec<Seg>, out: &mut Vec<(Vec<Seg>, &'v Value)>) {
        out.push((path.clone(), value));
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    path.push(Seg::Key(key.clone()));
                    walk(v, path, out);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    walk(v, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

/// The kinds of single faults. Some usually break the payload (a dropped key), some
/// usually keep it valid (a string swapped for another string): the oracle decides each
/// case, not the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    DropKey,
    RenameKey,
    AddKey,
    ChangeType,
    OutOfRange,
    NotAVariant,
    Null,
    WrongContainer,
    SwapString,
    EditArray,
    Nudge,
}

pub(crate) const KINDS: [Kind; 11] = [
    Kind::DropKey,
    Kind::RenameKey,
    Kind::AddKey,
    Kind::ChangeType,
    Kind::OutOfRange,
    Kind::NotAVariant,
    Kind::Null,
    Kind::WrongContainer,
    Kind::SwapString,
    Kind::EditArray,
    Kind::Nudge,
];

/// The random choices of one fault, drawn by proptest beside the value.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) kind: usize,
    pub(crate) location: Index,
    /// Which variant of the fault kind, where it has several.
    pub(crate) choice: Index,
    /// Which item (key, element, replacement) the fault uses.
    pub(crate) pick: Index,
    pub(crate) name: String,
    pub(crate) leaf: Value,
}

pub(crate) fn plan() -> impl Strategy<Value = Plan> {
    (0..KINDS.len(), any::<Index>(), any::<Index>(), any::<Index>(), text(), json_leaf())
        .prop_map(|(kind, location, choice, pick, name, leaf)| Plan { kind, location, choice, pick, name, leaf })
}

/// The JSON type class of a value; integers and other numbers are different classes
/// because integer fields must refuse `1.5`.
pub(crate) fn class(value: &Value) -> u8 {
    match value {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() != 0.0) => 3,
        Value::Number(_) => 2,
        Value::String(_) => 4,
        Value::Array(_) => 5,
        Value::Object(_) => 6,
    }
}

/// Values no integer width of the demo types holds all of: one past each boundary of
/// u8, u16, u32, i64 and u64, negatives for the unsigned, and huge floats.
pub(crate) fn out_of_range() -> Vec<Value> {
    vec![
        Value::from(-1),
        Value::from(256),
        Value::from(65_536),
        Value::from(4_294_967_296_u64),
        Value::from(-4_294_967_296_i64),
        Value::from(i64::MIN),
        Value::from(u64::MAX),
        // 2^64 and -2^63 - 2^11: serde_json holds them as floats, no integer type can.
        Value::from(18_446_744_073_709_551_616.0),
        Value::from(-9_223_372_036_854_777_856.0),
        Value::from(1e300),
        Value::from(-1e300),
    ]
}

/// Applies the fault `kind` to `value` at the location `plan` chooses among those where
/// the kind applies. `None` when no location fits or the fault would change nothing.
pub(crate) fn apply(kind: Kind, plan: &Plan, value: &Value, seen: &Seen) -> Option<(String, Value)> {
    let all = locations(value);
    let fits = |v: &Value| match kind {
        Kind::DropKey | Kind::RenameKey => v.as_object().is_some_and(|m| !m.is_empty()),
        Kind::AddKey => v.is_object(),
        Kind::OutOfRange => v.is_number(),
        Kind::NotAVariant | Kind::SwapString => v.is_string(),
        Kind::Null => !v.is_null(),
        Kind::WrongContainer => v.is_object() || v.is_array(),
        Kind::EditArray => v.as_array().is_some_and(|a| !a.is_empty()),
        Kind::Nudge => v.is_number() || v.is_boolean(),
        Kind::ChangeType => true,
    };
    let candidates: Vec<&(Vec<Seg>, &Value)> = all.iter().filter(|(_, v)| fits(v)).collect();
    if candidates.is_empty() {
        return None;
    }
    let (path, old) = candidates[plan.location.index(candidates.len())];
    let (path, old) = (path.clone(), (*old).clone());
    let here = pointer(&path);
    let mut out = value.clone();
    let target = at_mut(&mut out, &path);
    let what = match kind {
        Kind::DropKey | Kind::RenameKey => {
            let map = target.as_object_mut().expect("fits");
            let key = map.keys().nth(plan.pick.index(map.len())).expect("in range").clone();
            let moved = map.remove(&key).expect("present");
            if kind == Kind::RenameKey {
                let renamed = format!("{key}_");
                if map.contains_key(&renamed) {
                    return None;
                }
                map.insert(renamed.clone(), moved);
                format!("rename {here}/{key} to {renamed:?}")
            } else {
                format!("drop {here}/{key}")
            }
        }
        Kind::AddKey => {
            // A key of arbitrary unicode; a key some other object of the payload has, or
            // one that earlier values of the type had (another variant's field: the
            // likeliest unknown keys to slip through a composed schema); a keyword name.
            let elsewhere: Vec<&String> = all
                .iter()
                .filter_map(|(p, _)| match p.last() {
                    Some(Seg::Key(k)) => Some(k),
                    _ => None,
                })
                .collect();
            let key = match plan.choice.index(4) {
                0 => plan.name.clone(),
                1 if !elsewhere.is_empty() => elsewhere[plan.pick.index(elsewhere.len())].clone(),
                2 if !seen.keys.is_empty() => seen.keys[plan.pick.index(seen.keys.len())].clone(),
                _ => ["__proto__", "$ref", "additionalProperties", "", "state", "id", "extra"][plan.pick.index(7)]
                    .to_owned(),
            };
            let map = target.as_object_mut().expect("fits");
            if map.contains_key(&key) {
                return None;
            }
            map.insert(key.clone(), plan.leaf.clone());
            format!("add {here}/{key:?} = {}", plan.leaf)
        }
        Kind::ChangeType => {
            let pool = [
                Value::Null,
                Value::Bool(true),
                Value::from(7),
                Value::from(1.5),
                Value::from("text"),
                Value::Array(vec![]),
                Value::Object(Map::new()),
                Value::Array(vec![Value::from(1)]),
                serde_json::json!({ "k": 1 }),
            ];
            let other: Vec<&Value> = pool.iter().filter(|v| class(v) != class(&old)).collect();
            *target = other[plan.pick.index(other.len())].clone();
            format!("type of {here} -> {target}")
        }
        Kind::OutOfRange => {
            let pool = out_of_range();
            *target = pool[plan.pick.index(pool.len())].clone();
            format!("number {here} -> {target}")
        }
        Kind::NotAVariant => {
            let s = old.as_str().expect("fits");
            let upper = s.to_uppercase();
            *target = Value::from(match plan.choice.index(4) {
                0 => format!("{s}x"),
                1 if upper != s => upper,
                1 => format!("{s} "),
                2 if !s.is_empty() => String::new(),
                _ => plan.name.clone(),
            });
            format!("string {here} -> {target}")
        }
        Kind::Null => {
            *target = Value::Null;
            format!("null at {here}")
        }
        Kind::WrongContainer => {
            *target = match &old {
                Value::Object(_) => Value::Array(vec![old.clone()]),
                Value::Array(items) if plan.choice.index(2) == 0 || items.is_empty() => Value::Object(Map::new()),
                Value::Array(items) => serde_json::json!({ "0": items[0] }),
                _ => unreachable!("fits"),
            };
            format!("container at {here} -> {target}")
        }
        Kind::SwapString => {
            // A string from elsewhere in the payload, or a word earlier values of the type
            // held (another variant's name, a discriminant of another branch).
            let mut others: Vec<Value> =
                all.iter().map(|(_, v)| *v).filter(|v| v.is_string() && **v != old).cloned().collect();
            if plan.choice.index(2) == 0 || others.is_empty() {
                others = seen.words.iter().filter(|w| **w != old).map(|w| Value::from(w.as_str())).collect();
            }
            if others.is_empty() {
                return None;
            }
            *target = others[plan.pick.index(others.len())].clone();
            format!("string {here} -> {target} (seen elsewhere)")
        }
        Kind::EditArray => {
            let items = target.as_array_mut().expect("fits");
            let i = plan.pick.index(items.len());
            match plan.choice.index(3) {
                0 => {
                    items.remove(i);
                    format!("remove {here}/{i}")
                }
                1 => {
                    items.insert(i, items[i].clone());
                    format!("duplicate {here}/{i}")
                }
                _ => {
                    items.clear();
                    format!("empty {here}")
                }
            }
        }
        Kind::Nudge => {
            *target = match &old {
                Value::Bool(b) => Value::Bool(!b),
                Value::Number(n) => match (n.as_u64(), n.as_i64(), plan.choice.index(2)) {
                    (_, _, 0) => Value::from(0),
                    (Some(u), _, _) => Value::from(u.wrapping_add(1)),
                    (_, Some(i), _) => Value::from(i.wrapping_add(1)),
                    _ => Value::from(n.as_f64().expect("finite") / 2.0),
                },
                _ => unreachable!("fits"),
            };
            format!("nudge {here} -> {target}")
        }
    };
    (out != *value).then_some((what, out))
}
