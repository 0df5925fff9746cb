//! JSON text checked against a [`Plan`] as it is read: the events of a scan of the text
//! (`contract::scan`), or of a borrowed `serde_json` reader inside a larger document,
//! drive the validating serializer ([`Writer`] with nothing kept), so a value already
//! written by someone else is judged without building a `serde_json::Value`. The first miss is kept in the writer; the rest of the value is
//! then read to its end unjudged (a value inside a larger document leaves the reader
//! where the document goes on).

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::Serializer;

use super::miss::{Miss, R};
use super::plan::{Plan, NEVER};
use super::ser::{Obj, Seq, Ser, Writer};
use crate::contract::limits::Limits;
use crate::contract::scan::{Scan, Stop};

/// Checks `text`, one JSON value, against `plan` within `limits`; nothing is written.
pub(crate) fn check(plan: &Plan, text: &str, limits: &Limits) -> R {
    // The compact bytes of a value are never longer than any text of it.
    if text.len() > limits.max_bytes() {
        return Err(Miss::Unsupported("over the size limit"));
    }
    let mut scan = Scan::new(text);
    match scanned(plan, &mut scan, limits) {
        Ok(verdict) => scan.end().map_err(|_| Miss::Unsupported("text after the value")).and(verdict),
        Err(Stop) => Err(Miss::Unsupported("text that is not one JSON value")),
    }
}

/// Reads one value from `de` and checks it against `plan`: the outer `Err` is the
/// reader's (not JSON), the inner one the plan's verdict.
pub(crate) fn read<'de, D: Deserializer<'de>>(plan: &Plan, de: D, limits: &Limits) -> Result<R, D::Error> {
    let mut w = Writer::new(plan, limits, false);
    Check { w: &mut w, node: plan.root }.deserialize(de)?;
    Ok(match w.miss.take() {
        Some(miss) => Err(miss),
        None => Ok(()),
    })
}

/// Reads one value from `scan` and checks it against `plan` within `limits`, as [`read`]
/// does from a serde_json reader: the outer `Err` is the scan's (not JSON it reads), the
/// inner one the plan's verdict. Each event is the one serde_json's reader gives for the
/// same text: strings decoded, integers as `u64` or `i64`, every other number as the
/// `f64` serde_json parses.
pub(crate) fn scanned(plan: &Plan, scan: &mut Scan<'_>, limits: &Limits) -> Result<R, Stop> {
    let mut w = Writer::new(plan, limits, false);
    scan.peek();
    let start = scan.position();
    walk(&mut w, plan.root, scan)?;
    if scan.position() - start > limits.max_bytes() {
        return Ok(Err(Miss::Unsupported("over the size limit")));
    }
    Ok(match w.miss.take() {
        Some(miss) => Err(miss),
        None => Ok(()),
    })
}

/// One value of a scan at one plan node; after the first miss the rest is scanned
/// unjudged.
fn walk(w: &mut Writer<'_>, node: usize, scan: &mut Scan<'_>) -> Result<(), Stop> {
    if w.miss.is_some() {
        return scan.value().map(drop);
    }
    match scan.peek().ok_or(Stop)? {
        b'{' => match (Ser::<false> { w: &mut *w, node }).map() {
            Ok(mut object) => {
                scan.object(|scan, key| {
                    let node = match object.key(&key) {
                        Ok(node) => node,
                        Err(miss) => {
                            object.w.miss.get_or_insert(miss);
                            NEVER
                        }
                    };
                    walk(object.w, node, scan)
                })?;
                if object.w.miss.is_none() {
                    let verdict = object.finish();
                    Check::note(w, verdict);
                }
            }
            Err(miss) => {
                Check::note(w, Err(miss));
                scan.value()?;
            }
        },
        b'[' => match (Ser::<false> { w: &mut *w, node }).seq(None) {
            Ok(mut items) => {
                scan.array(|scan| {
                    let node = items.next_node();
                    walk(items.w, node, scan)
                })?;
                if items.w.miss.is_none() {
                    let verdict = items.finish();
                    Check::note(w, verdict);
                }
            }
            Err(miss) => {
                Check::note(w, Err(miss));
                scan.value()?;
            }
        },
        b'"' => {
            let text = scan.string()?;
            let verdict = Ser::<false> { w: &mut *w, node }.serialize_str(&text);
            Check::note(w, verdict);
        }
        _ => {
            let ser = Ser::<false> { w: &mut *w, node };
            let verdict = match scan.value()? {
                "true" => ser.serialize_bool(true),
                "false" => ser.serialize_bool(false),
                "null" => ser.serialize_unit(),
                number => match parse_number(number)? {
                    Number::U(v) => ser.serialize_u64(v),
                    Number::I(v) => ser.serialize_i64(v),
                    Number::F(v) => ser.serialize_f64(v),
                },
            };
            Check::note(w, verdict);
        }
    }
    Ok(())
}

