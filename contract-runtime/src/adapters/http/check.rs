//! What the front answers itself: the checks of one POST body as a JSON-RPC 2.0
//! message MCP accepts, and JSON-RPC error objects as whole HTTP responses.

use bytes::Bytes;
use http::header::{HeaderValue, CONTENT_TYPE};
use http::{Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId};
use serde::Deserialize as _;
use serde_json::{json, Value};

use super::{Body, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR};

/// Whether a `Content-Type` names JSON (`application/json`, parameters allowed).
pub(super) fn is_json(content_type: Option<&HeaderValue>) -> bool {
    content_type.and_then(|v| v.to_str().ok()).is_some_and(|v| {
        let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
        essence.trim().eq_ignore_ascii_case("application/json")
    })
}

/// Why a body is refused, in JSON-RPC terms.
#[derive(Debug, PartialEq)]
pub(super) struct Rejected {
    code: i64,
    message: String,
    /// The request's id when it had a usable one, so the client can match the error.
    id: Option<Value>,
}

impl Rejected {
    pub(super) fn into_response(self) -> Response<Body> {
        error_response(StatusCode::BAD_REQUEST, self.code, &self.message, self.id, None)
    }
}

/// Checks one POST body as a JSON-RPC 2.0 message MCP accepts (no batches since
/// 2025-06-18): [`envelope`], then [`typed`]. Returns the id of an `initialize`
/// request, `None` for any other message. The server runs the two halves apart (see
/// the gate); the tests check the whole.
#[cfg(test)]
fn check(bytes: &[u8]) -> Result<Option<Value>, Rejected> {
    typed(&envelope(bytes)?)
}

/// The checks of one body that need only its JSON: it parses, is one object, and its
/// `jsonrpc`, `id`, `method` and `params` have the types JSON-RPC 2.0 demands.
pub(super) fn envelope(bytes: &[u8]) -> Result<Value, Rejected> {
    let reject = |code, message: String, id: Option<&Value>| Rejected { code, message, id: id.cloned() };
    // serde_json stops at 128 levels of nesting, so a deep body costs no stack.
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|err| reject(PARSE_ERROR, format!("Parse error: the body is not JSON ({err})"), None))?;
    let object = match &value {
        Value::Object(object) => object,
        Value::Array(_) => {
            let message = "Invalid Request: batch arrays are not supported (MCP removed JSON-RPC batching in \
                           2025-06-18); send one message per request";
            return Err(reject(INVALID_REQUEST, message.to_owned(), None));
        }
        _ => return Err(reject(INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object".to_owned(), None)),
    };
    let id = object.get("id");
    if let Some(id) = id
        && RequestId::deserialize(id).is_err()
    {
        let message = "Invalid Request: `id` must be a string or an integer (not null, a fraction, an object, \
                           an array or a boolean)";
        return Err(reject(INVALID_REQUEST, message.to_owned(), None));
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(reject(INVALID_REQUEST, "Invalid Request: `jsonrpc` must be \"2.0\"".to_owned(), id));
    }
    match object.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return Err(reject(INVALID_REQUEST, "Invalid Request: `method` must be a string".to_owned(), id)),
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {}
        None => return Err(reject(INVALID_REQUEST, "Invalid Request: `method` is missing".to_owned(), id)),
    }
    if object.get("params").is_some_and(|p| !p.is_object() && !p.is_array()) {
        let message = "Invalid Request: `params` must be an object or an array".to_owned();
        return Err(reject(INVALID_REQUEST, message, id));
    }
    Ok(value)
}

/// The id of a body that [`envelope`] passed when it is an `initialize` request: the
/// one message that opens a session and so counts against the cap.
pub(super) fn initialize_id(value: &Value) -> Option<Value> {
    if value.get("method").and_then(Value::as_str) == Some("initialize") {
        value.get("id").cloned()
    } else {
        None
    }
}

