//! The mutation generator (`support/mutations.rs`) on shapes the demo contracts do not
//! have: every kind of mutation and clean control must still be generated, every mutation
//! rejected and every control accepted, and a tuple's items must not be emptied.

use contract_runtime::ToolOutput;
use serde_json::Value;

use crate::support::mutations;

/// Shapes the demo contracts do not have, to show that the generator handles them: a
/// nullable struct (`anyOf` with null), a field serde may omit, a map, externally and
/// adjacently tagged enums, an untagged enum whose branches overlap in JSON types, and a
/// tuple (`prefixItems`). Each is emitted under both compatibilities.
mod shapes {
    #![allow(unreachable_pub, reason = "one macro body serves both contracts")]

    use std::collections::BTreeMap;

    use contract_runtime::ToolOutput;
    use schemars::JsonSchema;
    use serde::Serialize;

    #[derive(Clone, Debug, Serialize, JsonSchema)]
    pub struct Owner {
        pub login: String,
        pub admin: bool,
    }

    #[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Reason {
        Done,
        WontFix,
    }

    /// Externally tagged: `"reopened"`, `{"opened": {…}}`, `{"closed": {…}}`.
    #[derive(Clone, Debug, Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Event {
        Opened { by: String },
        Closed { reason: Reason, at_ms: u64 },
        Reopened,
    }

    /// Adjacently tagged.
    #[derive(Clone, Debug, Serialize, JsonSchema)]
    #[serde(tag = "kind", content = "data", rename_all = "snake_case")]
    pub enum Step {
        Build { target: String },
        Test(u32),
        Idle,
    }

    /// Untagged: a count or a label.
    #[derive(Clone, Debug, Serialize, JsonSchema)]
    #[serde(untagged)]
    pub enum Amount {
        Count(u64),
        Label(String),
    }

    macro_rules! shape {
        ($name:ident, $compatibility:tt) => {
            #[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
            #[tool_output(version = "1.0.0", compatibility = $compatibility)]
            pub struct $name {
                pub owner: Option<Owner>,
                #[serde(skip_serializing_if = "Option::is_none")]
                pub note: Option<String>,
                pub counts: BTreeMap<String, u32>,
                pub events: Vec<Event>,
                pub step: Step,
                pub amount: Amount,
                pub pair: (u8, String),
            }

            impl $name {
                pub fn instances() -> Vec<Self> {
                    let full = Self {
                        owner: Some(Owner { login: "ada".to_owned(), admin: true }),
                        note: Some("first run".to_owned()),
                        counts: BTreeMap::from([("passed".to_owned(), 12), ("failed".to_owned(), 1)]),
                        events: vec![
                            Event::Opened { by: "ada".to_owned() },
                            Event::Closed { reason: Reason::WontFix, at_ms: 1_764_000_000_000 },
                            Event::Reopened,
                        ],
                        step: Step::Build { target: "x86_64".to_owned() },
                        amount: Amount::Count(3),
                        pair: (7, "seven".to_owned()),
                    };
                    let sparse = Self {
                        owner: None,
                        note: None,
                        counts: BTreeMap::new(),
                        events: vec![],
                        step: Step::Test(42),
                        amount: Amount::Label("many".to_owned()),
                        pair: (0, String::new()),
                    };
                    let idle = Self {
                        step: Step::Idle,
                        events: vec![Event::Reopened, Event::Closed { reason: Reason::Done, at_ms: 0 }],
                        ..sparse.clone()
                    };
                    vec![full, sparse, idle]
                }
            }
        };
    }

    shape!(ShapesExact, "exact");
    shape!(ShapesAdditive, "additive");
}

#[test]
fn generator_handles_shapes_the_demo_lacks() {
    use shapes::{ShapesAdditive, ShapesExact};
    fn values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
        items.iter().map(|item| serde_json::to_value(item).expect("an instance serializes")).collect()
    }
    let sets = vec![
        (ShapesExact::contract(), values(&ShapesExact::instances())),
        (ShapesAdditive::contract(), values(&ShapesAdditive::instances())),
    ];
    let outcome = mutations::run(&sets);
    outcome.assert_clean(&[
        "delete-required",
        "delete-optional",
        "change-type",
        "unknown-enum",
        "unknown-key-exact",
        "unknown-key-additive",
        "empty-array",
        "null-where-allowed",
    ]);
    // The tuple must keep its two items, so emptying it is not a clean control.
    assert!(outcome.skipped.iter().any(|r| r.contains("empty-array at /pair")), "{:?}", outcome.skipped);
}
