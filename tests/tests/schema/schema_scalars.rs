//! No false rejects from the derive for scalars: every integer width at its bounds,
//! floats at theirs, `NonZero*`, 128-bit integers, text-like types (`char`, `Box<str>`,
//! `Cow<str>`, `PathBuf`), chrono's date and time types (asserted `date-time` and `date`
//! formats, leap seconds, the RFC 3339 year range), and a `serialize_with` that changes
//! the type, declared with `#[schemars(with)]`. Also: a non-finite float, which serde_json
//! writes as `null`, is a violation, never a silent success.
//!
//! Each shape runs through the serde corpus (`support/corpus.rs`) under `exact` and under
//! `additive`: every instance serde writes for it must pass, and under `exact` an unknown
//! key injected into any of its objects must be rejected, except in objects whose keys
//! serde does not fix (the shape's `open` pointers).

#![allow(unreachable_pub, reason = "the corpus types are `pub` so that one macro body serves both modules")]
#![allow(dead_code, reason = "some corpus variants exist for the schema only and are never constructed")]

use contract_runtime::ToolOutput;
use serde_json::Value;

use crate::support::corpus;

/// Every shape of this file, with the compatibility `$c` as a literal.
macro_rules! shapes {
    ($c:tt) => { crate::support::corpus::emit! {

// ----------------------------------------------------------- scalars

numeric_bounds {
    /// Every integer width at its bounds, and floats at theirs.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        pub a: u8, pub b: i8, pub c: u16, pub d: i16, pub e: u32, pub f: i32, pub g: u64, pub h: i64,
        pub i: usize, pub j: isize, pub k: f32, pub l: f64, pub m: std::num::NonZeroU32, pub n: std::num::NonZeroI64,
    }

    pub fn cases() -> Vec<Case> {
        let nz32 = |v| std::num::NonZeroU32::new(v).expect("non-zero");
        let nz64 = |v| std::num::NonZeroI64::new(v).expect("non-zero");
        vec![case("numeric_bounds", vec![
            Root { a: 0, b: i8::MIN, c: 0, d: i16::MIN, e: 0, f: i32::MIN, g: 0, h: i64::MIN, i: 0, j: isize::MIN, k: f32::MIN, l: f64::MIN, m: nz32(1), n: nz64(i64::MIN) },
            Root { a: u8::MAX, b: i8::MAX, c: u16::MAX, d: i16::MAX, e: u32::MAX, f: i32::MAX, g: u64::MAX, h: i64::MAX, i: usize::MAX, j: isize::MAX, k: f32::MAX, l: f64::MAX, m: nz32(u32::MAX), n: nz64(-1) },
            Root { a: 1, b: 0, c: 1, d: 0, e: 1, f: 0, g: 1, h: 0, i: 1, j: 0, k: f32::MIN_POSITIVE, l: -0.0, m: nz32(2), n: nz64(1) },
        ], &[])]
    }
}

strings_and_chars {
    /// Text-like scalars: `char`, `Box<str>`, `Cow<str>`, a unit enum of strings.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub c: char, pub boxed: Box<str>, pub cow: std::borrow::Cow<'static, str>, pub path: std::path::PathBuf }

    pub fn cases() -> Vec<Case> {
        vec![case("strings_and_chars", vec![
            Root { c: 'a', boxed: "".into(), cow: "c".into(), path: "/tmp/x".into() }, Root { c: '\u{1F600}', boxed: "b".into(), cow: String::new().into(), path: "rel".into() },
        ], &[])]
    }
}

chrono_times {
    /// chrono types: `date-time` and `date` are asserted formats.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub at: DateTime<Utc>, pub local: DateTime<FixedOffset>, pub day: NaiveDate, pub time: NaiveTime, pub seen: Option<DateTime<Utc>> }

    pub fn cases() -> Vec<Case> {
        let utc = |s: i64, ns: u32| DateTime::<Utc>::from_timestamp(s, ns).expect("in range");
        let east = FixedOffset::east_opt(5 * 3600 + 1800).expect("offset");
        let west = FixedOffset::west_opt(8 * 3600).expect("offset");
        let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).expect("date");
        let time = |h, m, s, ns| NaiveTime::from_hms_nano_opt(h, m, s, ns).expect("time");
        vec![case("chrono_times", vec![
            Root { at: utc(0, 0), local: east.timestamp_opt(0, 0).unwrap(), day: day(1970, 1, 1), time: time(0, 0, 0, 0), seen: None },
            Root { at: utc(1_700_000_000, 123_456_789), local: west.timestamp_opt(1_700_000_000, 1).unwrap(), day: day(2024, 2, 29), time: time(23, 59, 59, 999_999_999), seen: Some(utc(1, 0)) },
            // A leap second, in UTC and at +05:30.
            Root { at: utc(1_483_228_799, 1_000_000_000), local: east.timestamp_opt(1_483_228_799, 1_000_000_000).unwrap(), day: day(2016, 12, 31), time: time(23, 59, 59, 1_500_000_000), seen: None },
            // The RFC 3339 year range, 0000 and 9999.
            Root { at: utc(253_402_300_799, 0), local: east.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap(), day: day(9999, 12, 31), time: time(12, 0, 0, 0), seen: Some(utc(-62_167_219_200, 0)) },
        ], &[])]
    }
}

serialize_with_declared {
    fn as_string<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> { s.collect_str(v) }

    /// A `serialize_with` that changes the type, declared with `#[schemars(with)]`.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { #[serde(serialize_with = "as_string")] #[schemars(with = "String")] pub big: u64, pub small: i128, pub tiny: u128 }

    pub fn cases() -> Vec<Case> {
        vec![case("serialize_with_declared", vec![Root { big: u64::MAX, small: -1, tiny: 0 }, Root { big: 0, small: i128::from(i64::MIN), tiny: u128::from(u64::MAX) }], &[])]
    }
}
    } };
}

