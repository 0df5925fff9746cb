//! The JSON-RPC messages as the relay reads them: the top level and the few fields it
//! judges, borrowed from the line and never decoded further; and how it writes what it
//! changes (a member spliced into the object as written, a response line of its own).

use std::borrow::Cow;

use contract_runtime::fused::{Miss, TextCheck};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The top level of a JSON-RPC message, undecoded.
#[derive(Deserialize)]
pub(super) struct Peek<'a> {
    #[serde(borrow, default)]
    pub(super) jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) params: Option<&'a RawValue>,
    /// Present when the message has the member, `null` too (an answer whose result is
    /// `null` is judged like any other).
    #[serde(borrow, default, deserialize_with = "present")]
    pub(super) result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) error: Option<&'a RawValue>,
}

/// A member that is there, whatever its value (`Option`'s own reading takes `null` for
/// absent).
fn present<'de: 'a, 'a, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<&'a RawValue>, D::Error> {
    <&'a RawValue>::deserialize(deserializer).map(Some)
}

/// The parameters of a `tools/call`, as far as the gate reads them.
#[derive(Deserialize)]
pub(super) struct CallParams<'a> {
    #[serde(borrow)]
    pub(super) name: Cow<'a, str>,
    #[serde(default)]
    pub(super) arguments: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct Cancelled<'a> {
    #[serde(rename = "requestId", borrow)]
    pub(super) request_id: &'a RawValue,
}

/// The fields of a request's parameters the proxy reads besides a call's.
#[derive(Deserialize, Default)]
pub(super) struct Params<'a> {
    #[serde(borrow, default)]
    pub(super) cursor: Option<&'a RawValue>,
    #[serde(rename = "taskId", default)]
    pub(super) task_id: Option<String>,
    #[serde(rename = "_meta", default)]
    pub(super) meta: Option<Map<String, Value>>,
}

/// A task as `tasks/get` and `notifications/tasks` carry it.
#[derive(Deserialize)]
pub(super) struct TaskPeek<'a> {
    #[serde(rename = "taskId", default)]
    pub(super) task_id: Option<String>,
    #[serde(borrow, default)]
    pub(super) status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) result: Option<&'a RawValue>,
}

/// The fields of a `tools/call` result the judge reads, the content left undecoded.
#[derive(Default)]
pub(super) struct Fields<'a> {
    pub(super) content: Option<&'a RawValue>,
    pub(super) structured_content: Option<Value>,
    pub(super) is_error: Option<Value>,
    pub(super) meta: Option<Value>,
    pub(super) result_type: Option<Value>,
    pub(super) task_id: Option<Value>,
    pub(super) task: Option<Value>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Object<'a> {
            type Value = Fields<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a result object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Fields<'a>, A::Error> {
                let mut fields = Fields::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "content" => fields.content = Some(map.next_value()?),
                        "structuredContent" => fields.structured_content = Some(map.next_value()?),
                        "isError" => fields.is_error = Some(map.next_value()?),
                        "_meta" => fields.meta = Some(map.next_value()?),
                        "resultType" => fields.result_type = Some(map.next_value()?),
                        "taskId" => fields.task_id = Some(map.next_value()?),
                        "task" => fields.task = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(fields)
            }
        }
        deserializer.deserialize_map(Object(std::marker::PhantomData))
    }
}

impl Fields<'_> {
    /// The id of the task a `tools/call` was answered with: a 2026-07-28 `resultType:
    /// "task"` result, or a 2025-11-25 `{"task": {"taskId"}}` one.
    pub(super) fn created_task(&self) -> Option<String> {
        if self.result_type.as_ref().is_some_and(|kind| kind == "task") {
            return self.task_id.as_ref().and_then(Value::as_str).map(str::to_owned);
        }
        if self.content.is_none() {
            return self.task.as_ref()?.get("taskId")?.as_str().map(str::to_owned);
        }
        None
    }

    /// The result as the judge sees it (an empty content array for its content), when
    /// its content is an array and its other fields have their types.
    pub(super) fn skeleton(self) -> Option<Value> {
        let content_is_array = self.content.is_some_and(|c| c.get().trim_start().starts_with('['));
        if !content_is_array
            || self.structured_content.as_ref().is_some_and(|v| !v.is_object())
            || self.is_error.as_ref().is_some_and(|v| !v.is_boolean())
        {
            return None;
        }
        let mut object = Map::new();
        object.insert("content".to_owned(), Value::Array(Vec::new()));
        for (key, value) in
            [("structuredContent", self.structured_content), ("isError", self.is_error), ("_meta", self.meta)]
        {
            if let Some(value) = value {
                object.insert(key.to_owned(), value);
            }
        }
        Some(Value::Object(object))
    }
}

/// A `tools/call` result read once for the fast path: the fields that decide whether it
/// passes, borrowed, and its `structuredContent` checked as it is read (never decoded).
/// A repeated key keeps its last value, as the `Value` path reads it.
#[derive(Default)]
pub(super) struct Quick<'a> {
    pub(super) content: Option<&'a RawValue>,
    pub(super) structured: Option<Result<(), Miss>>,
    pub(super) is_error: Option<&'a RawValue>,
    pub(super) result_type: Option<&'a RawValue>,
}

/// Reads a result object as [`Quick`], its `structuredContent` judged by the check.
pub(super) struct QuickSeed<'c>(pub(super) TextCheck<'c>);

impl<'de> serde::de::DeserializeSeed<'de> for QuickSeed<'_> {
    type Value = Quick<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Quick<'de>, D::Error> {
        deserializer.deserialize_map(QuickObject { check: self.0, _text: std::marker::PhantomData })
    }
}