/// A number as serde_json's reader gives it.
enum Number {
    U(u64),
    I(i64),
    F(f64),
}

/// Reads a number's text (its grammar checked by the scan) as serde_json does: an integer
/// as `u64`, a negative one as `i64` (`-0` and those below `i64::MIN` as `f64`), one past
/// `u64::MAX` or with a fraction or an exponent as the `f64` serde_json parses (out of
/// range is not JSON serde_json reads).
#[allow(clippy::cast_possible_wrap, clippy::cast_precision_loss)] // serde_json's own conversions, on purpose
fn parse_number(text: &str) -> Result<Number, Stop> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    let float = || serde_json::from_str::<f64>(text).map(Number::F).map_err(|_| Stop);
    if !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return float();
    }
    let mut significand = 0u64;
    for byte in digits.bytes() {
        match significand.checked_mul(10).and_then(|s| s.checked_add(u64::from(byte - b'0'))) {
            Some(next) => significand = next,
            None => return float(),
        }
    }
    if !negative {
        return Ok(Number::U(significand));
    }
    let negated = (significand as i64).wrapping_neg();
    Ok(if negated >= 0 { Number::F(-(significand as f64)) } else { Number::I(negated) })
}

/// One value at one plan node.
struct Check<'a, 'p> {
    w: &'a mut Writer<'p>,
    node: usize,
}

impl Check<'_, '_> {
    /// Keeps the first miss. A check builds no tree, so what a value gives back is
    /// `Value::Null`, let go without a call to `Value`'s drop.
    fn note(w: &mut Writer<'_>, verdict: R<serde_json::Value>) {
        match verdict {
            Err(miss) => {
                w.miss.get_or_insert(miss);
            }
            Ok(tree) => {
                if !tree.is_null() {
                    drop(tree);
                }
            }
        }
    }

    fn scalar(self, event: impl FnOnce(Ser<'_, '_, false>) -> R<serde_json::Value>) {
        let verdict = event(Ser { w: &mut *self.w, node: self.node });
        Self::note(self.w, verdict);
    }
}

impl<'de> DeserializeSeed<'de> for Check<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        if self.w.miss.is_some() {
            IgnoredAny::deserialize(de)?;
            return Ok(());
        }
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Check<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.scalar(|s| s.serialize_bool(v));
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.scalar(|s| s.serialize_i64(v));
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.scalar(|s| s.serialize_u64(v));
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.scalar(|s| s.serialize_f64(v));
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.scalar(|s| s.serialize_str(v));
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar(|s| s.serialize_unit());
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let w = self.w;
        match (Ser::<false> { w: &mut *w, node: self.node }).seq(None) {
            Ok(mut items) => {
                while seq.next_element_seed(Element(&mut items))?.is_some() {}
                if items.w.miss.is_none() {
                    let verdict = items.finish();
                    Self::note(w, verdict);
                }
            }
            Err(miss) => {
                Self::note(w, Err(miss));
                while seq.next_element::<IgnoredAny>()?.is_some() {}
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let w = self.w;
        match (Ser::<false> { w: &mut *w, node: self.node }).map() {
            Ok(mut object) => {
                while let Some(node) = map.next_key_seed(Key(&mut object))? {
                    map.next_value_seed(Check { w: &mut *object.w, node })?;
                }
                if object.w.miss.is_none() {
                    let verdict = object.finish();
                    Self::note(w, verdict);
                }
            }
            Err(miss) => {
                Self::note(w, Err(miss));
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            }
        }
        Ok(())
    }
}

/// The next element of an array.
struct Element<'s, 'a, 'p>(&'s mut Seq<'a, 'p, false>);

impl<'de> DeserializeSeed<'de> for Element<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        let node = self.0.next_node();
        Check { w: &mut *self.0.w, node }.deserialize(de)
    }
}

/// An object's key, read as the text it stands for (escapes decoded) and borrowed where
/// it has none: the node its value is judged by.
struct Key<'s, 'a, 'p>(&'s mut Obj<'a, 'p, false>);

