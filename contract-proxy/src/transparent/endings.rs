//! How requests end without an answer of the server's: timed out (answered here and
//! cancelled upstream), or in flight when the server closed; and waiting until none is in
//! flight.

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

    /// The server closed its output: every request in flight gets an error.
    pub(super) fn upstream_closed(&self) {
        let (pending, own) = {
            let mut book = self.book();
            book.deadlines.clear();
            (book.pending.drain().collect::<Vec<_>>(), book.own.drain().collect::<Vec<_>>())
        };
        for (id, pending) in pending {
            let message = format!("the upstream server closed the connection; {} was not answered", pending.method);
            self.send_down_error(&id, &ErrorData::internal_error(message, None));
        }
        drop(own);
        self.settled.notify_waiters();
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
                            expired.push((key, pending.method));
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
            for (id, method) in expired {
                let message = format!(
                    "the upstream server did not answer {method} within {}s",
                    self.shared.timeout.as_secs_f64()
                );
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
