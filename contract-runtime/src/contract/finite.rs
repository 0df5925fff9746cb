//! One pass over a result before it is converted or judged: it finds non-finite floats,
//! and it measures nesting depth and serialized size against the pipeline's [`Limits`].
//!
//! serde_json writes NaN and ±infinity as `null`, which a nullable field would then
//! accept silently; the pipeline refuses such a result as a `serialization_error`
//! instead. serde_json's recursion limit guards parsing only:
//! `to_value`, `to_string` and the validator all recurse, so a value nested deep enough
//! overflows the stack. This pass stops as soon as a limit is passed, so its own
//! recursion is bounded by the limit, not by the value; the pipeline runs it before
//! anything else touches the result. It allocates nothing unless it finds a problem.

use std::fmt;

use serde::ser::{self, Serialize};
use serde_json::Value;

/// The default [`Limits::max_depth`]: 128 nested arrays or objects, the depth serde_json
/// itself agrees to parse, so every result that passes can be read back by a client.
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// The default [`Limits::max_bytes`]: 16 MiB of serialized JSON.
pub const DEFAULT_MAX_BYTES: usize = 16 * 1024 * 1024;

/// Bounds on a result the pipeline agrees to judge. A result beyond them is refused
/// (fail closed) with `output_limit_exceeded`, never passed unchecked.
///
/// # Examples
///
/// ```
/// use contract_runtime::finite::{measure, Limits};
///
/// let limits = Limits::default().with_max_depth(2).with_max_bytes(64);
/// assert!(measure(&vec![vec![1, 2]], &limits).is_ok());
/// assert!(measure(&vec![vec![vec![1]]], &limits).is_err()); // three levels
/// assert!(measure(&"x".repeat(100), &limits).is_err()); // 102 bytes
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct Limits {
    max_depth: usize,
    max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_depth: DEFAULT_MAX_DEPTH, max_bytes: DEFAULT_MAX_BYTES }
    }
}

impl Limits {
    /// The most nested arrays and objects a result may have ([`DEFAULT_MAX_DEPTH`]).
    /// Raising it past 128 makes serde_json and the validator recurse deeper: give the
    /// threads that run the pipeline the stack for it.
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The most bytes the serialized result may take ([`DEFAULT_MAX_BYTES`]). The walk
    /// before conversion counts a lower bound (escapes in strings are not counted), so
    /// a result that is surely too large is refused before it is copied; the pipeline
    /// then checks the exact length of the JSON text it writes.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// See [`Limits::with_max_depth`].
    #[must_use]
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// See [`Limits::with_max_bytes`].
    #[must_use]
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// How deep transparent wrappers (`Option`, newtypes, `Box`) may recurse in a typed
    /// value: they add no JSON level but do use stack, so they are bounded as well.
    fn max_calls(&self) -> usize {
        self.max_depth.saturating_mul(4).saturating_add(64)
    }
}

/// What the pass found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProblemKind {
    /// A NaN or infinite float, which JSON cannot represent.
    NonFinite,
    /// Nesting deeper than the limit.
    TooDeep {
        /// The limit that was passed.
        limit: usize,
    },
    /// A serialized size above the limit.
    TooLarge {
        /// The limit that was passed.
        limit: usize,
    },
    /// The value's own `Serialize` impl failed with this message.
    Custom(String),
}

/// Why a result cannot be written or judged, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonFinite(Box<Repr>);

/// Boxed, so every call of the walk returns a pointer-sized `Result`: the walk runs on
/// every result, and the error is rare.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Repr {
    path: Vec<String>,
    kind: ProblemKind,
}

