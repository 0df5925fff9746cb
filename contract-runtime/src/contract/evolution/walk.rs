//! The walk: two schemas side by side, node by node, `$ref`s followed, limits enforced (fail closed).

#[allow(clippy::wildcard_imports)] // One unit split by concern: the parent holds the shared vocabulary.
use super::*;

/// Which side of the walk encloses a node in a closed object.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Closed {
    pub(super) old: bool,
    pub(super) new: bool,
}

/// How unmatched entries of a schema list are judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ListMode {
    /// `anyOf`: a new branch widens, a dropped branch narrows.
    Union,
    /// `oneOf`: as `anyOf`, except that a new branch that a value can match together with
    /// another branch also refuses that value (it matches two).
    OneOf,
    /// `allOf`: a new entry narrows, a dropped entry widens.
    AllOf,
}

/// What a change does to the set of values a schema accepts. The walk's [`Direction`]
/// turns it into a verdict ([`Effect::verdict`]): the rules are written once, for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Effect {
    /// More values pass, none fails that passed: breaking for responses, additive for requests.
    Widens,
    /// Fewer values pass, none passes that failed: additive for responses, breaking for requests.
    Narrows,
    /// Values pass that failed and others fail that passed, or the walk cannot tell:
    /// breaking both ways.
    Unsafe,
    /// Safe both ways by what writers and readers do, not by the sets alone (an optional
    /// property added to an open object): additive both ways.
    Compatible,
    /// No value changes meaning: cosmetic both ways.
    Cosmetic,
}

impl Effect {
    /// The verdict of this effect for values that travel in `direction`.
    pub(super) fn verdict(self, direction: Direction) -> Verdict {
        match (self, direction) {
            (Effect::Cosmetic, _) => Verdict::Cosmetic,
            (Effect::Compatible, _) | (Effect::Narrows, Direction::Response) | (Effect::Widens, Direction::Request) => {
                Verdict::Additive
            }
            (Effect::Unsafe, _) | (Effect::Widens, Direction::Response) | (Effect::Narrows, Direction::Request) => {
                Verdict::Breaking
            }
        }
    }
}

impl ListMode {
    /// The mode of the union keyword `keyword` (`anyOf` or `oneOf`).
    fn of(keyword: &str) -> Self {
        if keyword == "oneOf" {
            ListMode::OneOf
        } else {
            ListMode::Union
        }
    }
}

/// Whether no value can match both branches, as far as their shapes tell: no type in
/// common; `const`/`enum` values that share none; a property both require with such
/// values (a tag); or a property one requires that the other, closed, does not describe
/// (an externally tagged variant). `false` means they may overlap.
fn exclusive(root: &Value, a: &Value, b: &Value) -> bool {
    let (a, b) = (node::resolve(root, a), node::resolve(root, b));
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else { return false };
    if let (Some(x), Some(y)) = (type_set(a), type_set(b))
        && !x.iter().any(|t| accepts(&y, t))
        && !y.iter().any(|t| accepts(&x, t))
    {
        return true;
    }
    let values = |schema: &Map<String, Value>| -> Option<Vec<Value>> {
        match (schema.get("const"), schema.get("enum").and_then(Value::as_array)) {
            (Some(c), _) => Some(vec![c.clone()]),
            (None, Some(list)) => Some(list.clone()),
            (None, None) => None,
        }
    };
    let disjoint = |x: Option<Vec<Value>>, y: Option<Vec<Value>>| match (x, y) {
        (Some(x), Some(y)) => !x.iter().any(|v| y.contains(v)),
        _ => false,
    };
    if disjoint(values(a), values(b)) {
        return true;
    }
    let tag = |map: &Map<String, Value>, name: &str| {
        let prop = node::resolve(root, map.get("properties")?.get(name)?);
        values(prop.as_object()?)
    };
    let (ra, rb) = (required_set(a), required_set(b));
    if ra.intersection(&rb).any(|name| disjoint(tag(a, name), tag(b, name))) {
        return true;
    }
    // Closed by `additionalProperties: false`, which sees only its own `properties`.
    let refuses = |map: &Map<String, Value>, name: &str| {
        map.get("additionalProperties") == Some(&Value::Bool(false))
            && map.get("properties").is_none_or(|p| p.get(name).is_none())
            && !map.contains_key("patternProperties")
    };
    ra.iter().any(|name| refuses(b, name)) || rb.iter().any(|name| refuses(a, name))
}

