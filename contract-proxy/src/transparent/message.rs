//! The JSON-RPC messages as the relay reads them: the top level and the few fields it
//! judges, borrowed from the line and never decoded further; and how it writes what it
//! changes (a member spliced into the object as written, a response line of its own).

use std::borrow::Cow;

use contract_runtime::scan::{Scan, Stop};
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

/// A client's line as the relay reads it: [`Peek`]'s members, each value as written.
/// It is read where it lies ([`Scan`]); what the scan leaves (text that is not UTF-8, an
/// escaped or repeated key, a member of another type, deep nesting, anything not JSON)
/// `Peek` reads, and decides as it always did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Request<'a> {
    pub(super) jsonrpc: Option<Cow<'a, str>>,
    pub(super) id: Option<&'a str>,
    pub(super) method: Option<Cow<'a, str>>,
    pub(super) params: Option<&'a str>,
    /// Present when the message has the member, `null` too.
    pub(super) result: Option<&'a str>,
    pub(super) error: Option<&'a str>,
    /// The parameters read as a `tools/call`'s, when the scan read them so (whatever the
    /// method): `None` says nothing, [`CallParams::read`] decides.
    pub(super) call: Option<CallParams<'a>>,
    /// The text of the parameters' `_meta`, when the scan read it (the last one of a
    /// repeated member).
    pub(super) meta: Option<&'a str>,
}

impl<'a> From<Peek<'a>> for Request<'a> {
    fn from(peek: Peek<'a>) -> Self {
        Self {
            jsonrpc: peek.jsonrpc,
            id: peek.id.map(RawValue::get),
            method: peek.method,
            params: peek.params.map(RawValue::get),
            result: peek.result.map(RawValue::get),
            error: peek.error.map(RawValue::get),
            call: None,
            meta: None,
        }
    }
}

impl<'a> Request<'a> {
    /// Reads `line`; `known_meta` is a `_meta` text read before, taken whole where the
    /// parameters' `_meta` is the same bytes (a 2026-07-28 client sends the same one on
    /// every request).
    pub(super) fn read(line: &'a [u8], known_meta: &str) -> Result<Self, serde_json::Error> {
        if let Some(request) = std::str::from_utf8(line).ok().and_then(|text| Self::scan(text, known_meta).ok()) {
            return Ok(request);
        }
        serde_json::from_slice::<Peek<'a>>(line).map(Self::from)
    }

    fn scan(text: &'a str, known_meta: &str) -> Result<Self, Stop> {
        let mut request = Self::default();
        let mut seen = 0u8;
        let mut scan = Scan::new(text);
        scan.members(|scan, key| {
            let bit = match key {
                "jsonrpc" => 1,
                "id" => 2,
                "method" => 4,
                "params" => 8,
                "result" => 16,
                "error" => 32,
                _ => return scan.value().map(drop),
            };
            // `Peek` refuses a repeated member.
            if seen & bit != 0 {
                return Err(Stop);
            }
            seen |= bit;
            if bit == 8 {
                // Read as a call's while scanned: a call's parameters are read once.
                let start = scan.peek().map(|_| scan.position()).ok_or(Stop)?;
                (request.call, request.meta) = CallParams::members(scan, known_meta)?;
                request.params = not_null(&text[start..scan.position()]);
                return Ok(());
            }
            let value = scan.value()?;
            match bit {
                1 => request.jsonrpc = optional_str(value)?,
                2 => request.id = not_null(value),
                4 => request.method = optional_str(value)?,
                16 => request.result = Some(value),
                _ => request.error = not_null(value),
            }
            Ok(())
        })?;
        scan.end()?;
        Ok(request)
    }
}

/// A member read as `Option<&RawValue>` reads it: `null` is none.
fn not_null(value: &str) -> Option<&str> {
    Some(value).filter(|value| *value != "null")
}

/// A member read as `Option<Cow<str>>` reads it: `null` is none, escapes are decoded, and
/// any other type is left to serde_json.
fn optional_str(value: &str) -> Result<Option<Cow<'_, str>>, Stop> {
    if value == "null" {
        return Ok(None);
    }
    let inner = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).ok_or(Stop)?;
    if !inner.contains('\\') {
        return Ok(Some(Cow::Borrowed(inner)));
    }
    serde_json::from_str::<Cow<'_, str>>(value).map(Some).map_err(|_| Stop)
}

