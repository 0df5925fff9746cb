//! What a call's outcome says beside its validity, as lines for an operator's report: the
//! signals a client that trusts `isError` and `structuredContent` would miss, each with a
//! stable kind, a pointer and a sentence. The audit's call findings and the harness's log
//! are made of these.

use super::outcome::{CallOutcome, DeclaredError};
use super::signals::{FalseSuccess, KeyMismatch};

/// The longest part of a server's error message a notice quotes, in characters.
const MAX_QUOTED_CHARS: usize = 200;

/// One signal of an outcome, for a report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Notice {
    /// A stable identifier: `call-structured-text-mismatch`, `call-false-success` or
    /// `call-server-reported-violation` (the audit's finding kinds).
    pub kind: &'static str,
    /// Where, as a JSON pointer into the result's value (escaped and bounded), `""` for
    /// none.
    pub pointer: String,
    /// What it means for a client. Quotes of the server are sanitized and bounded.
    pub message: String,
}

impl Notice {
    fn new(kind: &'static str, pointer: &str, message: String) -> Self {
        Self { kind, pointer: pointer.to_owned(), message }
    }
}

impl KeyMismatch {
    /// A notice per key on one side only, and one for the keys not listed.
    #[must_use]
    pub fn notices(&self) -> Vec<Notice> {
        const KIND: &str = "call-structured-text-mismatch";
        let mut notices: Vec<Notice> = self
            .keys()
            .map(|(pointer, in_text)| {
                let message = if in_text {
                    "only in the text block's JSON: structuredContent, what a client validates and reads, lacks the key"
                } else {
                    "only in structuredContent: the text block's JSON lacks the key"
                };
                Notice::new(KIND, pointer, message.to_owned())
            })
            .collect();
        if self.more > 0 {
            notices.push(Notice::new(KIND, "", format!("{} more keys differ (not listed)", self.more)));
        }
        notices
    }
}

impl FalseSuccess {
    /// The notice: what says the call failed, and the message it carries.
    #[must_use]
    pub fn notice(&self) -> Notice {
        let said = self.message.as_deref().map_or_else(String::new, |m| format!(": {m}"));
        let message = format!("{} in {} but isError is unset{said}", self.signal, self.source);
        Notice::new("call-false-success", &self.pointer, message)
    }
}

impl DeclaredError {
    /// The notice of a server's SDK refusing the tool's own output; `None` for the tool's
    /// own error.
    #[must_use]
    pub fn refusal_notice(&self) -> Option<Notice> {
        let sdk = self.refused_by?.sdk;
        let quoted: String = self.message.chars().take(MAX_QUOTED_CHARS).map(printable).collect();
        let message = format!("the server refused its own result ({sdk}): {quoted}");
        Some(Notice::new("call-server-reported-violation", "", message))
    }
}

fn printable(c: char) -> char {
    if c.is_control() {
        '\u{fffd}'
    } else {
        c
    }
}

impl CallOutcome {
    /// Every notice of this outcome: keys that `structuredContent` and its JSON text block
    /// do not share, a value that says it failed without `isError`, the server refusing
    /// its own output. Empty for a clean success, a tool's own error and a contract
    /// failure (which is its own report).
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::client::Catalog;
    /// use serde_json::json;
    ///
    /// let mut catalog = Catalog::new();
    /// catalog.refresh([json!({"name": "scrape", "inputSchema": {"type": "object"}})]);
    /// let result = json!({"content": [{"type": "text", "text": r#"{"markdown": "", "creditsUsed": 1}"#}],
    ///                     "structuredContent": {"markdown": ""}});
    /// let notices = catalog.check_result("scrape", &result).notices();
    /// assert_eq!((notices[0].kind, notices[0].pointer.as_str()), ("call-structured-text-mismatch", "/creditsUsed"));
    /// ```
    #[must_use]
    pub fn notices(&self) -> Vec<Notice> {
        match self {
            Self::Success(success) => {
                let mut notices = success.mismatch.as_deref().map(KeyMismatch::notices).unwrap_or_default();
                notices.extend(success.false_success.as_deref().map(FalseSuccess::notice));
                notices
            }
            Self::DeclaredError(error) => error.refusal_notice().into_iter().collect(),
            Self::ContractFailure(_) => Vec::new(),
        }
    }
}