impl<'de> DeserializeSeed<'de> for Key<'_, '_, '_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<usize, D::Error> {
        if self.0.w.miss.is_some() {
            IgnoredAny::deserialize(de)?;
            return Ok(NEVER);
        }
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for Key<'_, '_, '_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        Ok(match self.0.key(key) {
            Ok(node) => node,
            Err(miss) => {
                self.0.w.miss.get_or_insert(miss);
                NEVER
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::check;
    use crate::contract::limits::Limits;
    use crate::contract::testing::Rng;
    use crate::contract::validate::compile;

    /// An advertised-style schema: closed objects, a recursive `$ref`, bounds, an enum,
    /// a nullable string, a length limit.
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": { "type": "string", "maxLength": 40 },
                "count": { "type": "integer", "minimum": 0 },
                "ratio": { "type": "number", "exclusiveMaximum": 1 },
                "tags": { "type": "array", "items": { "type": "string", "enum": ["a", "b", "c"] }, "maxItems": 3 },
                "nested": { "$ref": "#/$defs/node" },
                "state": { "anyOf": [{ "type": "string" }, { "type": "null" }] }
            },
            "required": ["title", "count"],
            "additionalProperties": false,
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": { "child": { "$ref": "#/$defs/node" }, "v": { "type": "integer" } },
                    "additionalProperties": false
                }
            }
        })
    }

    const NUMBERS: &[&str] = &[
        "0",
        "-0",
        "0.7",
        "1",
        "1.0",
        "-1",
        "1e2",
        "7",
        "1e400",
        "-1e400",
        "18446744073709551616",
        "-9223372036854775809",
        "3.5e-300",
        "0.999999",
        "1.5",
        "-0.0",
    ];

    fn string(r: &mut Rng) -> String {
        match r.below(8) {
            0 => format!("\"{}\"", "x".repeat(40)),
            1 => format!("\"{}\"", "x".repeat(41)),
            2 => format!("\"{}\"", "y".repeat(100_000)),
            _ => r.one(&[r#""plain""#, r#""\u0074itle""#, "\"é ☃ 𝄞\"", r#""say \"hi\"\n""#, r#""""#]).to_owned(),
        }
    }

    fn node(r: &mut Rng, depth: usize) -> String {
        let mut members = Vec::new();
        if r.chance(6) {
            members.push(format!(r#""v":{}"#, r.one(NUMBERS)));
        }
        if depth > 0 {
            members.push(format!(r#""child":{}"#, node(r, depth - 1)));
        }
        if r.chance(1) {
            members.push(r#""w":1"#.to_owned());
        }
        format!("{{{}}}", members.join(","))
    }

    /// A result's `structuredContent` as text, mostly valid, often broken one way.
    fn instance(r: &mut Rng) -> String {
        let mut members: Vec<String> = Vec::new();
        let title_key = r.one(&[r#""title""#, r#""title""#, r#""\u0074itle""#]);
        if !r.chance(1) {
            let title = if r.chance(1) { r.one(NUMBERS).to_owned() } else { string(r) };
            members.push(format!("{title_key}:{title}"));
        }
        if !r.chance(1) {
            let count = if r.chance(1) { string(r) } else { r.one(NUMBERS).to_owned() };
            members.push(format!(r#""count":{count}"#));
        }
        if r.chance(5) {
            members.push(format!(r#""ratio":{}"#, r.one(NUMBERS)));
        }
        if r.chance(5) {
            let n = r.below(5);
            let tags: Vec<&str> = (0..n).map(|_| r.one(&[r#""a""#, r#""b""#, r#""c""#, r#""d""#, "1"])).collect();
            members.push(format!(r#""tags":[{}]"#, tags.join(",")));
        }
        if r.chance(5) {
            // Deep now and then: past the depth serde_json and the plan read.
            let depth = if r.chance(1) { 150 } else { r.below(6) };
            members.push(format!(r#""nested":{}"#, node(r, depth)));
        }
        if r.chance(4) {
            let state = if r.chance(2) { r.one(NUMBERS).to_owned() } else { r.one(&["null", r#""open""#]).to_owned() };
            members.push(format!(r#""state":{state}"#));
        }
        if r.chance(1) {
            members.push(r.one(&[r#""extra":1"#, r#""\u0065xtra":null"#, r#""":0"#]).to_owned());
        }
        if r.chance(2) && !members.is_empty() {
            // A repeated key, its first value or its last one broken.
            let again = members[r.below(members.len())].clone();
            let (key, _) = again.split_once(':').unwrap();
            members.push(format!("{key}:{}", r.one(&["true", "null", "1", r#""a""#])));
        }
        let first = r.below(members.len() + 1);
        members.rotate_left(first);
        format!("{{ {} }}", members.join(" , "))
    }

    /// The fast check of JSON text against the `Value` path's verdict (serde_json's
    /// decoding, then jsonschema: independent of the plan): a pass is always a value the
    /// `Value` path decodes and finds valid, whatever the text holds (repeated and escaped
    /// keys, numbers out of range or signed zeros, huge strings, deep nesting), and a
    /// plain valid value passes.
    #[test]
    fn a_pass_is_what_the_value_path_passes() {
        let schema = schema();
        let plan = super::Plan::compile(&schema).expect("the plan judges the schema");
        let oracle = compile(&schema).unwrap();
        let limits = Limits::default().with_max_bytes(usize::MAX);
        let mut rng = Rng(0x5eed_cafe_f00d_1234);
        let (mut passed, mut refused, mut undecodable) = (0, 0, 0);
        for _ in 0..3000 {
            let text = instance(&mut rng);
            let verdict = check(&plan, &text, &limits);
            match serde_json::from_str::<Value>(&text) {
                Err(_) => {
                    undecodable += 1;
                    assert!(verdict.is_err(), "text the Value path cannot decode passed: {text:.200}");
                }
                Ok(value) => {
                    let valid = oracle.is_valid(&value);
                    if verdict.is_ok() {
                        passed += 1;
                        assert!(valid, "the check passed what jsonschema refuses: {text:.300}");
                    } else {
                        refused += 1;
                        // Only a repeated key may make the check stricter than the
                        // `Value` path (which keeps the last value).
                        let repeated = text.matches(r#""title""#).count() + text.matches(r#""\u0074itle""#).count() > 1
                            || ["count", "ratio", "tags", "nested", "state", "extra", "\\u0065xtra", ""]
                                .iter()
                                .any(|k| text.matches(&format!("\"{k}\":")).count() > 1)
                            || text.contains("\"extra\":") && text.contains("\"\\u0065xtra\":");
                        let deep = text.matches("child").count() >= 100;
                        assert!(!valid || repeated || deep, "a valid value was refused: {text:.300}");
                    }
                }
            }
        }
        assert!(passed > 100 && refused > 300 && undecodable > 30, "{passed} / {refused} / {undecodable}");
    }

    /// The check driven by serde_json's reader, as a [`TextCheck`](super::super::TextCheck)
    /// reads a value inside a document: the oracle of the scan-driven one.
    fn read_check(plan: &super::Plan, text: &str, limits: &Limits) -> super::R {
        let mut de = serde_json::Deserializer::from_str(text);
        match super::read(plan, &mut de, limits) {
            Ok(verdict) => de.end().map_err(|_| super::Miss::Unsupported("text after the value")).and(verdict),
            Err(_) => Err(super::Miss::Unsupported("text that is not one JSON value")),
        }
    }

    /// The scan-driven check against the reader-driven one (serde_json's events) on the
    /// same generated texts: the same verdict, the same first miss, and a pass only
    /// where the `Value` path passes.
    #[test]
    fn a_scanned_check_gives_the_verdicts_of_the_read_one() {
        let schema = schema();
        let plan = super::Plan::compile(&schema).expect("the plan judges the schema");
        let oracle = compile(&schema).unwrap();
        let limits = Limits::default().with_max_bytes(usize::MAX);
        let mut rng = Rng(0x5eed_cafe_f00d_5678);
        let (mut passed, mut missed, mut stopped) = (0, 0, 0);
        for _ in 0..3000 {
            let text = instance(&mut rng);
            let read = read_check(&plan, &text, &limits);
            let mut scan = crate::contract::scan::Scan::new(&text);
            let scanned = super::scanned(&plan, &mut scan, &limits).and_then(|verdict| scan.end().map(|()| verdict));
            match scanned {
                Ok(Ok(())) => {
                    passed += 1;
                    assert_eq!(read, Ok(()), "the scan passed what the reader refuses: {text:.300}");
                    let value: Value = serde_json::from_str(&text).unwrap();
                    assert!(oracle.is_valid(&value), "a pass jsonschema refuses: {text:.300}");
                }
                Ok(Err(miss)) => {
                    missed += 1;
                    assert_eq!(read, Err(miss), "{text:.300}");
                }
                // Not JSON the scan reads: the reader finds no pass either.
                Err(_) => {
                    stopped += 1;
                    assert!(read.is_err(), "the reader passed what the scan stops on: {text:.300}");
                }
            }
        }
        assert!(passed > 100 && missed > 300 && stopped > 30, "{passed} / {missed} / {stopped}");
        // Each literal and number kind where its reading decides the verdict, against
        // jsonschema on the decoded value: both ways for each.
        let kinds = serde_json::json!({
            "type": "object",
            "properties": {
                "b": { "const": false },
                "t": { "enum": [true] },
                "n": { "type": "null" },
                "i": { "type": "integer", "maximum": -9_223_372_036_854_775_807_i64 },
                "u": { "type": "integer", "minimum": 18_446_744_073_709_551_615_u64 },
                "f": { "type": "number", "exclusiveMaximum": 1.5 }
            },
            "additionalProperties": false
        });
        let kinds_plan = super::Plan::compile(&kinds).expect("the plan judges the schema");
        let kinds_oracle = compile(&kinds).unwrap();
        for text in [
            r#"{"b":false}"#,
            r#"{"b":true}"#,
            r#"{"t":true}"#,
            r#"{"t":false}"#,
            r#"{"n":null}"#,
            r#"{"n":0}"#,
            r#"{"i":-9223372036854775808}"#,
            r#"{"i":-9223372036854775806}"#,
            r#"{"i":-9223372036854775809}"#,
            r#"{"u":18446744073709551615}"#,
            r#"{"u":18446744073709551614}"#,
            r#"{"u":18446744073709551616}"#,
            r#"{"f":1.5}"#,
            r#"{"f":1.25}"#,
            r#"{"f":-0}"#,
            r#"{"f":15e-1}"#,
            r#"{"f":1E-1}"#,
            r#"{"f":1.4999999999999999999}"#,
        ] {
            let mut scan = crate::contract::scan::Scan::new(text);
            let verdict = super::scanned(&kinds_plan, &mut scan, &limits).unwrap();
            let valid = kinds_oracle.is_valid(&serde_json::from_str::<Value>(text).unwrap());
            assert_eq!(verdict.is_ok(), valid, "{text}");
            assert_eq!(verdict, read_check(&kinds_plan, text, &limits), "{text}");
        }
        // Control: integers at the edges of u64 and i64, -0, and floats, as the reader reads them.
        for number in [
            "0",
            "-0",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "0.7",
            "1e2",
            "-1.5E-3",
        ] {
            let text = format!(r#"{{"title":"t","count":{number}}}"#);
            let mut scan = crate::contract::scan::Scan::new(&text);
            assert_eq!(super::scanned(&plan, &mut scan, &limits), Ok(read_check(&plan, &text, &limits)), "{number}");
        }
    }

    #[test]
    fn each_kind_of_break_misses_and_its_clean_control_passes() {
        let schema = schema();
        let plan = super::Plan::compile(&schema).unwrap();
        let limits = Limits::default();
        let clean = r#"{"title":"t","count":1,"ratio":0.7,"tags":["a"],"nested":{"child":{"v":-0}},"state":null}"#;
        assert_eq!(check(&plan, clean, &limits), Ok(()));
        assert_eq!(check(&plan, r#"{"\u0074itle":"t","count":-0}"#, &limits), Ok(()), "escaped key, -0");
        for broken in [
            r#"{"count":1}"#,
            r#"{"title":1,"count":1}"#,
            r#"{"title":"t","count":1,"extra":1}"#,
            r#"{"title":"t","count":0.7}"#,
            r#"{"title":"t","count":1e400}"#,
            r#"{"title":"t","count":1,"ratio":1}"#,
            r#"{"title":"t","count":1,"tags":["d"]}"#,
            r#"{"title":"t","count":1,"title":2}"#,
            r#"{"title":"t","count":1,"nested":{"child":{"child":{"w":1}}}}"#,
            r#"{"title":"t","count":1} x"#,
            "[]",
        ] {
            assert!(check(&plan, broken, &limits).is_err(), "{broken}");
        }
        let deep = format!(
            r#"{{"title":"t","count":1,"nested":{}{}}}"#,
            r#"{"child":"#.repeat(140),
            "{}".to_owned() + &"}".repeat(140)
        );
        assert!(check(&plan, &deep, &limits).is_err(), "past the depth limit");
        let huge = format!(r#"{{"title":"{}","count":1}}"#, "x".repeat(64));
        assert!(check(&plan, &huge, &limits.with_max_bytes(32)).is_err(), "past the byte limit");
        assert!(check(&plan, &huge, &limits.with_max_bytes(128)).is_err(), "maxLength 40");
        let fits = format!(r#"{{"title":"{}","count":1}}"#, "x".repeat(40));
        assert_eq!(check(&plan, &fits, &limits.with_max_bytes(128)), Ok(()));
    }
}
