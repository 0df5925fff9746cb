//! Semantic diff of two schemas, and the version policy that follows from it.
//!
//! Which changes are safe depends on which way the values travel ([`Direction`]). An
//! output schema is written by the server and read by clients built against an older
//! version, so a change is safe only when every value the new schema allows was already
//! allowed by the old one ([`Direction::Response`], what [`diff`] judges). An input schema
//! is written by clients built against an older version and read by the server, so a
//! change is safe only when every argument object the old schema accepted is still
//! accepted ([`Direction::Request`], [`diff_in`]). It is one walk: each rule states what a
//! change does to the values that pass (more pass, fewer pass, some in and some out), and
//! the direction turns that into a verdict, so most request verdicts are the response
//! verdicts mirrored; the rows where they are not say why.
//!
//! | change (old → new) | response (outputs) | request (arguments) |
//! |---|---|---|
//! | required property removed from an open object; property renamed (removal + addition) | breaking | additive (the server ignores it now); a rename adds a required argument: breaking |
//! | required property removed from a closed object | breaking | breaking (every old call sends it and is refused) |
//! | required → optional | breaking | additive |
//! | optional → required | additive | breaking |
//! | `enum` value added, `enum` removed | breaking | additive |
//! | `enum` value removed, `enum` added | additive | breaking |
//! | `const` changed | breaking | breaking |
//! | `const` removed | breaking | additive |
//! | `const` added | additive | breaking |
//! | type widened (new type in the list, `integer` → `number`, `type` removed) | breaking | additive |
//! | type changed (replaced by an unrelated one) | breaking | breaking |
//! | became nullable (`"null"` in `type`, or a `{"type":"null"}` branch) | breaking | additive |
//! | type narrowed (`number` → `integer`, a type removed, `type` added), no longer nullable | additive | breaking |
//! | `anyOf`/`oneOf` branch added; `oneOf` → `anyOf` | breaking | additive |
//! | `oneOf` branch added or removed that a value can match together with another branch (nothing tells them apart: no type in common, different `const`/`enum` values, a required tag with different values, or a required property the other branch, closed, refuses) | breaking | breaking |
//! | `anyOf`/`oneOf` branch removed; `anyOf` → `oneOf` | additive | breaking |
//! | `anyOf`/`oneOf` branches or `allOf` entries reordered (the same ones, another order) | cosmetic | cosmetic |
//! | bound relaxed (`maximum`/`maxLength`/`maxItems`/… up or removed, `minimum`/`minLength`/`minItems`/… down or removed) | breaking | additive |
//! | bound tightened or added | additive | breaking |
//! | `pattern`/`format`/`multipleOf`/`uniqueItems` removed; `multipleOf` changed to a divisor (10 → 5) | breaking | additive |
//! | `pattern`/`format`/`multipleOf`/`uniqueItems` added; `multipleOf` changed to a multiple (5 → 10) | additive | breaking |
//! | `pattern`/`format` changed, `multipleOf` changed otherwise | breaking | breaking |
//! | closed object opened (`additionalProperties: false` / `unevaluatedProperties: false` removed) | breaking | additive |
//! | object closed | additive | breaking |
//! | closed by `unevaluatedProperties` instead of `additionalProperties` (draft-07 validators ignore it) | breaking | additive |
//! | optional property added to a CLOSED object | breaking | additive |
//! | required property added to a CLOSED object | breaking | breaking |
//! | optional property added to an OPEN object | additive | additive (callers built against the old schema do not send it) |
//! | required property added to an OPEN object | additive | breaking (old calls lack it) |
//! | optional property removed from an open object | breaking (any value may now appear under that name) | additive (the server ignores it now) |
//! | optional property removed from a closed object | additive, with a warning: readers of that field lose it | breaking (old calls that send it are refused) |
//! | `title`, `description`, `default`, `examples`, `deprecated`, `readOnly`, `writeOnly`, `$comment` | cosmetic | cosmetic |
//! | only the text changed (`$defs` renamed or reordered, a `type` array written as `anyOf` with one single-`type` branch per type, `{}` members of an object written `true`) | cosmetic | cosmetic |
//! | any other keyword added, removed or changed | breaking (not classified, so assumed unsafe) | breaking |
//! | a difference the walk cannot judge: nested deeper than 256 levels, behind a `$ref` chain longer than 64 or a `$ref` that does not resolve, more than 16 property levels inside an unclassified keyword, a classified keyword of the wrong JSON type | breaking (`unclassified`, naming the pointer and the limit) | breaking |
//! | a contract removed (checked in, no longer produced; see `contract_tools::schemas`) | breaking (`contract_removed`) | — |
//!
//! An optional argument added to an open object is additive for requests although a
//! strict reading calls it unsafe: an old caller might have sent that name (an open
//! object accepts any) with a value the new schema refuses. The rule follows what
//! callers do: a caller built against the old schema does not send a name the schema
//! did not describe. Each [`Change`] says which direction it was classified for
//! ([`Change::direction`]), and its detail reads for that direction ("required argument
//! added: calls without it are refused").
//!
//! The walk fails closed: where it stops (a limit reached, a keyword it does not
//! understand), it compares what is left as plain text, `$ref` targets included, and any
//! difference there is an `unclassified` breaking change, never a cosmetic one.
//!
//! Schema-diff tools often list "optional property removed" as a warning. A verdict must
//! map to a bump, so for outputs the warning is resolved by what the new schema provably
//! allows: in an open object the name is no longer described, so values the old schema
//! rejected may appear (breaking); in a closed object the name can no longer appear at
//! all (additive, and the change's detail says that readers lose the field).
//!
//! # Pointers
//!
//! Every [`Change`] carries a JSON pointer into the *dereferenced* schema: the path of
//! schema keywords from the root, with every local `$ref` followed as if its target were
//! written in place, such as `/properties/agents/items/properties/role/enum`. `$defs` names
//! never appear, so a pointer stays the same when schemars renames a definition (it
//! numbers clashing names in generation order), and definitions are compared by their
//! resolved structure, never by name. For a branch of `anyOf`, `oneOf` or `allOf` the
//! index is the branch's index in the new schema, or in the old schema for a removed
//! branch.
//!
//! [`Change::file_pointer`] gives the same node as it is written in the file: the pointer
//! through `$defs` (`/$defs/Agent/properties/role/enum`), in the new schema, or in the old
//! one for a removal. The review adds the line where that node's key is.
//!
//! # Pairing branches
//!
//! Branches of `anyOf`/`oneOf` (and `allOf` entries) are paired by structure, never by
//! position: first the pairs that compare without any change, then, best match first,
//! branches alike once resolved. Two branches with a discriminant (a property with a
//! `const`, a single required property, a `const`) pair only when it is the same; a null
//! branch pairs only with a null branch; two objects pair only when they share at least
//! half of their property names, two typed branches only when a value can have a type of
//! both; the rest are
//! ranked by the keywords, types and property names they share (one level down too), the
//! closer position breaking a tie. A paired branch is compared inside; an unpaired new
//! branch is added and an unpaired old one removed, each at its own index. A branch
//! added to an untagged enum is one added branch where it sits, whatever it shifts.
//!
//! Reordering alone changes no value's verdict: `anyOf`, `oneOf` and `allOf` do not
//! depend on the order of their entries. It is one cosmetic change at the list
//! ([`ChangeKind::Reordered`]), so the patch bump the new bytes need is explained.
//!
//! # Version policy
//!
//! As oasdiff does it: a breaking change needs a major bump (below 1.0.0 a minor bump
//! counts as major), an additive change at least a minor bump, a cosmetic change at least
//! a patch bump; a version never decreases; a schema that changed without a bump is an
//! error; an identical schema needs no bump. Pre-release and build metadata are ignored
//! when the bump is measured (bump the numeric part), but a version may not go below the
//! checked-in one.
//!
//! # Examples
//!
//! ```
//! use contract_runtime::evolution::{self, Bump, Verdict};
//! use serde_json::json;
//!
//! let old = json!({
//!     "type": "object",
//!     "properties": { "state": { "type": "string" }, "id": { "type": "string" } },
//!     "required": ["state", "id"]
//! });
//! let new = json!({
//!     "type": "object",
//!     "properties": { "id": { "type": "string" } },
//!     "required": ["id"]
//! });
//! let changes = evolution::diff(&old, &new);
//! assert_eq!(changes.len(), 1);
//! assert_eq!(changes[0].verdict(), Verdict::Breaking);
//! assert_eq!(changes[0].to_string(), "- required /properties/state");
//! assert_eq!(evolution::required_bump(&changes), Bump::Major);
//!
//! let v = |s| evolution::Version::parse(s).unwrap();
//! assert_eq!(evolution::minimum_version(&v("2.0.0"), Bump::Major), v("3.0.0"));
//! assert_eq!(evolution::minimum_version(&v("0.4.1"), Bump::Major), v("0.5.0"));
//! ```
//!
#![doc = include_str!("../../../docs/evolution.md")]

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use crate::contract::schema::{canonical_string, Subschemas, ANNOTATIONS};

