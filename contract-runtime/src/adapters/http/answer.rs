//! The way back: an SSE answer whose first message is the request's response or error
//! goes out as that one JSON object (`application/json`), anything else as the stream it
//! was, replayed byte for byte.

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{HeaderValue, CONTENT_TYPE};
use http::{Response, StatusCode};
use http_body::Frame;
use http_body_util::BodyExt;

use super::check::full;
use super::Body;

/// Whether a `Content-Type` names an SSE stream (`text/event-stream`).
fn is_event_stream(content_type: Option<&HeaderValue>) -> bool {
    content_type.and_then(|v| v.to_str().ok()).is_some_and(|v| {
        let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
        essence.trim().eq_ignore_ascii_case("text/event-stream")
    })
}

/// rmcp answers every request of a session with an SSE stream: a priming event (an
/// event id and a retry hint, no data) at once, then the messages, then the end of the
/// stream. For the common case, a request whose first message is its response, that is
/// two writes and a chunked body where one JSON object would do, and the MCP transport
/// lets the server choose ("the server MUST either return `Content-Type:
/// text/event-stream` … or `Content-Type: application/json`", every client must take
/// both; the POST was only accepted because it listed both). So this waits for the
/// stream's first message: a response or error becomes the whole body as
/// `application/json` (the priming event is dropped: there is no stream left to resume).
/// Anything else first — a notification or request the handler sends before its
/// answer, a keep-alive comment on a call that runs longer than rmcp's keep-alive
/// interval — keeps the stream: what was read is replayed unchanged and the rest
/// follows, so nothing is lost or reordered. Only successful SSE answers are touched.
pub(super) async fn prefer_json(response: Response<Body>) -> Response<Body> {
    if response.status() != StatusCode::OK || !is_event_stream(response.headers().get(CONTENT_TYPE)) {
        return response;
    }
    let (mut parts, mut body) = response.into_parts();
    let mut read: Vec<Frame<Bytes>> = Vec::new();
    let mut events: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(frame) => frame,
            Err(never) => match never {},
        };
        let Some(data) = frame.data_ref() else {
            read.push(frame);
            break;
        };
        events.extend_from_slice(data);
        read.push(frame);
        match first_message(&events) {
            Scan::More => {}
            Scan::Stream => break,
            Scan::Answer(json) => {
                parts.headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                parts.headers.remove(http::header::CACHE_CONTROL);
                parts.headers.remove("x-accel-buffering");
                return Response::from_parts(parts, full(Bytes::from(json)));
            }
        }
    }
    Response::from_parts(parts, Replay { read: read.into(), rest: body }.boxed())
}

/// What the SSE read so far says about the stream's first message.
#[derive(Debug, PartialEq)]
enum Scan {
    /// Only priming so far (or an unfinished event): read on.
    More,
    /// The first message is the request's response or error, alone: its JSON.
    Answer(Vec<u8>),
    /// Something that must reach the client as a stream.
    Stream,
}

