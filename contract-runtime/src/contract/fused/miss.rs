//! Why the fused path gave a result back to the `Value` path, and the result type of
//! every step of the fused serializer.

use std::fmt;

use serde::ser;

/// Why the fast path gave the result back to the `Value` path.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Miss {
    /// The result breaks the contract; the `Value` path writes the report.
    Invalid(&'static str),
    /// Something the fast path does not judge (a limit, a non-finite float, a serde
    /// shape it does not write); the `Value` path decides.
    Unsupported(&'static str),
    /// The value's own `Serialize` impl failed.
    Custom(String),
}

impl fmt::Display for Miss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(why) => write!(f, "invalid: {why}"),
            Self::Unsupported(why) => write!(f, "not judged on the fast path: {why}"),
            Self::Custom(msg) => write!(f, "serialize failed: {msg}"),
        }
    }
}

impl std::error::Error for Miss {}

impl ser::Error for Miss {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::Custom(msg.to_string())
    }
}

pub(super) type R<T = ()> = Result<T, Miss>;
