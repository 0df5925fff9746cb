//! The `tools/call` lane of [`serve_stdio`](super::serve_stdio): a request line that is a
//! plain `tools/call` is read by its keys into rmcp's own request type, and every other
//! line goes to rmcp's stdio transport as it came, in order.
//!
//! rmcp reads each line into its message type through untagged enums, which buffer the
//! whole message and try it against variant after variant: about 36,000 instructions
//! for a one-line `tools/call`, a third of a small call's cost. Read by its keys, the
//! same request costs about 6,000. The lane gives rmcp's service the very value rmcp's
//! reader would have made (the unit tests hold it to that on a corpus of requests), so
//! nothing after the transport can tell the two apart.
//!
//! Order holds: the reader hands rmcp's transport one whole line at a time, and a call it
//! reads itself is released only when that transport asks for more, that is once every
//! line before it has been read, decoded and delivered. Whatever the lane does not
//! recognise (another method, a member it does not expect, a byte-order mark, a line
//! longer than its buffer, text that is not JSON) is rmcp's, with rmcp's handling of it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::model::ClientJsonRpcMessage;
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

use super::read_tools_call;

/// The longest line the lane reads itself; longer ones pass to rmcp as they come.
const BUFFER: usize = 64 * 1024;

/// The client's stream as rmcp's transport reads it, less the calls the lane reads.
pub(super) struct Tap<R> {
    read: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// Inside a line too long for the buffer, passed on as it comes.
    passing: bool,
    calls: mpsc::UnboundedSender<ClientJsonRpcMessage>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let tap = self.get_mut();
        loop {
            let window = &tap.buf[tap.start..tap.end];
            let newline = memchr::memchr(b'\n', window);
            if !window.is_empty() && (tap.passing || newline.is_some()) {
                let line_end = newline.map_or(window.len(), |at| at + 1);
                if !tap.passing {
                    let line = &window[..line_end - 1];
                    if let Some(call) = read_tools_call(line.strip_suffix(b"\r").unwrap_or(line)) {
                        tap.start += line_end;
                        #[cfg(test)]
                        tests::READ_BY_KEYS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if tap.calls.send(call).is_ok() {
                            // Released now that everything before it is delivered; the
                            // transport reads on once the call has gone up.
                            return Poll::Pending;
                        }
                        continue;
                    }
                }
                let n = line_end.min(out.remaining());
                out.put_slice(&window[..n]);
                tap.start += n;
                // Part of a line handed on: the rest of it is passed on as well.
                tap.passing = n < line_end || newline.is_none();
                return Poll::Ready(Ok(()));
            }
            if tap.start > 0 {
                tap.buf.copy_within(tap.start..tap.end, 0);
                tap.end -= tap.start;
                tap.start = 0;
            }
            if tap.end == tap.buf.len() {
                // A line longer than the buffer: rmcp's to read, in pieces.
                tap.passing = true;
                continue;
            }
            let mut fill = ReadBuf::new(&mut tap.buf[tap.end..]);
            match Pin::new(&mut tap.read).poll_read(cx, &mut fill) {
                Poll::Ready(Ok(())) => {
                    let n = fill.filled().len();
                    if n == 0 {
                        // The end: what is left (a last line without its newline) goes on.
                        let n = (tap.end - tap.start).min(out.remaining());
                        out.put_slice(&tap.buf[tap.start..tap.start + n]);
                        tap.start += n;
                        return Poll::Ready(Ok(()));
                    }
                    tap.end += n;
                }
                other => return other,
            }
        }
    }
}

/// rmcp's stdio transport with the `tools/call` lane in front of its reader.
pub(super) struct Lane<R: AsyncRead + Unpin, W: AsyncWrite> {
    inner: AsyncRwTransport<RoleServer, Tap<R>, W>,
    calls: mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
}

impl<R, W> Lane<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(super) fn new(read: R, write: W) -> Self {
        let (tx, calls) = mpsc::unbounded_channel();
        let tap = Tap { read, buf: vec![0; BUFFER].into_boxed_slice(), start: 0, end: 0, passing: false, calls: tx };
        Self { inner: AsyncRwTransport::new(tap, write), calls }
    }
}

