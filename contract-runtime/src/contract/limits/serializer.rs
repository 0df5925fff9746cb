//! The walk over a `Serialize` value: a `serde::Serializer` that writes nothing and
//! stops at the first non-finite float or limit passed.

use std::fmt;

use serde::ser::{self, Serialize};
use serde_json::Value;

use super::tally::{digits, State};
use super::{Limits, NonFinite, ProblemKind};

pub(super) fn measure<T: Serialize + ?Sized>(value: &T, limits: &Limits) -> Result<usize, NonFinite> {
    let mut state = State { limits: *limits, bytes: 0 };
    value.serialize(Check { state: &mut state, depth: 0, calls: 0 })?;
    Ok(state.bytes)
}

struct Check<'s> {
    state: &'s mut State,
    /// Arrays and objects around the value being serialized.
    depth: usize,
    /// Nested `serialize` calls, wrappers included.
    calls: usize,
}

impl<'s> Check<'s> {
    /// Enters a wrapper that adds no JSON level.
    fn wrap(self) -> Result<Check<'s>, NonFinite> {
        if self.calls >= self.state.limits.max_calls() {
            return Err(NonFinite::new(ProblemKind::TooDeep { limit: self.state.limits.max_depth }));
        }
        Ok(Check { state: self.state, depth: self.depth, calls: self.calls + 1 })
    }

    /// Opens an array or object of `len` entries (when known).
    fn open(self, len: Option<usize>) -> Result<Compound<'s>, NonFinite> {
        if self.depth >= self.state.limits.max_depth || self.calls >= self.state.limits.max_calls() {
            return Err(NonFinite::new(ProblemKind::TooDeep { limit: self.state.limits.max_depth }));
        }
        self.state.add(2 + len.unwrap_or(1).saturating_sub(1))?;
        Ok(Compound { state: self.state, depth: self.depth + 1, calls: self.calls + 1, index: 0, key: None })
    }

    fn float(self, v: f64) -> Result<(), NonFinite> {
        if v.is_finite() {
            // serde_json writes at most 24 bytes for a float; Display may write more
            // (it never uses an exponent), so its length is capped there.
            let mut counter = Counter(0);
            let _ = fmt::Write::write_fmt(&mut counter, format_args!("{v}"));
            self.state.add(counter.0.min(24))
        } else {
            Err(NonFinite::new(ProblemKind::NonFinite))
        }
    }
}

/// An array or object being walked: counts positions so errors know their index.
struct Compound<'s> {
    state: &'s mut State,
    depth: usize,
    calls: usize,
    index: usize,
    /// The variant name of an externally tagged variant, for error pointers.
    key: Option<&'static str>,
}

/// A map being walked. Kept apart from [`Compound`] so that arrays and structs, the
/// common case, carry no buffer to drop.
struct MapCompound<'s> {
    inner: Compound<'s>,
    /// The current key as JSON, kept for the pointer of an error in its value. The
    /// buffer is reused for every key of the map, so a map costs one allocation at most.
    key_json: Vec<u8>,
}

impl Compound<'_> {
    fn child(&mut self) -> Check<'_> {
        Check { state: self.state, depth: self.depth, calls: self.calls }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        let index = self.index;
        self.index += 1;
        value.serialize(self.child()).map_err(|e| e.within(index.to_string()))
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), NonFinite> {
        // Field names are the type's own: counted raw (an escape in one is rare and
        // would be off by a byte or two).
        self.state.add(key.len() + 3)?;
        value.serialize(self.child()).map_err(|e| e.within(key))
    }
}

impl<'s> ser::Serializer for Check<'s> {
    type Ok = ();
    type Error = NonFinite;
    type SerializeSeq = Compound<'s>;
    type SerializeTuple = Compound<'s>;
    type SerializeTupleStruct = Compound<'s>;
    type SerializeTupleVariant = Compound<'s>;
    type SerializeMap = MapCompound<'s>;
    type SerializeStruct = Compound<'s>;
    type SerializeStructVariant = Compound<'s>;

