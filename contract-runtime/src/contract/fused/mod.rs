//! The fast path: validation fused into the one serialization pass.
//!
//! Each contract's canonical schema is compiled once into a plan that a
//! `serde::Serializer` checks while it writes the wire bytes, so a valid result is
//! judged without building a `serde_json::Value` first. Whatever the plan cannot judge
//! exactly (composition that needs backtracking, `multipleOf`, `patternProperties`, …)
//! is found when the plan is compiled, and [`coverage`] says so with the reason: such a
//! contract keeps the `Value` + `jsonschema` path.
//!
//! The fast path only ever says "valid, here are the bytes" or gives the result back.
//! A result it finds invalid, or cannot judge (a limit, a non-finite float, a serde
//! shape it does not write), is handed to the `Value` path, which decides and writes
//! the report: reports are the same whichever path saw the result first.
//!
//! # Examples
//!
//! ```
//! use contract_runtime::fused::{coverage, write, Coverage};
//! use contract_runtime::limits::Limits;
//! use contract_runtime::ToolOutput;
//!
//! #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
//! #[tool_output(version = "1.0.0", compatibility = "exact")]
//! struct Health { healthy: u32 }
//!
//! let contract = Health::contract();
//! assert_eq!(coverage(contract), Coverage::Covered);
//! let bytes = write(contract, &Health { healthy: 3 }, &Limits::default()).unwrap();
//! assert_eq!(bytes, br#"{"healthy":3}"#);
//! // A `Value` that breaks the contract is refused, never written.
//! assert!(write(contract, &serde_json::json!({ "healthy": -1 }), &Limits::default()).is_err());
//! ```

mod miss;
mod plan;
mod raw;
mod scalar;
mod ser;

use serde::Serialize;

pub use miss::Miss;

use crate::contract::limits::Limits;
use crate::contract::OutputContract;
use plan::Plan;

/// Whether a contract's results are judged on the fast path.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Coverage {
    /// The plan judges every keyword of the schema.
    Covered,
    /// The schema uses something the plan does not judge; the reason names it and
    /// where. Results of this contract take the `Value` path.
    Fallback(String),
}

/// The compiled plan of a contract, kept with the contract.
pub(crate) type Compiled = Result<Plan, String>;

pub(crate) fn compile(contract: &OutputContract) -> Compiled {
    Plan::compile(contract.schema())
}

/// Whether `contract` is judged on the fast path, and if not, why.
#[must_use]
pub fn coverage(contract: &OutputContract) -> Coverage {
    match contract.fast_plan() {
        Ok(_) => Coverage::Covered,
        Err(reason) => Coverage::Fallback(reason.clone()),
    }
}

/// Writes `output` as compact JSON (the bytes `serde_json::to_vec` writes) while
/// checking it against `contract` and within `limits`.
///
/// # Errors
///
/// [`Miss`] when the contract is not covered, the result is invalid, or the result is
/// something the fast path does not judge; the caller then takes the `Value` path.
pub fn write<T: Serialize + ?Sized>(contract: &OutputContract, output: &T, limits: &Limits) -> Result<Vec<u8>, Miss> {
    match contract.fast_plan() {
        Ok(plan) => ser::write(plan, output, limits),
        Err(_) => Err(Miss::Unsupported("the contract is not covered")),
    }
}

/// [`write()`] that also builds the tree of what it writes, in the same pass: the text
/// block and the `structuredContent` of a result, checked against `contract`. The tree
/// is the one `serde_json::from_slice` reads back from the bytes (an `f32` keeps its own
/// shortest digits), built without reading them.
///
/// # Errors
///
/// As for [`write()`].
///
/// # Examples
///
/// ```
/// use contract_runtime::fused::write_value;
/// use contract_runtime::limits::Limits;
/// use contract_runtime::ToolOutput;
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Reading { sensor: String, level: f32 }
///
/// let reading = Reading { sensor: "s-1".to_owned(), level: 0.8 };
/// let (bytes, tree) = write_value(Reading::contract(), &reading, &Limits::default()).unwrap();
/// assert_eq!(bytes, br#"{"sensor":"s-1","level":0.8}"#);
/// assert_eq!(tree, serde_json::json!({ "sensor": "s-1", "level": 0.8 }));
/// ```
pub fn write_value<T: Serialize + ?Sized>(
    contract: &OutputContract,
    output: &T,
    limits: &Limits,
) -> Result<(Vec<u8>, serde_json::Value), Miss> {
    match contract.fast_plan() {
        Ok(plan) => ser::write_value(plan, output, limits),
        Err(_) => Err(Miss::Unsupported("the contract is not covered")),
    }
}

