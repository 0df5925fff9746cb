//! Semantic diff of two output schemas, and the version policy that follows from it.
//!
//! An output schema is written by the server and read by clients built against an older
//! version, so a change is safe only when every value the new schema allows was already
//! allowed by the old one. [`diff`] walks two canonical schemas side by side and
//! classifies every difference for OUTPUTS (tools that judge request schemas, such as
//! json-schema-diff, must be read inverted):
//!
//! | change (old → new) | verdict |
//! |---|---|
//! | required property removed; property renamed (removal + addition) | breaking |
//! | required → optional | breaking |
//! | optional → required | additive |
//! | `enum` value added, `enum` removed | breaking |
//! | `enum` value removed, `enum` added | additive |
//! | `const` changed or removed | breaking |
//! | `const` added | additive |
//! | type widened (new type in the list, `integer` → `number`, `type` removed) or changed | breaking |
//! | became nullable (`"null"` in `type`, or a `{"type":"null"}` branch) | breaking |
//! | type narrowed, no longer nullable | additive |
//! | `anyOf`/`oneOf` branch added; `oneOf` → `anyOf` | breaking |
//! | `anyOf`/`oneOf` branch removed; `anyOf` → `oneOf` | additive |
//! | bound relaxed (`maximum`/`maxLength`/`maxItems`/… up or removed, `minimum`/`minLength`/`minItems`/… down or removed) | breaking |
//! | bound tightened or added | additive |
//! | `pattern`/`format`/`multipleOf`/`uniqueItems` removed or changed | breaking |
//! | `pattern`/`format`/`multipleOf`/`uniqueItems` added | additive |
//! | closed object opened (`additionalProperties: false` / `unevaluatedProperties: false` removed) | breaking |
//! | object closed | additive |
//! | property (optional or required) added to a CLOSED object | breaking |
//! | property (optional or required) added to an OPEN object | additive |
//! | optional property removed from an open object | breaking (any value may now appear under that name) |
//! | optional property removed from a closed object | additive, with a warning: readers of that field lose it |
//! | `title`, `description`, `default`, `examples`, `deprecated`, `readOnly`, `writeOnly`, `$comment` | cosmetic |
//! | only the text changed (`$defs` renamed or reordered) | cosmetic |
//! | any other keyword added, removed or changed | breaking (not classified, so assumed unsafe) |
//! | a difference the walk cannot judge: nested deeper than 256 levels, behind a `$ref` chain longer than 64 or a `$ref` that does not resolve, more than 16 property levels inside an unclassified keyword, a classified keyword of the wrong JSON type | breaking (`unclassified`, naming the pointer and the limit) |
//! | a contract removed (checked in, no longer produced; see [`crate::snapshot`]) | breaking (`contract_removed`) |
//!
//! The walk fails closed: where it stops (a limit reached, a keyword it does not
//! understand), it compares what is left as plain text, `$ref` targets included, and any
//! difference there is an `unclassified` breaking change, never a cosmetic one.
//!
//! RESEARCH lists "optional property removed" as a warning. A verdict must map to a bump,
//! so the warning is resolved by what the new schema provably allows: in an open object
//! the name is no longer described, so values the old schema rejected may appear
//! (breaking); in a closed object the name can no longer appear at all (additive, and the
//! change's detail says that readers lose the field).
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
//! branch. Branches are paired by equality first, then by their discriminant (a property
//! with a `const`, a single required property, a `const`, or the type).
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
//! use contract_tools::evolution::{self, Bump, Verdict};
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

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use contract_runtime::schema::{canonical_string, Subschemas};

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

/// Keywords that describe but never constrain: their changes are cosmetic.
const ANNOTATIONS: &[&str] =
    &["title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"];

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

/// What a change means for clients that read outputs, from harmless to harmful.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Only annotations or the text changed: every value keeps its meaning.
    Cosmetic,
    /// The new schema allows no value the old one rejected (it narrows or adds
    /// optional information to an open object): older clients keep working.
    Additive,
    /// The new schema allows a value the old one rejected: an older client that
    /// validates (or relies on the old shape) can fail.
    Breaking,
}

impl Verdict {
    /// `"cosmetic"`, `"additive"` or `"breaking"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Cosmetic => "cosmetic",
            Verdict::Additive => "additive",
            Verdict::Breaking => "breaking",
        }
    }

    /// The version bump this verdict requires.
    #[must_use]
    pub fn bump(self) -> Bump {
        match self {
            Verdict::Cosmetic => Bump::Patch,
            Verdict::Additive => Bump::Minor,
            Verdict::Breaking => Bump::Major,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A semantic version bump, from none to major.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bump {
    /// The schema is identical: no bump needed.
    None,
    /// `x.y.z` → `x.y.(z+1)` or more.
    Patch,
    /// `x.y.z` → `x.(y+1).0` or more.
    Minor,
    /// `x.y.z` → `(x+1).0.0` or more; below 1.0.0, `0.y.z` → `0.(y+1).0` or more.
    Major,
}

impl Bump {
    /// `"none"`, `"patch"`, `"minor"` or `"major"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Bump::None => "none",
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }
}

impl fmt::Display for Bump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether something was added, removed or changed in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Present only in the new schema (shown as `+`).
    Added,
    /// Present only in the old schema (shown as `-`).
    Removed,
    /// Present in both with a different value (shown as `~`).
    Changed,
}

impl Op {
    /// `"added"`, `"removed"` or `"changed"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Added => "added",
            Op::Removed => "removed",
            Op::Changed => "changed",
        }
    }

    fn sign(self) -> char {
        match self {
            Op::Added => '+',
            Op::Removed => '-',
            Op::Changed => '~',
        }
    }
}

