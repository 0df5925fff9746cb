//! The vocabulary of a schema change: verdicts, bumps, operations, change kinds, changes.

#[allow(clippy::wildcard_imports)] // One unit split by concern: the parent holds the shared vocabulary.
use super::*;

/// What a change means for the readers of the values, from harmless to harmful.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Only annotations or the text changed: every value keeps its meaning.
    Cosmetic,
    /// Older peers keep working. For outputs: the new schema allows no value the old one
    /// rejected (it narrows or adds optional information to an open object). For
    /// arguments: every value the old schema accepted is still accepted (it widens or
    /// adds an optional argument).
    Additive,
    /// An older peer can fail. For outputs: the new schema allows a value the old one
    /// rejected, so a client that validates (or relies on the old shape) can fail. For
    /// arguments: the new schema refuses a value the old one accepted, so an old call
    /// can be refused.
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

/// What kind of change was found. The verdicts named below are those for outputs
/// ([`Direction::Response`]); for arguments ([`Direction::Request`]) most are mirrored,
/// and the module documentation's table has both columns. The verdict of a few kinds
/// depends on context (see [`Change::verdict`]).
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
    /// The same `anyOf`/`oneOf` branches or `allOf` entries in another order: cosmetic
    /// (the order does not change which values pass).
    Reordered,
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
    /// reordered, a schema respelled in the current canonical form): cosmetic.
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
            ChangeKind::Reordered => "reordered",
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

/// Which of the two schemas a [`Change::file_pointer`] points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The old schema (the checked-in file): where a removed node was.
    Old,
    /// The new schema (the generated file): where an added or changed node is.
    New,
}

impl Side {
    /// `"old"` or `"new"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Old => "old",
            Side::New => "new",
        }
    }
}

/// One classified difference between two schemas.
///
/// Displays as a review line: `- required /properties/state`,
/// `+ /properties/region (optional, open object)`,
/// `~ /properties/total/maximum (255 → 1000, relaxed)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub(super) pointer: String,
    pub(super) kind: ChangeKind,
    pub(super) op: Op,
    pub(super) verdict: Verdict,
    pub(super) direction: Direction,
    pub(super) detail: String,
    pub(super) old: Option<Value>,
    pub(super) new: Option<Value>,
    /// The pointer of the node in the old schema, when a branch on the way sits at
    /// another index there (the pointer itself is the new schema's).
    pub(super) old_pointer: Option<String>,
    /// Where the changed node is written (see [`Change::file_pointer`]).
    pub(super) located: Option<(Side, String)>,
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

    /// What the change means for the readers of the values: clients that read outputs
    /// ([`Direction::Response`]), or the server that reads arguments
    /// ([`Direction::Request`]); see [`Change::direction`].
    #[must_use]
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The direction the change was classified for: which way the schema's values travel.
    #[must_use]
    pub fn direction(&self) -> Direction {
        self.direction
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

    /// The pointer of the same node in the old dereferenced schema: [`Change::pointer`],
    /// unless a branch on the way sits at another index in the old schema (branches
    /// reordered), where the node of a removal is found.
    #[must_use]
    pub fn old_pointer(&self) -> &str {
        self.old_pointer.as_deref().unwrap_or(&self.pointer)
    }

    /// Where the changed node is written in the schema file: a JSON pointer into the
    /// document as it is (through `$defs`, such as `/$defs/SearchResult/properties/category`
    /// for the [`Change::pointer`] `/properties/packages/items/properties/category`), in
    /// the new schema, or in the old one for a removal (or when only the old one has the
    /// node). `None` for a change of the whole schema, or when neither document has a node
    /// at the pointer.
    #[must_use]
    pub fn file_pointer(&self) -> Option<(Side, &str)> {
        self.located.as_ref().map(|(side, pointer)| (*side, pointer.as_str()))
    }
}

impl Change {
    /// The one change of a contract that is checked in but no longer produced: breaking.
    #[must_use]
    pub fn contract_removed(name: &str) -> Self {
        Change {
            pointer: String::new(),
            kind: ChangeKind::ContractRemoved,
            op: Op::Removed,
            verdict: Verdict::Breaking,
            direction: Direction::Response,
            detail: format!("contract `{name}` removed: its clients lose the tool and its output"),
            old: None,
            new: None,
            old_pointer: None,
            located: None,
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
