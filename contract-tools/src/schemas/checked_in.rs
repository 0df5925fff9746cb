//! What is checked in: the files, the inventory's versions, removed contracts, and how one contract compares with them.

#[allow(clippy::wildcard_imports)] // One unit split by concern: the parent holds the shared imports.
use super::*;

/// Contracts that are checked in but that no type produces any more: every inventory
/// entry whose name no contract has, and every orphan schema file no inventory entry
/// claims. Each is a breaking removal, not mere drift: the tool is gone for its clients.
pub(super) fn removed_contracts(
    shown: &str,
    inventory: &CheckedInInventory,
    files: &[(String, FileState)],
    reviews: &[ContractReview],
) -> Vec<ContractReview> {
    let removed = |name: &str, file: String, type_name: String, old_version: Option<Version>| ContractReview {
        name: name.to_owned(),
        shown_file: format!("{shown}/{file}"),
        file,
        type_name,
        status: Status::Removed,
        old_version,
        new_version: None,
        changes: vec![Change::contract_removed(name)],
        locations: vec![None],
        policy: Policy::Ok,
        problem: None,
        origin: Origin::Derived,
    };
    let produced = |name: &str| reviews.iter().any(|r| r.name == name);
    let mut out = Vec::new();
    let mut claimed = Vec::new();
    if let CheckedInInventory::Read(entries) = inventory {
        for (name, entry) in entries.iter().filter(|(name, _)| !produced(name)) {
            let file = entry.file.clone().unwrap_or_else(|| file_name(name));
            claimed.push(file.clone());
            out.push(removed(name, file, entry.type_name.clone().unwrap_or_default(), Some(entry.version.clone())));
        }
    }
    for (file, _) in files.iter().filter(|(f, state)| *state == FileState::Orphan && !claimed.contains(f)) {
        // The name as `file_name` wrote it: `__` stood for `/`.
        let name = file.strip_suffix(".json").unwrap_or(file).replace("__", "/");
        // A declared error shape no longer declared: an orphan file, not a contract.
        if name
            .strip_suffix(".error")
            .is_some_and(|base| produced(base) || claimed.iter().any(|c| *c == file_name(base)))
        {
            continue;
        }
        out.push(removed(&name, file.clone(), String::new(), None));
    }
    out
}

/// Reviews one contract against its checked-in file: `text` is the file's normalized
/// text, `None` when it does not exist, or why it could not be read.
pub(super) fn review_contract(
    shown: &str,
    inventory: &CheckedInInventory,
    contract: &OutputContract,
    text: Option<Result<&str, &str>>,
) -> ContractReview {
    let file = file_name(contract.name());
    let mut review = ContractReview {
        name: contract.name().to_owned(),
        file: file.clone(),
        shown_file: format!("{shown}/{file}"),
        type_name: contract.type_name().to_owned(),
        status: Status::New,
        old_version: None,
        new_version: Some(contract.version().clone()),
        changes: Vec::new(),
        locations: Vec::new(),
        policy: Policy::Ok,
        problem: None,
        origin: Origin::Derived,
    };
    let shown_file = review.shown_file.clone();
    let text = match text {
        Some(Ok(text)) => text,
        None => return review,
        Some(Err(problem)) => return review.unreadable(problem.to_owned()),
    };
    if text.as_bytes() != contract.canonical_bytes() {
        let old: Value = match serde_json::from_str(text) {
            Ok(old) => old,
            Err(err) => {
                return review.unreadable(format!(
                    "{shown_file}: line {} column {}: not valid JSON ({})",
                    err.line(),
                    err.column(),
                    strip_position(&err.to_string())
                ));
            }
        };
        if let Err(problem) = evolution::check_schema(&old) {
            let line = line_of(text, problem.pointer()).map_or_else(String::new, |l| format!(" (near line {l})"));
            return review.unreadable(format!("{shown_file}: not a JSON Schema {problem}{line}"));
        }
        review.changes = evolution::diff(&old, contract.schema());
        let new_text = String::from_utf8_lossy(contract.canonical_bytes());
        review.locations = review
            .changes
            .iter()
            .map(|change| {
                let (side, pointer) = change.file_pointer()?;
                let in_text = if side == Side::Old { text } else { &new_text };
                Some(Location { side, pointer: pointer.to_owned(), line: line_of(in_text, pointer)? })
            })
            .collect();
    }
    review.status = if review.changes.is_empty() { Status::Unchanged } else { Status::Changed };
    match inventory.version_of(contract.name()) {
        Ok(Some(old_version)) => {
            review.policy = evolution::version_policy(&old_version, contract.version(), &review.changes);
            review.old_version = Some(old_version);
        }
        // An unchanged schema needs no bump, so its old version is not needed.
        Ok(None) | Err(_) if review.changes.is_empty() => {}
        Ok(None) => {
            return review.unreadable(format!(
                "{shown}/{INVENTORY} has no entry for `{}`, so the checked-in version of {shown_file} is unknown",
                contract.name()
            ));
        }
        Err(problem) => return review.unreadable(problem.clone()),
    }
    review
}

