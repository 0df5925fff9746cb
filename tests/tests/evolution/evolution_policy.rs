//! The version policy (which bump each verdict needs, versions that decrease, pre-1.0
//! versions) and contract identity (name and version are not enough: the schema hash is
//! part of it).

use std::collections::HashMap;

use contract_runtime::{ContractId, ToolOutput};
use contract_tools::evolution::{self, Bump, Change, Policy, Verdict, Version};

use crate::support::evolution::{load, show, A, B, C, NONE};

/// Changes whose worst verdict is `verdict`, taken from the fixtures.
fn changes_of(verdict: Option<Verdict>) -> Vec<Change> {
    let rule = match verdict {
        Some(Verdict::Breaking) => "required_property_removed",
        Some(Verdict::Additive) => "optional_property_added_to_open_object",
        Some(Verdict::Cosmetic) => "annotations_changed",
        None => "identical",
    };
    let changes = evolution::diff(&load(rule, "old"), &load(rule, "new"));
    assert_eq!(evolution::verdict(&changes), verdict);
    changes
}

#[test]
fn version_policy_table() {
    // (checked-in version, declared version, worst change, outcome)
    let table: &[(&str, &str, Option<Verdict>, &str)] = &[
        ("1.2.0", "1.2.0", NONE, "ok"),
        ("1.2.0", "2.0.0", NONE, "ok"),
        ("1.2.0", "1.2.0", C, "needs 1.2.1"),
        ("1.2.0", "1.2.1", C, "ok"),
        ("1.2.0", "1.3.0", C, "ok"),
        ("1.2.0", "1.2.1", A, "needs 1.3.0"),
        ("1.2.0", "1.3.0", A, "ok"),
        ("1.2.0", "2.0.0", A, "ok"),
        ("1.2.0", "1.2.0", B, "needs 2.0.0"),
        ("1.2.0", "1.3.0", B, "needs 2.0.0"),
        ("1.2.0", "1.9.9", B, "needs 2.0.0"),
        ("1.2.0", "2.0.0", B, "ok"),
        ("1.2.0", "2.0.0-rc.1", B, "ok"),
        ("1.2.0", "1.1.0", NONE, "decreased"),
        ("1.2.0", "1.1.9", B, "decreased"),
        ("2.0.0", "2.0.0-rc.1", NONE, "decreased"),
        ("1.2.0", "1.2.0+build.5", NONE, "ok"),
        ("1.2.0", "1.2.0+build.5", C, "needs 1.2.1"),
        // Below 1.0.0 a minor bump counts as major.
        ("0.3.1", "0.3.1", C, "needs 0.3.2"),
        ("0.3.1", "0.3.2", C, "ok"),
        ("0.3.1", "0.3.2", A, "needs 0.4.0"),
        ("0.3.1", "0.4.0", A, "ok"),
        ("0.3.1", "0.3.2", B, "needs 0.4.0"),
        ("0.3.1", "0.4.0", B, "ok"),
        ("0.3.1", "1.0.0", B, "ok"),
        ("0.0.3", "0.0.4", B, "needs 0.1.0"),
    ];
    let v = |s: &str| Version::parse(s).expect("valid version");
    let mut wrong = Vec::new();
    for &(old, new, verdict, expected) in table {
        let outcome = match evolution::version_policy(&v(old), &v(new), &changes_of(verdict)) {
            Policy::Ok => "ok".to_owned(),
            Policy::TooSmall { needs, .. } => format!("needs {needs}"),
            Policy::Decreased => "decreased".to_owned(),
        };
        if outcome != expected {
            wrong.push(format!("{old} → {new} with {}: {outcome}, expected {expected}", show(verdict)));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn required_bump_follows_the_worst_verdict() {
    assert_eq!(evolution::required_bump(&changes_of(NONE)), Bump::None);
    assert_eq!(evolution::required_bump(&changes_of(C)), Bump::Patch);
    assert_eq!(evolution::required_bump(&changes_of(A)), Bump::Minor);
    assert_eq!(evolution::required_bump(&changes_of(B)), Bump::Major);
    let mut mixed = changes_of(C);
    mixed.extend(changes_of(B));
    mixed.extend(changes_of(A));
    assert_eq!(evolution::required_bump(&mixed), Bump::Major);
}

// ------------------------------------------------------------------ identity

#[allow(dead_code)] // Only their contracts are used: the values are never built.
mod identity {
    use contract_runtime::ToolOutput;
    use schemars::JsonSchema;
    use serde::Serialize;

    pub(crate) mod before {
        use super::{JsonSchema, Serialize, ToolOutput};
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "health", version = "1.0.0", compatibility = "exact")]
        pub(crate) struct Health {
            pub(crate) healthy: u32,
        }
    }

    /// The same name and version, another schema: a change shipped without a bump.
    pub(crate) mod after {
        use super::{JsonSchema, Serialize, ToolOutput};
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "health", version = "1.0.0", compatibility = "exact")]
        pub(crate) struct Health {
            pub(crate) healthy: u32,
            pub(crate) note: String,
        }
    }
}

#[test]
fn same_name_and_version_with_another_schema_is_another_contract() {
    let before = identity::before::Health::contract();
    let after = identity::after::Health::contract();
    assert_eq!((before.name(), before.version()), (after.name(), after.version()));
    assert_ne!(before.sha256(), after.sha256());
    assert_ne!(before.id(), after.id());
    assert_ne!(before.id().to_string(), after.id().to_string());

    // A cache entry or a client validator keyed by identity cannot serve the other one.
    let mut by_identity: HashMap<ContractId, &str> = HashMap::new();
    by_identity.insert(before.id().clone(), "validated under `before`");
    assert_eq!(by_identity.get(before.id()), Some(&"validated under `before`"), "the control hits");
    assert_eq!(by_identity.get(after.id()), None);

    // And the policy refuses to ship it under the unchanged version.
    let changes = evolution::diff(before.schema(), after.schema());
    assert_eq!(evolution::verdict(&changes), Some(Verdict::Breaking));
    assert!(matches!(evolution::version_policy(before.version(), after.version(), &changes), Policy::TooSmall { .. }));
}
