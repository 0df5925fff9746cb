//! The quick lane of the server's lines: the answer to a `tools/call` whose result its
//! advertised `outputSchema` passes, read once and decoded never. The line is scanned
//! where it lies (`contract_runtime::scan`) as the top level of a JSON-RPC message; its
//! `result` (once the `id` before it names a call in flight that the lane can judge) is
//! scanned member by member, its `structuredContent` checked against the schema's
//! compiled plan as it is scanned. An answer that passes goes on as the bytes it came as.
//!
//! Whatever the lane does not read to the end (a line that is no such answer, a `result`
//! before its `id`, a repeated member, a result the check does not pass, text the plan
//! does not judge) changes nothing and goes to the full path, which decides as it always
//! did and writes any report: the lane only ever says "passes as it came".

use std::borrow::Cow;
use std::sync::Arc;

use contract_runtime::fused::TextCheck;
use contract_runtime::scan::{Scan, Stop};
use serde_json::Value;

use super::book::Judge;
use super::wire::Wire;
use crate::verdicts::Listing;

impl Wire {
    /// Forwards `line` as it came when it is the answer to a `tools/call` in flight whose
    /// result passes the quick lane; `false` (nothing changed) sends it to the full path.
    pub(super) fn quick_answer(&self, line: &[u8]) -> bool {
        // Checked as UTF-8 once, as a whole (the full path refuses what this refuses),
        // rather than string by string.
        let Ok(text) = std::str::from_utf8(line) else { return false };
        let Ok(Some((key, seq))) = top(self, text) else { return false };
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

/// The top level of a server's line: `Some((id, seq))` for an answer whose result
/// passed. Every member is read as the full path's `Peek` reads it (a repeated one is
/// left to that path, as it refuses it), so a line the lane passes is one that path reads
/// alike. A result before its `id` is left to the full path too.
fn top<'a>(wire: &Wire, text: &'a str) -> Result<Option<(&'a str, u64)>, Stop> {
    const JSONRPC: u8 = 1;
    const ID: u8 = 2;
    const PARAMS: u8 = 4;
    const RESULT: u8 = 8;
    const ERROR: u8 = 16;
    let mut scan = Scan::new(text);
    let mut seen = 0u8;
    let mut id: Option<&'a str> = None;
    let mut passed = None;
    scan.members(|scan, key| {
        let bit = match key {
            "jsonrpc" => JSONRPC,
            "id" => ID,
            "params" => PARAMS,
            "result" => RESULT,
            "error" => ERROR,
            // A request or a notification of the server's.
            "method" => return Err(Stop),
            _ => 0,
        };
        if seen & bit != 0 {
            return Err(Stop);
        }
        seen |= bit;
        match bit {
            JSONRPC => {
                let version = scan.value()?;
                // `Peek` reads it as an optional string, escapes decoded.
                if version != r#""2.0""# && serde_json::from_str::<Option<Cow<'_, str>>>(version).is_err() {
                    return Err(Stop);
                }
            }
            ID => id = Some(scan.value()?).filter(|id| *id != "null"),
            RESULT => {
                let call = id.and_then(|id| wire.call_in_flight(id));
                let Some((seq, listing, tool)) = call else { return Err(Stop) };
                let Some(check) = wire.shared.policy.quick_check(&listing, &tool) else { return Err(Stop) };
                if !result_passes(scan, text, &check)? {
                    return Err(Stop);
                }
                passed = Some(seq);
            }
            _ => {
                scan.value()?;
            }
        }
        Ok(())
    })?;
    scan.end()?;
    Ok(id.zip(passed))
}

/// Reads a `tools/call` result: whether it passes as it came. It does when it is complete,
/// its content is an array and its `structuredContent` passes the check, or it says
/// `isError: true` (an error is not judged). A member the full path decodes (`isError`,
/// `structuredContent`, `_meta`, `taskId`, `task`, `resultType`) must decode as it does,
/// and a repeated one is left to that path.
fn result_passes<'a>(scan: &mut Scan<'a>, text: &'a str, check: &TextCheck<'_>) -> Result<bool, Stop> {
    let mut content = None;
    let mut structured = None;
    let mut is_error = None;
    let mut result_type = None;
    let mut decoded = 0u8;
    scan.members(|scan, key| {
        let slot = match key {
            "content" => &mut content,
            "isError" => &mut is_error,
            "resultType" => &mut result_type,
            "structuredContent" => {
                if structured.is_some() {
                    return Err(Stop);
                }
                scan.peek();
                let start = scan.position();
                let verdict = check.check_scanned(scan)?;
                structured = Some((verdict, &text[start..scan.position()]));
                return Ok(());
            }
            "_meta" | "taskId" | "task" => {
                let bit = match key {
                    "_meta" => 1,
                    "taskId" => 2,
                    _ => 4,
                };
                if decoded & bit != 0 || serde_json::from_str::<Value>(scan.value()?).is_err() {
                    return Err(Stop);
                }
                decoded |= bit;
                return Ok(());
            }
            _ => return scan.value().map(drop),
        };
        if slot.replace(scan.value()?).is_some() {
            return Err(Stop);
        }
        Ok(())
    })?;
    let complete = result_type.is_none_or(|kind| kind == r#""complete""#);
    if !complete || !content.is_some_and(|c| c.starts_with('[')) {
        return Ok(false);
    }
    Ok(match is_error {
        // A check that passed read every value as serde_json decodes it; after a miss,
        // the rest was only scanned.
        Some("true") => {
            structured.is_none_or(|(verdict, text)| verdict.is_ok() || serde_json::from_str::<Value>(text).is_ok())
        }
        None | Some("false" | "null") => structured.is_some_and(|(verdict, _)| verdict.is_ok()),
        Some(_) => false,
    })
}