/// Writes `output` as compact JSON, and builds its tree, while checking only what every
/// result keeps whatever its contract: no non-finite float (serde_json would write
/// `null`), within `limits`. The same single pass as [`write_value`], with a plan that
/// accepts any JSON.
// Used by the rmcp adapter's `Json`; the tests below hold its bytes and tree to serde_json's.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) fn write_any_value<T: Serialize + ?Sized>(
    output: &T,
    limits: &Limits,
) -> Result<(Vec<u8>, serde_json::Value), Miss> {
    match &*ANY {
        Ok(plan) => ser::write_value(plan, output, limits),
        Err(_) => Err(Miss::Unsupported("the accept-anything plan did not compile")),
    }
}

/// Checks `text`, JSON written by someone else, against `contract` within `limits`,
/// reading it once and building nothing: the fast path's verdict on a result that
/// arrives as text (a proxy's, a client's). `Ok` is a pass; any [`Miss`] (invalid, not
/// judged, not one JSON value) sends the caller to the `Value` path, which decides and
/// writes the report.
///
/// # Errors
///
/// [`Miss`] when the contract is not covered, the text breaks it, or the text is
/// something the fast path does not judge.
///
/// # Examples
///
/// ```
/// use contract_runtime::fused::check_text;
/// use contract_runtime::limits::Limits;
/// use contract_runtime::ToolOutput;
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Health { healthy: u32 }
///
/// let limits = Limits::default();
/// assert!(check_text(Health::contract(), r#"{ "healthy": 3 }"#, &limits).is_ok());
/// assert!(check_text(Health::contract(), r#"{"healthy":-1}"#, &limits).is_err());
/// assert!(check_text(Health::contract(), r#"{"healthy":3,"extra":1}"#, &limits).is_err());
/// ```
pub fn check_text(contract: &OutputContract, text: &str, limits: &Limits) -> Result<(), Miss> {
    match contract.fast_plan() {
        Ok(plan) => raw::check(plan, text, limits),
        Err(_) => Err(Miss::Unsupported("the contract is not covered")),
    }
}

/// A compiled plan's check of JSON text, for a value read inside a larger document: as a
/// [`serde::de::DeserializeSeed`] it reads one value from the document's reader and
/// gives the plan's verdict, the reader left after the value whatever the verdict (the
/// outer `Err` is the reader's: not JSON). The byte limit is not judged on this way in
/// (the caller read the document; [`TextCheck::check`] judges it); the depth limit is.
#[derive(Debug, Clone, Copy)]
pub struct TextCheck<'c> {
    plan: &'c Plan,
    limits: Limits,
}

impl<'c> TextCheck<'c> {
    /// The check of `contract`'s plan, when the contract is covered.
    #[must_use]
    pub fn of(contract: &'c OutputContract, limits: Limits) -> Option<Self> {
        contract.fast_plan().as_ref().ok().map(|plan| Self { plan, limits })
    }

    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn new(plan: &'c Plan, limits: Limits) -> Self {
        Self { plan, limits }
    }

    /// Checks `text`, one JSON value, as [`check_text`] does.
    ///
    /// # Errors
    ///
    /// As for [`check_text`].
    pub fn check(&self, text: &str) -> Result<(), Miss> {
        raw::check(self.plan, text, &self.limits)
    }

    /// Reads one value from `scan` (a document read where it lies) and gives the plan's
    /// verdict, the scan left after the value whatever the verdict: the outer `Err` is
    /// the scan's (not JSON it reads).
    ///
    /// # Errors
    ///
    /// [`Stop`](crate::scan::Stop) where the scan stops; the inner `Err` as for
    /// [`check`](Self::check).
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::client::Catalog;
    /// use contract_runtime::scan::Scan;
    /// use serde_json::json;
    ///
    /// let mut catalog = Catalog::new();
    /// catalog.refresh([json!({
    ///     "name": "count",
    ///     "inputSchema": {"type": "object"},
    ///     "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    /// })]);
    /// let check = catalog.structured_check("count").unwrap();
    /// let mut scan = Scan::new(r#"{"structuredContent":{"n":3},"isError":false}"#);
    /// let mut verdict = None;
    /// scan.members(|scan, key| match key {
    ///     "structuredContent" => Ok(verdict = Some(check.check_scanned(scan)?)),
    ///     _ => scan.value().map(drop),
    /// })?;
    /// assert_eq!(verdict, Some(Ok(())));
    /// # Ok::<(), contract_runtime::scan::Stop>(())
    /// ```
    pub fn check_scanned(
        &self,
        scan: &mut crate::contract::scan::Scan<'_>,
    ) -> Result<Result<(), Miss>, crate::contract::scan::Stop> {
        raw::scanned(self.plan, scan, &self.limits)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for TextCheck<'_> {
    type Value = Result<(), Miss>;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        raw::read(self.plan, de, &self.limits)
    }
}

/// Compiles a plain JSON Schema (not a contract's: an advertised `outputSchema`) into a
/// plan, or says why the plan cannot judge it.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn compile_schema(schema: &serde_json::Value) -> Compiled {
    Plan::compile(schema)
}

