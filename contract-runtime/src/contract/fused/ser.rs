//! The validating serializer: a `serde::Serializer` that writes compact JSON, byte for
//! byte what `serde_json::to_vec` writes, while it checks each event against a
//! [`Plan`]. Scalars are written by serde_json's own serializer, so escaping and number
//! formatting cannot drift from the `Value` path.
//!
//! Built with `B = true` it also builds the `serde_json::Value` of what it writes, in
//! the same pass: the tree `serde_json::from_slice` would read back from the bytes, an
//! `f32` included (its number is the `f64` nearest the `f32`'s own shortest digits, not
//! the widened `f32`, so the tree writes the digits the text has). With `B = false` every
//! serializer returns `Value::Null` and builds nothing.

use serde::ser::{self, Impossible, Serialize};
use serde_json::{Map, Number, Value};

use super::miss::{Miss, R};
use super::plan::{Extra, Node, Plan, Typed, ANY, ARRAY, BOOL, INTEGER, NEVER, NULL, NUMBER, OBJECT, STRING};
use super::scalar::{check_number, check_scalar, check_str, Num};
use crate::contract::limits::Limits;

/// Writes `value` as JSON while checking it against `plan`.
pub(crate) fn write<T: Serialize + ?Sized>(plan: &Plan, value: &T, limits: &Limits) -> R<Vec<u8>> {
    run::<T, false>(plan, value, limits).map(|(out, _)| out)
}

/// Writes `value` as JSON while checking it against `plan`, and builds the tree of what
/// it wrote.
pub(crate) fn write_value<T: Serialize + ?Sized>(plan: &Plan, value: &T, limits: &Limits) -> R<(Vec<u8>, Value)> {
    run::<T, true>(plan, value, limits)
}

fn run<T: Serialize + ?Sized, const B: bool>(plan: &Plan, value: &T, limits: &Limits) -> R<(Vec<u8>, Value)> {
    let mut w = Writer::new(plan, limits, true);
    let tree = value.serialize(Ser::<B> { w: &mut w, node: plan.root })?;
    if w.out.len() > w.max_bytes {
        return Err(Miss::Unsupported("over the size limit"));
    }
    Ok((w.out, tree))
}

pub(crate) struct Writer<'p> {
    plan: &'p Plan,
    out: Vec<u8>,
    /// Whether the bytes are written (`false`: JSON text already written is checked,
    /// and nothing is written or kept).
    keep: bool,
    /// What a check of text found first (the text is then read to its end unjudged).
    pub(super) miss: Option<Miss>,
    depth: usize,
    calls: usize,
    max_depth: usize,
    max_calls: usize,
    max_bytes: usize,
    key: String,
}

/// What a node says about one event.
enum Judge<'p> {
    Any,
    Typed(&'p Typed),
}

impl<'p> Writer<'p> {
    /// A writer of `plan`'s values within `limits`; `keep`: whether it writes the bytes.
    pub(super) fn new(plan: &'p Plan, limits: &Limits, keep: bool) -> Self {
        Self {
            plan,
            out: if keep { Vec::with_capacity(256) } else { Vec::new() },
            keep,
            miss: None,
            depth: 0,
            calls: 0,
            max_depth: limits.max_depth(),
            max_calls: limits.max_depth().saturating_mul(4).saturating_add(64),
            max_bytes: limits.max_bytes(),
            key: String::new(),
        }
    }