/// The checked-in inventory: the version (and file and type) each contract had.
pub(super) enum CheckedInInventory {
    Missing,
    Read(BTreeMap<String, Entry>),
    Bad(String),
}

/// One contract as the checked-in inventory lists it.
pub(super) struct Entry {
    version: Version,
    file: Option<String>,
    type_name: Option<String>,
}

impl CheckedInInventory {
    pub(super) fn read(dir: &Path, shown: &str) -> Self {
        let shown_file = format!("{shown}/{INVENTORY}");
        let text = match std::fs::read_to_string(dir.join(INVENTORY)) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Self::Missing,
            Err(err) => return Self::Bad(format!("{shown_file}: {err}")),
        };
        let value: Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(err) => {
                return Self::Bad(format!(
                    "{shown_file}: line {} column {}: not valid JSON ({})",
                    err.line(),
                    err.column(),
                    strip_position(&err.to_string())
                ));
            }
        };
        let bad = |pointer: &str, what: &str| {
            let line = line_of(&text, pointer).map_or_else(String::new, |l| format!(" (near line {l})"));
            Self::Bad(format!("{shown_file}: at {pointer}{line}: {what}"))
        };
        let Some(entries) = value.get("contracts").and_then(Value::as_array) else {
            return bad("/contracts", "expected a list of contracts");
        };
        let mut versions = BTreeMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let Some(name) = entry.get("name").and_then(Value::as_str) else {
                return bad(&format!("/contracts/{i}/name"), "expected the contract name");
            };
            let version = entry.get("version").and_then(Value::as_str).map(Version::parse);
            let Some(Ok(version)) = version else {
                return bad(&format!("/contracts/{i}/version"), "expected a semver version such as \"1.2.0\"");
            };
            let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
            versions.insert(name.to_owned(), Entry { version, file: text("file"), type_name: text("type") });
        }
        Self::Read(versions)
    }

    pub(super) fn version_of(&self, name: &str) -> Result<Option<Version>, String> {
        match self {
            Self::Missing => Ok(None),
            Self::Read(versions) => Ok(versions.get(name).map(|e| e.version.clone())),
            Self::Bad(problem) => Err(problem.clone()),
        }
    }
}

/// serde_json appends " at line L column C" to its messages; the caller says it first.
pub(crate) fn strip_position(message: &str) -> &str {
    message.find(" at line ").map_or(message, |i| &message[..i])
}

/// The 1-based line where the node at `pointer` is written in the JSON `text`: the
/// line of its key in an object, of its first character in an array (line 1 for the
/// root). Exact for any JSON text; `None` when the text has no node there.
pub(crate) fn line_of(text: &str, pointer: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut pos = skip_space(bytes, 0);
    let mut start = pos;
    for token in contract_runtime::pointer::tokens(pointer) {
        match bytes.get(pos)? {
            b'{' => {
                pos += 1;
                loop {
                    pos = skip_space(bytes, pos);
                    let key_start = pos;
                    let key_end = skip_string(bytes, pos)?;
                    let key: String = serde_json::from_str(&text[key_start..key_end]).ok()?;
                    pos = skip_space(bytes, key_end);
                    if bytes.get(pos) != Some(&b':') {
                        return None;
                    }
                    pos = skip_space(bytes, pos + 1);
                    if key == token {
                        start = key_start;
                        break;
                    }
                    pos = skip_space(bytes, skip_value(bytes, pos)?);
                    if bytes.get(pos) != Some(&b',') {
                        return None;
                    }
                    pos += 1;
                }
            }
            b'[' => {
                let index: usize = token.parse().ok()?;
                pos = skip_space(bytes, pos + 1);
                for _ in 0..index {
                    pos = skip_space(bytes, skip_value(bytes, pos)?);
                    if bytes.get(pos) != Some(&b',') {
                        return None;
                    }
                    pos = skip_space(bytes, pos + 1);
                }
                if matches!(bytes.get(pos), None | Some(b']')) {
                    return None;
                }
                start = pos;
            }
            _ => return None,
        }
    }
    Some(text[..start].matches('\n').count() + 1)
}

fn skip_space(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// The end of the string that starts at `pos` (after its closing quote).
fn skip_string(bytes: &[u8], mut pos: usize) -> Option<usize> {
    if bytes.get(pos) != Some(&b'"') {
        return None;
    }
    pos += 1;
    loop {
        match bytes.get(pos)? {
            b'\\' => pos += 2,
            b'"' => return Some(pos + 1),
            _ => pos += 1,
        }
    }
}

/// The end of the value that starts at `pos`.
fn skip_value(bytes: &[u8], mut pos: usize) -> Option<usize> {
    match bytes.get(pos)? {
        b'"' => skip_string(bytes, pos),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match bytes.get(pos)? {
                    b'"' => {
                        pos = skip_string(bytes, pos)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(pos + 1);
                        }
                    }
                    _ => {}
                }
                pos += 1;
            }
        }
        _ => {
            while bytes.get(pos).is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
                pos += 1;
            }
            Some(pos)
        }
    }
}

/// What the checked-in copy of one generated file looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum FileState {
    UpToDate,
    /// The unified diff from the checked-in text to the generated text.
    Stale(String),
    Missing,
    Orphan,
    Unreadable(String),
}