impl Quick<'_> {
    /// Whether the result passes as it came: a complete result whose content is an
    /// array and whose `structuredContent` passed the check, or which says `isError: true`
    /// (an error is not judged). Anything else is for the `Value` path to decide.
    pub(super) fn passes(&self) -> bool {
        let complete = self.result_type.is_none_or(|kind| kind.get() == r#""complete""#);
        let content_is_array = self.content.is_some_and(|c| c.get().starts_with('['));
        if !(complete && content_is_array) {
            return false;
        }
        match self.is_error.map(RawValue::get) {
            Some("true") => true,
            None | Some("false" | "null") => matches!(self.structured, Some(Ok(()))),
            Some(_) => false,
        }
    }
}

/// The members of a result the fast path reads.
enum QuickKey {
    Content,
    Structured,
    IsError,
    ResultType,
    /// `_meta`, `taskId`, `task`: decoded as the `Value` path decodes them (a number out
    /// of range there fails both alike).
    Decoded,
    Other,
}

impl<'de> Deserialize<'de> for QuickKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = QuickKey;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<QuickKey, E> {
                Ok(match key {
                    "content" => QuickKey::Content,
                    "structuredContent" => QuickKey::Structured,
                    "isError" => QuickKey::IsError,
                    "resultType" => QuickKey::ResultType,
                    "_meta" | "taskId" | "task" => QuickKey::Decoded,
                    _ => QuickKey::Other,
                })
            }
        }
        deserializer.deserialize_str(Name)
    }
}

struct QuickObject<'c, 'a> {
    check: TextCheck<'c>,
    _text: std::marker::PhantomData<&'a ()>,
}

impl<'de: 'a, 'a> serde::de::Visitor<'de> for QuickObject<'_, 'a> {
    type Value = Quick<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a result object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Quick<'a>, A::Error> {
        let mut quick = Quick::default();
        while let Some(key) = map.next_key::<QuickKey>()? {
            match key {
                QuickKey::Content => quick.content = Some(map.next_value()?),
                QuickKey::Structured => quick.structured = Some(map.next_value_seed(self.check)?),
                QuickKey::IsError => quick.is_error = Some(map.next_value()?),
                QuickKey::ResultType => quick.result_type = Some(map.next_value()?),
                QuickKey::Decoded => {
                    map.next_value::<Value>()?;
                }
                QuickKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(quick)
    }
}

/// An object's members in the order written, their values undecoded.
pub(super) struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Object<'a> {
            type Value = Members<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Members<'a>, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    members.push((key, map.next_value()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Object(std::marker::PhantomData))
    }
}

/// `raw` (a JSON object) with the members named in `changes` replaced by their new JSON
/// text (`None`: left out), new ones added at the end; every other member as written.
pub(super) fn splice(raw: &str, changes: &[(&str, Option<String>)]) -> Result<String, serde_json::Error> {
    let Members(members) = serde_json::from_str(raw)?;
    let mut out = String::with_capacity(raw.len() + 64);
    out.push('{');
    let mut first = true;
    let mut member = |out: &mut String, key: &str, value: &str| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&serde_json::to_string(key).unwrap_or_default());
        out.push(':');
        out.push_str(value);
    };
    for (key, value) in &members {
        match changes.iter().find(|(name, _)| name == key) {
            Some((_, Some(new))) => member(&mut out, key, new),
            Some((_, None)) => {}
            None => member(&mut out, key, value.get()),
        }
    }
    for (name, new) in changes {
        if let Some(new) = new {
            if !members.iter().any(|(key, _)| key == name) {
                member(&mut out, name, new);
            }
        }
    }
    out.push('}');
    Ok(out)
}

/// A JSON-RPC response line with `id` (its JSON text) and `field` (`result` or `error`).
pub(super) fn response_line(id: &str, field: &str, body: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(id.len() + body.len() + 40);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    line.extend_from_slice(id.as_bytes());
    line.extend_from_slice(b",\"");
    line.extend_from_slice(field.as_bytes());
    line.extend_from_slice(b"\":");
    line.extend_from_slice(body.as_bytes());
    line.push(b'}');
    line
}

/// The `_meta` key a 2026-07-28 request names its revision with.
pub(super) const ENVELOPE_KEY: &str = "io.modelcontextprotocol/protocolVersion";

pub(super) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// Whether a protocol revision is 2026-07-28 or newer (revisions are dates).
pub(super) fn modern(version: &str) -> bool {
    version >= "2026-07-28"
}

pub(super) fn line_str(line: &[u8]) -> &str {
    std::str::from_utf8(line).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::{splice, Peek};

    #[test]
    fn a_null_result_is_a_result_and_an_absent_one_is_none() {
        let null = serde_json::from_str::<Peek<'_>>(r#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap();
        assert_eq!(null.result.map(RawValue::get), Some("null"));
        // Control: no `result` member at all.
        let absent = serde_json::from_str::<Peek<'_>>(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#).unwrap();
        assert!(absent.result.is_none() && absent.error.is_some());
    }

    #[test]
    fn a_splice_keeps_every_other_member_as_written() {
        let raw = r#"{"b":0.7,"a":1,"_meta":{"x":1.0}}"#;
        let out = splice(raw, &[("_meta", Some(r#"{"y":2}"#.to_owned())), ("c", Some("3".to_owned()))]).unwrap();
        assert_eq!(out, r#"{"b":0.7,"a":1,"_meta":{"y":2},"c":3}"#);
        // A member left out; control: no change is the same text.
        assert_eq!(splice(raw, &[("a", None)]).unwrap(), r#"{"b":0.7,"_meta":{"x":1.0}}"#);
        assert_eq!(splice(raw, &[]).unwrap(), raw);
    }
}