    fn serialize_bool(self, v: bool) -> Result<(), NonFinite> {
        self.state.add(if v { 4 } else { 5 })
    }
    fn serialize_i8(self, v: i8) -> Result<(), NonFinite> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<(), NonFinite> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<(), NonFinite> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<(), NonFinite> {
        self.state.add(digits(v.unsigned_abs()) + usize::from(v < 0))
    }
    fn serialize_i128(self, v: i128) -> Result<(), NonFinite> {
        self.state.add(v.to_string().len())
    }
    fn serialize_u8(self, v: u8) -> Result<(), NonFinite> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<(), NonFinite> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<(), NonFinite> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), NonFinite> {
        self.state.add(digits(v))
    }
    fn serialize_u128(self, v: u128) -> Result<(), NonFinite> {
        self.state.add(v.to_string().len())
    }
    fn serialize_f32(self, v: f32) -> Result<(), NonFinite> {
        self.float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), NonFinite> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<(), NonFinite> {
        self.state.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), NonFinite> {
        self.state.string(v)
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), NonFinite> {
        // The default would format into a new `String` (timestamps, ids, URLs do this);
        // counting the formatted pieces allocates nothing.
        let mut counter = Counter(0);
        let _ = fmt::Write::write_fmt(&mut counter, format_args!("{value}"));
        self.state.add(counter.0.saturating_add(2))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), NonFinite> {
        // serde_json writes bytes as an array of numbers.
        self.state.add(2 + v.len() * 4)
    }
    fn serialize_none(self) -> Result<(), NonFinite> {
        self.state.add(4)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), NonFinite> {
        value.serialize(self.wrap()?)
    }
    fn serialize_unit(self) -> Result<(), NonFinite> {
        self.state.add(4)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), NonFinite> {
        self.state.add(4)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), NonFinite> {
        self.state.string(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), NonFinite> {
        value.serialize(self.wrap()?)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), NonFinite> {
        // `{"variant": value}`: one object level.
        let mut object = self.open(Some(1))?;
        object.field(variant, value)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'s>, NonFinite> {
        self.open(len)
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'s>, NonFinite> {
        self.open(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'s>, NonFinite> {
        self.open(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'s>, NonFinite> {
        // `{"variant": [...]}`: the wrapper object and the array are one level each.
        self.state.add(variant.len() + 5)?;
        let wrapper = self.wrap_level()?;
        let mut compound = wrapper.open(Some(len))?;
        compound.key = Some(variant);
        Ok(compound)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapCompound<'s>, NonFinite> {
        Ok(MapCompound { inner: self.open(len)?, key_json: Vec::new() })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'s>, NonFinite> {
        self.open(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'s>, NonFinite> {
        self.state.add(variant.len() + 5)?;
        let wrapper = self.wrap_level()?;
        let mut compound = wrapper.open(Some(len))?;
        compound.key = Some(variant);
        Ok(compound)
    }
}

impl<'s> Check<'s> {
    /// Enters the wrapper object of an externally tagged variant: one JSON level.
    fn wrap_level(self) -> Result<Check<'s>, NonFinite> {
        if self.depth >= self.state.limits.max_depth {
            return Err(NonFinite::new(ProblemKind::TooDeep { limit: self.state.limits.max_depth }));
        }
        Ok(Check { state: self.state, depth: self.depth + 1, calls: self.calls + 1 })
    }
}

/// Errors inside a variant's wrapper get the variant name in their path.
fn in_variant(key: Option<&'static str>, err: NonFinite) -> NonFinite {
    match key {
        Some(variant) => err.within(variant),
        None => err,
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        self.element(value)
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        self.element(value)
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        self.element(value)
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        let key = self.key;
        self.element(value).map_err(|e| in_variant(key, e))
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeMap for MapCompound<'_> {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), NonFinite> {
        // A colon, a comma and the quotes around keys serde_json writes from numbers.
        self.inner.state.add(4)?;
        // Measured first, so the write below is bounded by the depth limit too.
        key.serialize(self.inner.child())?;
        self.key_json.clear();
        if serde_json::to_writer(&mut self.key_json, key).is_err() {
            self.key_json.clear();
        }
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NonFinite> {
        let key_json = &self.key_json;
        value.serialize(self.inner.child()).map_err(|e| e.within(key_text(key_json)))
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), NonFinite> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), NonFinite> {
        let variant = self.key;
        self.field(key, value).map_err(|e| in_variant(variant, e))
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

/// The text of a map key for error pointers, from the key's JSON: strings as they are,
/// numbers as written; `*` when the key could not be written.
fn key_text(key_json: &[u8]) -> String {
    match serde_json::from_slice::<Value>(key_json) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "*".to_owned(),
    }
}

/// Counts the bytes written through `fmt::Write` without storing them.
struct Counter(usize);

impl fmt::Write for Counter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}