impl NonFinite {
    /// The JSON pointer of the problem (best effort for map keys; `""` for a size limit
    /// or a custom error).
    #[must_use]
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for token in self.0.path.iter().rev() {
            out.push('/');
            out.push_str(&crate::contract::schema::escape_pointer_token(token));
        }
        out
    }

    /// What was found.
    #[must_use]
    pub fn kind(&self) -> &ProblemKind {
        &self.0.kind
    }

    /// Set when the value's own `Serialize` impl failed rather than a float or a limit.
    #[must_use]
    pub fn custom_error(&self) -> Option<&str> {
        match &self.0.kind {
            ProblemKind::Custom(msg) => Some(msg),
            _ => None,
        }
    }

    /// Whether a [`Limits`] bound was passed (as opposed to a value JSON cannot hold).
    #[must_use]
    pub fn is_limit(&self) -> bool {
        matches!(self.0.kind, ProblemKind::TooDeep { .. } | ProblemKind::TooLarge { .. })
    }

    /// The message with `pointer` in place of the real pointer, so a caller can mask
    /// its tokens first.
    #[must_use]
    pub fn message_at(&self, pointer: &str) -> String {
        match &self.0.kind {
            ProblemKind::Custom(msg) => format!("serialization failed: {msg}"),
            ProblemKind::NonFinite => {
                format!("a non-finite float (NaN or infinity) at `{pointer}`, which JSON cannot represent")
            }
            ProblemKind::TooDeep { limit } => format!(
                "the result is nested deeper than {limit} levels at `{pointer}`; the limit protects the server's stack \
                 (Limits::with_max_depth)"
            ),
            ProblemKind::TooLarge { limit } => {
                format!("the result is larger than {limit} bytes of JSON (Limits::with_max_bytes)")
            }
        }
    }

    fn new(kind: ProblemKind) -> Self {
        Self(Box::new(Repr { path: Vec::new(), kind }))
    }

    fn within(mut self, segment: impl Into<String>) -> Self {
        // A size limit has no useful location; keeping the path empty also keeps the
        // error small when it is hit deep inside a large value.
        if !matches!(self.0.kind, ProblemKind::TooLarge { .. } | ProblemKind::Custom(_)) {
            self.0.path.push(segment.into());
        }
        self
    }
}

impl fmt::Display for NonFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message_at(&self.pointer()))
    }
}

impl std::error::Error for NonFinite {}

impl ser::Error for NonFinite {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(ProblemKind::Custom(msg.to_string()))
    }
}

/// Checks that `value` contains no NaN or infinite float, within the default [`Limits`].
///
/// # Errors
///
/// [`NonFinite`] with the pointer of the first offending float, a limit passed, or the
/// message of a failing `Serialize` impl.
pub fn check_finite<T: Serialize + ?Sized>(value: &T) -> Result<(), NonFinite> {
    measure(value, &Limits::default()).map(|_| ())
}

/// Walks `value` once: no non-finite float, no deeper than `limits` allow, no larger.
/// Returns a lower bound of the size of its JSON in bytes (exact when no string needs
/// an escape; floats within a few bytes).
///
/// # Errors
///
/// [`NonFinite`] for the first problem found; the walk stops there.
pub fn measure<T: Serialize + ?Sized>(value: &T, limits: &Limits) -> Result<usize, NonFinite> {
    let mut state = State { limits: *limits, bytes: 0 };
    value.serialize(Check { state: &mut state, depth: 0, calls: 0 })?;
    Ok(state.bytes)
}

/// [`measure`] for a value that is already JSON. It walks with an explicit stack, so
/// any depth is measured without recursion. Sizes are the same lower bound.
///
/// # Errors
///
/// [`NonFinite`] for the first limit passed.
pub fn measure_value(value: &Value, limits: &Limits) -> Result<usize, NonFinite> {
    enum Frame<'v> {
        Items(std::iter::Enumerate<std::slice::Iter<'v, Value>>),
        Fields(serde_json::map::Iter<'v>),
    }
    let mut state = State { limits: *limits, bytes: 0 };
    let mut path: Vec<String> = Vec::new();
    let mut frames: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(v) = next.take() {
            match v {
                Value::Array(items) => {
                    if frames.len() >= limits.max_depth {
                        return Err(too_deep(limits, &path));
                    }
                    state.add(2 + items.len().saturating_sub(1))?;
                    frames.push(Frame::Items(items.iter().enumerate()));
                }
                Value::Object(map) => {
                    if frames.len() >= limits.max_depth {
                        return Err(too_deep(limits, &path));
                    }
                    state.add(2 + map.len().saturating_sub(1))?;
                    frames.push(Frame::Fields(map.iter()));
                }
                Value::String(s) => state.string(s)?,
                Value::Number(n) => state.add(number_len(n))?,
                Value::Bool(b) => state.add(if *b { 4 } else { 5 })?,
                Value::Null => state.add(4)?,
            }
            continue;
        }
        // Pop the path token of the value just finished, unless it was the root.
        let Some(frame) = frames.last_mut() else { return Ok(state.bytes) };
        let step = match frame {
            Frame::Items(items) => items.next().map(|(i, v)| (i.to_string(), v, 0)),
            Frame::Fields(fields) => fields.next().map(|(k, v)| (k.clone(), v, k.len() + 3)),
        };
        if path.len() == frames.len() {
            path.pop();
        }
        match step {
            Some((token, v, key_bytes)) => {
                state.add(key_bytes)?;
                path.push(token);
                next = Some(v);
            }
            None => {
                frames.pop();
            }
        }
    }
}

fn too_deep(limits: &Limits, path: &[String]) -> NonFinite {
    let mut err = NonFinite::new(ProblemKind::TooDeep { limit: limits.max_depth });
    err.0.path = path.iter().rev().cloned().collect();
    err
}

