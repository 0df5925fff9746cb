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
    /// `anyOf`/`oneOf`: a new branch widens, a dropped branch narrows.
    Union,
    /// `allOf`: a new entry narrows, a dropped entry widens.
    AllOf,
}

pub(super) struct Walker<'a> {
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
        verdict: Verdict,
        detail: impl Into<String>,
    ) {
        self.changes.push(Change {
            kind,
            op,
            verdict,
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
        (kind, op, verdict): (ChangeKind, Op, Verdict),
        detail: impl Into<String>,
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        self.changes.push(Change {
            kind,
            op,
            verdict,
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
                Verdict::Breaking,
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
                    Verdict::Breaking,
                    "was `false` (no value allowed), now allows values",
                );
                return;
            }
            (Some(_), None) => {
                self.push(
                    path.to_owned(),
                    ChangeKind::ConstraintAdded,
                    Op::Changed,
                    Verdict::Additive,
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
                self.list(&olds, &indexed(&n, nk, path), outer, depth, ListMode::Union);
                return;
            }
            (Some(ok), None) if only_union(&o, ok) && !constrains_nothing(&n) => {
                self.annotations(&o, &own_annotations(new_raw), path);
                let single = strip_annotations(new_raw);
                let news = [(path.to_owned(), &single)];
                self.list(&indexed(&o, ok, path), &news, outer, depth, ListMode::Union);
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
                    let (verdict, detail) = if nk == "anyOf" {
                        (Verdict::Breaking, "`oneOf` → `anyOf`: values matching several branches now pass")
                    } else {
                        (Verdict::Additive, "`anyOf` → `oneOf`: values matching several branches now fail")
                    };
                    self.push(format!("{path}/{nk}"), ChangeKind::CompositionChanged, Op::Changed, verdict, detail);
                }
                self.list(&indexed(&o, ok, path), &indexed(&n, nk, path), inner, depth, ListMode::Union);
            }
            (None, Some(nk)) => {
                self.push(
                    format!("{path}/{nk}"),
                    ChangeKind::ConstraintAdded,
                    Op::Added,
                    Verdict::Additive,
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
                    Verdict::Breaking,
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
                    let (kind, verdict, detail) = match mode {
                        ListMode::Union if is_null_schema(self.new_root, new) => (
                            ChangeKind::BecameNullable,
                            Verdict::Breaking,
                            "null branch added: now nullable".to_owned(),
                        ),
                        ListMode::Union => (ChangeKind::BranchAdded, Verdict::Breaking, format!("branch {label}")),
                        ListMode::AllOf => {
                            (ChangeKind::ConstraintAdded, Verdict::Additive, format!("`allOf` entry {label}"))
                        }
                    };
                    self.push(pointer.clone(), kind, Op::Added, verdict, detail);
                }
            }
        }
        for (i, (pointer, old)) in olds.iter().enumerate() {
            if old_taken[i] {
                continue;
            }
            let label = &old_shapes[i].label;
            let (kind, verdict, detail) = match mode {
                ListMode::Union if is_null_schema(self.old_root, old) => (
                    ChangeKind::NoLongerNullable,
                    Verdict::Additive,
                    "null branch removed: no longer nullable".to_owned(),
                ),
                ListMode::Union => (ChangeKind::BranchRemoved, Verdict::Additive, format!("branch {label}")),
                ListMode::AllOf => (ChangeKind::ConstraintRemoved, Verdict::Breaking, format!("`allOf` entry {label}")),
            };
            self.push(pointer.clone(), kind, Op::Removed, verdict, detail);
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
            Verdict::Cosmetic,
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
                Verdict::Breaking,
                format!("`{keyword}` {}: not classified, so treated as breaking", op.as_str()),
            );
        }
    }
}
