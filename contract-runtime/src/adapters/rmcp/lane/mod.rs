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
//!
//! The answers are the lane's to write, one line at a time in the order rmcp hands
//! them over, each as rmcp's codec writes it, with one difference in the work and none
//! in the JSON: a result the adapter vouches for (its own, whose text block is the
//! compact JSON of its `structuredContent`) has that text copied as its
//! `structuredContent` instead of its tree serialized again, and the text block escaped
//! eight bytes at a time. rmcp's own transport is the oracle for every answer in the
//! unit tests, in both protocol eras.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, ContentBlock, JsonRpcRequest, JsonRpcResponse, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::mpsc;

use super::json::TextMark;
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

/// The adapter's word, carried in a call's extensions, that the result it answers the
/// call with has one text block and a `structuredContent` whose compact JSON that text
/// is (or, [`Vouch::vouch_text`], no tree at all, the text standing for it): the lane
/// then writes the text itself as the `structuredContent` instead of having a tree
/// serialized. The word names the text by its [`TextMark`], so it holds for that result
/// only.
#[derive(Clone, Debug, Default)]
pub(crate) struct Vouch(Arc<OnceLock<(TextMark, bool)>>);

impl Vouch {
    /// Vouches for `result`: its `structuredContent`, the adapter made from its text, or,
    /// when it has none, its text alone, checked against the contract (a success).
    pub(crate) fn vouch(&self, result: &CallToolResult) {
        if let (Some(text), false) = (sole_text(result), result.is_error == Some(true)) {
            let _ = self.0.set((TextMark::of(text), result.structured_content.is_none()));
        }
    }

    /// The text of `result` when it is the one vouched for, and whether it stands for a
    /// tree the result does not carry.
    fn text_of<'a>(&self, result: &'a CallToolResult) -> Option<(&'a str, bool)> {
        let (mark, text_only) = *self.0.get()?;
        let text = mark.text_of(result)?;
        (text_only || result.structured_content.is_some()).then_some((text, text_only))
    }
}

/// The one text block of `result`, if that is all its content.
fn sole_text(result: &CallToolResult) -> Option<&str> {
    match result.content.as_slice() {
        [block] => block.as_text().map(|text| text.text.as_str()),
        _ => None,
    }
}

/// Calls in flight the lane keeps a [`Vouch`] for; past this many (calls cancelled
/// before their answer, whose entries no answer removes) the book starts again, and
/// the calls in it are answered the ordinary way.
const VOUCHES: usize = 1024;

/// rmcp's stdio transport with the `tools/call` lane in front of its reader, and the
/// writing of answers in the lane's hands: every message is written as rmcp's codec
/// writes it (its JSON and a newline, then a flush, one message at a time), except that
/// a vouched-for result's `structuredContent` is its text, copied, not its tree
/// serialized again.
pub(super) struct Lane<R: AsyncRead + Unpin, W: AsyncWrite> {
    inner: AsyncRwTransport<RoleServer, Tap<R>, Stash>,
    calls: mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
    out: Arc<tokio::sync::Mutex<Option<W>>>,
    /// What rmcp's reader writes itself (its answer to a message it refuses).
    stash: Arc<Mutex<Vec<u8>>>,
    /// The stash's writes under way.
    stash_writes: Vec<tokio::task::JoinHandle<io::Result<()>>>,
    vouches: HashMap<RequestId, Vouch>,
}

impl<R, W> Lane<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(super) fn new(read: R, write: W) -> Self {
        let (tx, calls) = mpsc::unbounded_channel();
        let tap = Tap { read, buf: vec![0; BUFFER].into_boxed_slice(), start: 0, end: 0, passing: false, calls: tx };
        let stash = Arc::new(Mutex::new(Vec::new()));
        Self {
            inner: AsyncRwTransport::new(tap, Stash(stash.clone())),
            calls,
            out: Arc::new(tokio::sync::Mutex::new(Some(write))),
            stash,
            stash_writes: Vec::new(),
            vouches: HashMap::new(),
        }
    }

    /// `item` as the line to write.
    fn encode(&mut self, item: TxJsonRpcMessage<RoleServer>) -> io::Result<Vec<u8>> {
        let id = match &item {
            ServerJsonRpcMessage::Response(response) => Some(&response.id),
            ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        let vouch = id.and_then(|id| self.vouches.remove(id));
        let mut line = match (vouch, item) {
            (
                Some(vouch),
                ServerJsonRpcMessage::Response(JsonRpcResponse {
                    id,
                    result: ServerResult::CallToolResult(result),
                    ..
                }),
            ) if vouch.text_of(&result).is_some() => written_from_text(&id, result)?,
            (_, item) => serde_json::to_vec(&item)?,
        };
        line.push(b'\n');
        Ok(line)
    }

    /// Writes what rmcp's reader left in the stash, on a task of its own.
    fn drain_stash(&mut self) {
        let bytes = std::mem::take(&mut *self.stash.lock().unwrap_or_else(PoisonError::into_inner));
        if !bytes.is_empty() {
            self.stash_writes.retain(|write| !write.is_finished());
            self.stash_writes.push(tokio::spawn(write_line(self.out.clone(), Ok(bytes))));
        }
    }
}