/// The semantic version type the policy works with (from the `semver` crate).
pub use semver::Version;

/// Deeper than this the walk stops; real schemas are far shallower.
const MAX_DEPTH: usize = 256;
/// The stack the walk runs on: room for [`MAX_DEPTH`] levels in unoptimized builds
/// (which need about 16 MiB for them), four times over.
const WALK_STACK: usize = 64 << 20;
/// Longest chain of `$ref` to `$ref` followed before a node is taken as it is.
const MAX_REF_CHAIN: usize = 64;
/// How deep unclassified keywords are inlined before they are compared.
const MAX_INLINE_DEPTH: usize = 32;

/// Upper bounds: raising or removing one lets more values through.
const UPPER_BOUNDS: &[&str] = &["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"];
/// Lower bounds: lowering or removing one lets more values through.
const LOWER_BOUNDS: &[&str] = &["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"];

/// Keywords the walk classifies itself; any other keyword is compared as a whole.
const CLASSIFIED: &[&str] = &[
    "$ref",
    "$defs",
    "definitions",
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "prefixItems",
    "allOf",
    "multipleOf",
    "pattern",
    "format",
    "uniqueItems",
];

static TRUE: Value = Value::Bool(true);

mod bump;
mod change;
pub mod hints;
mod node;
mod rules;
mod shape;
pub mod text;
pub mod tool;
mod walk;