mod exact {
    shapes!("exact");
}

mod additive {
    shapes!("additive");
}

#[test]
fn every_serialized_instance_passes_and_every_unknown_key_is_caught_under_exact() {
    corpus::check(exact::all(), additive::all(), corpus::Floor { shapes: 4, probes: 11, fast_covered: 6 });
}

// ---------------------------------------------------------------------------------------
// Non-finite floats: serde_json writes NaN and ±infinity as `null`. That is not a schema
// problem, but a non-nullable number field must then report a violation, never pass.

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Measurement {
    ratio: f64,
    samples: Vec<f32>,
}

#[test]
fn non_finite_floats_are_violations_not_silent_successes() {
    let contract = Measurement::contract();
    let finite = Measurement { ratio: 0.5, samples: vec![1.0, -2.5, f32::MAX] };
    assert!(contract.validate_output(&finite).is_ok(), "finite control must pass");

    for (value, pointer) in [
        (Measurement { ratio: f64::NAN, samples: vec![] }, "/ratio"),
        (Measurement { ratio: f64::INFINITY, samples: vec![] }, "/ratio"),
        (Measurement { ratio: f64::NEG_INFINITY, samples: vec![] }, "/ratio"),
        (Measurement { ratio: 1.0, samples: vec![0.0, f32::NAN] }, "/samples/1"),
    ] {
        let json = serde_json::to_value(&value).expect("serializes");
        assert_eq!(json.pointer(pointer), Some(&Value::Null), "serde_json writes a non-finite float as null");
        let report = contract.validate(&json).expect_err("a non-finite float must be a violation");
        assert!(
            report.violations().iter().any(|v| v.pointer() == pointer && v.keyword() == "type"),
            "expected a `type` violation at {pointer}: {report}"
        );
        assert!(contract.validate_output(&value).is_err(), "validate_output must refuse it too");
    }
}
