//! Completeness checked deeply: `returned_count` must equal the items the result carries
//! (the contract names the array with `#[tool_output(counts = "…")]`), and a completeness
//! block that passes the schema but does not read as `Completeness` is an
//! `output_contract_violation`. Every refusal has its clean control.

use contract_runtime::pipeline::{middleware_fn, CallContext, Pipeline};
use contract_runtime::wire::{ErrorCode, ToolCallResult, ToolError};
use contract_runtime::{Completeness, ToolOutput, Truncation};
use qe_server::contracts::TicketPage;
use qe_server::tools::{search_tickets_page, SearchTicketsPageArgs};
use serde_json::{json, Value};

fn args(query: &str, limit: Option<u32>, cursor: Option<&str>) -> SearchTicketsPageArgs {
    SearchTicketsPageArgs { query: query.to_owned(), limit, cursor: cursor.map(str::to_owned) }
}

fn refused(result: &ToolCallResult, code: ErrorCode) -> String {
    assert!(result.is_error(), "expected {code}, got a success: {}", result.text());
    assert_eq!(result.error_code(), Some(code), "{}", result.text());
    assert!(result.structured_content().is_none(), "an error carries no structured content");
    result.text().to_owned()
}

/// A pipeline whose only middleware applies `edit` to the serialized result.
fn with_edit(edit: impl Fn(&mut Value) + Send + Sync + 'static) -> Pipeline {
    Pipeline::builder()
        .middleware(middleware_fn("edit", move |_, v| {
            edit(v);
            Ok(())
        }))
        .build()
}

#[test]
fn the_demo_page_names_its_counted_array() {
    let contract = TicketPage::contract();
    assert_eq!(contract.completeness_counts(), [("/completeness".to_owned(), "/tickets".to_owned())]);
}

#[test]
fn every_page_of_the_real_search_passes_and_counts_what_it_carries() {
    let pipeline = Pipeline::builder().build();
    let mut pages = 0;
    for query in ["login", "t-", "billing", "api", "nothing matches this"] {
        for limit in [None, Some(1), Some(2), Some(3), Some(50)] {
            let mut cursor: Option<String> = None;
            loop {
                let page = search_tickets_page(&args(query, limit, cursor.as_deref())).expect("a valid search");
                let ctx = CallContext::new("search_tickets_page", json!({ "query": query }));
                let result = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(page.clone()));
                assert!(!result.is_error(), "{query} {limit:?} {cursor:?}: {}", result.text());
                // The oracle counts the items itself, from the emitted JSON.
                let emitted = result.structured_content().unwrap();
                let carried = emitted["tickets"].as_array().unwrap().len();
                assert_eq!(emitted["completeness"]["returned_count"], json!(carried));
                pages += 1;
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
        }
    }
    assert!(pages >= 25, "{pages} pages");
}

#[test]
fn a_returned_count_that_differs_from_the_items_carried_is_false_completeness() {
    let page = || search_tickets_page(&args("login", Some(2), None)).unwrap();
    assert_eq!(page().tickets.len(), 2);
    let ctx = CallContext::new("search_tickets_page", json!({ "query": "login", "limit": 2 }));

    // A middleware drops a ticket after the handler counted it.
    let dropped = with_edit(|v| {
        v["tickets"].as_array_mut().unwrap().pop();
    });
    let text = refused(&dropped.call_sync(&ctx, || Ok::<_, ToolError>(page())), ErrorCode::FalseCompleteness);
    assert!(text.contains("returned_count 2") && text.contains("`/tickets` carries 1 item"), "{text}");

    // A middleware adds one: more items than counted is just as false.
    let added = with_edit(|v| {
        let extra = v["tickets"][0].clone();
        v["tickets"].as_array_mut().unwrap().push(extra);
    });
    let text = refused(&added.call_sync(&ctx, || Ok::<_, ToolError>(page())), ErrorCode::FalseCompleteness);
    assert!(text.contains("carries 3 items"), "{text}");

    // A handler that miscounts, with a partial (not complete) claim: still refused, the
    // count is a fact whatever the disposition.
    let mut miscounted = page();
    miscounted.completeness = Completeness::partial(5, Some(4), Truncation::Client, "page size 2");
    let plain = Pipeline::builder().build();
    let text = refused(&plain.call_sync(&ctx, || Ok::<_, ToolError>(miscounted)), ErrorCode::FalseCompleteness);
    assert!(text.contains("returned_count 5"), "{text}");

    // Clean control: the same middleware slot with an edit that keeps the count.
    let untouched = with_edit(|_| {});
    let result = untouched.call_sync(&ctx, || Ok::<_, ToolError>(page()));
    assert!(!result.is_error(), "{}", result.text());
    // Clean control: an edit that changes a ticket but not how many there are.
    let retitled = with_edit(|v| v["tickets"][0]["title"] = json!("Login bug (edited)"));
    assert!(!retitled.call_sync(&ctx, || Ok::<_, ToolError>(page())).is_error());
}

