//! How requests end without an answer of the server's: timed out (answered here and
//! cancelled upstream), or in flight when the server closed; and waiting until none is in
//! flight.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rmcp::model::ErrorData;
use tokio::time::Instant;

use super::wire::Wire;

impl Wire {
    pub(super) fn notify_settled(&self) {
        if self.book().pending.is_empty() {
            self.settled.notify_waiters();
        }
    }

    /// Waits until no request of the client's is in flight.
    pub(super) async fn all_settled(&self) {
        loop {
            let settled = self.settled.notified();
            if self.book().pending.is_empty() {
                return;
            }
            settled.await;
        }
    }

    /// The server closed its output: every request of the client's in flight gets an
    /// error at once, and every request of the server's the client has not answered yet is
    /// cancelled (`notifications/cancelled`): nobody is left to read its answer.
    pub(super) fn upstream_closed(&self) {
        let (pending, own, asked) = {
            let mut book = self.book();
            book.deadlines.clear();
            let asked = std::mem::take(&mut book.asked);
            (book.pending.drain().collect::<Vec<_>>(), book.own.drain().collect::<Vec<_>>(), asked)
        };
        for (id, pending) in pending {
            let message = format!("the upstream server closed the connection; {} was not answered", pending.method);
            self.send_down_error(&id, &ErrorData::internal_error(message, None));
        }
        drop(own);
        for id in asked {
            let cancel = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"the upstream server closed the connection"}}}}"#
            );
            self.forward_down(cancel.as_bytes());
        }
        self.settled.notify_waiters();
    }

    /// The client of request `id` went away before its answer (an HTTP client that
    /// disconnected): its late answer is dropped, and the server gets
    /// `notifications/cancelled` (but for `initialize`, which is never cancelled). Whether
    /// the request was still in flight.
    pub(super) fn abandoned(&self, id: &str) -> bool {
        let pending = {
            let mut book = self.book();
            let pending = book.take(id);
            if pending.is_some() {
                book.drop_answer(id.to_owned());
            }
            pending
        };
        let Some(pending) = pending else { return false };
        self.notify_settled();
        tracing::info!(method = %pending.method, "the client went away before the answer");
        if pending.method != "initialize" {
            let cancel = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"the client disconnected"}}}}"#
            );
            let _ = self.up.push(cancel.into_bytes());
        }
        true
    }

    /// Answers the requests the server did not answer in time, and cancels them upstream.
    pub(super) async fn expire(self: Arc<Self>) {
        loop {
            let now = Instant::now();
            let (expired, next) = {
                let mut book = self.book();
                let mut expired = Vec::new();
                while let Some((deadline, _, _)) = book.deadlines.front() {
                    if *deadline > now {
                        break;
                    }
                    let Some((_, key, seq)) = book.deadlines.pop_front() else { break };
                    if book.pending.get(&key).is_some_and(|p| p.seq == seq) {
                        if let Some(pending) = book.pending.remove(&key) {
                            book.drop_answer(key.clone());
                            expired.push((key, pending.method, pending.unread_at));
                        }
                    }
                }
                let next = book.deadlines.front().map(|(deadline, _, _)| *deadline);
                book.armed = next;
                (expired, next)
            };
            if !expired.is_empty() {
                self.notify_settled();
            }
            let unread = self.unread.load(Ordering::Acquire);
            for (id, method, unread_at) in expired {
                let mut message = format!(
                    "the upstream server did not answer {method} within {}s",
                    self.shared.timeout.as_secs_f64()
                );
                // What the server wrote instead, if anything: the lines the proxy dropped.
                let dropped = unread.saturating_sub(unread_at);
                if dropped > 0 {
                    let (lines, answers) = if dropped == 1 { ("line", "an answer") } else { ("lines", "answers") };
                    message = format!(
                        "{message}; meanwhile it wrote {dropped} {lines} the proxy dropped (not JSON, no JSON-RPC \
                         message, or {answers} to no request in flight)"
                    );
                }
                self.send_down_error(&id, &ErrorData::internal_error(message, None));
                let cancel = format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"request timeout"}}}}"#
                );
                let _ = self.up.push(cancel.into_bytes());
            }
            // An earlier deadline queued meanwhile wakes the timer.
            match next {
                Some(deadline) => tokio::select! {
                    () = tokio::time::sleep_until(deadline) => {}
                    () = self.wake.notified() => {}
                },
                None => self.wake.notified().await,
            }
        }
    }
}
