//! The lock file: its Rust type (the source of its JSON Schema), reading and writing.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::digest::{content_hash, digests, pinned_definition, Digests};
use crate::contract::schema::canonical_string;

/// The lock file's conventional name.
pub const LOCK_FILE: &str = "tools.lock.json";

/// The digest form a lock records in `digest`: SHA-256 of the canonical JSON.
pub const DIGEST_FORM: &str = "sha256-canonical-json";

/// The tools of one or more MCP servers, pinned: what `contract-audit pin` writes and
/// `contract-audit --locked` and the client harness check a live server against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema, contract_derive::ToolOutput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[tool_output(name = "tools_lock", version = "2.0.0", compatibility = "exact")]
pub struct Lock {
    /// The lock format: `1`.
    pub lock_version: u32,
    /// How the digests are made: `sha256-canonical-json` (SHA-256 of the JSON with
    /// object keys sorted, two-space indentation and a final newline).
    pub digest: String,
    /// The pinned servers, sorted by source.
    pub servers: Vec<LockedServer>,
}

/// One pinned server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockedServer {
    /// How the server is reached.
    pub source: ServerSource,
    /// The `serverInfo` it answered `initialize` with when it was pinned.
    pub server_info: Option<PinnedServerInfo>,
    /// Its tools, sorted by name.
    pub tools: Vec<LockedTool>,
    /// For a server pinned by name: how it was reached when it was pinned (its command
    /// line or URL), for information only; the name is the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched: Option<ServerSource>,
}

/// How a pinned server is reached: the key a lock finds it by.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum ServerSource {
    /// A stdio server: the command line that starts it, program first.
    Command(Vec<String>),
    /// A streamable HTTP server: its URL.
    Url(String),
    /// A name given when it was pinned (`pin --name`): the same server under any command
    /// line, path, wrapper or URL, on any machine.
    Name(String),
}

impl fmt::Display for ServerSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerSource::Command(argv) => write!(f, "stdio `{}`", argv.join(" ")),
            ServerSource::Url(url) => write!(f, "{url}"),
            ServerSource::Name(name) => write!(f, "the server named `{name}`"),
        }
    }
}

/// A server's name and version, as it gave them at `initialize`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PinnedServerInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
}

/// One pinned tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LockedTool {
    /// The tool's name.
    pub name: String,
    /// The digests of `definition`.
    pub digests: Digests,
    /// The SHA-256 of `definition`'s RFC 8785 (JCS) canonical JSON (`sha256:…`), the
    /// hash the draft SEP-3140 proposes for a tool; absent in locks written before it.
    #[serde(default, rename = "contentHash", skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    /// The definition as listed: `name`, `title`, `description`, `inputSchema`,
    /// `outputSchema`, `annotations`, and `contract` (the identity from its `_meta`).
    #[schemars(transform = crate::contract::schema::opaque)]
    pub definition: Map<String, Value>,
}

impl LockedTool {
    /// Pins a tool as listed (`tools/list`'s entry).
    #[must_use]
    pub fn pin(listed: &Value) -> Self {
        let definition = pinned_definition(listed);
        let name = definition["name"].as_str().unwrap_or_default().to_owned();
        let digests = digests(&definition);
        let content_hash = Some(content_hash(&definition));
        let Value::Object(definition) = definition else { unreachable!("a pinned definition is an object") };
        Self { name, digests, content_hash, definition }
    }
}

impl LockedServer {
    /// Pins a server's whole tool list (every page of `tools/list`).
    #[must_use]
    pub fn pin(source: ServerSource, server_info: Option<PinnedServerInfo>, listed: &[Value]) -> Self {
        let mut tools: Vec<LockedTool> = listed.iter().map(LockedTool::pin).collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Self { source, server_info, tools, launched: None }
    }

    /// The pinned tool called `name`.
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&LockedTool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// A lock file that cannot be used: the file, the JSON pointer of the bad value (when
/// there is one) and what is wrong — the problem type of every checked-in file.
pub type LockError = crate::contract::LoadProblem;

impl Default for Lock {
    fn default() -> Self {
        Self::new()
    }
}

impl Lock {
    /// An empty lock.
    #[must_use]
    pub fn new() -> Self {
        Self { lock_version: 1, digest: DIGEST_FORM.to_owned(), servers: Vec::new() }
    }

