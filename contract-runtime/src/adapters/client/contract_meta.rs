//! What our contract `_meta` entry says about a tool, read from a tool definition or a
//! result.

use serde_json::Value;

use crate::serve::wire::META_KEY;

/// What our contract `_meta` (key `tool-contracts.dev/contract`) says about a tool, when
/// the server sends it. Servers that do not use tool-contracts send none, and the
/// catalog works the same without it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ContractInfo {
    /// `qualified`: `true` when the server enforces a contract for this tool.
    pub qualified: bool,
    /// The contract identity, such as `fleet_status@1.2.0+sha256:…`.
    pub id: Option<String>,
    /// The contract name.
    pub name: Option<String>,
    /// The contract's semantic version.
    pub version: Option<String>,
    /// `exact` or `additive`.
    pub compatibility: Option<String>,
    /// SHA-256 of the canonical schema.
    pub sha256: Option<String>,
    /// Instance pointers of the values the contract declares opaque (pass-through, any
    /// JSON value by design), `*` for any key or index; listed only by tool definitions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opaque: Vec<String>,
}

impl ContractInfo {
    /// Reads the contract `_meta` entry of a tool definition or a result, if present.
    /// A result carries only `qualified` and the `id`; name, version and hash are read
    /// from the `id` when the entry does not list them.
    #[must_use]
    pub fn from_meta(meta: Option<&Value>) -> Option<Self> {
        let entry = meta?.get(META_KEY)?.as_object()?;
        let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut info = Self {
            qualified: entry.get("qualified").and_then(Value::as_bool).unwrap_or(false),
            id: text("id"),
            name: text("name"),
            version: text("version"),
            compatibility: text("compatibility"),
            sha256: text("sha256"),
            opaque: entry
                .get("opaque")
                .and_then(Value::as_array)
                .map(|pointers| pointers.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default(),
        };
        if let Some(id) = info.id.as_deref().and_then(|id| id.parse::<crate::contract::ContractId>().ok()) {
            info.name.get_or_insert_with(|| id.name().to_owned());
            info.version.get_or_insert_with(|| id.version().to_string());
            info.sha256.get_or_insert_with(|| id.sha256().to_owned());
        }
        Some(info)
    }

    /// This entry with the fields it lacks taken from `listed` (the tool definition's
    /// entry) when both name the same contract: a result's entry carries no
    /// `compatibility`.
    #[must_use]
    pub fn or_listed(mut self, listed: Option<&Self>) -> Self {
        if let Some(listed) = listed.filter(|listed| listed.id == self.id) {
            if self.compatibility.is_none() {
                self.compatibility.clone_from(&listed.compatibility);
            }
            if self.opaque.is_empty() {
                self.opaque.clone_from(&listed.opaque);
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ContractInfo;
    use crate::serve::wire::META_KEY;

    #[test]
    fn a_result_entry_is_read_from_its_id_and_completed_from_the_listing() {
        let id = format!("qe/coverage_gaps@1.2.0+sha256:{}", "a".repeat(64));
        let result = ContractInfo::from_meta(Some(&json!({ META_KEY: { "qualified": true, "id": id } }))).unwrap();
        assert!(result.qualified);
        assert_eq!(result.name.as_deref(), Some("qe/coverage_gaps"));
        assert_eq!(result.version.as_deref(), Some("1.2.0"));
        assert_eq!(result.sha256.as_deref(), Some("a".repeat(64).as_str()));
        assert_eq!(result.compatibility, None);
        let listed = ContractInfo {
            compatibility: Some("exact".to_owned()),
            opaque: vec!["/metadata".to_owned()],
            ..result.clone()
        };
        assert_eq!(result.clone().or_listed(Some(&listed)).compatibility.as_deref(), Some("exact"));
        assert_eq!(result.clone().or_listed(Some(&listed)).opaque, ["/metadata"]);
        // Control: a listing of another contract lends nothing.
        let other = ContractInfo { id: Some("other@1.0.0+sha256:b".to_owned()), ..listed };
        assert_eq!(result.or_listed(Some(&other)).compatibility, None);
        // An id that does not parse leaves the fields empty rather than guessing.
        let odd =
            ContractInfo::from_meta(Some(&json!({ META_KEY: { "qualified": true, "id": "no-at-sign" } }))).unwrap();
        assert_eq!(odd.name, None);
    }
}
