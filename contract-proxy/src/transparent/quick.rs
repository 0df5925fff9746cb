//! The quick lane of the server's lines: the answer to a `tools/call` whose result its
//! advertised `outputSchema` passes, read once and decoded never. The line is read as
//! the top level of a JSON-RPC message; its `result` (once the `id` before it names a call
//! in flight that the lane can judge) is read with the result's fields, its
//! `structuredContent` checked against the schema's compiled plan as it is read. An
//! answer that passes goes on as the bytes it came as.
//!
//! Whatever the lane does not read to the end (a line that is no such answer, a `result`
//! before its `id`, a repeated member, a result the check does not pass, text the plan
//! does not judge) changes nothing and goes to the full path, which decides as it always
//! did and writes any report: the lane only ever says "passes as it came".

use std::borrow::Cow;
use std::sync::Arc;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer as _};
use serde_json::value::RawValue;

use super::book::Judge;
use super::message::QuickSeed;
use super::wire::Wire;
use crate::verdicts::Listing;

impl Wire {
    /// Forwards `line` as it came when it is the answer to a `tools/call` in flight whose
    /// result passes the quick lane; `false` (nothing changed) sends it to the full path.
    pub(super) fn quick_answer(&self, line: &[u8]) -> bool {
        // Checked as UTF-8 once, as a whole (the full path refuses what this refuses),
        // rather than string by string.
        let Ok(text) = std::str::from_utf8(line) else { return false };
        let mut de = serde_json::Deserializer::from_str(text);
        let Ok(Some((id, seq))) = de.deserialize_map(Top { wire: self }) else { return false };
        if de.end().is_err() {
            return false;
        }
        let key = id.get();
        {
            let mut book = self.book();
            // The same request still waits (not answered, cancelled or reused meanwhile).
            let waiting = !book.own.contains_key(key)
                && book.pending.get(key).is_some_and(|p| p.seq == seq && matches!(p.judge, Judge::Call { .. }));
            if !waiting {
                return false;
            }
            book.take(key);
        }
        tracing::trace!(id = %key, "the call's answer passed its outputSchema's compiled check and goes on as it came");
        self.notify_settled();
        self.forward_down(line);
        true
    }

    /// The call in flight under the client's id `key`: its place in the book, the listing
    /// it is judged with and its tool.
    fn call_in_flight(&self, key: &str) -> Option<(u64, Arc<Listing>, String)> {
        let book = self.book();
        if book.own.contains_key(key) {
            return None;
        }
        let pending = book.pending.get(key)?;
        let Judge::Call { tool, listing, .. } = &pending.judge else { return None };
        Some((pending.seq, Arc::clone(listing), tool.clone()))
    }
}

/// The members of a JSON-RPC message's top level, as the full path's `Peek` names them.
#[derive(Clone, Copy)]
enum Member {
    Jsonrpc = 1,
    Id = 2,
    Method = 4,
    Params = 8,
    Result = 16,
    Error = 32,
    Other = 0,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Member;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<Member, E> {
                Ok(match key {
                    "jsonrpc" => Member::Jsonrpc,
                    "id" => Member::Id,
                    "method" => Member::Method,
                    "params" => Member::Params,
                    "result" => Member::Result,
                    "error" => Member::Error,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// The top level of a server's line: `Some((id, seq))` for an answer whose result passed.
/// Every member is read as the full path's `Peek` reads it (a repeated one is refused as
/// it refuses it), so a line the lane passes is one that path reads alike.
struct Top<'w> {
    wire: &'w Wire,
}

/// Why the lane leaves a line to the full path (never shown: the full path decides).
fn leave<E: de::Error>() -> E {
    E::custom("left to the full path")
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Option<(&'de RawValue, u64)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = 0u8;
        let mut id: Option<&'de RawValue> = None;
        let mut passed = None;
        while let Some(member) = map.next_key::<Member>()? {
            let bit = member as u8;
            if seen & bit != 0 {
                return Err(leave());
            }
            seen |= bit;
            match member {
                Member::Jsonrpc => {
                    map.next_value::<Option<Cow<'de, str>>>()?;
                }
                Member::Id => id = map.next_value()?,
                // A request or a notification of the server's.
                Member::Method => return Err(leave()),
                Member::Params | Member::Error => {
                    map.next_value::<Option<&'de RawValue>>()?;
                }
                Member::Result => {
                    let call = id.and_then(|id| self.wire.call_in_flight(id.get()));
                    let Some((seq, listing, tool)) = call else { return Err(leave()) };
                    let Some(check) = self.wire.shared.policy.quick_check(&listing, &tool) else {
                        return Err(leave());
                    };
                    if !map.next_value_seed(QuickSeed(check))?.passes() {
                        return Err(leave());
                    }
                    passed = Some(seq);
                }
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(id.zip(passed))
    }
}