/// The plan that accepts any JSON.
static ANY: std::sync::LazyLock<Result<Plan, String>> =
    std::sync::LazyLock::new(|| Plan::compile(&serde_json::Value::Bool(true)));

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::Serialize;

    use super::write_any_value;
    use crate::contract::limits::Limits;

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(i64),
        Tuple(u8, String),
        Struct { side: f32, tags: Vec<char> },
    }

    #[derive(Serialize)]
    #[serde(tag = "kind")]
    enum Tagged {
        Circle { r: f64 },
        Empty,
    }

    #[derive(Serialize)]
    #[serde(untagged)]
    enum Either {
        Number(u128),
        Text(&'static str),
    }

    #[derive(Serialize)]
    struct Unit;

    #[derive(Serialize)]
    struct Wrapper(Vec<Option<i8>>);

    #[derive(Serialize)]
    struct Flat {
        id: u32,
        #[serde(flatten)]
        rest: BTreeMap<String, i32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        gone: Option<bool>,
    }

    /// `write_any_value` checks without judging: whatever it writes must be, byte for
    /// byte, what serde_json writes (its text block is served as the result's JSON), and
    /// its tree what serde_json reads back from those bytes (served as
    /// `structuredContent`). The oracle is serde_json itself, on shapes chosen for how
    /// serde drives a serializer, not for what the plan handles.
    fn same<T: Serialize>(value: &T) -> bool {
        match write_any_value(value, &Limits::default()) {
            Ok((bytes, tree)) => {
                let text = String::from_utf8(bytes).unwrap();
                assert_eq!(text, serde_json::to_string(value).unwrap(), "write_any_value and serde_json disagree");
                let read: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(tree, read, "the tree is not what the text reads back as: {text}");
                true
            }
            Err(_) => false,
        }
    }

    #[test]
    fn write_any_value_writes_what_serde_json_writes_and_reads() {
        let strings =
            ["", "plain", "quote \" and \\ back", "\u{0}\u{1f}\t\n\r", "é ☃ 𝄞", "\u{2028}\u{2029}", "</script>"];
        let mut written = 0;
        for s in strings {
            written += usize::from(same(&s));
            written += usize::from(same(&Shape::Tuple(7, s.to_owned())));
            let mut map = HashMap::new();
            map.insert(s.to_owned(), vec![s]);
            written += usize::from(same(&map));
        }
        let floats = [0.0, -0.0, 1.5, 1e300, -2.5e-300, f64::MIN_POSITIVE, 1.0, 3.0e15, 1.0e16];
        for f in floats {
            written += usize::from(same(&f));
            written += usize::from(same(&Tagged::Circle { r: f }));
            #[allow(clippy::cast_possible_truncation)]
            let side = f as f32;
            written += usize::from(same(&Shape::Struct { side, tags: vec!['a', '"', '\u{7f}'] }));
        }
        written += usize::from(same(&Shape::Unit));
        written += usize::from(same(&Shape::Newtype(i64::MIN)));
        written += usize::from(same(&Tagged::Empty));
        written += usize::from(same(&Either::Number(u128::MAX)));
        written += usize::from(same(&Either::Text("t")));
        written += usize::from(same(&Unit));
        written += usize::from(same(&()));
        written += usize::from(same(&Wrapper(vec![Some(-1), None, Some(i8::MAX)])));
        written += usize::from(same(&(1u64, "two", [3.5f32; 2])));
        written += usize::from(same(&BTreeMap::from([(1u16, "one"), (2, "two")])));
        written += usize::from(same(&BTreeMap::from([(true, 1)])));
        written += usize::from(same(&BTreeMap::from([('c', 1)])));
        written += usize::from(same(&Flat { id: 1, rest: BTreeMap::from([("a".to_owned(), 1)]), gone: None }));
        written += usize::from(same(&serde_json::json!({ "v": [null, true, 1, -1, 1.25, "x", {}] })));
        written += usize::from(same(&vec![vec![vec![0u8; 3]; 2]; 2]));
        // Most shapes are written on this path; anything given back takes the checked one.
        assert!(written >= 40, "only {written} shapes were written by write_any_value");
    }

    #[test]
    fn write_any_value_gives_back_non_finite_floats_and_deep_values() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(write_any_value(&bad, &Limits::default()).is_err());
            assert!(write_any_value(&Tagged::Circle { r: bad }, &Limits::default()).is_err());
            assert!(write_any_value(&Some(vec![bad]), &Limits::default()).is_err());
        }
        let mut deep = serde_json::json!(1);
        for _ in 0..200 {
            deep = serde_json::json!([deep]);
        }
        assert!(write_any_value(&deep, &Limits::default()).is_err(), "deeper than the default limit of 128");
        // Controls: finite and shallow values are written.
        assert!(write_any_value(&Some(vec![1.5]), &Limits::default()).is_ok());
        let mut shallow = serde_json::json!(1);
        for _ in 0..100 {
            shallow = serde_json::json!([shallow]);
        }
        assert!(write_any_value(&shallow, &Limits::default()).is_ok());
    }
}