/// The rest of the check: the body read as rmcp reads it (`ClientJsonRpcMessage`).
/// That costs more than all of [`envelope`] and rmcp does it again, so the server runs
/// it only when rmcp could not read a body (its 415) to name the JSON-RPC error.
pub(super) fn typed(value: &Value) -> Result<Option<Value>, Rejected> {
    let id = value.get("id");
    let reject = |code, message: String| Rejected { code, message, id: id.cloned() };
    match ClientJsonRpcMessage::deserialize(value) {
        Ok(JsonRpcMessage::Request(request)) if matches!(request.request, ClientRequest::InitializeRequest(_)) => {
            Ok(id.cloned())
        }
        Ok(_) => Ok(None),
        // rmcp reads an unknown method (and a known one whose parameters do not fit)
        // as a custom request and answers it itself; what fails here is positional
        // (array) parameters, which no MCP method takes, or a malformed response.
        Err(err) if value.get("method").is_some() => {
            Err(reject(INVALID_PARAMS, format!("Invalid params: MCP methods take named parameters ({err})")))
        }
        Err(err) => Err(reject(INVALID_REQUEST, format!("Invalid Request: {err}"))),
    }
}

pub(super) fn full(bytes: Bytes) -> Body {
    http_body_util::BodyExt::boxed(http_body_util::Full::new(bytes))
}

pub(super) fn too_large(max: usize) -> Response<Body> {
    let message = format!("Invalid Request: the body exceeds {max} bytes");
    rejection(StatusCode::PAYLOAD_TOO_LARGE, INVALID_REQUEST, &message, None)
}

pub(super) fn rejection(status: StatusCode, code: i64, message: &str, id: Option<Value>) -> Response<Body> {
    error_response(status, code, message, id, None)
}

/// A JSON-RPC error object as the whole HTTP response.
pub(super) fn error_response(
    status: StatusCode,
    code: i64,
    message: &str,
    id: Option<Value>,
    data: Option<Value>,
) -> Response<Body> {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({ "jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "error": error });
    let mut response = Response::new(full(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> Option<i64> {
        check(body.as_bytes()).err().map(|r| r.code)
    }

    #[test]
    fn well_formed_messages_pass_and_initialize_is_recognised() {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert_eq!(check(init.as_bytes()), Ok(Some(json!(1))));
        let call = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{}}}"#;
        assert_eq!(check(call.as_bytes()), Ok(None));
        assert_eq!(check(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), Ok(None));
        assert_eq!(check(br#"{"jsonrpc":"2.0","id":3,"method":"vendor/probe","params":{}}"#), Ok(None));
        // A known method with parameters that do not fit is rmcp's to answer.
        assert_eq!(check(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}"#), Ok(None));
        assert_eq!(check(br#"{"jsonrpc":"2.0","id":5,"result":{}}"#), Ok(None));
    }

    #[test]
    fn the_cheap_initialize_test_agrees_with_rmcps_reading() {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let others = [
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        ];
        for body in std::iter::once(init).chain(others) {
            let value = envelope(body.as_bytes()).expect("well-formed");
            assert_eq!(initialize_id(&value), typed(&value).expect("rmcp reads it"), "{body}");
        }
        assert_eq!(initialize_id(&envelope(init.as_bytes()).expect("well-formed")), Some(json!(1)));
    }

    #[test]
    fn malformed_messages_get_the_json_rpc_code() {
        assert_eq!(code("{not json"), Some(PARSE_ERROR));
        assert_eq!(code(""), Some(PARSE_ERROR));
        assert_eq!(code(&format!("{}{}", "[".repeat(200), "]".repeat(200))), Some(PARSE_ERROR));
        assert_eq!(code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), Some(INVALID_REQUEST));
        assert_eq!(code("[]"), Some(INVALID_REQUEST));
        assert_eq!(code("42"), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"id":1,"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":7}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"oops"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#), Some(INVALID_PARAMS));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"error":"no"}"#), Some(INVALID_REQUEST));
    }

    #[test]
    fn the_id_is_echoed_only_when_it_is_usable() {
        let rejected = check(br#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#).unwrap_err();
        assert_eq!(rejected.id, Some(json!(9)));
        let rejected = check(br#"{"jsonrpc":"2.0","id":[9],"method":"ping"}"#).unwrap_err();
        assert_eq!(rejected.id, None);
    }
}