/// The parameters of a `tools/call`, as far as the gate reads them: the tool's name and
/// its arguments as written (`None` when absent or `null`). Read like [`Request`]: by a
/// [`Scan`], and what it leaves by serde_json, as the derived reading does.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct CallParams<'a> {
    pub(super) name: Cow<'a, str>,
    pub(super) arguments: Option<&'a str>,
}

impl<'a> CallParams<'a> {
    pub(super) fn read(params: &'a str) -> Option<Self> {
        #[derive(Deserialize)]
        struct Derived<'a> {
            #[serde(borrow)]
            name: Cow<'a, str>,
            #[serde(borrow, default)]
            arguments: Option<&'a RawValue>,
        }
        if let Ok(call) = Self::scan(params) {
            return Some(call);
        }
        let derived = serde_json::from_str::<Derived<'a>>(params).ok()?;
        Some(Self { name: derived.name, arguments: derived.arguments.map(RawValue::get) })
    }

    fn scan(params: &'a str) -> Result<Self, Stop> {
        let mut scan = Scan::new(params);
        let (call, _) = Self::members(&mut scan, "")?;
        scan.end()?;
        call.ok_or(Stop)
    }

    /// Reads the value at `scan` (any value: it stops only where the scan does) as a
    /// call's parameters: `None` unless it is an object with a string `name`, and
    /// neither `name` nor `arguments` repeated; and the text of its `_meta` (taken whole
    /// when it is `known_meta`'s bytes).
    fn members(scan: &mut Scan<'a>, known_meta: &str) -> Result<(Option<Self>, Option<&'a str>), Stop> {
        if scan.peek() != Some(b'{') {
            return scan.value().map(|_| (None, None));
        }
        let (mut name, mut arguments, mut seen, mut readable, mut meta) = (None, None, 0u8, true, None);
        scan.members(|scan, key| {
            let bit = match key {
                "name" => 1,
                "arguments" => 2,
                "_meta" => {
                    meta = Some(match scan.known(known_meta) {
                        Some(meta) => meta,
                        None => scan.value()?,
                    });
                    return Ok(());
                }
                _ => return scan.value().map(drop),
            };
            let value = scan.value()?;
            readable &= seen & bit == 0;
            seen |= bit;
            if bit == 1 {
                name = optional_str(value).ok().flatten();
                readable &= name.is_some();
            } else {
                arguments = not_null(value);
            }
            Ok(())
        })?;
        Ok((name.filter(|_| readable).map(|name| Self { name, arguments }), meta))
    }
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