/// Reads complete SSE events (each ended by a blank line) from the start of `events`.
/// An event with no data (rmcp's priming event: `id` and `retry` only) is skipped; the
/// first one with data decides; a comment (a keep-alive), an `event:` name other than
/// the default, or bytes after the answer keep the stream. rmcp writes `\n` line ends;
/// an event ended otherwise is never complete here, so the stream is kept.
fn first_message(events: &[u8]) -> Scan {
    let mut rest = events;
    loop {
        let Some(end) = memchr::memmem::find(rest, b"\n\n") else {
            return Scan::More;
        };
        let (event, after) = (&rest[..end], &rest[end + 2..]);
        let mut data: Vec<u8> = Vec::new();
        let mut lines = 0;
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', event).chain(std::iter::once(event.len())) {
            let line = &event[start..end];
            start = end + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let (field, value) = match memchr::memchr(b':', line) {
                Some(0) => return Scan::Stream,
                Some(colon) => {
                    let value = &line[colon + 1..];
                    (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (line, &b""[..]),
            };
            match field {
                b"data" => {
                    if lines > 0 {
                        data.push(b'\n');
                    }
                    data.extend_from_slice(value);
                    lines += 1;
                }
                b"event" if value != b"message" => return Scan::Stream,
                // `id` and `retry` matter only to a client that resumes a stream.
                _ => {}
            }
        }
        if data.is_empty() {
            rest = after;
            continue;
        }
        // rmcp writes each message as one `data:` line of compact JSON.
        return if lines == 1 && after.is_empty() && is_answer(&data) { Scan::Answer(data) } else { Scan::Stream };
    }
}

/// Whether a JSON-RPC message is a response or an error: decided by the first of
/// `method`, `result` or `error` among its top-level keys, without reading the rest (the
/// result, often kilobytes of escaped text, is most of the message). The message is
/// rmcp's serialization of one typed message, which never has two of the three; a
/// message that cannot be read this far (not an object, an escaped key) is not taken
/// for an answer, so its stream is kept.
fn is_answer(message: &[u8]) -> bool {
    use serde::de::{Error as _, IgnoredAny, MapAccess, Visitor};

    /// Stops the parse at the deciding key: serde_json checks that a map was read to
    /// its end, so the decision leaves through `decided` and the parse ends in an error.
    struct Decide<'a> {
        decided: &'a std::cell::Cell<Option<bool>>,
    }

    impl<'de> Visitor<'de> for Decide<'_> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON-RPC message")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<&str>()? {
                match key {
                    "method" => self.decided.set(Some(false)),
                    "result" | "error" => self.decided.set(Some(true)),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                }
                return Err(A::Error::custom("decided"));
            }
            Ok(())
        }
    }

    let decided = std::cell::Cell::new(None);
    let mut reader = serde_json::Deserializer::from_slice(message);
    let _ = serde::Deserializer::deserialize_map(&mut reader, Decide { decided: &decided });
    decided.get() == Some(true)
}

/// A body that yields the frames already read, then the rest of the original body.
struct Replay {
    read: std::collections::VecDeque<Frame<Bytes>>,
    rest: Body,
}

impl http_body::Body for Replay {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(frame) = self.read.pop_front() {
            return std::task::Poll::Ready(Some(Ok(frame)));
        }
        std::pin::Pin::new(&mut self.rest).poll_frame(cx)
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::Empty;

    use super::*;

    const PRIMING: &str = "data: \nid: 0/3\nretry: 3000\n\n";
    const ANSWER: &str = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":false}}"#;

    fn event(json: &str) -> String {
        format!("data: {json}\nid: 0/3\n\n")
    }

