//! The tooling's own outputs are contracts: `inventory.json` and the JSON review have
//! JSON Schemas generated from their Rust types and checked in under
//! `contract-tools/schemas/`, which PR bots can rely on. Regenerate after changing a
//! type with
//!
//! ```text
//! CONTRACT_TOOLS_WRITE=1 cargo test -p contract-tools --test report_schemas
//! ```

use std::path::{Path, PathBuf};

use contract_runtime::{contracts, ToolOutput};
use contract_tools::report::{self, Inventory, ReviewReport};
use contract_tools::schemas;

fn own_schemas() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas")
}

#[test]
fn checked_in_report_schemas_are_up_to_date() {
    let dir = own_schemas();
    let set = report::contracts();
    if std::env::var_os("CONTRACT_TOOLS_WRITE").is_some() {
        schemas::write(&dir, &set).unwrap_or_else(|err| panic!("{err}"));
    }
    schemas::check(&dir, &set).unwrap_or_else(|err| {
        panic!("{err}\n(here: CONTRACT_TOOLS_WRITE=1 cargo test -p contract-tools --test report_schemas)")
    });
}

/// A scratch folder under the target directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("contract-tools-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creates the scratch folder");
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[allow(dead_code)] // Only the schemas of these types are used.
mod v1 {
    /// A weather report.
    #[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
    #[tool_output(name = "weather", version = "1.0.0", compatibility = "exact")]
    pub(crate) struct Weather {
        pub(crate) sky: Sky,
        pub(crate) celsius: i16,
    }

    #[derive(serde::Serialize, schemars::JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub(crate) enum Sky {
        Clear,
        Rain,
    }
}

#[allow(dead_code)] // Only the schemas of these types are used.
mod v1_breaking {
    /// A weather report, with a new sky and without the temperature: breaking, unbumped.
    #[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
    #[tool_output(name = "weather", version = "1.0.0", compatibility = "exact")]
    pub(crate) struct Weather {
        pub(crate) sky: Sky,
    }

    #[derive(serde::Serialize, schemars::JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub(crate) enum Sky {
        Clear,
        Rain,
        Snow,
    }
}

/// Every state a review can be in (new, unchanged, changed with old/new fragments,
/// unreadable, orphan file) serializes to a report its own schema accepts, and the
/// report reads back into the typed struct a bot would use.
#[test]
fn every_review_state_matches_the_review_schema() {
    let scratch = Scratch::new("review");
    let dir = &scratch.0;

    let new = schemas::review(dir, &contracts![v1::Weather]).unwrap();
    let unchanged = {
        new.write(dir).unwrap();
        schemas::review(dir, &contracts![v1::Weather]).unwrap()
    };
    let changed = schemas::review(dir, &contracts![v1_breaking::Weather]).unwrap();
    std::fs::write(dir.join("stray.json"), "{}\n").unwrap();
    std::fs::write(dir.join("weather.json"), "{ not json").unwrap();
    let unreadable = schemas::review(dir, &contracts![v1_breaking::Weather]).unwrap();

    let reports = [new.report(), unchanged.report(), changed.report(), unreadable.report()];
    assert!(reports[1].ok, "an unchanged folder passes");
    assert!(!reports[2].ok && !reports[2].contracts[0].changes.is_empty(), "a breaking change is reported");
    assert!(reports[2].contracts[0].changes.iter().any(|c| c.verdict == "breaking" && !c.ok));
    assert!(reports[3].contracts[0].problem.is_some(), "an unreadable file is named");
    for report in &reports {
        report.validate().unwrap_or_else(|err| panic!("{err}\n{}", report.to_canonical_string()));
        let text = report.to_canonical_string();
        let back: ReviewReport = serde_json::from_str(&text).expect("the report reads back into its type");
        assert_eq!(&back, report);
    }
    // The control: a report with a status the schema does not know is refused.
    let mut bad = serde_json::to_value(&reports[2]).unwrap();
    bad["contracts"][0]["status"] = "renamed".into();
    assert!(ReviewReport::contract().validate(&bad).is_err());
}

#[test]
fn the_inventory_file_matches_the_inventory_schema() {
    let files = schemas::render(&contracts![v1::Weather]).unwrap();
    let value: serde_json::Value = serde_json::from_str(&files[schemas::INVENTORY]).unwrap();
    Inventory::contract().validate(&value).unwrap_or_else(|err| panic!("{err}"));
    let inventory: Inventory = serde_json::from_value(value.clone()).expect("typed inventory");
    assert_eq!(inventory.contracts[0].name, "weather");
    let mut bad = value;
    bad["contracts"][0]["extra"] = true.into();
    assert!(Inventory::contract().validate(&bad).is_err(), "an unknown key is refused");
}
