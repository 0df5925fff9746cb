//! Where a change is written in the checked-in file: review lines and the JSON report name
//! the file, the JSON pointer into it (through `$defs`, in the old file for a removal) and
//! the line, and every such pointer resolves to the changed node.

use contract_runtime::contracts;
use contract_tools::evolution;
use contract_tools::schemas;
use serde_json::Value;

use crate::support::evolution::{dereferenced, goals, TempDir, ETA, PROGRESS};

/// A search tool whose results are a `$defs` entry: the logical pointer
/// `/properties/packages/items/properties/category` is written at
/// `/$defs/SearchResult/properties/category`.
#[allow(dead_code)] // Only their schemas are used: the values are never built.
mod search {
    pub(crate) mod v1 {
        /// Packages matching a query.
        #[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
        #[tool_output(name = "search", version = "1.0.0", compatibility = "additive")]
        pub(crate) struct Search {
            pub(crate) packages: Vec<SearchResult>,
        }

        #[derive(serde::Serialize, schemars::JsonSchema)]
        pub(crate) struct SearchResult {
            pub(crate) name: String,
            pub(crate) category: String,
            pub(crate) tags: Option<Vec<String>>,
        }
    }

    /// `category` nullable, `tags` gone.
    pub(crate) mod v2 {
        /// Packages matching a query.
        #[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
        #[tool_output(name = "search", version = "1.0.0", compatibility = "additive")]
        pub(crate) struct Search {
            pub(crate) packages: Vec<SearchResult>,
        }

        #[derive(serde::Serialize, schemars::JsonSchema)]
        pub(crate) struct SearchResult {
            pub(crate) name: String,
            pub(crate) category: Option<String>,
        }
    }
}

/// The line of the node at `pointer` in the canonical text of `root`, found by writing
/// the document again with that node replaced by a marker.
fn marked_line(root: &Value, pointer: &str) -> usize {
    const MARKER: &str = "<the changed node>";
    let mut marked = root.clone();
    *marked.pointer_mut(pointer).expect("the node exists") = Value::String(MARKER.to_owned());
    let text = contract_runtime::schema::canonical_string(&marked);
    text.lines().position(|l| l.contains(MARKER)).expect("the marker is written") + 1
}

/// Checks in `old`, reviews `new` against it, and returns the review of the one
/// contract with the old and new file texts.
fn review_pair(
    old: &contract_runtime::ContractSet,
    new: &contract_runtime::ContractSet,
) -> (TempDir, schemas::ContractReview, String, String) {
    let dir = TempDir::new("located");
    schemas::write(dir.path(), old).expect("the old contract is written");
    let review = schemas::review(dir.path(), new).unwrap();
    let contract = review.contracts()[0].clone();
    let old_text = std::fs::read_to_string(dir.path().join(contract.file())).unwrap();
    let new_text = schemas::render(new).unwrap()[contract.file()].clone();
    (dir, contract, old_text, new_text)
}

#[test]
fn review_lines_name_the_file_pointer_and_line() {
    use goals::{three, two, without_progress, Envelope};
    let (dir, goal, _, new_text) =
        review_pair(&contracts![Envelope<two::GoalData>], &contracts![Envelope<three::GoalData>]);
    let shown = format!("{}/goal.json", dir.path().display());
    // One added branch where it sits, nothing removed, and where the file has it.
    let line = marked_line(&serde_json::from_str(&new_text).unwrap(), "/$defs/GoalData/anyOf/1");
    assert_eq!(
        goal.lines(),
        [format!(
            "goal 1.0.0 (unchanged): + /properties/data/anyOf/0/anyOf/1 ({ETA}): BREAKING, needs 2.0.0; \
             {shown} line {line}: /$defs/GoalData/anyOf/1"
        )]
    );
    assert_eq!(new_text.lines().nth(line - 1).map(str::trim), Some("{"), "the branch starts on that line");
    assert_eq!(new_text.lines().nth(line).map(str::trim), Some("\"$ref\": \"#/$defs/Eta\""));

    // A removal points into the old file.
    let (dir, goal, old_text, _) =
        review_pair(&contracts![Envelope<three::GoalData>], &contracts![Envelope<without_progress::GoalData>]);
    let shown = format!("{}/goal.json", dir.path().display());
    let line = marked_line(&serde_json::from_str(&old_text).unwrap(), "/$defs/GoalData/anyOf/0");
    assert_eq!(
        goal.lines(),
        [format!(
            "goal 1.0.0 (unchanged): - /properties/data/anyOf/0/anyOf/0 ({PROGRESS}): additive, needs 1.1.0; \
             {shown} line {line} before the change: /$defs/GoalData/anyOf/0"
        )]
    );

    // A removal inside a branch that moved is found where the old file has it.
    let (_dir, goal, _, _) =
        review_pair(&contracts![Envelope<goals::reordered_changed::GoalData>], &contracts![Envelope<two::GoalData>]);
    let removed = &goal.changes()[1];
    assert_eq!(removed.pointer(), "/properties/data/anyOf/0/anyOf/0/properties/total");
    assert_eq!(removed.old_pointer(), "/properties/data/anyOf/0/anyOf/1/properties/total");
    let location = goal.locations()[1].as_ref().expect("located");
    assert_eq!((location.side(), location.pointer()), (evolution::Side::Old, "/$defs/Progress/properties/total"));

    // Through an array of `$defs` entries, as the review prints it and as JSON.
    let (dir, found, old_text, new_text) =
        review_pair(&contracts![search::v1::Search], &contracts![search::v2::Search]);
    let shown = format!("{}/search.json", dir.path().display());
    let category =
        marked_line(&serde_json::from_str(&new_text).unwrap(), "/$defs/SearchResult/properties/category/anyOf/1");
    let tags = marked_line(&serde_json::from_str(&old_text).unwrap(), "/$defs/SearchResult/properties/tags");
    assert_eq!(
        found.lines(),
        [
            format!(
                "search 1.0.0 (unchanged): + /properties/packages/items/properties/category/anyOf/1 (null branch added: now nullable): BREAKING, needs 2.0.0; \
                 {shown} line {category}: /$defs/SearchResult/properties/category/anyOf/1"
            ),
            format!(
                "search 1.0.0 (unchanged): - required /properties/packages/items/properties/tags: BREAKING, needs 2.0.0; \
                 {shown} line {tags} before the change: /$defs/SearchResult/properties/tags"
            ),
        ]
    );
    let review = schemas::review(dir.path(), &contracts![search::v2::Search]).unwrap();
    let report = review.to_json();
    let changes = &report["contracts"][0]["changes"];
    assert_eq!(changes[0]["pointer"], "/properties/packages/items/properties/category/anyOf/1");
    assert_eq!(
        changes[0]["location"],
        serde_json::json!({ "side": "new", "pointer": "/$defs/SearchResult/properties/category/anyOf/1", "line": category })
    );
    assert_eq!(
        changes[1]["location"],
        serde_json::json!({ "side": "old", "pointer": "/$defs/SearchResult/properties/tags", "line": tags })
    );
    review.report().validate().unwrap_or_else(|err| panic!("the report matches its schema: {err}"));
}

