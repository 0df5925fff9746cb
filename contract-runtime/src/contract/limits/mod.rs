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

mod serializer;
mod tally;

use std::fmt;

use serde::ser;
use serde::Serialize;
use serde_json::Value;

use tally::{number_len, too_deep, State};

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
/// use contract_runtime::limits::{measure, Limits};
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
    serializer::measure(value, limits)
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