/// What kind of change was found. The verdict of a few kinds depends on context (see
/// [`Change::verdict`]); the module documentation has the full table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChangeKind {
    /// A property added to an open object (optional or required): additive.
    PropertyAdded,
    /// A property added to a closed object: breaking for validating clients.
    PropertyAddedToClosedObject,
    /// A required property removed: breaking.
    RequiredPropertyRemoved,
    /// An optional property removed: breaking from an open object, additive (with a
    /// warning) from a closed one.
    OptionalPropertyRemoved,
    /// A required property became optional: breaking.
    BecameOptional,
    /// An optional property became required: additive.
    BecameRequired,
    /// A value added to an `enum`: breaking.
    EnumValueAdded,
    /// A value removed from an `enum`: additive.
    EnumValueRemoved,
    /// An `enum` where there was none: additive.
    EnumAdded,
    /// An `enum` dropped: breaking.
    EnumRemoved,
    /// A `const` where there was none: additive.
    ConstAdded,
    /// A `const` changed: breaking.
    ConstChanged,
    /// A `const` dropped: breaking.
    ConstRemoved,
    /// A type added to the list, `integer` → `number`, or `type` dropped: breaking.
    TypeWidened,
    /// A type replaced by an unrelated one: breaking.
    TypeChanged,
    /// A type removed from the list, `number` → `integer`, or `type` added: additive.
    TypeNarrowed,
    /// `null` became allowed: breaking.
    BecameNullable,
    /// `null` is no longer allowed: additive.
    NoLongerNullable,
    /// An `anyOf`/`oneOf` branch added: breaking.
    BranchAdded,
    /// An `anyOf`/`oneOf` branch removed: additive.
    BranchRemoved,
    /// `oneOf` became `anyOf` (breaking) or `anyOf` became `oneOf` (additive).
    CompositionChanged,
    /// A bound raised, lowered or removed so that more values pass: breaking.
    BoundRelaxed,
    /// A bound added or moved so that fewer values pass: additive.
    BoundTightened,
    /// A constraint (`pattern`, `format`, `multipleOf`, `uniqueItems`, an `allOf` entry,
    /// a `prefixItems` entry, `anyOf`/`oneOf` as a whole) added: additive.
    ConstraintAdded,
    /// Such a constraint removed: breaking.
    ConstraintRemoved,
    /// Such a constraint changed: breaking, unless provably narrower.
    ConstraintChanged,
    /// `additionalProperties: false` or `unevaluatedProperties: false` removed: breaking.
    ObjectOpened,
    /// An object closed: additive.
    ObjectClosed,
    /// `additionalProperties: false` replaced by `unevaluatedProperties: false` (breaking:
    /// draft-07 validators such as the TypeScript SDK 1.x's Ajv ignore the latter), or the
    /// reverse (additive).
    ClosingKeywordChanged,
    /// A title, description, default, example or other annotation: cosmetic.
    AnnotationChanged,
    /// A keyword this module does not classify changed, or a difference sits where the
    /// walk cannot judge it (a limit reached, a `$ref` that does not resolve, a keyword
    /// of the wrong JSON type): breaking, to be safe. The detail says which.
    Unclassified,
    /// A contract that is checked in is no longer produced by any type: breaking, and no
    /// version bump covers it (the tool is gone for its clients).
    ContractRemoved,
    /// The schema text differs but no value changed meaning (`$defs` renamed or
    /// reordered): cosmetic.
    TextOnly,
}

impl ChangeKind {
    /// The kind in `snake_case`, for machine-readable reports.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::PropertyAdded => "property_added",
            ChangeKind::PropertyAddedToClosedObject => "property_added_to_closed_object",
            ChangeKind::RequiredPropertyRemoved => "required_property_removed",
            ChangeKind::OptionalPropertyRemoved => "optional_property_removed",
            ChangeKind::BecameOptional => "became_optional",
            ChangeKind::BecameRequired => "became_required",
            ChangeKind::EnumValueAdded => "enum_value_added",
            ChangeKind::EnumValueRemoved => "enum_value_removed",
            ChangeKind::EnumAdded => "enum_added",
            ChangeKind::EnumRemoved => "enum_removed",
            ChangeKind::ConstAdded => "const_added",
            ChangeKind::ConstChanged => "const_changed",
            ChangeKind::ConstRemoved => "const_removed",
            ChangeKind::TypeWidened => "type_widened",
            ChangeKind::TypeChanged => "type_changed",
            ChangeKind::TypeNarrowed => "type_narrowed",
            ChangeKind::BecameNullable => "became_nullable",
            ChangeKind::NoLongerNullable => "no_longer_nullable",
            ChangeKind::BranchAdded => "branch_added",
            ChangeKind::BranchRemoved => "branch_removed",
            ChangeKind::CompositionChanged => "composition_changed",
            ChangeKind::BoundRelaxed => "bound_relaxed",
            ChangeKind::BoundTightened => "bound_tightened",
            ChangeKind::ConstraintAdded => "constraint_added",
            ChangeKind::ConstraintRemoved => "constraint_removed",
            ChangeKind::ConstraintChanged => "constraint_changed",
            ChangeKind::ObjectOpened => "object_opened",
            ChangeKind::ObjectClosed => "object_closed",
            ChangeKind::ClosingKeywordChanged => "closing_keyword_changed",
            ChangeKind::AnnotationChanged => "annotation_changed",
            ChangeKind::Unclassified => "unclassified",
            ChangeKind::ContractRemoved => "contract_removed",
            ChangeKind::TextOnly => "text_only",
        }
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One classified difference between two schemas.
///
/// Displays as a review line: `- required /properties/state`,
/// `+ /properties/region (optional, open object)`,
/// `~ /properties/total/maximum (255 → 1000, relaxed)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pointer: String,
    kind: ChangeKind,
    op: Op,
    verdict: Verdict,
    detail: String,
    old: Option<Value>,
    new: Option<Value>,
}