pub use bump::{decreased, minimum_version, satisfies, version_policy, Policy};
pub use change::{Bump, Change, ChangeKind, Op, Side, Verdict};
use node::{
    accepts, as_map, closing_keyword, compare_numbers, constrains_nothing, escape, ill_typed, indexed, inline,
    is_null_schema, lookup, only_union, own_annotations, physical_pointer, plainly_equal, ref_of, required_set,
    schema_list, strip_annotations, try_resolve, type_set, union_keyword, Shape,
};
use shape::kind_of;
pub use shape::{check_schema, SchemaProblem};
use walk::{Closed, Effect, Walker};

/// Classifies every difference between two canonical schemas, for outputs.
///
/// Local `$ref`s (`#/$defs/…`) are resolved on both sides and compared by structure, with
/// recursion guarded. An empty result means the schemas are identical; two schemas that
/// differ only in `$defs` names give one [`ChangeKind::TextOnly`] change, because the
/// bytes (and so the contract identity) changed.
///
/// # Examples
///
/// ```
/// use contract_runtime::evolution::{diff, ChangeKind, Verdict};
/// use serde_json::json;
///
/// let old = json!({ "type": "object", "properties": { "n": { "type": "integer" } } });
/// let new = json!({ "type": "object", "properties": { "n": { "type": "integer" }, "region": { "type": "string" } } });
/// let changes = diff(&old, &new);
/// assert_eq!(changes[0].kind(), ChangeKind::PropertyAdded);
/// assert_eq!(changes[0].verdict(), Verdict::Additive);
/// assert_eq!(changes[0].to_string(), "+ /properties/region (optional, open object)");
/// // The mirror image: an optional property removed from an open object.
/// assert_eq!(diff(&new, &old)[0].verdict(), Verdict::Breaking);
/// ```
#[must_use]
pub fn diff(old: &Value, new: &Value) -> Vec<Change> {
    diff_in(Direction::Response, old, new)
}

