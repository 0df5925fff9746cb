//! The rules: how each keyword's change is classified, by what it does to the values that pass.

#[allow(clippy::wildcard_imports)] // One unit split by concern: the parent holds the shared vocabulary.
use super::*;

impl Walker<'_> {
    pub(super) fn annotations(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        for &keyword in ANNOTATIONS {
            let (a, b) = (o.get(keyword), n.get(keyword));
            let op = match (a, b) {
                (Some(a), Some(b)) if a == b => continue,
                (None, None) => continue,
                (Some(_), Some(_)) => Op::Changed,
                (None, Some(_)) => Op::Added,
                (Some(_), None) => Op::Removed,
            };
            self.push_values(
                format!("{path}/{keyword}"),
                (ChangeKind::AnnotationChanged, op, Effect::Cosmetic),
                "",
                a,
                b,
            );
        }
    }

    pub(super) fn types(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        let pointer = format!("{path}/type");
        let (a, b) = (o.get("type"), n.get("type"));
        let show = |v: &Value| v.to_string();
        match (type_set(o), type_set(n)) {
            (None, None) => {}
            (None, Some(_)) => self.push_values(
                pointer,
                (ChangeKind::TypeNarrowed, Op::Added, Effect::Narrows),
                format!("{} added", show(b.unwrap_or(&Value::Null))),
                None,
                b,
            ),
            (Some(_), None) => self.push_values(
                pointer,
                (ChangeKind::TypeWidened, Op::Removed, Effect::Widens),
                format!("{} removed: any type passes", show(a.unwrap_or(&Value::Null))),
                a,
                None,
            ),
            (Some(old), Some(new)) => {
                let added: BTreeSet<&str> = new.iter().copied().filter(|t| !accepts(&old, t)).collect();
                let removed: BTreeSet<&str> = old.iter().copied().filter(|t| !accepts(&new, t)).collect();
                let detail = |what: &str| {
                    format!("{} → {}, {what}", show(a.unwrap_or(&Value::Null)), show(b.unwrap_or(&Value::Null)))
                };
                let only_null = |set: &BTreeSet<&str>| set.len() == 1 && set.contains("null");
                let narrowed = if only_null(&removed) {
                    (ChangeKind::NoLongerNullable, "no longer nullable")
                } else {
                    (ChangeKind::TypeNarrowed, "narrowed")
                };
                if only_null(&added) {
                    self.push_values(
                        pointer.clone(),
                        (ChangeKind::BecameNullable, Op::Changed, Effect::Widens),
                        detail("now nullable"),
                        a,
                        b,
                    );
                    if !removed.is_empty() {
                        let (kind, what) = narrowed;
                        self.push_values(pointer, (kind, Op::Changed, Effect::Narrows), detail(what), a, b);
                    }
                } else if !added.is_empty() {
                    // A type replaced by an unrelated one lets new values in and old ones out.
                    let (kind, effect, what) = if removed.is_empty() {
                        (ChangeKind::TypeWidened, Effect::Widens, "widened")
                    } else {
                        (ChangeKind::TypeChanged, Effect::Unsafe, "changed")
                    };
                    self.push_values(pointer, (kind, Op::Changed, effect), detail(what), a, b);
                } else if !removed.is_empty() {
                    let (kind, what) = narrowed;
                    self.push_values(pointer, (kind, Op::Changed, Effect::Narrows), detail(what), a, b);
                }
            }
        }
    }

    /// `enum` and `const`.
    pub(super) fn values(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        let (oc, nc) = (o.get("const"), n.get("const"));
        if !o.contains_key("enum") && !n.contains_key("enum") {
            let pointer = format!("{path}/const");
            match (oc, nc) {
                (Some(a), Some(b)) if a != b => self.push_values(
                    pointer,
                    (ChangeKind::ConstChanged, Op::Changed, Effect::Unsafe),
                    format!("{a} → {b}"),
                    oc,
                    nc,
                ),
                (Some(a), None) => self.push_values(
                    pointer,
                    (ChangeKind::ConstRemoved, Op::Removed, Effect::Widens),
                    format!("{a}"),
                    oc,
                    None,
                ),
                (None, Some(b)) => self.push_values(
                    pointer,
                    (ChangeKind::ConstAdded, Op::Added, Effect::Narrows),
                    format!("{b}"),
                    None,
                    nc,
                ),
                _ => {}
            }
            return;
        }
        let allowed = |m: &Map<String, Value>| -> Option<Vec<Value>> {
            match (m.get("enum").and_then(Value::as_array), m.get("const")) {
                (Some(list), _) => Some(list.clone()),
                (None, Some(c)) => Some(vec![c.clone()]),
                (None, None) => None,
            }
        };
        let keyword = |m: &Map<String, Value>| if m.contains_key("enum") { "enum" } else { "const" };
        match (allowed(o), allowed(n)) {
            (Some(old), Some(new)) => {
                for value in new.iter().filter(|v| !old.contains(v)) {
                    self.push_values(
                        format!("{path}/{}", keyword(n)),
                        (ChangeKind::EnumValueAdded, Op::Added, Effect::Widens),
                        format!("value {value}"),
                        None,
                        Some(value),
                    );
                }
                for value in old.iter().filter(|v| !new.contains(v)) {
                    self.push_values(
                        format!("{path}/{}", keyword(o)),
                        (ChangeKind::EnumValueRemoved, Op::Removed, Effect::Narrows),
                        format!("value {value}"),
                        Some(value),
                        None,
                    );
                }
            }
            (None, Some(_)) => self.push_values(
                format!("{path}/{}", keyword(n)),
                (ChangeKind::EnumAdded, Op::Added, Effect::Narrows),
                "only the listed values pass",
                None,
                n.get(keyword(n)),
            ),
            (Some(_), None) => self.push_values(
                format!("{path}/{}", keyword(o)),
                (ChangeKind::EnumRemoved, Op::Removed, Effect::Widens),
                "any value of the type passes",
                o.get(keyword(o)),
                None,
            ),
            (None, None) => {}
        }
    }

    pub(super) fn bound(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        path: &str,
        keyword: &str,
        upper: bool,
    ) {
        let (before, after) = (o.get(keyword), n.get(keyword));
        let pointer = format!("{path}/{keyword}");
        let relaxed = (ChangeKind::BoundRelaxed, Effect::Widens);
        let tightened = (ChangeKind::BoundTightened, Effect::Narrows);
        let ((kind, verdict), op, detail) = match (before.and_then(Value::as_f64), after.and_then(Value::as_f64)) {
            (Some(_), None) => (relaxed, Op::Removed, format!("{} removed, relaxed", before.unwrap_or(&Value::Null))),
            (None, Some(_)) => (tightened, Op::Added, format!("{} added, tightened", after.unwrap_or(&Value::Null))),
            (Some(_), Some(_)) => {
                let show = format!("{} → {}", before.unwrap_or(&Value::Null), after.unwrap_or(&Value::Null));
                let Some(order) = compare_numbers(before, after) else {
                    // Two numbers that differ but that `f64` cannot tell apart (integers
                    // beyond 2^53): not classified, so breaking.
                    self.push_values(
                        pointer,
                        (ChangeKind::Unclassified, Op::Changed, Effect::Unsafe),
                        format!("{show}: too close to compare exactly, so treated as breaking"),
                        before,
                        after,
                    );
                    return;
                };
                match (order, upper) {
                    (std::cmp::Ordering::Equal, _) => return,
                    (std::cmp::Ordering::Greater, true) | (std::cmp::Ordering::Less, false) => {
                        (relaxed, Op::Changed, format!("{show}, relaxed"))
                    }
                    _ => (tightened, Op::Changed, format!("{show}, tightened")),
                }
            }
            (None, None) => return,
        };
        self.push_values(pointer, (kind, op, verdict), detail, before, after);
    }

    /// `pattern`, `format`, `multipleOf`, `uniqueItems`.
    pub(super) fn constraints(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        for keyword in ["pattern", "format", "multipleOf", "uniqueItems"] {
            let present = |m: &Map<String, Value>| m.get(keyword).filter(|v| **v != Value::Bool(false)).cloned();
            let (before, after) = (present(o), present(n));
            let pointer = format!("{path}/{keyword}");
            let entry = match (&before, &after) {
                (Some(x), Some(y)) if x == y => continue,
                (None, None) => continue,
                (None, Some(y)) => (ChangeKind::ConstraintAdded, Op::Added, Effect::Narrows, format!("{y} added")),
                (Some(x), None) => (ChangeKind::ConstraintRemoved, Op::Removed, Effect::Widens, format!("{x} removed")),
                (Some(x), Some(y)) => {
                    // Every multiple of 10 is a multiple of 5: `multipleOf` 5 → 10 narrows,
                    // 10 → 5 widens. Any other change lets values in and out (a pattern
                    // or format is not compared by the language it accepts).
                    let divides = |by: &Value, of: &Value| matches!((by.as_f64(), of.as_f64()), (Some(by), Some(of)) if by > 0.0 && (of / by).fract().abs() < 1e-9);
                    let kind = ChangeKind::ConstraintChanged;
                    if keyword == "multipleOf" && divides(x, y) {
                        (kind, Op::Changed, Effect::Narrows, format!("{x} → {y}, narrowed"))
                    } else if keyword == "multipleOf" && divides(y, x) {
                        (kind, Op::Changed, Effect::Widens, format!("{x} → {y}, widened"))
                    } else {
                        (kind, Op::Changed, Effect::Unsafe, format!("{x} → {y}"))
                    }
                }
            };
            let (kind, op, effect, detail) = entry;
            self.push_values(pointer, (kind, op, effect), detail, before.as_ref(), after.as_ref());
        }
    }

    pub(super) fn object(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        path: &str,
        outer: Closed,
        depth: usize,
    ) {
        let (own_old, own_new) = (closing_keyword(o), closing_keyword(n));
        let closed_old = outer.old || own_old.is_some();
        let closed_new = outer.new || own_new.is_some();
        match (own_old, own_new) {
            (Some(kw), None) if !closed_new => self.push(
                format!("{path}/{kw}"),
                ChangeKind::ObjectOpened,
                Op::Removed,
                Effect::Widens,
                format!("`{kw}: false` removed: closed object opened"),
            ),
            (None, Some(kw)) if !closed_old => self.push(
                format!("{path}/{kw}"),
                ChangeKind::ObjectClosed,
                Op::Added,
                Effect::Narrows,
                format!("`{kw}: false` added: object closed"),
            ),
            (Some(a), Some(b)) if a != b => {
                let (effect, detail) = if b == "unevaluatedProperties" {
                    (
                        Effect::Widens,
                        "closed by `unevaluatedProperties` instead of `additionalProperties`: draft-07 validators ignore it, so the object opened for them",
                    )
                } else {
                    (Effect::Narrows, "closed by `additionalProperties` instead of `unevaluatedProperties`")
                };
                self.push(format!("{path}/{b}"), ChangeKind::ClosingKeywordChanged, Op::Changed, effect, detail);
            }
            _ => {}
        }
        // Schemas (not `false`) for unknown members, such as the values of a map.
        for keyword in ["additionalProperties", "unevaluatedProperties"] {
            let (a, b) = (o.get(keyword), n.get(keyword));
            let is_false = |v: Option<&Value>| v == Some(&Value::Bool(false));
            let is_schema = |v: Option<&Value>| v.is_some_and(Value::is_object);
            if (is_schema(a) || is_schema(b)) && !is_false(a) && !is_false(b) {
                self.walk(
                    a.unwrap_or(&TRUE),
                    b.unwrap_or(&TRUE),
                    &format!("{path}/{keyword}"),
                    Closed::default(),
                    depth + 1,
                );
            }
        }

        let empty = Map::new();
        let op = o.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let np = n.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let (or, nr) = (required_set(o), required_set(n));
        let names: BTreeSet<&str> = op
            .keys()
            .chain(np.keys())
            .map(String::as_str)
            .chain(or.iter().copied())
            .chain(nr.iter().copied())
            .collect();
        let member_schema = |m: &Map<String, Value>| m.get("additionalProperties").filter(|v| v.is_object()).cloned();
        for name in names {
            let pointer = format!("{path}/properties/{}", escape(name));
            let (was_required, is_required) = (or.contains(name), nr.contains(name));
            match (op.get(name), np.get(name)) {
                (Some(a), Some(b)) => {
                    self.requiredness(&pointer, was_required, is_required);
                    self.walk(a, b, &pointer, Closed::default(), depth + 1);
                }
                (None, Some(b)) => {
                    let (kind, effect, detail) = self.added(is_required, closed_old);
                    let open = kind == ChangeKind::PropertyAdded;
                    self.push(pointer.clone(), kind, Op::Added, effect, detail);
                    // Old values under this name had to match the member schema.
                    if let Some(members) = member_schema(o).filter(|_| open) {
                        self.walk(&members, b, &pointer, Closed::default(), depth + 1);
                    }
                }
                (Some(a), None) => {
                    let members = member_schema(n).filter(|_| !closed_new);
                    let (effect, detail) = self.removed(was_required, closed_new, members.is_some());
                    let kind = if was_required {
                        ChangeKind::RequiredPropertyRemoved
                    } else {
                        ChangeKind::OptionalPropertyRemoved
                    };
                    self.push(pointer.clone(), kind, Op::Removed, effect, detail);
                    // A required property's removal is breaking for responses whatever the
                    // member schema says; for requests the old values must pass it.
                    let compare = !was_required || self.direction == Direction::Request;
                    if let Some(members) = members.filter(|_| compare) {
                        self.walk(a, &members, &pointer, Closed::default(), depth + 1);
                    }
                }
                (None, None) => self.requiredness(&pointer, was_required, is_required),
            }
        }
    }

    /// A property only the new object has: its kind, effect and detail. Responses: added
    /// to an open object it narrows what passes (values could carry any value under that
    /// name), added to a closed one it widens. Requests: a required argument refuses every
    /// old call; an optional one is compatible, because callers built against the old
    /// schema do not send it (a strict reading calls the open-object case unsafe, since an
    /// old caller might have sent that name with any value; the rule follows what callers
    /// do).
    fn added(&self, required: bool, closed_old: bool) -> (ChangeKind, Effect, &'static str) {
        let kind = if closed_old { ChangeKind::PropertyAddedToClosedObject } else { ChangeKind::PropertyAdded };
        let (effect, detail) = match (self.direction, required, closed_old) {
            (Direction::Response, true, false) => (Effect::Narrows, "required, open object"),
            (Direction::Response, false, false) => (Effect::Compatible, "optional, open object"),
            (Direction::Response, true, true) => (Effect::Unsafe, "required, closed object"),
            (Direction::Response, false, true) => (Effect::Widens, "optional, closed object"),
            (Direction::Request, true, false) => {
                (Effect::Narrows, "required argument added: calls without it are refused")
            }
            (Direction::Request, false, false) => {
                (Effect::Compatible, "optional argument added: callers of the old schema do not send it")
            }
            (Direction::Request, true, true) => {
                (Effect::Unsafe, "required argument added to a closed object: calls without it are refused")
            }
            (Direction::Request, false, true) => (Effect::Widens, "optional argument added to a closed object"),
        };
        (kind, effect, detail)
    }

    /// A property only the old object has: its effect and detail. Removed from an open
    /// object, any value may appear under that name (widens; a required one was in every
    /// old value, and those still pass). Removed from a closed object, the name can no
    /// longer appear: an optional one narrows, a required one lets no old value through.
    /// With a member schema (`additionalProperties: {…}`) the name is now described by it,
    /// and the walk compares the two schemas.
    fn removed(&self, required: bool, closed_new: bool, members: bool) -> (Effect, &'static str) {
        match (self.direction, required, closed_new) {
            (Direction::Response, true, false) => (Effect::Widens, ""),
            (Direction::Response, true, true) => (Effect::Unsafe, ""),
            (Direction::Response, false, true) => {
                (Effect::Narrows, "optional, closed object; warning: no longer written, readers of it lose it")
            }
            (Direction::Response, false, false) if members => {
                (Effect::Compatible, "optional; now described by `additionalProperties`")
            }
            (Direction::Response, false, false) => {
                (Effect::Widens, "optional, open object: any value may now appear under this name")
            }
            (Direction::Request, _, false) if members => {
                (Effect::Compatible, "argument removed; now described by `additionalProperties`")
            }
            (Direction::Request, _, false) => {
                (Effect::Widens, "argument removed from an open object: the server ignores it now")
            }
            (Direction::Request, true, true) => (
                Effect::Unsafe,
                "required argument removed from a closed object: every old call sends it and is refused",
            ),
            (Direction::Request, false, true) => {
                (Effect::Narrows, "argument removed from a closed object: old calls that send it are refused")
            }
        }
    }

    pub(super) fn requiredness(&mut self, pointer: &str, was_required: bool, is_required: bool) {
        if was_required && !is_required {
            self.push(
                pointer.to_owned(),
                ChangeKind::BecameOptional,
                Op::Changed,
                Effect::Widens,
                "required → optional",
            );
        } else if !was_required && is_required {
            self.push(
                pointer.to_owned(),
                ChangeKind::BecameRequired,
                Op::Changed,
                Effect::Narrows,
                match self.direction {
                    Direction::Response => "optional → required",
                    Direction::Request => "optional → required: calls without it are refused",
                },
            );
        }
    }

    pub(super) fn arrays(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str, depth: usize) {
        if o.contains_key("items") || n.contains_key("items") {
            let (before, after) = (o.get("items").unwrap_or(&TRUE), n.get("items").unwrap_or(&TRUE));
            self.walk(before, after, &format!("{path}/items"), Closed::default(), depth + 1);
        }
        let (before, after) = (schema_list(o, "prefixItems"), schema_list(n, "prefixItems"));
        for i in 0..before.len().max(after.len()) {
            let pointer = format!("{path}/prefixItems/{i}");
            match (before.get(i), after.get(i)) {
                (Some(x), Some(y)) => self.walk(x, y, &pointer, Closed::default(), depth + 1),
                (None, Some(_)) => self.push(
                    pointer,
                    ChangeKind::ConstraintAdded,
                    Op::Added,
                    Effect::Narrows,
                    "tuple position described",
                ),
                (Some(_), None) => self.push(
                    pointer,
                    ChangeKind::ConstraintRemoved,
                    Op::Removed,
                    Effect::Widens,
                    "tuple position no longer described",
                ),
                (None, None) => {}
            }
        }
    }
}