/// For every change of every pair: the file pointer resolves in the file it names, to the
/// node the logical pointer reaches in the dereferenced schema, and the line is where
/// that node is written in the canonical text.
#[test]
fn file_pointers_resolve_to_the_changed_node_and_its_line() {
    use goals::{changed, reordered, reordered_changed, three, two, without_progress, Direct, Envelope};
    let pairs = [
        (contracts![Envelope<two::GoalData>], contracts![Envelope<three::GoalData>]),
        (contracts![Envelope<three::GoalData>], contracts![Envelope<without_progress::GoalData>]),
        (contracts![Envelope<two::GoalData>], contracts![Envelope<reordered::GoalData>]),
        (contracts![Envelope<two::GoalData>], contracts![Envelope<changed::GoalData>]),
        (contracts![Envelope<changed::GoalData>], contracts![Envelope<two::GoalData>]),
        // The removed `total` is at another index in the old file than in the new one.
        (contracts![Envelope<two::GoalData>], contracts![Envelope<reordered_changed::GoalData>]),
        (contracts![Envelope<reordered_changed::GoalData>], contracts![Envelope<two::GoalData>]),
        (contracts![Direct<reordered_changed::GoalData>], contracts![Direct<two::GoalData>]),
        (contracts![Direct<two::GoalData>], contracts![Direct<three::GoalData>]),
        (contracts![Direct<three::GoalData>], contracts![Direct<two::GoalData>]),
        (contracts![Envelope<two::GoalData>], contracts![Direct<two::GoalData>]),
        (contracts![search::v1::Search], contracts![search::v2::Search]),
        (contracts![search::v2::Search], contracts![search::v1::Search]),
    ];
    let mut checked = 0;
    for (old, new) in &pairs {
        let (_dir, review, old_text, new_text) = review_pair(old, new);
        assert!(!review.changes().is_empty());
        assert_eq!(review.locations().len(), review.changes().len());
        for (change, location) in review.changes().iter().zip(review.locations()) {
            let location = location.as_ref().unwrap_or_else(|| panic!("{change}: no location"));
            let text = if location.side() == evolution::Side::Old { &old_text } else { &new_text };
            let file: Value = serde_json::from_str(text).unwrap();
            assert_eq!(contract_runtime::schema::canonical_string(&file), *text, "the file is canonical");
            let node = file
                .pointer(location.pointer())
                .unwrap_or_else(|| panic!("{change}: {} not in the file", location.pointer()));
            let logical = dereferenced(&file, &file);
            let in_file = if location.side() == evolution::Side::Old { change.old_pointer() } else { change.pointer() };
            assert_eq!(
                logical.pointer(in_file),
                Some(&dereferenced(&file, node)),
                "{change}: {} is not the changed node",
                location.pointer()
            );
            assert_eq!(location.line(), marked_line(&file, location.pointer()), "{change}: line");
            checked += 1;
        }
    }
    assert!(checked >= pairs.len(), "every pair has located changes");
}