/// The answer to request `id` carrying `result`, a vouched-for result: its
/// `structuredContent` is written as its text, and its text block (the usual plain
/// one) escaped by [`write_json_string`], faster than serde on text that is JSON;
/// every other member as serde writes it.
fn written_from_text(id: &RequestId, mut result: CallToolResult) -> io::Result<Vec<u8>> {
    const EMPTY: &[u8] = b"\"content\":[]";
    // The tree goes unwritten: the text is its JSON.
    result.structured_content = None;
    let plain = matches!(result.content.as_slice(), [ContentBlock::Text(block)] if block.meta.is_none() && block.annotations.is_none());
    let text = match (plain, result.content.pop()) {
        (true, Some(ContentBlock::Text(block))) => block.text,
        (_, block) => {
            // Not the plain block: serde writes the content as it is.
            result.content.extend(block);
            let text = sole_text(&result).unwrap_or_default().to_owned();
            return Ok(answer_line(id, &text, &serde_json::to_vec(&result)?, None));
        }
    };
    let rest = serde_json::to_vec(&result)?;
    // Before `content` serde writes only `resultType`, a string, so the first `"content":[]`
    // (quotes unescaped) is the member and not text inside one.
    let at = memchr::memmem::find(&rest, EMPTY).ok_or_else(|| io::Error::other("no content member"))?;
    Ok(answer_line(id, &text, &rest, Some((at, EMPTY.len()))))
}

/// `{"jsonrpc":"2.0","id":…,"result":{"structuredContent":<text>,…}}`, the rest of the
/// result's members from `rest` (a serialized object with at least one member), its
/// empty `content` at `content` replaced by the one text block holding `text`.
fn answer_line(id: &RequestId, text: &str, rest: &[u8], content: Option<(usize, usize)>) -> Vec<u8> {
    let mut line = Vec::with_capacity(rest.len() + 2 * text.len() + 96);
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    // Writing an id into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut line, id);
    line.extend_from_slice(b",\"result\":{\"structuredContent\":");
    line.extend_from_slice(text.as_bytes());
    line.push(b',');
    match content {
        Some((at, len)) => {
            line.extend_from_slice(&rest[1..at]);
            line.extend_from_slice(b"\"content\":[{\"type\":\"text\",\"text\":");
            crate::contract::escape::write_json_string(&mut line, text);
            line.extend_from_slice(b"}]");
            line.extend_from_slice(&rest[at + len..]);
        }
        None => line.extend_from_slice(&rest[1..]),
    }
    line.push(b'}');
    line
}

/// Writes `line` whole and flushes, after every line asked for before it.
async fn write_line<W: AsyncWrite + Unpin>(
    out: Arc<tokio::sync::Mutex<Option<W>>>,
    line: io::Result<Vec<u8>>,
) -> io::Result<()> {
    let line = line?;
    let mut out = out.lock().await;
    let Some(write) = out.as_mut() else {
        return Err(io::Error::new(io::ErrorKind::NotConnected, "Transport is closed"));
    };
    write.write_all(&line).await?;
    write.flush().await
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
        let line = self.encode(item);
        write_line(self.out.clone(), line)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // `None`: rmcp answered a message it refused and reads on, and the answer
            // goes out now; `Some`: what the wait for a message came to.
            let got = {
                let calls = &mut self.calls;
                let stash = &self.stash;
                let mut lines = std::pin::pin!(self.inner.receive());
                std::future::poll_fn(|cx| {
                    if let Poll::Ready(Some(call)) = calls.poll_recv(cx) {
                        return Poll::Ready(Some(Some(call)));
                    }
                    let line = lines.as_mut().poll(cx);
                    match line {
                        Poll::Ready(message) => Poll::Ready(Some(message)),
                        // rmcp's reader keeps a line it was reading when dropped.
                        Poll::Pending if !stash.lock().unwrap_or_else(PoisonError::into_inner).is_empty() => {
                            Poll::Ready(None)
                        }
                        Poll::Pending => Poll::Pending,
                    }
                })
                .await
            };
            self.drain_stash();
            let Some(received) = got else { continue };
            let mut received = received?;
            if let ClientJsonRpcMessage::Request(JsonRpcRequest {
                id,
                request: ClientRequest::CallToolRequest(call),
                ..
            }) = &mut received
            {
                if self.vouches.len() >= VOUCHES {
                    self.vouches.clear();
                }
                let vouch = Vouch::default();
                call.extensions.insert(vouch.clone());
                self.vouches.insert(id.clone(), vouch);
            }
            return Some(received);
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.inner.close().await?;
        self.drain_stash();
        for write in std::mem::take(&mut self.stash_writes) {
            let _ = write.await;
        }
        drop(self.out.lock().await.take());
        Ok(())
    }
}

/// The writer rmcp's reader is given: what it writes waits in the stash for the lane.
struct Stash(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for Stash {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests;
