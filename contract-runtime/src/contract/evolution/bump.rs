//! The version policy: which bump a change needs and whether a declared version covers it.

#[allow(clippy::wildcard_imports)] // One unit split by concern: the parent holds the shared vocabulary.
use super::*;

/// The smallest version that makes `bump` from `old` (pre-release and build metadata
/// dropped). Below 1.0.0 a major bump is a minor one: `0.4.1` → `0.5.0`.
///
/// # Examples
///
/// ```
/// use contract_runtime::evolution::{minimum_version, Bump, Version};
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
/// use contract_runtime::evolution::{version_policy, Policy, Version};
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