impl Change {
    /// JSON pointer into the dereferenced schema (see the module documentation).
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What kind of change this is.
    #[must_use]
    pub fn kind(&self) -> ChangeKind {
        self.kind
    }

    /// Added, removed or changed.
    #[must_use]
    pub fn op(&self) -> Op {
        self.op
    }

    /// What the change means for clients that read outputs.
    #[must_use]
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// A short explanation, such as `optional, open object` or `255 → 1000, relaxed`;
    /// empty when the pointer says it all.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The old value of the keyword, where one value says it (a bound, a type, an enum
    /// value, a const).
    #[must_use]
    pub fn old_value(&self) -> Option<&Value> {
        self.old.as_ref()
    }

    /// The new value of the keyword, where one value says it.
    #[must_use]
    pub fn new_value(&self) -> Option<&Value> {
        self.new.as_ref()
    }
}

impl Change {
    /// The one change of a contract that is checked in but no longer produced: breaking.
    pub(crate) fn contract_removed(name: &str) -> Self {
        Change {
            pointer: String::new(),
            kind: ChangeKind::ContractRemoved,
            op: Op::Removed,
            verdict: Verdict::Breaking,
            detail: format!("contract `{name}` removed: its clients lose the tool and its output"),
            old: None,
            new: None,
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = if self.kind == ChangeKind::RequiredPropertyRemoved { "required " } else { "" };
        let pointer = if self.pointer.is_empty() { "(root)" } else { &self.pointer };
        write!(f, "{} {prefix}{pointer}", self.op.sign())?;
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        Ok(())
    }
}

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
/// use contract_tools::evolution::{diff, ChangeKind, Verdict};
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
    let walk = || {
        let mut walker = Walker { old_root: old, new_root: new, changes: Vec::new(), pairs: Vec::new() };
        walker.walk(old, new, "", Closed::default(), 0);
        let mut changes = walker.changes;
        // `old != new` is the cheap test; the canonical text settles key order.
        if changes.is_empty() && old != new && canonical_string(old) != canonical_string(new) {
            changes.push(Change {
                pointer: String::new(),
                kind: ChangeKind::TextOnly,
                op: Op::Changed,
                verdict: Verdict::Cosmetic,
                detail: "text only: no value changes meaning ($defs renamed or reordered)".to_owned(),
                old: None,
                new: None,
            });
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

/// The smallest version that makes `bump` from `old` (pre-release and build metadata
/// dropped). Below 1.0.0 a major bump is a minor one: `0.4.1` → `0.5.0`.
///
/// # Examples
///
/// ```
/// use contract_tools::evolution::{minimum_version, Bump, Version};
/// let v = |s| Version::parse(s).unwrap();
/// assert_eq!(minimum_version(&v("1.2.3"), Bump::None), v("1.2.3"));
/// assert_eq!(minimum_version(&v("1.2.3"), Bump::Patch), v("1.2.4"));
/// assert_eq!(minimum_version(&v("1.2.3"), Bump::Minor), v("1.3.0"));
/// assert_eq!(minimum_version(&v("1.2.3"), Bump::Major), v("2.0.0"));
/// assert_eq!(minimum_version(&v("0.2.3"), Bump::Major), v("0.3.0"));
/// ```
#[must_use]
pub fn minimum_version(old: &Version, bump: Bump) -> Version {
    let (major, minor, patch) = (old.major, old.minor, old.patch);
    match bump {
        Bump::None => Version::new(major, minor, patch),
        Bump::Patch => Version::new(major, minor, patch + 1),
        Bump::Minor => Version::new(major, minor + 1, 0),
        Bump::Major if major == 0 => Version::new(0, minor + 1, 0),
        Bump::Major => Version::new(major + 1, 0, 0),
    }
}

/// Whether going from `old` to `new` is at least `bump` (and never a decrease).
#[must_use]
pub fn satisfies(old: &Version, new: &Version, bump: Bump) -> bool {
    if decreased(old, new) {
        return false;
    }
    let min = minimum_version(old, bump);
    (new.major, new.minor, new.patch) >= (min.major, min.minor, min.patch)
}

/// Whether `new` is lower than `old` (build metadata ignored, as semver precedence says).
#[must_use]
pub fn decreased(old: &Version, new: &Version) -> bool {
    let strip = |v: &Version| Version { build: semver::BuildMetadata::EMPTY, ..v.clone() };
    strip(new) < strip(old)
}

/// The outcome of the version policy for one contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The declared version is enough for the changes (or nothing changed).
    Ok,
    /// The declared version is too small: the changes need `needs` or later.
    TooSmall {
        /// The bump the changes require.
        required: Bump,
        /// The smallest version that satisfies it.
        needs: Version,
    },
    /// The declared version is lower than the checked-in one.
    Decreased,
}

impl Policy {
    /// Whether the policy is met.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        *self == Policy::Ok
    }
}

/// Applies the version policy: `old` is the checked-in version, `new` the declared one,
/// `changes` what [`diff`] found between their schemas.
///
/// # Examples
///
/// ```
/// use contract_tools::evolution::{version_policy, Policy, Version};
/// let v = |s| Version::parse(s).unwrap();
/// // An identical schema needs no bump, but a version never decreases.
/// assert_eq!(version_policy(&v("1.2.0"), &v("1.2.0"), &[]), Policy::Ok);
/// assert_eq!(version_policy(&v("1.2.0"), &v("1.1.9"), &[]), Policy::Decreased);
/// ```
#[must_use]
pub fn version_policy(old: &Version, new: &Version, changes: &[Change]) -> Policy {
    if decreased(old, new) {
        return Policy::Decreased;
    }
    let required = required_bump(changes);
    if satisfies(old, new, required) {
        Policy::Ok
    } else {
        Policy::TooSmall { required, needs: minimum_version(old, required) }
    }
}

/// A structural problem in a document that should be a JSON Schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaProblem {
    pointer: String,
    message: String,
}