    /// Reads and checks a lock file (see [`Lock::parse`]).
    ///
    /// # Errors
    ///
    /// A [`LockError`] naming the file: unreadable, or refused by [`Lock::parse`].
    pub fn read(path: &Path) -> Result<Self, LockError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| LockError::new(&shown, None, e.to_string()))?;
        Self::parse(&text, &shown)
    }

    /// Parses and checks a lock's text; `file` names it in errors.
    ///
    /// # Errors
    ///
    /// A [`LockError`] with the JSON pointer: not JSON; not valid against the lock's own
    /// schema (the first violation); another `lockVersion` or `digest`; servers or tools
    /// out of order or twice; a tool whose `name` differs from its definition's; a
    /// digest that does not match its definition (a definition edited by hand: pin again).
    pub fn parse(text: &str, file: &str) -> Result<Self, LockError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| LockError::new(file, None, format!("not JSON: {e}")))?;
        if let Err(report) = <Lock as crate::contract::ToolOutput>::contract().validate(&value) {
            let first = &report.violations()[0];
            return Err(LockError::new(
                file,
                Some(first.pointer().to_owned()),
                format!("not a lock: breaks `{}` of the lock's schema", first.keyword()),
            ));
        }
        let lock: Lock = serde_json::from_value(value).map_err(|e| LockError::new(file, None, e.to_string()))?;
        if lock.lock_version != 1 {
            return Err(LockError::new(
                file,
                Some("/lockVersion".into()),
                format!("lock format {} is not known here (this version reads 1)", lock.lock_version),
            ));
        }
        if lock.digest != DIGEST_FORM {
            return Err(LockError::new(
                file,
                Some("/digest".into()),
                format!("digest form `{}` is not known here (expected `{DIGEST_FORM}`)", lock.digest),
            ));
        }
        for (i, pair) in lock.servers.windows(2).enumerate() {
            if pair[0].source >= pair[1].source {
                return Err(LockError::new(
                    file,
                    Some(format!("/servers/{}/source", i + 1)),
                    "servers are out of order or listed twice",
                ));
            }
        }
        for (s, server) in lock.servers.iter().enumerate() {
            for (t, tool) in server.tools.iter().enumerate() {
                let at = format!("/servers/{s}/tools/{t}");
                if t > 0 && server.tools[t - 1].name >= tool.name {
                    return Err(LockError::new(
                        file,
                        Some(format!("{at}/name")),
                        "tools are out of order or listed twice",
                    ));
                }
                if tool.definition.get("name").and_then(Value::as_str) != Some(tool.name.as_str()) {
                    return Err(LockError::new(
                        file,
                        Some(format!("{at}/definition/name")),
                        format!("the definition's name is not `{}`", tool.name),
                    ));
                }
                let definition = Value::Object(tool.definition.clone());
                let actual = digests(&definition);
                for (which, recorded, computed) in
                    [("text", &tool.digests.text, &actual.text), ("shape", &tool.digests.shape, &actual.shape)]
                {
                    if recorded != computed {
                        return Err(LockError::new(
                            file,
                            Some(format!("{at}/digests/{which}")),
                            format!(
                                "the {which} digest does not match the definition ({recorded} recorded, {computed} \
                                 computed): the definition was edited; pin the server again"
                            ),
                        ));
                    }
                }
                if let Some(recorded) = &tool.content_hash {
                    let computed = content_hash(&definition);
                    if *recorded != computed {
                        return Err(LockError::new(
                            file,
                            Some(format!("{at}/contentHash")),
                            format!(
                                "the content hash does not match the definition ({recorded} recorded, {computed} \
                                 computed): the definition was edited; pin the server again"
                            ),
                        ));
                    }
                }
            }
        }
        Ok(lock)
    }

    /// The lock as canonical JSON text (keys sorted, two-space indentation, a final
    /// newline): what `contract-audit pin` writes.
    ///
    /// # Panics
    ///
    /// Never: the lock is plain data.
    #[must_use]
    pub fn to_canonical_string(&self) -> String {
        canonical_string(&serde_json::to_value(self).expect("a lock serializes"))
    }

    /// The pinned server reached by `source`.
    #[must_use]
    pub fn server(&self, source: &ServerSource) -> Option<&LockedServer> {
        self.servers.iter().find(|s| &s.source == source)
    }

    /// The one server pinned by name ([`ServerSource::Name`]) whose `serverInfo` name is
    /// `server_name`; `None` when there is none, or more than one.
    #[must_use]
    pub fn named_by_info(&self, server_name: &str) -> Option<&LockedServer> {
        let mut found = self.servers.iter().filter(|s| {
            matches!(s.source, ServerSource::Name(_)) && s.server_info.as_ref().is_some_and(|i| i.name == server_name)
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// Adds `server`, or replaces the one with the same source.
    pub fn upsert(&mut self, server: LockedServer) {
        match self.servers.binary_search_by(|s| s.source.cmp(&server.source)) {
            Ok(at) => self.servers[at] = server,
            Err(at) => self.servers.insert(at, server),
        }
    }
}