fn number_len(n: &serde_json::Number) -> usize {
    if let Some(u) = n.as_u64() {
        digits(u)
    } else if let Some(i) = n.as_i64() {
        digits(i.unsigned_abs()) + 1
    } else {
        // The longest form serde_json writes for an f64.
        24
    }
}

fn digits(mut n: u64) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

struct State {
    limits: Limits,
    bytes: usize,
}

impl State {
    fn add(&mut self, n: usize) -> Result<(), NonFinite> {
        self.bytes = self.bytes.saturating_add(n);
        if self.bytes > self.limits.max_bytes {
            Err(NonFinite::new(ProblemKind::TooLarge { limit: self.limits.max_bytes }))
        } else {
            Ok(())
        }
    }

    /// A string counts its UTF-8 length and its quotes; escapes are not counted here
    /// (that would read every byte of every string), so the walk's size is a lower
    /// bound, and the pipeline checks the exact length of the JSON it writes as well.
    fn string(&mut self, s: &str) -> Result<(), NonFinite> {
        self.add(s.len().saturating_add(2))
    }
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

    #[derive(serde::Serialize)]
    enum Shape {
        Pair(u8, f64),
        Named { side: f64 },
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
        assert_eq!(check_finite(&Shape::Pair(1, f64::NAN)).unwrap_err().pointer(), "/Pair/1");
        assert_eq!(check_finite(&Shape::Named { side: f64::NAN }).unwrap_err().pointer(), "/Named/side");
    }

    /// The size estimate against serde_json's real output: exact for shapes without
    /// floats or escapes, a lower bound with escapes. The oracle is serde_json itself.
    #[test]
    fn sizes_match_serde_json_for_exact_shapes() {
        let values = [
            serde_json::json!({"a": [1, -22, 333], "b": "xy", "c": {"d": null, "e": true, "f": false}}),
            serde_json::json!([]),
            serde_json::json!({}),
            serde_json::json!([[[]], {"k": [{}]}]),
            serde_json::json!("plain"),
            serde_json::json!(u64::MAX),
            serde_json::json!(i64::MIN),
        ];
        for v in values {
            let real = serde_json::to_string(&v).unwrap().len();
            assert_eq!(measure_value(&v, &Limits::default()), Ok(real), "{v}");
        }
        let escaped = serde_json::json!({"b\"q": "x\n\u{1}y"});
        let real = serde_json::to_string(&escaped).unwrap().len();
        assert!(measure_value(&escaped, &Limits::default()).unwrap() < real);
        let typed = BTreeMap::from([("key1".to_owned(), vec![1_u32, 20]), ("k2".to_owned(), vec![])]);
        let real = serde_json::to_string(&typed).unwrap().len();
        let estimate = measure(&typed, &Limits::default()).unwrap();
        assert!(estimate >= real && estimate <= real + 8, "{estimate} vs {real}");
    }

    #[test]
    fn depth_is_counted_in_json_levels_for_both_walks() {
        let limits = Limits::default().with_max_depth(3);
        let ok = serde_json::json!([[[1]]]);
        let deep = serde_json::json!({"a": [[{"b": 1}]]});
        assert!(measure_value(&ok, &limits).is_ok());
        assert!(measure(&ok, &limits).is_ok());
        let err = measure_value(&deep, &limits).unwrap_err();
        assert_eq!((err.kind(), err.pointer().as_str()), (&ProblemKind::TooDeep { limit: 3 }, "/a/0/0"));
        let err = measure(&deep, &limits).unwrap_err();
        assert_eq!((err.kind(), err.pointer().as_str()), (&ProblemKind::TooDeep { limit: 3 }, "/a/0/0"));
        // An externally tagged struct variant is two levels: the tag object and the fields.
        assert!(measure(&vec![Shape::Named { side: 1.0 }], &limits.with_max_depth(2)).is_err());
        assert!(measure(&vec![Shape::Named { side: 1.0 }], &limits.with_max_depth(3)).is_ok());
    }

    #[test]
    fn size_limits_stop_the_walk() {
        let limits = Limits::default().with_max_bytes(10);
        assert!(measure(&"12345678", &limits).is_ok()); // 10 bytes with quotes
        let err = measure(&"123456789", &limits).unwrap_err();
        assert_eq!(err.kind(), &ProblemKind::TooLarge { limit: 10 });
        assert!(err.is_limit());
        assert!(measure_value(&serde_json::json!([1, 2, 3, 4, 5, 6]), &limits).is_err()); // 13 bytes
        assert!(measure_value(&serde_json::json!([1, 2, 3, 4]), &limits).is_ok());
        // 9 bytes
    }
}