impl SchemaProblem {
    /// JSON pointer into the document where the problem is.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What is wrong there.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "(root)" } else { &self.pointer };
        write!(f, "at {pointer}: {}", self.message)
    }
}

impl std::error::Error for SchemaProblem {}

/// Checks that `schema` is shaped like a JSON Schema [`diff`] can read: every subschema
/// an object or a boolean, keywords of the right JSON types, every `$ref` local and
/// resolvable.
///
/// # Errors
///
/// The first problem found, with its JSON pointer.
///
/// # Examples
///
/// ```
/// use contract_tools::evolution::check_schema;
/// use serde_json::json;
/// assert!(check_schema(&json!({ "type": "object" })).is_ok());
/// let err = check_schema(&json!({ "properties": { "a": { "type": 3 } } })).unwrap_err();
/// assert_eq!(err.pointer(), "/properties/a/type");
/// ```
pub fn check_schema(schema: &Value) -> Result<(), SchemaProblem> {
    check_node(schema, schema, "", 0)
}

fn check_node(root: &Value, node: &Value, pointer: &str, depth: usize) -> Result<(), SchemaProblem> {
    let problem = |at: &str, message: String| Err(SchemaProblem { pointer: at.to_owned(), message });
    if depth > MAX_DEPTH {
        // Deeper than the diff walks: refused here rather than judged in part.
        return problem(pointer, format!("nested deeper than {MAX_DEPTH} levels, more than the diff can judge"));
    }
    let obj = match node {
        Value::Bool(_) => return Ok(()),
        Value::Object(obj) => obj,
        other => {
            return problem(pointer, format!("expected a schema (an object or a boolean), found {}", kind_of(other)))
        }
    };
    let mut keys: Vec<&String> = obj.keys().collect();
    keys.sort();
    for key in keys {
        let value = &obj[key.as_str()];
        let at = format!("{pointer}/{}", escape(key));
        match key.as_str() {
            "type" => {
                const TYPES: &[&str] = &["null", "boolean", "object", "array", "number", "integer", "string"];
                let ok = |t: &Value| t.as_str().is_some_and(|t| TYPES.contains(&t));
                let fine = match value {
                    Value::Array(list) => !list.is_empty() && list.iter().all(ok),
                    single => ok(single),
                };
                if !fine {
                    return problem(&at, "expected a type name or a non-empty list of type names".to_owned());
                }
            }
            "required" if !value.as_array().is_some_and(|l| l.iter().all(Value::is_string)) => {
                return problem(&at, "expected a list of property names".to_owned());
            }
            "enum" if !value.is_array() => return problem(&at, "expected a list of values".to_owned()),
            "$ref" => {
                let Some(reference) = value.as_str() else {
                    return problem(&at, "expected a string".to_owned());
                };
                if lookup(root, reference).is_none() {
                    return problem(&at, format!("`{reference}` does not resolve to a definition in this file"));
                }
            }
            "pattern" | "format" if !value.is_string() => return problem(&at, "expected a string".to_owned()),
            "multipleOf" if !value.as_f64().is_some_and(|m| m > 0.0) => {
                return problem(&at, "expected a number greater than 0".to_owned());
            }
            "uniqueItems" if !value.is_boolean() => return problem(&at, "expected a boolean".to_owned()),
            k if (UPPER_BOUNDS.contains(&k) || LOWER_BOUNDS.contains(&k)) && !value.is_number() => {
                return problem(&at, "expected a number".to_owned());
            }
            keyword => match contract_runtime::schema::subschemas_of(keyword) {
                Some(Subschemas::Map) => {
                    let Some(map) = value.as_object() else {
                        return problem(&at, "expected an object of schemas".to_owned());
                    };
                    let mut names: Vec<&String> = map.keys().collect();
                    names.sort();
                    for name in names {
                        check_node(root, &map[name.as_str()], &format!("{at}/{}", escape(name)), depth + 1)?;
                    }
                }
                Some(Subschemas::List) => {
                    let Some(list) = value.as_array().filter(|l| !l.is_empty()) else {
                        return problem(&at, "expected a non-empty list of schemas".to_owned());
                    };
                    for (i, sub) in list.iter().enumerate() {
                        check_node(root, sub, &format!("{at}/{i}"), depth + 1)?;
                    }
                }
                Some(Subschemas::One) => check_node(root, value, &at, depth + 1)?,
                None => {}
            },
        }
    }
    Ok(())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Which side of the walk encloses a node in a closed object.
#[derive(Clone, Copy, Debug, Default)]
struct Closed {
    old: bool,
    new: bool,
}

/// How unmatched entries of a schema list are judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListMode {
    /// `anyOf`/`oneOf`: a new branch widens, a dropped branch narrows.
    Union,
    /// `allOf`: a new entry narrows, a dropped entry widens.
    AllOf,
}

struct Walker<'a> {
    old_root: &'a Value,
    new_root: &'a Value,
    changes: Vec<Change>,
    /// Pairs of `$ref`s being compared on the current path: the recursion guard. Two
    /// recursive definitions are taken as equal where they recur (coinduction).
    pairs: Vec<(String, String)>,
}

