//! A server's declared error shape: the JSON Schema its error answers match and the JSON
//! pointer of the message in them, for servers that answer a failure as an ordinary
//! result (`{"success": false, "error": "…"}` with `isError` unset). A result that breaks
//! the tool's contract and matches its error shape is the server's own error, not a
//! broken contract; its message is read at the pointer.

use serde_json::Value;

use crate::contract::OutputContract;

/// The longest message read from a result before it is sanitized (which cuts it again):
/// a huge message costs no more than this to mask.
const READ_CHARS: usize = 4 * crate::contract::redact::MAX_MESSAGE_CHARS;

/// A declared error shape: a schema, compiled and in canonical form like a contract's
/// (an [`OutputContract`] named `<contract>.error`, objects left open), and the JSON
/// pointer of the message.
///
/// # Examples
///
/// ```
/// use contract_runtime::{Declared, ErrorShape};
/// use contract_runtime::{Compatibility, OutputContract};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "success": { "const": false }, "error": { "type": "string" } },
///     "required": ["success", "error"],
/// });
/// let declared = Declared::new("task_status.error", "1.0.0", Compatibility::Additive);
/// let shape = ErrorShape::new(OutputContract::from_source(&declared, "error.json", schema).unwrap(), "/error").unwrap();
/// let answer = json!({ "success": false, "error": "Task not found: t-1" });
/// assert!(shape.matches(&answer));
/// assert_eq!(shape.message(&answer).as_deref(), Some("Task not found: t-1"));
/// // A success does not match.
/// assert!(!shape.matches(&json!({ "success": true, "status": "done" })));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ErrorShape {
    schema: &'static OutputContract,
    message: &'static str,
}

impl ErrorShape {
    /// The error shape `schema` with its message at `message`, a JSON pointer (`""` for
    /// the whole value).
    ///
    /// # Errors
    ///
    /// A `message` that is not a JSON pointer (neither empty nor starting with `/`).
    pub fn new(schema: &'static OutputContract, message: &str) -> Result<Self, String> {
        if !(message.is_empty() || message.starts_with('/')) {
            return Err(format!(
                "`{message}` is not a JSON pointer: write the message's place in the error answer, such as \"/error\""
            ));
        }
        // Kept for the life of the process, as its schema is.
        Ok(Self { schema, message: Box::leak(message.to_owned().into_boxed_str()) })
    }

    /// The schema an error answer matches.
    #[must_use]
    pub fn schema(&self) -> &'static OutputContract {
        self.schema
    }

    /// The JSON pointer of the message in an error answer.
    #[must_use]
    pub fn message_pointer(&self) -> &'static str {
        self.message
    }

    /// Whether `value` is an error answer of this shape.
    #[must_use]
    pub fn matches(&self, value: &Value) -> bool {
        self.schema.is_valid(value)
    }

    /// The message of an error answer, as the server wrote it (not yet sanitized; cut to
    /// a few times the longest message an error result carries): the string at the
    /// pointer, or the compact JSON of another value there; `None` when nothing is there.
    #[must_use]
    pub fn message(&self, value: &Value) -> Option<String> {
        let text = match value.pointer(self.message)? {
            Value::String(text) => text.chars().take(READ_CHARS).collect(),
            other => {
                let mut text = other.to_string();
                if text.len() > READ_CHARS {
                    let mut end = READ_CHARS;
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    text.truncate(end);
                }
                text
            }
        };
        Some(text)
    }
}