    /// Follows references and picks the union branch for a value of JSON type `kind`
    /// (`INTEGER | NUMBER` for an integral float).
    fn judge(&self, mut node: usize, kind: u8) -> R<Judge<'p>> {
        let plan: &'p Plan = self.plan;
        for _ in 0..64 {
            match &plan.nodes[node] {
                Node::Any => return Ok(Judge::Any),
                Node::Never => return Err(Miss::Invalid("false schema")),
                Node::Ref(inner) => node = *inner,
                Node::Union(branches) => {
                    let Some((_, next)) = branches.iter().find(|(types, _)| types & kind != 0) else {
                        return Err(Miss::Invalid("no branch takes this type"));
                    };
                    node = *next;
                }
                Node::Typed(typed) => {
                    if typed.types & kind == 0 {
                        return Err(Miss::Invalid("type"));
                    }
                    return Ok(Judge::Typed(typed));
                }
            }
        }
        Err(Miss::Unsupported("a chain of references"))
    }

    fn json(&mut self) -> serde_json::Serializer<&mut Vec<u8>> {
        serde_json::Serializer::new(&mut self.out)
    }

    /// Writes `text` as a JSON string, unless nothing is kept.
    #[inline]
    fn string(&mut self, text: &str) {
        if self.keep {
            self.write_string(text);
        }
    }

    /// Writes `text` as a JSON string. Text with nothing to escape (field names, and
    /// most values) is copied as it is, the bytes serde_json writes, without its
    /// formatter's pass; anything else is escaped by `wire::write_json_string`.
    fn write_string(&mut self, text: &str) {
        if !crate::contract::escape::needs_escape(text) {
            self.out.reserve(text.len() + 2);
            self.out.push(b'"');
            self.out.extend_from_slice(text.as_bytes());
            self.out.push(b'"');
            return;
        }
        // The same bytes serde_json writes (a differential test holds it), in runs
        // rather than byte by byte.
        crate::contract::escape::write_json_string(&mut self.out, text);
    }

    /// Writes `bytes`, unless nothing is kept.
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        if self.keep {
            self.out.extend_from_slice(bytes);
        }
    }

    /// Writes `byte`, unless nothing is kept.
    #[inline]
    pub(super) fn byte(&mut self, byte: u8) {
        if self.keep {
            self.out.push(byte);
        }
    }

    fn enter(&mut self) -> R {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(Miss::Unsupported("over the depth limit"));
        }
        Ok(())
    }

    fn size(&self) -> R {
        if self.out.len() > self.max_bytes {
            return Err(Miss::Unsupported("over the size limit"));
        }
        Ok(())
    }
}

/// The serializer for one value at one plan node; `B`: whether it builds the tree.
pub(crate) struct Ser<'a, 'p, const B: bool> {
    pub(super) w: &'a mut Writer<'p>,
    pub(super) node: usize,
}

/// `make()` when the tree is built, else `Value::Null`.
#[inline]
fn tree<const B: bool>(make: impl FnOnce() -> Value) -> Value {
    if B {
        make()
    } else {
        Value::Null
    }
}

/// The number of an `f32` as the tree holds it: the `f64` nearest the shortest digits
/// just written for it (`0.8`, not `0.800000011920929`), read as `serde_json` reads them.
fn f32_number(digits: &[u8]) -> R<Value> {
    serde_json::from_slice::<Number>(digits).map(Value::Number).map_err(json_err)
}

fn json_err(_: serde_json::Error) -> Miss {
    Miss::Unsupported("serde_json refused a scalar")
}

impl<'a, 'p, const B: bool> Ser<'a, 'p, B> {
    fn number(&self, n: Num) -> R {
        let kind = match n {
            Num::F(f) if !f.is_finite() => return Err(Miss::Unsupported("a non-finite float")),
            Num::F(f) if f.fract() != 0.0 => NUMBER,
            _ => INTEGER,
        };
        if let Judge::Typed(typed) = self.w.judge(self.node, kind)? {
            check_number(typed, n)?;
        }
        Ok(())
    }

    fn null(self) -> R<Value> {
        if let Judge::Typed(typed) = self.w.judge(self.node, NULL)? {
            check_scalar(typed, &Value::Null)?;
        }
        self.w.put(b"null");
        Ok(Value::Null)
    }

    fn wrapped<T: Serialize + ?Sized>(self, value: &T) -> R<Value> {
        self.w.calls += 1;
        if self.w.calls > self.w.max_calls {
            return Err(Miss::Unsupported("over the nesting limit"));
        }
        let node = self.node;
        let w = self.w;
        let inner = value.serialize(Ser::<B> { w: &mut *w, node })?;
        w.calls -= 1;
        Ok(inner)
    }

    pub(super) fn seq(self, len: Option<usize>) -> R<Seq<'a, 'p, B>> {
        let typed = match self.w.judge(self.node, ARRAY)? {
            Judge::Any => None,
            Judge::Typed(t) => Some(t),
        };
        self.w.enter()?;
        self.w.byte(b'[');
        // A length hint is the serializer's to trust only so far: capped, as serde_json caps it.
        let items = if B { Vec::with_capacity(len.unwrap_or(0).min(4096)) } else { Vec::new() };
        Ok(Seq { w: self.w, typed, count: 0, items })
    }