impl Walker<'_> {
    fn push(&mut self, pointer: String, kind: ChangeKind, op: Op, verdict: Verdict, detail: impl Into<String>) {
        self.changes.push(Change { pointer, kind, op, verdict, detail: detail.into(), old: None, new: None });
    }

    fn push_values(
        &mut self,
        pointer: String,
        (kind, op, verdict): (ChangeKind, Op, Verdict),
        detail: impl Into<String>,
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        self.changes.push(Change {
            pointer,
            kind,
            op,
            verdict,
            detail: detail.into(),
            old: old.cloned(),
            new: new.cloned(),
        });
    }

    fn walk(&mut self, old: &Value, new: &Value, path: &str, outer: Closed, depth: usize) {
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
    fn equivalent(&self, old: &Value, new: &Value, outer: Closed, depth: usize) -> bool {
        let mut probe =
            Walker { old_root: self.old_root, new_root: self.new_root, changes: Vec::new(), pairs: self.pairs.clone() };
        probe.walk(old, new, "", outer, depth);
        probe.changes.is_empty()
    }

    /// Fails closed where the walk stops: `old` and `new` are compared as plain text
    /// (with the targets of their `$ref`s), and any difference is an unclassified,
    /// breaking change at `path` that says `why` it was not classified.
    fn unjudged(&mut self, old: &Value, new: &Value, path: &str, why: &str) {
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

    fn compare(&mut self, old_raw: &Value, new_raw: &Value, path: &str, outer: Closed, depth: usize) {
        let (old_resolved, new_resolved) =
            match (try_resolve(self.old_root, old_raw), try_resolve(self.new_root, new_raw)) {
                (Ok(o), Ok(n)) => (o, n),
                (Err(why), _) | (_, Err(why)) => return self.unjudged(old_raw, new_raw, path, &why),
            };
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

    fn annotations(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
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
                (ChangeKind::AnnotationChanged, op, Verdict::Cosmetic),
                "",
                a,
                b,
            );
        }
    }

    fn types(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        let pointer = format!("{path}/type");
        let (a, b) = (o.get("type"), n.get("type"));
        let show = |v: &Value| v.to_string();
        match (type_set(o), type_set(n)) {
            (None, None) => {}
            (None, Some(_)) => self.push_values(
                pointer,
                (ChangeKind::TypeNarrowed, Op::Added, Verdict::Additive),
                format!("{} added", show(b.unwrap_or(&Value::Null))),
                None,
                b,
            ),
            (Some(_), None) => self.push_values(
                pointer,
                (ChangeKind::TypeWidened, Op::Removed, Verdict::Breaking),
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
                        (ChangeKind::BecameNullable, Op::Changed, Verdict::Breaking),
                        detail("now nullable"),
                        a,
                        b,
                    );
                    if !removed.is_empty() {
                        let (kind, what) = narrowed;
                        self.push_values(pointer, (kind, Op::Changed, Verdict::Additive), detail(what), a, b);
                    }
                } else if !added.is_empty() {
                    let (kind, what) = if removed.is_empty() {
                        (ChangeKind::TypeWidened, "widened")
                    } else {
                        (ChangeKind::TypeChanged, "changed")
                    };
                    self.push_values(pointer, (kind, Op::Changed, Verdict::Breaking), detail(what), a, b);
                } else if !removed.is_empty() {
                    let (kind, what) = narrowed;
                    self.push_values(pointer, (kind, Op::Changed, Verdict::Additive), detail(what), a, b);
                }
            }
        }
    }

    /// `enum` and `const`.
    fn values(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        let (oc, nc) = (o.get("const"), n.get("const"));
        if !o.contains_key("enum") && !n.contains_key("enum") {
            let pointer = format!("{path}/const");
            match (oc, nc) {
                (Some(a), Some(b)) if a != b => self.push_values(
                    pointer,
                    (ChangeKind::ConstChanged, Op::Changed, Verdict::Breaking),
                    format!("{a} → {b}"),
                    oc,
                    nc,
                ),
                (Some(a), None) => self.push_values(
                    pointer,
                    (ChangeKind::ConstRemoved, Op::Removed, Verdict::Breaking),
                    format!("{a}"),
                    oc,
                    None,
                ),
                (None, Some(b)) => self.push_values(
                    pointer,
                    (ChangeKind::ConstAdded, Op::Added, Verdict::Additive),
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
                        (ChangeKind::EnumValueAdded, Op::Added, Verdict::Breaking),
                        format!("value {value}"),
                        None,
                        Some(value),
                    );
                }
                for value in old.iter().filter(|v| !new.contains(v)) {
                    self.push_values(
                        format!("{path}/{}", keyword(o)),
                        (ChangeKind::EnumValueRemoved, Op::Removed, Verdict::Additive),
                        format!("value {value}"),
                        Some(value),
                        None,
                    );
                }
            }
            (None, Some(_)) => self.push_values(
                format!("{path}/{}", keyword(n)),
                (ChangeKind::EnumAdded, Op::Added, Verdict::Additive),
                "only the listed values pass",
                None,
                n.get(keyword(n)),
            ),
            (Some(_), None) => self.push_values(
                format!("{path}/{}", keyword(o)),
                (ChangeKind::EnumRemoved, Op::Removed, Verdict::Breaking),
                "any value of the type passes",
                o.get(keyword(o)),
                None,
            ),
            (None, None) => {}
        }
    }

    fn bound(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str, keyword: &str, upper: bool) {
        let (before, after) = (o.get(keyword), n.get(keyword));
        let pointer = format!("{path}/{keyword}");
        let relaxed = (ChangeKind::BoundRelaxed, Verdict::Breaking);
        let tightened = (ChangeKind::BoundTightened, Verdict::Additive);
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
                        (ChangeKind::Unclassified, Op::Changed, Verdict::Breaking),
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
    fn constraints(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        for keyword in ["pattern", "format", "multipleOf", "uniqueItems"] {
            let present = |m: &Map<String, Value>| m.get(keyword).filter(|v| **v != Value::Bool(false)).cloned();
            let (before, after) = (present(o), present(n));
            let pointer = format!("{path}/{keyword}");
            let entry = match (&before, &after) {
                (Some(x), Some(y)) if x == y => continue,
                (None, None) => continue,
                (None, Some(y)) => (ChangeKind::ConstraintAdded, Op::Added, Verdict::Additive, format!("{y} added")),
                (Some(x), None) => {
                    (ChangeKind::ConstraintRemoved, Op::Removed, Verdict::Breaking, format!("{x} removed"))
                }
                (Some(x), Some(y)) => {
                    // Every multiple of 10 is a multiple of 5: `multipleOf` 5 → 10 narrows.
                    let narrower = keyword == "multipleOf"
                        && matches!((x.as_f64(), y.as_f64()), (Some(x), Some(y)) if x > 0.0 && (y / x).fract().abs() < 1e-9);
                    if narrower {
                        (ChangeKind::ConstraintChanged, Op::Changed, Verdict::Additive, format!("{x} → {y}, narrowed"))
                    } else {
                        (ChangeKind::ConstraintChanged, Op::Changed, Verdict::Breaking, format!("{x} → {y}"))
                    }
                }
            };
            let (kind, op, verdict, detail) = entry;
            self.push_values(pointer, (kind, op, verdict), detail, before.as_ref(), after.as_ref());
        }
    }

    fn object(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str, outer: Closed, depth: usize) {
        let (own_old, own_new) = (closing_keyword(o), closing_keyword(n));
        let closed_old = outer.old || own_old.is_some();
        let closed_new = outer.new || own_new.is_some();
        match (own_old, own_new) {
            (Some(kw), None) if !closed_new => self.push(
                format!("{path}/{kw}"),
                ChangeKind::ObjectOpened,
                Op::Removed,
                Verdict::Breaking,
                format!("`{kw}: false` removed: closed object opened"),
            ),
            (None, Some(kw)) if !closed_old => self.push(
                format!("{path}/{kw}"),
                ChangeKind::ObjectClosed,
                Op::Added,
                Verdict::Additive,
                format!("`{kw}: false` added: object closed"),
            ),
            (Some(a), Some(b)) if a != b => {
                let (verdict, detail) = if b == "unevaluatedProperties" {
                    (
                        Verdict::Breaking,
                        "closed by `unevaluatedProperties` instead of `additionalProperties`: draft-07 validators ignore it, so the object opened for them",
                    )
                } else {
                    (Verdict::Additive, "closed by `additionalProperties` instead of `unevaluatedProperties`")
                };
                self.push(format!("{path}/{b}"), ChangeKind::ClosingKeywordChanged, Op::Changed, verdict, detail);
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
                    let how = if is_required { "required" } else { "optional" };
                    if closed_old {
                        self.push(
                            pointer,
                            ChangeKind::PropertyAddedToClosedObject,
                            Op::Added,
                            Verdict::Breaking,
                            format!("{how}, closed object"),
                        );
                    } else {
                        self.push(
                            pointer.clone(),
                            ChangeKind::PropertyAdded,
                            Op::Added,
                            Verdict::Additive,
                            format!("{how}, open object"),
                        );
                        // Old values under this name had to match the member schema.
                        if let Some(members) = member_schema(o) {
                            self.walk(&members, b, &pointer, Closed::default(), depth + 1);
                        }
                    }
                }
                (Some(a), None) => {
                    if was_required {
                        self.push(pointer, ChangeKind::RequiredPropertyRemoved, Op::Removed, Verdict::Breaking, "");
                    } else if closed_new {
                        self.push(
                            pointer,
                            ChangeKind::OptionalPropertyRemoved,
                            Op::Removed,
                            Verdict::Additive,
                            "optional, closed object; warning: no longer written, readers of it lose it",
                        );
                    } else if let Some(members) = member_schema(n) {
                        self.push(
                            pointer.clone(),
                            ChangeKind::OptionalPropertyRemoved,
                            Op::Removed,
                            Verdict::Additive,
                            "optional; now described by `additionalProperties`",
                        );
                        self.walk(a, &members, &pointer, Closed::default(), depth + 1);
                    } else {
                        self.push(
                            pointer,
                            ChangeKind::OptionalPropertyRemoved,
                            Op::Removed,
                            Verdict::Breaking,
                            "optional, open object: any value may now appear under this name",
                        );
                    }
                }
                (None, None) => self.requiredness(&pointer, was_required, is_required),
            }
        }
    }

    fn requiredness(&mut self, pointer: &str, was_required: bool, is_required: bool) {
        if was_required && !is_required {
            self.push(
                pointer.to_owned(),
                ChangeKind::BecameOptional,
                Op::Changed,
                Verdict::Breaking,
                "required → optional",
            );
        } else if !was_required && is_required {
            self.push(
                pointer.to_owned(),
                ChangeKind::BecameRequired,
                Op::Changed,
                Verdict::Additive,
                "optional → required",
            );
        }
    }

    fn arrays(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str, depth: usize) {
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
                    Verdict::Additive,
                    "tuple position described",
                ),
                (Some(_), None) => self.push(
                    pointer,
                    ChangeKind::ConstraintRemoved,
                    Op::Removed,
                    Verdict::Breaking,
                    "tuple position no longer described",
                ),
                (None, None) => {}
            }
        }
    }

    /// Compares two lists of subschemas (`anyOf`/`oneOf` branches, `allOf` entries),
    /// pairing entries by equality, then by discriminant, before reporting the rest as
    /// added or removed.
    fn list(
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
            if let Some(i) =
                (0..olds.len()).find(|&i| !old_taken[i] && self.equivalent(olds[i].1, new, outer, depth + 1))
            {
                old_taken[i] = true;
                pairs[j] = Some((i, true));
            }
        }
        let old_keys: Vec<Option<String>> = olds.iter().map(|(_, b)| branch_key(self.old_root, b)).collect();
        let new_keys: Vec<Option<String>> = news.iter().map(|(_, b)| branch_key(self.new_root, b)).collect();
        for j in 0..news.len() {
            if pairs[j].is_some() || new_keys[j].is_none() {
                continue;
            }
            if let Some(i) = (0..olds.len()).find(|&i| !old_taken[i] && old_keys[i] == new_keys[j]) {
                old_taken[i] = true;
                pairs[j] = Some((i, false));
            }
        }
        for (j, (pointer, new)) in news.iter().enumerate() {
            match pairs[j] {
                Some((_, true)) => {}
                Some((i, false)) => self.walk(olds[i].1, new, pointer, outer, depth + 1),
                None => {
                    let label = new_keys[j].clone().unwrap_or_else(|| "branch".to_owned());
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
            let label = old_keys[i].clone().unwrap_or_else(|| "branch".to_owned());
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

    /// Every keyword not classified above, compared as a whole with `$ref`s inlined.
    fn unclassified(
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

/// RFC 6901 escaping of one pointer token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn ref_of(node: &Value) -> Option<&str> {
    node.get("$ref").and_then(Value::as_str)
}

/// Follows a local `$ref` (`#/$defs/Agent`, percent-encoding undone).
fn lookup<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    root.pointer(fragment).or_else(|| root.pointer(&percent_decode(fragment)?))
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The node with its `$ref` chain followed: the target's keywords, overlaid with the
/// keywords written beside the `$ref` (those are closer to the use, such as a
/// description or an `unevaluatedProperties: false` added where the target is used).
///
/// Best effort: a chain that is too long or does not resolve gives the node itself. Where that matters for a verdict, use [`try_resolve`].
fn resolve<'a>(root: &Value, node: &'a Value) -> Cow<'a, Value> {
    try_resolve(root, node).unwrap_or(Cow::Borrowed(node))
}

/// [`resolve`], or why the chain could not be followed to its end: longer than
/// [`MAX_REF_CHAIN`], or a `$ref` that is not local or names nothing in the document.
fn try_resolve<'a>(root: &Value, node: &'a Value) -> Result<Cow<'a, Value>, String> {
    let mut current = Cow::Borrowed(node);
    for _ in 0..MAX_REF_CHAIN {
        let Some(reference) = ref_of(&current) else { return Ok(current) };
        let Some(target) = lookup(root, reference) else {
            return Err(format!("behind `$ref` `{reference}`, which does not resolve in this document"));
        };
        let mut merged = match target {
            Value::Object(map) => map.clone(),
            Value::Bool(true) => Map::new(),
            other => return Ok(Cow::Owned(other.clone())),
        };
        if let Value::Object(siblings) = current.as_ref() {
            for (key, value) in siblings.iter().filter(|(k, _)| *k != "$ref") {
                merged.insert(key.clone(), value.clone());
            }
        }
        current = Cow::Owned(Value::Object(merged));
    }
    if ref_of(&current).is_some() {
        return Err(format!("behind a `$ref` chain longer than {MAX_REF_CHAIN}"));
    }
    Ok(current)
}