pub(super) struct Walker<'a> {
    /// Which way the values travel: decides each change's verdict.
    pub(super) direction: Direction,
    pub(super) old_root: &'a Value,
    pub(super) new_root: &'a Value,
    pub(super) changes: Vec<Change>,
    /// Pairs of `$ref`s being compared on the current path: the recursion guard. Two
    /// recursive definitions are taken as equal where they recur (coinduction).
    pub(super) pairs: Vec<(String, String)>,
    /// Branches compared at another index in the old schema than in the new one, outermost
    /// first: (pointer in the new schema, pointer of the same branch in the old one).
    /// Pointers are those of the new schema; these give where a node is in the old one.
    pub(super) moved: Vec<(String, String)>,
}

impl Walker<'_> {
    pub(super) fn push(
        &mut self,
        pointer: String,
        kind: ChangeKind,
        op: Op,
        effect: Effect,
        detail: impl Into<String>,
    ) {
        self.changes.push(Change {
            kind,
            op,
            verdict: effect.verdict(self.direction),
            direction: self.direction,
            detail: detail.into(),
            old: None,
            new: None,
            old_pointer: self.in_old(&pointer),
            located: None,
            pointer,
        });
    }

    pub(super) fn push_values(
        &mut self,
        pointer: String,
        (kind, op, effect): (ChangeKind, Op, Effect),
        detail: impl Into<String>,
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        self.changes.push(Change {
            kind,
            op,
            verdict: effect.verdict(self.direction),
            direction: self.direction,
            detail: detail.into(),
            old: old.cloned(),
            new: new.cloned(),
            old_pointer: self.in_old(&pointer),
            located: None,
            pointer,
        });
    }

    /// Where the node at `pointer` (a pointer of the new schema) is in the old schema,
    /// when a branch on the way sits at another index there.
    fn in_old(&self, pointer: &str) -> Option<String> {
        let mut at = pointer.to_owned();
        for (new, old) in self.moved.iter().rev() {
            if let Some(rest) = at.strip_prefix(new.as_str()).filter(|r| r.is_empty() || r.starts_with('/')) {
                at = format!("{old}{rest}");
            }
        }
        (at != pointer).then_some(at)
    }

    pub(super) fn walk(&mut self, old: &Value, new: &Value, path: &str, outer: Closed, depth: usize) {
        if depth > MAX_DEPTH {
            // Deeper than this the walk does not go; what differs below is not classified.
            self.unjudged(old, new, path, &format!("nested deeper than {MAX_DEPTH} levels"));
            return;
        }
        let pair = match (ref_of(old), ref_of(new)) {
            (Some(a), Some(b)) => Some((a.to_owned(), b.to_owned())),
            _ => None,
        };
        if let Some(pair) = &pair {
            if self.pairs.contains(pair) {
                return;
            }
            self.pairs.push(pair.clone());
        }
        self.compare(old, new, path, outer, depth);
        if pair.is_some() {
            self.pairs.pop();
        }
    }

    /// Whether two subschemas compare without any change.
    pub(super) fn equivalent(&self, old: &Value, new: &Value, outer: Closed, depth: usize) -> bool {
        let mut probe = Walker {
            direction: self.direction,
            old_root: self.old_root,
            new_root: self.new_root,
            changes: Vec::new(),
            pairs: self.pairs.clone(),
            moved: Vec::new(),
        };
        probe.walk(old, new, "", outer, depth);
        probe.changes.is_empty()
    }

    /// Fails closed where the walk stops: `old` and `new` are compared as plain text
    /// (with the targets of their `$ref`s), and any difference is an unclassified,
    /// breaking change at `path` that says `why` it was not classified.
    pub(super) fn unjudged(&mut self, old: &Value, new: &Value, path: &str, why: &str) {
        if !plainly_equal(self.old_root, old, self.new_root, new) {
            self.push(
                path.to_owned(),
                ChangeKind::Unclassified,
                Op::Changed,
                Effect::Unsafe,
                format!("differs where the schema is {why}: not classified, so treated as breaking"),
            );
        }
    }

    pub(super) fn compare(&mut self, old_raw: &Value, new_raw: &Value, path: &str, outer: Closed, depth: usize) {
        let (old_resolved, new_resolved) =
            match (try_resolve(self.old_root, old_raw), try_resolve(self.new_root, new_raw)) {
                (Ok(o), Ok(n)) => (o, n),
                (Err(why), _) | (_, Err(why)) => return self.unjudged(old_raw, new_raw, path, &why),
            };
        let (old_resolved, new_resolved) = super::node::same_spelling(old_resolved, new_resolved);
        if let Some(why) = ill_typed(&old_resolved).or_else(|| ill_typed(&new_resolved)) {
            return self.unjudged(&old_resolved, &new_resolved, path, &why);
        }
        let (o, n) = match (as_map(&old_resolved), as_map(&new_resolved)) {
            (None, None) => return,
            (None, Some(_)) => {
                self.push(
                    path.to_owned(),
                    ChangeKind::ConstraintRemoved,
                    Op::Changed,
                    Effect::Widens,
                    "was `false` (no value allowed), now allows values",
                );
                return;
            }
            (Some(_), None) => {
                self.push(
                    path.to_owned(),
                    ChangeKind::ConstraintAdded,
                    Op::Changed,
                    Effect::Narrows,
                    "now `false`: no value allowed",
                );
                return;
            }
            (Some(o), Some(n)) => (o, n),
        };
        let inner =
            Closed { old: outer.old || closing_keyword(&o).is_some(), new: outer.new || closing_keyword(&n).is_some() };

        // A schema that is a bare union on one side only (`T` → `anyOf: [T, null]`) is
        // compared as a one-branch union, so the new branch is what is reported. A side
        // that constrains nothing is not a branch: a union there narrows or widens it.
        let (ou, nu) = (union_keyword(&o), union_keyword(&n));
        match (ou, nu) {
            (None, Some(nk)) if only_union(&n, nk) && !constrains_nothing(&o) => {
                self.annotations(&own_annotations(old_raw), &n, path);
                let single = strip_annotations(old_raw);
                let olds = [(path.to_owned(), &single)];
                self.list(&olds, &indexed(&n, nk, path), outer, depth, ListMode::of(nk));
                return;
            }
            (Some(ok), None) if only_union(&o, ok) && !constrains_nothing(&n) => {
                self.annotations(&o, &own_annotations(new_raw), path);
                let single = strip_annotations(new_raw);
                let news = [(path.to_owned(), &single)];
                self.list(&indexed(&o, ok, path), &news, outer, depth, ListMode::of(ok));
                return;
            }
            _ => {}
        }

        self.annotations(&o, &n, path);
        self.types(&o, &n, path);
        self.values(&o, &n, path);
        for &keyword in UPPER_BOUNDS {
            self.bound(&o, &n, path, keyword, true);
        }
        for &keyword in LOWER_BOUNDS {
            self.bound(&o, &n, path, keyword, false);
        }
        self.constraints(&o, &n, path);
        self.object(&o, &n, path, outer, depth);
        self.arrays(&o, &n, path, depth);

        match (ou, nu) {
            (Some(ok), Some(nk)) => {
                if ok != nk {
                    let (effect, detail) = if nk == "anyOf" {
                        (Effect::Widens, "`oneOf` → `anyOf`: values matching several branches now pass")
                    } else {
                        (Effect::Narrows, "`anyOf` → `oneOf`: values matching several branches now fail")
                    };
                    self.push(format!("{path}/{nk}"), ChangeKind::CompositionChanged, Op::Changed, effect, detail);
                }
                self.list(&indexed(&o, ok, path), &indexed(&n, nk, path), inner, depth, ListMode::of(nk));
            }
            (None, Some(nk)) => {
                self.push(
                    format!("{path}/{nk}"),
                    ChangeKind::ConstraintAdded,
                    Op::Added,
                    Effect::Narrows,
                    format!("`{nk}` added: every value must match its branches"),
                );
                for (pointer, branch) in indexed(&n, nk, path) {
                    self.walk(&TRUE, branch, &pointer, inner, depth + 1);
                }
            }
            (Some(ok), None) => {
                self.push(
                    format!("{path}/{ok}"),
                    ChangeKind::ConstraintRemoved,
                    Op::Removed,
                    Effect::Widens,
                    format!("`{ok}` removed: values need not match its branches"),
                );
                for (pointer, branch) in indexed(&o, ok, path) {
                    self.walk(branch, &TRUE, &pointer, inner, depth + 1);
                }
            }
            (None, None) => {}
        }
        if o.contains_key("allOf") || n.contains_key("allOf") {
            self.list(&indexed(&o, "allOf", path), &indexed(&n, "allOf", path), inner, depth, ListMode::AllOf);
        }
        self.unclassified(&o, &n, path, [ou, nu]);
    }

    /// Compares two lists of subschemas (`anyOf`/`oneOf` branches, `allOf` entries).
    ///
    /// Entries are paired by structure, never by position: first every pair that compares
    /// without a change, then, best first, the most alike of the rest ([`Shape::similarity`]:
    /// the same discriminant, then shared keywords, types and property names; the closer
    /// position breaks a tie). A pair is compared entry by entry; what is left is added or
    /// removed, at its index in its own schema. Entries that pair up in another order are
    /// reported as one cosmetic [`ChangeKind::Reordered`] change: the order of `anyOf`,
    /// `oneOf` and `allOf` entries does not change which values pass.
    pub(super) fn list(
        &mut self,
        olds: &[(String, &Value)],
        news: &[(String, &Value)],
        outer: Closed,
        depth: usize,
        mode: ListMode,
    ) {
        let mut old_taken = vec![false; olds.len()];
        let mut pairs: Vec<Option<(usize, bool)>> = vec![None; news.len()];
        for (j, (_, new)) in news.iter().enumerate() {
            // The same position first, so that duplicates pair in order.
            let same = (j < olds.len() && !old_taken[j]).then_some(j).into_iter();
            if let Some(i) =
                same.chain(0..olds.len()).find(|&i| !old_taken[i] && self.equivalent(olds[i].1, new, outer, depth + 1))
            {
                old_taken[i] = true;
                pairs[j] = Some((i, true));
            }
        }
        let old_shapes: Vec<Shape> = olds.iter().map(|(_, b)| Shape::of(self.old_root, b)).collect();
        let new_shapes: Vec<Shape> = news.iter().map(|(_, b)| Shape::of(self.new_root, b)).collect();
        let mut candidates: Vec<(f64, usize, usize)> = Vec::new();
        for (j, new_shape) in new_shapes.iter().enumerate().filter(|(j, _)| pairs[*j].is_none()) {
            for (i, old_shape) in old_shapes.iter().enumerate().filter(|(i, _)| !old_taken[*i]) {
                if let Some(score) = old_shape.similarity(new_shape) {
                    candidates.push((score, i, j));
                }
            }
        }
        // Best first; a tie goes to the closer position, then to the earlier new entry.
        candidates
            .sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.abs_diff(a.2).cmp(&b.1.abs_diff(b.2))).then(a.2.cmp(&b.2)));
        for (_, i, j) in candidates {
            if !old_taken[i] && pairs[j].is_none() {
                old_taken[i] = true;
                pairs[j] = Some((i, false));
            }
        }
        self.reordered(news, &pairs, mode);
        for (j, (pointer, new)) in news.iter().enumerate() {
            match pairs[j] {
                Some((_, true)) => {}
                Some((i, false)) => {
                    let moved = olds[i].0 != *pointer;
                    if moved {
                        self.moved.push((pointer.clone(), olds[i].0.clone()));
                    }
                    self.walk(olds[i].1, new, pointer, outer, depth + 1);
                    if moved {
                        self.moved.pop();
                    }
                }
                None => {
                    let label = &new_shapes[j].label;
                    // A new `oneOf` branch that overlaps another refuses the old values in
                    // the overlap: they match two branches now.
                    let overlaps = mode == ListMode::OneOf
                        && news
                            .iter()
                            .enumerate()
                            .any(|(k, (_, other))| k != j && !exclusive(self.new_root, new, other));
                    let (kind, effect, detail) = match mode {
                        ListMode::OneOf if overlaps => (
                            ChangeKind::BranchAdded,
                            Effect::Unsafe,
                            format!("branch {label}, which a value can match together with another branch: such values are now refused"),
                        ),
                        ListMode::Union | ListMode::OneOf if is_null_schema(self.new_root, new) => {
                            (ChangeKind::BecameNullable, Effect::Widens, "null branch added: now nullable".to_owned())
                        }
                        ListMode::Union | ListMode::OneOf => {
                            (ChangeKind::BranchAdded, Effect::Widens, format!("branch {label}"))
                        }
                        ListMode::AllOf => {
                            (ChangeKind::ConstraintAdded, Effect::Narrows, format!("`allOf` entry {label}"))
                        }
                    };
                    self.push(pointer.clone(), kind, Op::Added, effect, detail);
                }
            }
        }
        for (i, (pointer, old)) in olds.iter().enumerate() {
            if old_taken[i] {
                continue;
            }
            let label = &old_shapes[i].label;
            // A `oneOf` branch that overlapped another: the values in the overlap matched
            // two branches and failed; now they pass.
            let overlapped = mode == ListMode::OneOf
                && olds.iter().enumerate().any(|(k, (_, other))| k != i && !exclusive(self.old_root, old, other));
            let (kind, effect, detail) = match mode {
                ListMode::OneOf if overlapped => (
                    ChangeKind::BranchRemoved,
                    Effect::Unsafe,
                    format!(
                        "branch {label}, which a value could match together with another branch: such values now pass"
                    ),
                ),
                ListMode::Union | ListMode::OneOf if is_null_schema(self.old_root, old) => (
                    ChangeKind::NoLongerNullable,
                    Effect::Narrows,
                    "null branch removed: no longer nullable".to_owned(),
                ),
                ListMode::Union | ListMode::OneOf => {
                    (ChangeKind::BranchRemoved, Effect::Narrows, format!("branch {label}"))
                }
                ListMode::AllOf => (ChangeKind::ConstraintRemoved, Effect::Widens, format!("`allOf` entry {label}")),
            };
            self.push(pointer.clone(), kind, Op::Removed, effect, detail);
        }
    }

    /// One cosmetic change when paired entries are in another relative order, at the list
    /// in the new schema, naming each entry that moved (old index → new index).
    fn reordered(&mut self, news: &[(String, &Value)], pairs: &[Option<(usize, bool)>], mode: ListMode) {
        let order: Vec<(usize, usize)> =
            pairs.iter().enumerate().filter_map(|(j, pair)| pair.map(|(i, _)| (i, j))).collect();
        if order.windows(2).all(|w| w[0].0 < w[1].0) {
            return;
        }
        let Some((list, _)) = news.first().and_then(|(pointer, _)| pointer.rsplit_once('/')) else { return };
        let mut moved: Vec<(usize, usize)> = order.into_iter().filter(|(i, j)| i != j).collect();
        moved.sort_unstable();
        let moved: Vec<String> = moved.iter().map(|(i, j)| format!("{i} → {j}")).collect();
        let what = if mode == ListMode::AllOf { "entries" } else { "branches" };
        self.push(
            list.to_owned(),
            ChangeKind::Reordered,
            Op::Changed,
            Effect::Cosmetic,
            format!("{what} reordered, old → new index: {}", moved.join(", ")),
        );
    }

    /// Every keyword not classified above, compared as a whole with `$ref`s inlined.
    pub(super) fn unclassified(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        path: &str,
        unions: [Option<&'static str>; 2],
    ) {
        let skip = |k: &str| {
            CLASSIFIED.contains(&k)
                || ANNOTATIONS.contains(&k)
                || UPPER_BOUNDS.contains(&k)
                || LOWER_BOUNDS.contains(&k)
                || unions.contains(&Some(k))
        };
        let keys: BTreeSet<&str> = o.keys().chain(n.keys()).map(String::as_str).filter(|k| !skip(k)).collect();
        for keyword in keys {
            let pointer = format!("{path}/{}", escape(keyword));
            let mut cut = None;
            let before = o.get(keyword).map(|v| inline(self.old_root, v, 0, &mut cut));
            let after = n.get(keyword).map(|v| inline(self.new_root, v, 0, &mut cut));
            if let (Some(why), Some(a), Some(b)) = (&cut, o.get(keyword), n.get(keyword)) {
                // The inlined copies stop short, so they cannot show a difference beyond
                // that point: compare the rest as plain text instead.
                self.unjudged(a, b, &pointer, &format!("inside `{keyword}`, {why}"));
                continue;
            }
            let op = match (&before, &after) {
                (Some(x), Some(y)) if x == y => continue,
                (None, None) => continue,
                (Some(_), Some(_)) => Op::Changed,
                (None, Some(_)) => Op::Added,
                (Some(_), None) => Op::Removed,
            };
            self.push(
                pointer,
                ChangeKind::Unclassified,
                op,
                Effect::Unsafe,
                format!("`{keyword}` {}: not classified, so treated as breaking", op.as_str()),
            );
        }
    }
}