    pub(super) fn map(self) -> R<Obj<'a, 'p, B>> {
        let typed = match self.w.judge(self.node, OBJECT)? {
            Judge::Any => None,
            Judge::Typed(t) => Some(t),
        };
        self.w.enter()?;
        self.w.byte(b'{');
        Ok(Obj { w: self.w, typed, seen: 0, first: true, pending: ANY, map: Map::new(), key: String::new() })
    }

    /// A number checked, then written by serde_json's serializer.
    fn written(
        self,
        n: Num,
        write: impl FnOnce(&mut serde_json::Serializer<&mut Vec<u8>>) -> serde_json::Result<()>,
    ) -> R<Value> {
        self.number(n)?;
        if self.w.keep {
            write(&mut self.w.json()).map_err(json_err)?;
        }
        Ok(tree::<B>(|| match n {
            Num::U(v) => Value::Number(v.into()),
            Num::I(v) => Value::Number(v.into()),
            // Finite: `number` gave back every other float.
            Num::F(v) => Number::from_f64(v).map_or(Value::Null, Value::Number),
        }))
    }
}

macro_rules! ints {
    ($($method:ident: $t:ty => $variant:ident),*) => {$(
        fn $method(self, v: $t) -> R<Value> {
            self.written(Num::$variant(v.into()), |json| ser::Serializer::$method(json, v))
        }
    )*};
}

impl<'a, 'p, const B: bool> ser::Serializer for Ser<'a, 'p, B> {
    type Ok = Value;
    type Error = Miss;
    type SerializeSeq = Seq<'a, 'p, B>;
    type SerializeTuple = Seq<'a, 'p, B>;
    type SerializeTupleStruct = Seq<'a, 'p, B>;
    type SerializeTupleVariant = Impossible<Value, Miss>;
    type SerializeMap = Obj<'a, 'p, B>;
    type SerializeStruct = Obj<'a, 'p, B>;
    type SerializeStructVariant = Impossible<Value, Miss>;

    ints!(serialize_i8: i8 => I, serialize_i16: i16 => I, serialize_i32: i32 => I, serialize_i64: i64 => I,
          serialize_u8: u8 => U, serialize_u16: u16 => U, serialize_u32: u32 => U, serialize_u64: u64 => U);

    fn serialize_i128(self, v: i128) -> R<Value> {
        let n = match (u64::try_from(v), i64::try_from(v)) {
            (Ok(u), _) => Num::U(u),
            (_, Ok(i)) => Num::I(i),
            _ => return Err(Miss::Unsupported("a 128-bit integer beyond 64 bits")),
        };
        self.written(n, |json| ser::Serializer::serialize_i128(json, v))
    }

    fn serialize_u128(self, v: u128) -> R<Value> {
        let Ok(u) = u64::try_from(v) else { return Err(Miss::Unsupported("a 128-bit integer beyond 64 bits")) };
        self.written(Num::U(u), |json| ser::Serializer::serialize_u128(json, v))
    }

    fn serialize_f32(self, v: f32) -> R<Value> {
        self.number(Num::F(f64::from(v)))?;
        if !self.w.keep {
            return Ok(Value::Null);
        }
        let start = self.w.out.len();
        ser::Serializer::serialize_f32(&mut self.w.json(), v).map_err(json_err)?;
        if B {
            f32_number(&self.w.out[start..])
        } else {
            Ok(Value::Null)
        }
    }

    fn serialize_f64(self, v: f64) -> R<Value> {
        self.written(Num::F(v), |json| ser::Serializer::serialize_f64(json, v))
    }

    fn serialize_bool(self, v: bool) -> R<Value> {
        if let Judge::Typed(typed) = self.w.judge(self.node, BOOL)? {
            check_scalar(typed, &Value::Bool(v))?;
        }
        self.w.put(if v { b"true" } else { b"false" });
        Ok(tree::<B>(|| Value::Bool(v)))
    }

    fn serialize_char(self, v: char) -> R<Value> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> R<Value> {
        if let Judge::Typed(typed) = self.w.judge(self.node, STRING)? {
            check_str(typed, v)?;
        }
        self.w.string(v);
        self.w.size()?;
        Ok(tree::<B>(|| Value::String(v.to_owned())))
    }