/// A resolved node as keywords: `true` has none, `false` (and anything that is not a
/// schema) gives `None` for `false` only.
fn as_map(node: &Value) -> Option<Cow<'_, Map<String, Value>>> {
    match node {
        Value::Object(map) => Some(Cow::Borrowed(map)),
        Value::Bool(false) => None,
        _ => Some(Cow::Owned(Map::new())),
    }
}

/// A copy of `value` with every `$ref` replaced by its target, for whole-keyword
/// comparison. Recursion stops at [`MAX_INLINE_DEPTH`] (16 property levels) and at a
/// `$ref` that cannot be followed; `cut` then says why, so that the caller does not take
/// the shortened copies for the whole.
fn inline(root: &Value, value: &Value, depth: usize, cut: &mut Option<String>) -> Value {
    match value {
        Value::Object(_) | Value::Array(_) if depth > MAX_INLINE_DEPTH => {
            cut.get_or_insert_with(|| {
                format!("more than {} property levels deep ({MAX_INLINE_DEPTH} nesting levels)", MAX_INLINE_DEPTH / 2)
            });
            value.clone()
        }
        Value::Object(_) => match try_resolve(root, value) {
            Ok(resolved) => match resolved.into_owned() {
                Value::Object(map) => {
                    Value::Object(map.iter().map(|(k, v)| (k.clone(), inline(root, v, depth + 1, cut))).collect())
                }
                other => other,
            },
            Err(why) => {
                cut.get_or_insert(why);
                value.clone()
            }
        },
        Value::Array(list) => Value::Array(list.iter().map(|v| inline(root, v, depth + 1, cut)).collect()),
        other => other.clone(),
    }
}