/// Which way a schema's values travel, which decides what a change breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The server writes, clients read (`outputSchema`, `structuredContent`): a change
    /// is safe when the new schema allows no value the old one rejected.
    Response,
    /// Clients write, the server reads (`inputSchema`, the arguments of `tools/call`): a
    /// change is safe when every value the old schema accepted is still accepted.
    Request,
}

/// Classifies every difference between two canonical schemas whose values travel in
/// `direction`. [`diff`] is `diff_in(Direction::Response, …)`.
#[must_use]
pub fn diff_in(direction: Direction, old: &Value, new: &Value) -> Vec<Change> {
    let walk = || {
        let mut walker = Walker {
            direction,
            old_root: old,
            new_root: new,
            changes: Vec::new(),
            pairs: Vec::new(),
            moved: Vec::new(),
        };
        walker.walk(old, new, "", Closed::default(), 0);
        let mut changes = walker.changes;
        // `old != new` is the cheap test; the canonical text settles key order.
        if changes.is_empty() && old != new && canonical_string(old) != canonical_string(new) {
            changes.push(Change {
                pointer: String::new(),
                kind: ChangeKind::TextOnly,
                op: Op::Changed,
                verdict: Verdict::Cosmetic,
                direction,
                detail: if node::in_an_older_spelling(old) || node::in_an_older_spelling(new) {
                    "text only: no value changes meaning (respelled in the current canonical form, or $defs renamed or reordered)"
                } else {
                    "text only: no value changes meaning ($defs renamed or reordered)"
                }
                .to_owned(),
                old: None,
                new: None,
                old_pointer: None,
                located: None,
            });
        }
        for change in changes.iter_mut().filter(|c| !c.pointer.is_empty()) {
            let in_old = change.old_pointer.as_deref().unwrap_or(&change.pointer);
            let (first, second) = if change.op == Op::Removed {
                ((Side::Old, old, in_old), (Side::New, new, change.pointer.as_str()))
            } else {
                ((Side::New, new, change.pointer.as_str()), (Side::Old, old, in_old))
            };
            change.located = [first, second]
                .into_iter()
                .find_map(|(side, root, pointer)| Some((side, physical_pointer(root, pointer)?)));
        }
        changes
    };
    // The walk recurses once per level up to `MAX_DEPTH`, and the comparisons past it
    // follow the schema as deep as it goes; unoptimized builds need more than a test
    // thread's 2 MiB for that, so it all runs on a thread with a large stack (only
    // touched pages are committed). Should that thread not start, it runs here.
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("evolution-diff".to_owned())
            .stack_size(WALK_STACK)
            .spawn_scoped(scope, walk)
            .ok()
            .map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
    .unwrap_or_else(walk)
}

/// The verdict of a set of changes: the worst one, or `None` when there are none.
#[must_use]
pub fn verdict(changes: &[Change]) -> Option<Verdict> {
    changes.iter().map(Change::verdict).max()
}

/// The bump a set of changes requires: the largest of their verdicts' bumps.
#[must_use]
pub fn required_bump(changes: &[Change]) -> Bump {
    changes.iter().map(|c| c.verdict.bump()).max().unwrap_or(Bump::None)
}