    fn serialize_bytes(self, _: &[u8]) -> R<Value> {
        Err(Miss::Unsupported("bytes"))
    }

    fn serialize_none(self) -> R<Value> {
        self.null()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> R<Value> {
        self.wrapped(value)
    }

    fn serialize_unit(self) -> R<Value> {
        self.null()
    }

    fn serialize_unit_struct(self, _: &'static str) -> R<Value> {
        self.null()
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> R<Value> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> R<Value> {
        self.wrapped(value)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> R<Value> {
        let mut obj = self.map()?;
        ser::SerializeStruct::serialize_field(&mut obj, variant, value)?;
        ser::SerializeStruct::end(obj)
    }

    fn serialize_seq(self, len: Option<usize>) -> R<Seq<'a, 'p, B>> {
        self.seq(len)
    }

    fn serialize_tuple(self, len: usize) -> R<Seq<'a, 'p, B>> {
        self.seq(Some(len))
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> R<Seq<'a, 'p, B>> {
        self.seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> R<Self::SerializeTupleVariant> {
        Err(Miss::Unsupported("a tuple variant"))
    }

    fn serialize_map(self, _: Option<usize>) -> R<Obj<'a, 'p, B>> {
        self.map()
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> R<Obj<'a, 'p, B>> {
        self.map()
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> R<Self::SerializeStructVariant> {
        Err(Miss::Unsupported("a struct variant"))
    }
}

/// An array being written.
pub(crate) struct Seq<'a, 'p, const B: bool> {
    pub(super) w: &'a mut Writer<'p>,
    typed: Option<&'p Typed>,
    count: u64,
    /// The elements' trees (`B` only).
    items: Vec<Value>,
}

impl<const B: bool> Seq<'_, '_, B> {
    /// Starts the next element: the node it is judged by.
    pub(super) fn next_node(&mut self) -> usize {
        if self.count > 0 {
            self.w.byte(b',');
        }
        self.count += 1;
        self.typed.map_or(ANY, |t| t.items)
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        let node = self.next_node();
        let item = value.serialize(Ser::<B> { w: &mut *self.w, node })?;
        if B {
            self.items.push(item);
        }
        self.w.size()
    }

    pub(super) fn finish(self) -> R<Value> {
        if let Some(t) = self.typed
            && (t.min_items.is_some_and(|m| self.count < m) || t.max_items.is_some_and(|m| self.count > m))
        {
            return Err(Miss::Invalid("item count"));
        }
        self.w.byte(b']');
        self.w.depth -= 1;
        let items = self.items;
        Ok(tree::<B>(|| Value::Array(items)))
    }
}

impl<const B: bool> ser::SerializeSeq for Seq<'_, '_, B> {
    type Ok = Value;
    type Error = Miss;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        self.element(value)
    }
    fn end(self) -> R<Value> {
        self.finish()
    }
}

impl<const B: bool> ser::SerializeTuple for Seq<'_, '_, B> {
    type Ok = Value;
    type Error = Miss;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        self.element(value)
    }
    fn end(self) -> R<Value> {
        self.finish()
    }
}

impl<const B: bool> ser::SerializeTupleStruct for Seq<'_, '_, B> {
    type Ok = Value;
    type Error = Miss;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        self.element(value)
    }
    fn end(self) -> R<Value> {
        self.finish()
    }
}

/// An object being written.
pub(crate) struct Obj<'a, 'p, const B: bool> {
    pub(super) w: &'a mut Writer<'p>,
    typed: Option<&'p Typed>,
    seen: u64,
    first: bool,
    /// The node of the value after the key just written.
    pending: usize,
    /// The members' trees (`B` only).
    map: Map<String, Value>,
    /// The key just written (`B` only): the member its value makes.
    key: String,
}

impl<const B: bool> Obj<'_, '_, B> {
    /// Writes `key` and returns the node its value is judged by.
    pub(super) fn key(&mut self, key: &str) -> R<usize> {
        if !self.first {
            self.w.byte(b',');
        }
        self.first = false;
        self.w.string(key);
        self.w.byte(b':');
        let Some(typed) = self.typed else { return Ok(ANY) };
        if let Some((_, node, bit)) = typed.properties.iter().find(|(name, _, _)| same_key(name, key)) {
            if let Some(bit) = bit {
                self.seen |= 1 << bit;
            }
            return Ok(*node);
        }
        if let Some((_, bit)) = typed.required_extra.iter().find(|(name, _)| same_key(name, key)) {
            self.seen |= 1 << bit;
        }
        match typed.extra {
            Extra::Any => Ok(ANY),
            Extra::Never => Err(Miss::Invalid("a key the object does not allow")),
            Extra::Node(node) => Ok(node),
        }
    }

    pub(super) fn finish(self) -> R<Value> {
        if let Some(typed) = self.typed
            && self.seen & typed.required_mask != typed.required_mask
        {
            return Err(Miss::Invalid("a required key is missing"));
        }
        self.w.byte(b'}');
        self.w.depth -= 1;
        let map = self.map;
        Ok(tree::<B>(|| Value::Object(map)))
    }
}

/// Whether two keys are equal, judged on length and first byte before a full compare:
/// the names of one object mostly differ there, and a call to `memcmp` per property
/// tried was a tenth of the fast path's time.
#[inline]
fn same_key(name: &str, key: &str) -> bool {
    name.len() == key.len() && name.as_bytes().first() == key.as_bytes().first() && name == key
}

impl<const B: bool> ser::SerializeStruct for Obj<'_, '_, B> {
    type Ok = Value;
    type Error = Miss;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> R {
        let node = self.key(key)?;
        let member = value.serialize(Ser::<B> { w: &mut *self.w, node })?;
        if B {
            self.map.insert(key.to_owned(), member);
        }
        self.w.size()
    }
    fn end(self) -> R<Value> {
        self.finish()
    }
}

impl<const B: bool> ser::SerializeMap for Obj<'_, '_, B> {
    type Ok = Value;
    type Error = Miss;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> R {
        let mut text = std::mem::take(&mut self.w.key);
        text.clear();
        let captured = key.serialize(KeySer(&mut text));
        let node = captured.and_then(|()| self.key(&text));
        if B {
            // The key becomes the member's; the writer's buffer starts anew.
            self.key = text;
        } else {
            self.w.key = text;
        }
        self.pending = node?;
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        let node = std::mem::replace(&mut self.pending, NEVER);
        let member = value.serialize(Ser::<B> { w: &mut *self.w, node })?;
        if B {
            // A repeated key keeps its last value, as serde_json reads it.
            self.map.insert(std::mem::take(&mut self.key), member);
        }
        self.w.size()
    }
    fn end(self) -> R<Value> {
        self.finish()
    }
}

/// Captures a map key as the string serde_json would write: strings and chars as they
/// are, integers in decimal. Other keys go back to the `Value` path.
struct KeySer<'k>(&'k mut String);

macro_rules! int_keys {
    ($($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> R {
            self.0.push_str(&v.to_string());
            Ok(())
        }
    )*};
}

impl ser::Serializer for KeySer<'_> {
    type Ok = ();
    type Error = Miss;
    type SerializeSeq = Impossible<(), Miss>;
    type SerializeTuple = Impossible<(), Miss>;
    type SerializeTupleStruct = Impossible<(), Miss>;
    type SerializeTupleVariant = Impossible<(), Miss>;
    type SerializeMap = Impossible<(), Miss>;
    type SerializeStruct = Impossible<(), Miss>;
    type SerializeStructVariant = Impossible<(), Miss>;

    int_keys!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_i128: i128,
              serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_u128: u128);

    fn serialize_str(self, v: &str) -> R {
        self.0.push_str(v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> R {
        self.0.push(v);
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> R {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> R {
        value.serialize(self)
    }
    fn serialize_bool(self, _: bool) -> R {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_f32(self, _: f32) -> R {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_f64(self, _: f64) -> R {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_bytes(self, _: &[u8]) -> R {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_none(self) -> R {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> R {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_unit(self) -> R {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_unit_struct(self, _: &'static str) -> R {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> R {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_seq(self, _: Option<usize>) -> R<Self::SerializeSeq> {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_tuple(self, _: usize) -> R<Self::SerializeTuple> {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> R<Self::SerializeTupleStruct> {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> R<Self::SerializeTupleVariant> {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_map(self, _: Option<usize>) -> R<Self::SerializeMap> {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> R<Self::SerializeStruct> {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> R<Self::SerializeStructVariant> {
        Err(Miss::Unsupported("a map key that is not a string"))
    }
}
