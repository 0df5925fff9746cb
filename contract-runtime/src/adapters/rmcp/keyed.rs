//! A `tools/call` read by its keys, shared by the stdio lane and the HTTP front.
//!
//! rmcp reads a client message into its type through untagged enums, which buffer the
//! whole message and try it against variant after variant: about 36,000 instructions for
//! a small `tools/call`. Read by its keys, the same request costs about 6,000, and comes
//! out as the very value rmcp's reader makes (the stdio lane's unit tests hold it to that
//! on a corpus of requests).

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, JsonRpcRequest, JsonRpcVersion2_0,
    RequestId,
};
use serde::Deserialize;

/// Reads a message (a stdio line, an HTTP body) by its keys when it is a plain
/// `tools/call` (`jsonrpc`, `id`, `method` and `params`, nothing else): the message
/// rmcp's own reader makes of it, at about a sixth of the cost. `None`: the message is
/// something else, for rmcp's reader. `serve_stdio` (feature `stdio`) and the HTTP
/// front (feature `http`) read calls this way.
///
/// # Examples
///
/// ```
/// use contract_runtime::rmcp::read_tools_call;
/// use rmcp::model::ClientJsonRpcMessage;
///
/// let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"t-"}}}"#;
/// let ours = read_tools_call(line).unwrap();
/// let rmcps: ClientJsonRpcMessage = serde_json::from_slice(line).unwrap();
/// assert_eq!(serde_json::to_value(ours).unwrap(), serde_json::to_value(rmcps).unwrap());
/// // Anything else is left to rmcp.
/// assert!(read_tools_call(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).is_none());
/// ```
#[must_use]
pub fn read_tools_call(message: &[u8]) -> Option<ClientJsonRpcMessage> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Top<'a> {
        #[allow(dead_code)]
        jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
        #[serde(borrow)]
        method: Cow<'a, str>,
        params: CallToolRequestParams,
    }
    memchr::memmem::find(message, b"\"tools/call\"")?;
    let top: Top<'_> = serde_json::from_slice(message).ok()?;
    if top.method != "tools/call" {
        return None;
    }
    let mut params = top.params;
    // rmcp keeps a request's `_meta` in its extensions, not in the parameters.
    let meta = params.meta.take();
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions.insert(meta);
    }
    Some(ClientJsonRpcMessage::Request(JsonRpcRequest::new(top.id, ClientRequest::CallToolRequest(request))))
}
