//! A pass over a `Serialize` value that finds non-finite floats. serde_json writes NaN
//! and ±infinity as `null`, which a nullable field would then accept silently; the
//! pipeline refuses such a result as a `serialization_error` instead (seed 000,
//! experiment 4). The pass allocates nothing unless it finds one.

use std::fmt;

use serde::ser::{self, Serialize};

/// Where a non-finite float was found, as a JSON pointer (best effort for map keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonFinite {
    path: Vec<String>,
    custom: Option<String>,
}

impl NonFinite {
    /// The JSON pointer of the float.
    #[must_use]
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for token in self.path.iter().rev() {
            out.push('/');
            out.push_str(&crate::schema::escape_pointer_token(token));
        }
        out
    }

    /// Set when the value's own `Serialize` impl failed rather than a float.
    #[must_use]
    pub fn custom_error(&self) -> Option<&str> {
        self.custom.as_deref()
    }

    fn within(mut self, segment: impl Into<String>) -> Self {
        self.path.push(segment.into());
        self
    }
}

impl fmt::Display for NonFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.custom {
            Some(msg) => write!(f, "serialization failed: {msg}"),
            None => {
                write!(f, "a non-finite float (NaN or infinity) at `{}`, which JSON cannot represent", self.pointer())
            }
        }
    }
}

impl std::error::Error for NonFinite {}

impl ser::Error for NonFinite {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self { path: Vec::new(), custom: Some(msg.to_string()) }
    }
}

/// Checks that `value` contains no NaN or infinite float.
///
/// # Errors
///
/// [`NonFinite`] with the pointer of the first offending float, or with the message of
/// a failing `Serialize` impl.
pub fn check_finite<T: Serialize + ?Sized>(value: &T) -> Result<(), NonFinite> {
    value.serialize(Check)
}

fn float(v: f64) -> Result<(), NonFinite> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(NonFinite { path: Vec::new(), custom: None })
    }
}

struct Check;

/// Compound serializers: count positions so errors know their index.
struct Seq(usize);
struct Fields;
struct MapCheck(Option<String>);

impl ser::Serializer for Check {
    type Ok = ();
    type Error = NonFinite;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Seq;
    type SerializeMap = MapCheck;
    type SerializeStruct = Fields;
    type SerializeStructVariant = Fields;

    fn serialize_bool(self, _: bool) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_i8(self, _: i8) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_i16(self, _: i16) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_i32(self, _: i32) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_i64(self, _: i64) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_i128(self, _: i128) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_u8(self, _: u8) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_u16(self, _: u16) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_u32(self, _: u32) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_u64(self, _: u64) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_u128(self, _: u128) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), NonFinite> {
        float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), NonFinite> {
        float(v)
    }
    fn serialize_char(self, _: char) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_str(self, _: &str) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_none(self) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), NonFinite> {
        value.serialize(Check)
    }
    fn serialize_unit(self) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), NonFinite> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), NonFinite> {
        value.serialize(Check)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), NonFinite> {
        value.serialize(Check).map_err(|e| e.within(variant))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq, NonFinite> {
        Ok(Seq(0))
    }
    fn serialize_tuple(self, _: usize) -> Result<Seq, NonFinite> {
        Ok(Seq(0))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Seq, NonFinite> {
        Ok(Seq(0))
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Seq, NonFinite> {
        Ok(Seq(0))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<MapCheck, NonFinite> {
        Ok(MapCheck(None))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields, NonFinite> {
        Ok(Fields)
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Fields, NonFinite> {
        Ok(Fields)
    }
}

impl Seq {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        let index = self.0;
        self.0 += 1;
        value.serialize(Check).map_err(|e| e.within(index.to_string()))
    }
}

impl ser::SerializeSeq for Seq {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        self.element(value)
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeTuple for Seq {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        self.element(value)
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Seq {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        self.element(value)
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Seq {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        self.element(value)
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeMap for MapCheck {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), NonFinite> {
        // Keys are only needed for the pointer of an error; JSON keys are strings.
        self.0 = match serde_json::to_value(key) {
            Ok(serde_json::Value::String(s)) => Some(s),
            Ok(other) => Some(other.to_string()),
            Err(_) => None,
        };
        key.serialize(Check)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        let key = self.0.take().unwrap_or_else(|| "*".to_owned());
        value.serialize(Check).map_err(|e| e.within(key))
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeStruct for Fields {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), NonFinite> {
        value.serialize(Check).map_err(|e| e.within(key))
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Fields {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), NonFinite> {
        value.serialize(Check).map_err(|e| e.within(key))
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(serde::Serialize)]
    struct Row {
        name: String,
        score: Option<f64>,
        history: Vec<f32>,
        by_key: BTreeMap<String, f64>,
    }

    fn row() -> Row {
        Row { name: "a".into(), score: Some(1.5), history: vec![0.5, 2.0], by_key: BTreeMap::from([("k".into(), 1.0)]) }
    }

    #[test]
    fn finite_values_pass() {
        assert_eq!(check_finite(&row()), Ok(()));
        assert_eq!(check_finite(&Row { score: None, ..row() }), Ok(()));
    }

    #[test]
    fn non_finite_values_are_found_with_their_pointer() {
        let err = check_finite(&Row { score: Some(f64::NAN), ..row() }).unwrap_err();
        assert_eq!(err.pointer(), "/score");
        let err = check_finite(&Row { history: vec![1.0, f32::INFINITY], ..row() }).unwrap_err();
        assert_eq!(err.pointer(), "/history/1");
        let err =
            check_finite(&Row { by_key: BTreeMap::from([("a/b".into(), f64::NEG_INFINITY)]), ..row() }).unwrap_err();
        assert_eq!(err.pointer(), "/by_key/a~1b");
    }
}