    #[test]
    fn an_answer_after_priming_becomes_the_json_body() {
        let stream = format!("{PRIMING}{}", event(ANSWER));
        assert_eq!(first_message(stream.as_bytes()), Scan::Answer(ANSWER.as_bytes().to_vec()));
        let error = r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"no"}}"#;
        assert_eq!(first_message(event(error).as_bytes()), Scan::Answer(error.as_bytes().to_vec()));
        let null = r#"{"jsonrpc":"2.0","id":1,"result":null}"#;
        assert_eq!(first_message(event(null).as_bytes()), Scan::Answer(null.as_bytes().to_vec()));
        // The same answer without the optional space after the colon.
        assert_eq!(first_message(format!("data:{ANSWER}\n\n").as_bytes()), Scan::Answer(ANSWER.as_bytes().to_vec()));
    }

    #[test]
    fn priming_or_an_unfinished_event_reads_on() {
        assert_eq!(first_message(PRIMING.as_bytes()), Scan::More);
        assert_eq!(first_message(b""), Scan::More);
        let half = format!("{PRIMING}{}", &event(ANSWER)[..20]);
        assert_eq!(first_message(half.as_bytes()), Scan::More);
        // The answer without its blank line is not complete yet.
        assert_eq!(first_message(format!("data: {ANSWER}\n").as_bytes()), Scan::More);
    }

    #[test]
    fn anything_but_a_lone_answer_first_keeps_the_stream() {
        let progress =
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
        assert_eq!(first_message(format!("{PRIMING}{}", event(progress)).as_bytes()), Scan::Stream);
        let sampling = r#"{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}}"#;
        assert_eq!(first_message(event(sampling).as_bytes()), Scan::Stream);
        // A keep-alive comment: a long call keeps its stream alive.
        assert_eq!(first_message(b":\n\n"), Scan::Stream);
        assert_eq!(first_message(format!("{PRIMING}: ping\n\n").as_bytes()), Scan::Stream);
        // A named event, more after the answer, data over two lines, data that is no message.
        assert_eq!(first_message(format!("event: custom\ndata: {ANSWER}\n\n").as_bytes()), Scan::Stream);
        assert_eq!(first_message(format!("{}{PRIMING}", event(ANSWER)).as_bytes()), Scan::Stream);
        assert_eq!(first_message(format!("data: {ANSWER}\ndata: {ANSWER}\n\n").as_bytes()), Scan::Stream);
        assert_eq!(first_message(b"data: not json\n\n"), Scan::Stream);
        assert_eq!(first_message(b"data: [1]\n\n"), Scan::Stream);
        assert_eq!(first_message(b"data: {\"jsonrpc\":\"2.0\",\"\\u006dethod\":\"x\",\"result\":1}\n\n"), Scan::Stream);
        assert_eq!(first_message(b"data: {\"jsonrpc\":\"2.0\"}\n\n"), Scan::Stream);
    }

    /// An SSE response as rmcp builds it: these events, one frame each.
    fn sse(events: &[&str]) -> Response<Body> {
        let frames = events.iter().map(|e| Frame::data(Bytes::copy_from_slice(e.as_bytes()))).collect();
        let mut response = Response::new(Replay { read: frames, rest: Empty::new().boxed() }.boxed());
        response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        response.headers_mut().insert("mcp-session-id", HeaderValue::from_static("s-1"));
        response
    }

    async fn body_of(response: Response<Body>) -> String {
        let bytes = response.into_body().collect().await.map(http_body_util::Collected::to_bytes);
        String::from_utf8(bytes.unwrap_or_else(|never| match never {}).to_vec()).expect("utf-8")
    }

    #[tokio::test]
    async fn prefer_json_answers_with_the_message_or_replays_the_whole_stream() {
        let answer = event(ANSWER);
        let json = prefer_json(sse(&[PRIMING, &answer])).await;
        assert_eq!(json.headers()[CONTENT_TYPE], "application/json");
        assert_eq!(json.headers()["mcp-session-id"], "s-1");
        assert_eq!(body_of(json).await, ANSWER);

        // A notification before the answer: the client gets every byte rmcp sent, in order.
        let progress =
            event(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#);
        let streamed = prefer_json(sse(&[PRIMING, &progress, &answer])).await;
        assert_eq!(streamed.headers()[CONTENT_TYPE], "text/event-stream");
        assert_eq!(body_of(streamed).await, format!("{PRIMING}{progress}{answer}"));
        // A stream that ends without a message is passed on as it was.
        assert_eq!(body_of(prefer_json(sse(&[PRIMING])).await).await, PRIMING);

        // Not an SSE answer (an error status, JSON already): untouched.
        let mut refused = sse(&[&answer]);
        *refused.status_mut() = StatusCode::NOT_FOUND;
        let refused = prefer_json(refused).await;
        assert_eq!(refused.status(), StatusCode::NOT_FOUND);
        assert_eq!(refused.headers()[CONTENT_TYPE], "text/event-stream");
        assert_eq!(body_of(refused).await, answer);
    }
}
