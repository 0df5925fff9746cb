//! What the pipeline knows about one call: the tool, its arguments, the peer's protocol
//! and whether the result may be cached.

use serde_json::Value;

use crate::serve::wire::ProtocolVersion;

/// What the pipeline knows about one call.
#[derive(Clone, Debug)]
pub struct CallContext {
    tool: String,
    arguments: Value,
    protocol: ProtocolVersion,
    pub(super) cacheable: bool,
}

impl CallContext {
    /// A call of `tool` with `arguments`, from a peer on the latest protocol.
    #[must_use]
    pub fn new(tool: impl Into<String>, arguments: Value) -> Self {
        Self { tool: tool.into(), arguments, protocol: ProtocolVersion::latest(), cacheable: true }
    }

    /// Sets the peer's negotiated protocol version.
    #[must_use]
    pub fn with_protocol(mut self, protocol: ProtocolVersion) -> Self {
        self.protocol = protocol;
        self
    }

    /// Sets whether the result may be cached (default: yes, when the pipeline has a cache).
    #[must_use]
    pub fn with_cacheable(mut self, cacheable: bool) -> Self {
        self.cacheable = cacheable;
        self
    }

    /// The tool name.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The call's arguments.
    #[must_use]
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The peer's protocol version.
    #[must_use]
    pub fn protocol(&self) -> &ProtocolVersion {
        &self.protocol
    }
}