/// Whether a message's text holds the 2026-07-28 envelope's key (the searcher is built
/// once).
pub(super) fn holds_envelope(text: &str) -> bool {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(ENVELOPE_KEY));
    FINDER.find(text.as_bytes()).is_some()
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

    use super::{splice, CallParams, Members, Peek, Request};

    #[test]
    fn a_null_result_is_a_result_and_an_absent_one_is_none() {
        let null = serde_json::from_str::<Peek<'_>>(r#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap();
        assert_eq!(null.result.map(RawValue::get), Some("null"));
        // Control: no `result` member at all.
        let absent = serde_json::from_str::<Peek<'_>>(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#).unwrap();
        assert!(absent.result.is_none() && absent.error.is_some());
    }

    /// Client lines of every shape `Peek` reads or refuses: escaped, repeated and
    /// unknown members, `null`s, other types, arrays, deep nesting, trailing text.
    const LINES: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"t-"}}}"#,
        r#" { "params" : { "arguments" : null , "name" : "s\u0065arch" } , "method" : "tools\/call" , "id" : "a\"b" , "jsonrpc" : "2.0" } "#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":null}"#,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"r"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"s","_meta":{"a":1},"_meta":{"b":2}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"s","name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":7}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"\u006eame":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":["s",{}]}"#,
        r#"{"jsonrpc":"2.0","id":8,"id":9,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","\u0069d":9,"method":"ping"}"#,
        r#"{"jsonrpc":2,"id":10,"method":"ping"}"#,
        r#"{"jsonrpc":"\ud800","id":10,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"s","arguments":{"n":1e400}}}"#,
        r#"["2.0",12,"ping"]"#,
        r#"{"jsonrpc":"2.0","id":13,"method":"ping"} x"#,
        r#"{"jsonrpc":"2.0","id":14,"method":"ping","extra":[{"deep":[[[[[]]]]]}]}"#,
        r#"{"jsonrpc":"2.0","id":15,"method":"ping",}"#,
        "[]",
        "7",
        "",
    ];

    /// `Peek`'s reading, the oracle.
    fn peeked(line: &str) -> Option<Request<'_>> {
        serde_json::from_str::<Peek<'_>>(line).ok().map(Request::from)
    }

    /// The derived reading of a call's parameters, the oracle.
    fn derived(params: &str) -> Option<(String, Option<String>)> {
        #[derive(serde::Deserialize)]
        struct Call {
            name: String,
            #[serde(default)]
            arguments: Option<Box<RawValue>>,
        }
        serde_json::from_str::<Call>(params).ok().map(|call| (call.name, call.arguments.map(|a| a.get().to_owned())))
    }

    #[test]
    fn a_client_line_is_read_as_peek_reads_it() {
        let mut lines: Vec<String> = LINES.iter().map(|line| (*line).to_owned()).collect();
        // Each line cut short and with a byte put in, at every place.
        for line in LINES {
            for at in (0..line.len()).filter(|&at| line.is_char_boundary(at)) {
                lines.push(line[..at].to_owned());
                for byte in ["\"", "}", ",", "\\", "\u{1}", " "] {
                    lines.push(format!("{}{byte}{}", &line[..at], &line[at..]));
                }
            }
        }
        let mut scanned = 0;
        // A `_meta` read before, taken whole where a line has the same bytes.
        let known = [r#"{"a":1}"#, r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#];
        for (line, known_meta) in lines.iter().flat_map(|line| ["", known[0], known[1]].map(|k| (line, k))) {
            let read = Request::read(line.as_bytes(), known_meta).ok();
            let oracle = peeked(line);
            let scan = Request::scan(line, known_meta).ok();
            scanned += usize::from(scan.is_some());
            // What the scan reads is what `Peek` reads; the scan's parameters, read as a
            // call's, are what the derived reading makes of them.
            if let Some(scan) = &scan {
                let call = scan.call.as_ref().map(|c| (c.name.to_string(), c.arguments.map(str::to_owned)));
                if call.is_some() {
                    assert_eq!(call, scan.params.and_then(derived), "{line}");
                }
                // The `_meta` text is the parameters' last `_meta` member as written.
                let members = scan.params.and_then(|p| serde_json::from_str::<Members<'_>>(p).ok());
                let last_meta =
                    members.and_then(|m| m.0.iter().rev().find(|(k, _)| k == "_meta").map(|(_, v)| v.get()));
                if scan.params.is_some_and(|p| p.starts_with('{')) {
                    assert_eq!(scan.meta, last_meta, "{line}");
                }
                assert_eq!(
                    Some(Request { call: None, meta: None, ..Request::scan(line, known_meta).unwrap() }),
                    oracle,
                    "{line}"
                );
            }
            let read = read.map(|r| Request { call: None, meta: None, ..r });
            assert_eq!(read, oracle, "{line}");
        }
        // Control: most lines took the scan, and the rest were still read alike.
        assert!(scanned > lines.len() / 2, "{scanned} of {} lines, three times each", lines.len());
    }

    #[test]
    fn call_parameters_are_read_as_the_derived_reading_reads_them() {
        for params in [
            r#"{"name":"search","arguments":{"q":"t-"}}"#,
            r#"{"arguments":null,"name":"s\u0065arch","_meta":{"progressToken":1}}"#,
            r#"{"name":"s"}"#,
            r#"{"name":"s","name":"t"}"#,
            r#"{"name":null}"#,
            r#"{"name":7}"#,
            r#"{"\u006eame":"s"}"#,
            r#"["s",{"a":1}]"#,
            r#"{"name":"s","arguments":[1]}"#,
            r#"{"name":"s","arguments":{"n":1e400}}"#,
            "{}",
            "null",
        ] {
            let ours = CallParams::read(params).map(|c| (c.name.into_owned(), c.arguments.map(str::to_owned)));
            assert_eq!(ours, derived(params), "{params}");
        }
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