impl<R, W> Transport<RoleServer> for Lane<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let calls = &mut self.calls;
        let mut lines = std::pin::pin!(self.inner.receive());
        std::future::poll_fn(|cx| {
            if let Poll::Ready(Some(call)) = calls.poll_recv(cx) {
                return Poll::Ready(Some(call));
            }
            lines.as_mut().poll(cx)
        })
        .await
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, RequestMetaObject};
    use rmcp::service::RoleServer;
    use rmcp::transport::async_rw::AsyncRwTransport;
    use rmcp::transport::Transport;
    use serde_json::Value;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::Lane;
    use crate::rmcp::read_tools_call;

    /// Calls the tap read by their keys, in every test.
    pub(super) static READ_BY_KEYS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// A client's stream of every kind of line: calls the lane reads, calls it leaves
    /// (escaped, with a byte-order mark, longer than its buffer), other requests and
    /// notifications, text that is not JSON, JSON that is no message, blank lines, CRLF,
    /// and a last line cut off by the end of the stream.
    fn stream() -> Vec<u8> {
        let call = |id: u32, extra: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"search","arguments":{{"q":"t-{id}"{extra}}}}}}}"#
            )
        };
        let big = format!(r#","pad":"{}""#, "x".repeat(70_000));
        let lines = [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            call(1, ""),
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#.to_owned(),
            call(3, "") + "\r",
            String::new(),
            "not json at all".to_owned(),
            call(4, ""),
            r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method"}"#.to_owned(),
            r#"{"hello":"world"}"#.to_owned(),
            call(6, ""),
            format!("\u{feff}{}", call(7, "")),
            call(8, &big),
            r#"{"jsonrpc":"2.0","method":"notifications/not_a_standard_one"}"#.to_owned(),
            call(9, "").replace("tools/call", r"tools\/call"),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#.to_owned(),
            call(10, ""),
        ];
        let mut bytes = lines.join("\n").into_bytes();
        bytes.push(b'\n');
        bytes.extend_from_slice(call(11, "").as_bytes());
        bytes
    }

    /// What a transport delivers from `input` written in pieces of `piece` bytes, and
    /// what it writes back.
    async fn delivered<T: Transport<RoleServer>>(
        make: impl FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream) -> T,
        input: Vec<u8>,
        piece: usize,
    ) -> (Vec<Value>, Vec<u8>) {
        let (mut client, server_read) = tokio::io::duplex(1 << 20);
        let (server_write, mut back) = tokio::io::duplex(1 << 20);
        let mut transport = make(server_read, server_write);
        let writer = tokio::spawn(async move {
            for chunk in input.chunks(piece) {
                client.write_all(chunk).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        let mut messages = Vec::new();
        while let Some(message) = transport.receive().await {
            messages.push(serde_json::to_value(&message).unwrap());
        }
        writer.await.unwrap();
        transport.close().await.unwrap();
        drop(transport);
        let mut written = Vec::new();
        back.read_to_end(&mut written).await.unwrap();
        (messages, written)
    }

    /// rmcp's own stdio transport is the oracle: the lane delivers the same messages in
    /// the same order and writes the same answers, whatever the pieces the stream
    /// arrives in.
    #[tokio::test]
    async fn the_lane_delivers_what_rmcps_transport_delivers_in_its_order() {
        let input = stream();
        for piece in [input.len(), 4096, 7, 2] {
            let theirs = delivered(AsyncRwTransport::<RoleServer, _, _>::new, input.clone(), piece).await;
            let before = READ_BY_KEYS.load(std::sync::atomic::Ordering::Relaxed);
            let ours = delivered(Lane::new, input.clone(), piece).await;
            // The lane read the plain calls itself (1, 3, 4, 6 and 10).
            assert!(READ_BY_KEYS.load(std::sync::atomic::Ordering::Relaxed) - before >= 5, "pieces of {piece}");
            assert_eq!(ours.0, theirs.0, "pieces of {piece}");
            assert_eq!(ours.1, theirs.1, "pieces of {piece}");
            // Control: the stream holds what the comparison needs to see.
            let ids: Vec<&Value> = theirs.0.iter().filter_map(|m| m.get("id")).collect();
            assert!(ids.len() >= 9, "{ids:?}");
            assert!(!theirs.1.is_empty(), "an answer to the message rmcp refuses");
        }
    }

    /// What the lane reads of a request line is what rmcp's reader reads of it, member
    /// for member, `_meta` included; and it leaves to rmcp every line it does not read
    /// alike.
    #[test]
    fn a_call_read_by_its_keys_is_the_one_rmcp_reads() {
        let read = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"t-","n":1}}}"#,
            r#"{"method":"tools/call","params":{"arguments":{"n":[1,{"a":null}]},"name":"s"},"id":"x-1","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"s","_meta":{"progressToken":3,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"n\u00e4me","arguments":{},"task":{"ttl":1000}}}"#,
            " {\"jsonrpc\" : \"2.0\" , \"id\" : 9 , \"method\" : \"tools/call\" , \"params\" : {\"name\":\"s\"}} ",
        ];
        // Ids and arguments at the edges of their types.
        let edges = ["-1", "0", "18446744073709551615", "9223372036854775807", r#""""#, r#""\u00e9""#];
        let arguments = [r#"{"f":1.0,"e":1e300,"z":-0.0,"big":18446744073709551615,"neg":-9223372036854775808}"#];
        let edge_lines: Vec<String> = edges
            .iter()
            .map(|id| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"s","arguments":{}}}}}"#,
                    arguments[0]
                )
            })
            .collect();
        // An id rmcp's type cannot hold is left to rmcp's reader, which says what it says.
        let edge_read: Vec<&str> =
            edge_lines.iter().map(String::as_str).filter(|l| !l.contains("18446744073709551615,\"method")).collect();
        assert_eq!(edge_read.len(), edges.len() - 1);
        assert!(read_tools_call(edge_lines[2].as_bytes()).is_none(), "{}", edge_lines[2]);
        for line in read.iter().copied().chain(edge_read) {
            let ours = read_tools_call(line.as_bytes()).unwrap_or_else(|| panic!("not read by its keys: {line}"));
            let theirs: ClientJsonRpcMessage = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_value(&ours).unwrap(), serde_json::to_value(&theirs).unwrap(), "{line}");
            let (ClientJsonRpcMessage::Request(ours), ClientJsonRpcMessage::Request(theirs)) = (ours, theirs) else {
                panic!("{line}")
            };
            let (ClientRequest::CallToolRequest(ours), ClientRequest::CallToolRequest(theirs)) =
                (ours.request, theirs.request)
            else {
                panic!("{line}")
            };
            assert_eq!(ours.params, theirs.params, "{line}");
            assert_eq!(
                ours.extensions.get::<RequestMetaObject>(),
                theirs.extensions.get::<RequestMetaObject>(),
                "{line}"
            );
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"tools/call"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s"},"extra":1}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"name":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"s"}}"#,
        ] {
            assert!(read_tools_call(line.as_bytes()).is_none(), "read by its keys: {line}");
        }
    }
}
