//! Completeness metadata a result embeds, and the invariants the pipeline checks beyond
//! what JSON Schema can say: a count that disagrees with the items it counts, or a
//! result that says it is complete while it was truncated.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How complete a result is, as the tool can tell. Embed it in a result type as a field;
/// the pipeline finds it through the contract and refuses a result that claims
/// `complete` while its own counts say otherwise (`false_completeness`).
///
/// On a field of the contract type itself, `#[tool_output(counts = "field")]` names the
/// array whose items `returned_count` counts; the pipeline then refuses a result whose
/// count differs from what it carries, whatever its disposition. A block that passes the
/// schema but does not deserialize (such as `"returned_count": 2.0`) is an
/// `output_contract_violation`.
///
/// ```
/// use contract_runtime::{Completeness, ToolOutput};
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Page {
///     tickets: Vec<String>,
///     #[tool_output(counts = "tickets")]
///     completeness: Completeness,
/// }
///
/// let pair = ("/completeness".to_owned(), "/tickets".to_owned());
/// assert_eq!(Page::contract().completeness_counts(), [pair]);
/// ```
///
/// # Examples
///
/// ```
/// use contract_runtime::{Completeness, Truncation};
///
/// let all = Completeness::complete(12);
/// assert!(all.check().is_ok());
///
/// let capped = Completeness::partial(50, Some(180), Truncation::Server, "provider caps pages at 50");
/// assert!(capped.check().is_ok());
///
/// let mut lying = capped.clone();
/// lying.disposition = contract_runtime::Disposition::Complete;
/// assert!(lying.check().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(
    transform = mark_completeness,
    description = "How complete the result is: whether it is everything there is, how many items it carries of how many known, and who, if anyone, cut it short."
)]
pub struct Completeness {
    /// Whether the result is everything there is.
    pub disposition: Disposition,
    /// How many items this result carries.
    pub returned_count: u64,
    /// How many items the source reports in total, when it says.
    pub total_known: Option<u64>,
    /// Whether every page was fetched.
    pub pagination_complete: bool,
    /// Who, if anyone, cut the result short.
    pub truncation: Truncation,
    /// Known limitations of this result, in plain words.
    pub limitations: Vec<String>,
}

fn mark_completeness(schema: &mut schemars::Schema) {
    schema.insert(crate::contract::schema::COMPLETENESS_MARK.to_owned(), Value::Bool(true));
}

/// Whether a result is complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// Everything there is.
    Complete,
    /// Part of it, knowingly.
    Partial,
    /// The tool cannot tell.
    Unknown,
    /// The source could not be reached; the result carries no evidence.
    Unavailable,
}

/// Who cut a result short.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Truncation {
    /// Nobody.
    None,
    /// The client asked for less (a limit, a page size).
    Client,
    /// The server or provider capped the result.
    Server,
    /// It was cut, by whom is not known.
    Unknown,
}

impl Completeness {
    /// A complete result of `count` items.
    #[must_use]
    pub fn complete(count: u64) -> Self {
        Self {
            disposition: Disposition::Complete,
            returned_count: count,
            total_known: Some(count),
            pagination_complete: true,
            truncation: Truncation::None,
            limitations: Vec::new(),
        }
    }

    /// A partial result: `returned` of `total` items, cut by `truncation`, for `why`.
    #[must_use]
    pub fn partial(returned: u64, total: Option<u64>, truncation: Truncation, why: impl Into<String>) -> Self {
        Self {
            disposition: Disposition::Partial,
            returned_count: returned,
            total_known: total,
            pagination_complete: false,
            truncation,
            limitations: vec![why.into()],
        }
    }

    /// Checks the invariants: a `complete` result has returned everything it knows of,
    /// fetched every page and was not truncated.
    ///
    /// # Errors
    ///
    /// A message naming the contradiction.
    pub fn check(&self) -> Result<(), String> {
        check_parts(self.disposition, self.returned_count, self.total_known, self.pagination_complete, self.truncation)
    }
}

fn check_parts(
    disposition: Disposition,
    returned: u64,
    total: Option<u64>,
    pagination_complete: bool,
    truncation: Truncation,
) -> Result<(), String> {
    if disposition != Disposition::Complete {
        return Ok(());
    }
    if let Some(total) = total.filter(|t| returned < *t) {
        return Err(format!("claims complete but returned {returned} of {total} known items"));
    }
    if !pagination_complete {
        return Err("claims complete but pagination is not complete".to_owned());
    }
    if truncation != Truncation::None {
        return Err("claims complete but the result was truncated".to_owned());
    }
    Ok(())
}

/// Why the pipeline refuses a result because of its completeness metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The block contradicts itself or the items the result carries:
    /// `false_completeness`, with the message.
    False(String),
    /// The block passed the schema but does not read as a [`Completeness`] (such as
    /// `"returned_count": 2.0`, which JSON Schema calls an integer and serde does not):
    /// an `output_contract_violation` at this pointer, since nothing it claims can be
    /// judged.
    Unreadable(String),
}

/// Checks the completeness block found at the pointer `at` gives (already validated
/// against the contract). A `null` is an absent optional block and passes. The pointer
/// is asked for only when the block is refused: masking it walks the result.
pub(crate) fn check_block(at: impl FnOnce() -> String, value: &Value) -> Result<(), Refusal> {
    if value.is_null() {
        return Ok(());
    }
    match Completeness::deserialize(value) {
        Ok(c) => c.check().map_err(|why| Refusal::False(format!("completeness at `{}` {why}", at()))),
        Err(_) => Err(Refusal::Unreadable(at())),
    }
}

/// Checks every `counts` link of the contract: the block's `returned_count` must equal
/// the number of items the counted array carries (an absent or `null` array carries
/// none).
pub(crate) fn check_counts(contract: &crate::contract::OutputContract, value: &Value) -> Result<(), Refusal> {
    for (at, items) in contract.completeness_counts() {
        let Some(block) = crate::contract::pointer::get(value, at).filter(|b| !b.is_null()) else { continue };
        let Some(returned) = block.get("returned_count").and_then(Value::as_u64) else {
            return Err(Refusal::Unreadable(at.clone()));
        };
        let carried = match crate::contract::pointer::get(value, items) {
            Some(Value::Array(list)) => list.len() as u64,
            None | Some(Value::Null) => 0,
            // The schema says it is an array; anything else cannot be counted.
            Some(_) => return Err(Refusal::Unreadable(items.clone())),
        };
        if returned != carried {
            return Err(Refusal::False(format!(
                "completeness at `{at}` says returned_count {returned}, but `{items}` carries {carried} item{}",
                if carried == 1 { "" } else { "s" }
            )));
        }
    }
    Ok(())
}