/// Whether two subschemas are the same text and every `$ref` they reach (transitively)
/// has the same target text in both documents: the fail-closed comparison for what the
/// walk cannot classify. Iterative, so that it works however deep the schema is.
fn plainly_equal(old_root: &Value, old: &Value, new_root: &Value, new: &Value) -> bool {
    if old != new {
        return false;
    }
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&Value> = vec![old];
    while let Some(node) = todo.pop() {
        match node {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                    if seen.insert(reference) {
                        let (a, b) = (lookup(old_root, reference), lookup(new_root, reference));
                        if a != b {
                            return false;
                        }
                        todo.extend(a);
                    }
                }
                todo.extend(map.values());
            }
            Value::Array(list) => todo.extend(list),
            _ => {}
        }
    }
    true
}

/// How the new bound compares with the old one (`Greater`: the new one is larger),
/// exactly for integers of any size; `None` when the two differ but cannot be ordered
/// exactly (an integer beyond 2^53 against a fraction that `f64` rounds onto it).
fn compare_numbers(old: Option<&Value>, new: Option<&Value>) -> Option<std::cmp::Ordering> {
    let (Some(Value::Number(a)), Some(Value::Number(b))) = (old, new) else { return None };
    let exact = |n: &serde_json::Number| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    if let (Some(x), Some(y)) = (exact(a), exact(b)) {
        return Some(y.cmp(&x));
    }
    let (x, y) = (a.as_f64()?, b.as_f64()?);
    match y.partial_cmp(&x)? {
        // Equal as `f64` but not the same number: rounding hid the difference.
        std::cmp::Ordering::Equal
            if a != b && (exact(a).is_some() || exact(b).is_some()) && x.abs() >= 9_007_199_254_740_992.0 =>
        {
            None
        }
        order => Some(order),
    }
}