#[test]
fn a_completeness_block_that_does_not_deserialize_is_an_output_contract_violation() {
    let page = || search_tickets_page(&args("login", Some(2), None)).unwrap();
    let ctx = CallContext::new("search_tickets_page", json!({ "query": "login", "limit": 2 }));
    // `2.0` is an integer to JSON Schema, so it passes the schema, but it is not a u64 to
    // serde: the block cannot be read, so nothing it claims can be judged.
    let float = with_edit(|v| v["completeness"]["returned_count"] = json!(2.0));
    let result = float.call_sync(&ctx, || Ok::<_, ToolError>(page()));
    let text = refused(&result, ErrorCode::OutputContractViolation);
    let violation = result.violations().first().unwrap_or_else(|| panic!("a violation: {text}"));
    assert_eq!((violation.pointer.as_str(), violation.keyword.as_str()), ("/completeness", "completeness"));
    assert!(!text.contains("2.0"), "no payload fragment in the error: {text}");
    // The same for `total_known`.
    let float_total = with_edit(|v| v["completeness"]["total_known"] = json!(4.0));
    refused(&float_total.call_sync(&ctx, || Ok::<_, ToolError>(page())), ErrorCode::OutputContractViolation);

    // Clean control: the same edit writing the integer the handler wrote.
    let integer = with_edit(|v| v["completeness"]["returned_count"] = json!(2));
    let result = integer.call_sync(&ctx, || Ok::<_, ToolError>(page()));
    assert!(!result.is_error(), "{}", result.text());
}

/// Contracts written only for these tests.
#[allow(dead_code)] // Only their contracts and serialized forms are used.
mod local {
    use contract_runtime::{Completeness, ToolOutput};
    use schemars::JsonSchema;
    use serde::Serialize;

    /// The counted array is optional: absent counts as none.
    #[derive(Clone, Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    pub(crate) struct MaybeRows {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) rows: Option<Vec<u32>>,
        #[tool_output(counts = "rows")]
        pub(crate) completeness: Completeness,
    }

    /// A serde rename: the link follows the serialized names.
    #[derive(Clone, Serialize, JsonSchema, ToolOutput)]
    #[serde(rename_all = "camelCase")]
    #[tool_output(version = "1.0.0", compatibility = "additive")]
    pub(crate) struct Renamed {
        pub(crate) found_items: Vec<String>,
        #[tool_output(counts = "found_items")]
        pub(crate) page_completeness: Completeness,
    }

    /// `counts` naming a field that is not an array.
    #[derive(Clone, Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    pub(crate) struct CountsAString {
        pub(crate) name: String,
        #[tool_output(counts = "name")]
        pub(crate) completeness: Completeness,
    }

    /// `counts` on a field that is not a `Completeness`.
    #[derive(Clone, Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    pub(crate) struct CountsOnANumber {
        pub(crate) rows: Vec<u32>,
        #[tool_output(counts = "rows")]
        pub(crate) total: u32,
    }
}

#[test]
fn counted_arrays_follow_serde_names_and_optional_arrays() {
    assert_eq!(
        local::Renamed::contract().completeness_counts(),
        [("/pageCompleteness".to_owned(), "/foundItems".to_owned())]
    );
    let pipeline = Pipeline::builder().build();
    let ctx = CallContext::new("maybe_rows", json!({}));
    let none = |count| local::MaybeRows { rows: None, completeness: Completeness::complete(count) };
    assert!(!pipeline.call_sync(&ctx, || Ok::<_, ToolError>(none(0))).is_error(), "absent rows count as 0");
    refused(&pipeline.call_sync(&ctx, || Ok::<_, ToolError>(none(1))), ErrorCode::FalseCompleteness);
    let three = local::MaybeRows { rows: Some(vec![1, 2, 3]), completeness: Completeness::complete(3) };
    assert!(!pipeline.call_sync(&ctx, || Ok::<_, ToolError>(three)).is_error());
    let renamed = |count| local::Renamed {
        found_items: vec!["a".to_owned()],
        page_completeness: Completeness::partial(count, None, Truncation::Server, "capped"),
    };
    assert!(!pipeline.call_sync(&ctx, || Ok::<_, ToolError>(renamed(1))).is_error());
    refused(&pipeline.call_sync(&ctx, || Ok::<_, ToolError>(renamed(0))), ErrorCode::FalseCompleteness);
}

#[test]
fn a_counts_link_that_links_nothing_is_refused_when_the_contract_is_built() {
    let err = local::CountsAString::try_contract().expect_err("a string is not an array").to_string();
    assert!(err.contains("counts = \"name\"") && err.contains("not an array"), "{err}");
    let err = local::CountsOnANumber::try_contract().expect_err("a number is not a Completeness").to_string();
    assert!(err.contains("field `total`") && err.contains("not a `contract_runtime::Completeness`"), "{err}");
    // Clean control: a well-formed link builds.
    assert!(local::MaybeRows::try_contract().is_ok());
}