/// Why a resolved node cannot be classified: a keyword the walk reads has a JSON type it
/// does not understand (an `enum` that is not a list, a bound that is not a number, …).
fn ill_typed(node: &Value) -> Option<String> {
    let map = match node {
        Value::Object(map) => map,
        Value::Bool(_) => return None,
        other => {
            return Some(format!(
                "{} instead of an object or a boolean, a form the classifier does not understand",
                kind_of(other)
            ))
        }
    };
    map.iter().find_map(|(keyword, value)| {
        let fine = match keyword.as_str() {
            "type" => value.is_string() || value.as_array().is_some_and(|l| l.iter().all(Value::is_string)),
            "required" => value.as_array().is_some_and(|l| l.iter().all(Value::is_string)),
            "enum" | "allOf" | "anyOf" | "oneOf" | "prefixItems" => value.is_array(),
            "properties" | "$defs" | "definitions" => value.is_object(),
            "additionalProperties" | "unevaluatedProperties" | "items" => value.is_object() || value.is_boolean(),
            "$ref" | "pattern" | "format" => value.is_string(),
            "uniqueItems" => value.is_boolean(),
            "multipleOf" => value.is_number(),
            k if UPPER_BOUNDS.contains(&k) || LOWER_BOUNDS.contains(&k) => value.is_number(),
            _ => true,
        };
        (!fine).then(|| format!("using `{keyword}` in a form the classifier does not understand"))
    })
}

fn union_keyword(map: &Map<String, Value>) -> Option<&'static str> {
    ["oneOf", "anyOf"].into_iter().find(|k| map.get(*k).is_some_and(Value::is_array))
}

/// Whether a node is nothing but a union (plus annotations).
fn only_union(map: &Map<String, Value>, keyword: &str) -> bool {
    map.keys().all(|k| k == keyword || ANNOTATIONS.contains(&k.as_str()))
}

/// Whether a resolved node has no keyword but annotations (it accepts every value).
fn constrains_nothing(map: &Map<String, Value>) -> bool {
    map.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))
}

fn own_annotations(raw: &Value) -> Map<String, Value> {
    raw.as_object()
        .map(|m| {
            m.iter().filter(|(k, _)| ANNOTATIONS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
        })
        .unwrap_or_default()
}

fn strip_annotations(raw: &Value) -> Value {
    match raw {
        Value::Object(m) => Value::Object(
            m.iter().filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
        ),
        other => other.clone(),
    }
}

fn indexed<'a>(map: &'a Map<String, Value>, keyword: &str, path: &str) -> Vec<(String, &'a Value)> {
    schema_list(map, keyword).iter().enumerate().map(|(i, b)| (format!("{path}/{keyword}/{i}"), b)).collect()
}

fn schema_list<'a>(map: &'a Map<String, Value>, keyword: &str) -> &'a [Value] {
    map.get(keyword).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The keyword that closes this object itself, if any.
fn closing_keyword(map: &Map<String, Value>) -> Option<&'static str> {
    ["additionalProperties", "unevaluatedProperties"].into_iter().find(|k| map.get(*k) == Some(&Value::Bool(false)))
}

fn required_set(map: &Map<String, Value>) -> BTreeSet<&str> {
    schema_list(map, "required").iter().filter_map(Value::as_str).collect()
}

fn type_set(map: &Map<String, Value>) -> Option<BTreeSet<&str>> {
    match map.get("type")? {
        Value::String(t) => Some(BTreeSet::from([t.as_str()])),
        Value::Array(list) => Some(list.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// Whether a type list accepts every instance of type `t` (`number` accepts integers).
fn accepts(set: &BTreeSet<&str>, t: &str) -> bool {
    set.contains(t) || (t == "integer" && set.contains("number"))
}

/// Whether a branch is `{"type": "null"}` (annotations aside).
fn is_null_schema(root: &Value, branch: &Value) -> bool {
    let resolved = resolve(root, branch);
    let Some(map) = resolved.as_object() else { return false };
    type_set(map).is_some_and(|t| t.len() == 1 && t.contains("null"))
        && map.keys().all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
}

/// What identifies a branch across versions: its tag properties (`state = "queued"`), its
/// single required property (externally tagged enums), its `const`, or its type.
fn branch_key(root: &Value, branch: &Value) -> Option<String> {
    let resolved = resolve(root, branch);
    let map = resolved.as_object()?;
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        let mut names: Vec<&String> = props.keys().collect();
        names.sort();
        let tags: Vec<String> = names
            .iter()
            .filter_map(|name| {
                let prop = resolve(root, &props[name.as_str()]);
                prop.get("const").map(|c| format!("{name} = {c}"))
            })
            .collect();
        if !tags.is_empty() {
            return Some(tags.join(", "));
        }
        if let [only] = schema_list(map, "required") {
            if props.len() == 1 {
                return Some(format!("property {only}"));
            }
        }
    }
    if let Some(c) = map.get("const") {
        return Some(format!("const {c}"));
    }
    map.get("type").map(|t| format!("type {t}"))
}
