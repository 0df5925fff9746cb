//! `--observe FILE`: what each tool's results looked like, recorded as they pass (counts,
//! JSON types and property names per instance pointer, whether the tool's schema names
//! each property; never values; and the keys a result's JSON text block and its
//! `structuredContent` do not share), and written to FILE after every result, so the file
//! is whole whenever the proxy stops. `tool-contracts schemas --suggest FILE` reads it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use contract_runtime::observed::Observed;
use serde_json::Value;

/// The observations of one proxy run and the file they are written to.
#[derive(Debug)]
pub(crate) struct Observer {
    path: PathBuf,
    observed: Mutex<Observed>,
    /// Whether a failure to write was reported (once).
    failed: AtomicBool,
}

impl Observer {
    /// Observations written to `path`, added to those it holds already (each client
    /// session a client configuration starts is a proxy run of its own). The file is
    /// written once now: a path that cannot be written, or a file that holds something
    /// else, is a start error.
    pub(crate) fn create(path: PathBuf) -> Result<Self, String> {
        let shown = path.display().to_string();
        let observed = match std::fs::read_to_string(&path) {
            Ok(text) if text.trim().is_empty() => Observed::default(),
            Ok(text) => serde_json::from_str::<Observed>(&text).map_err(|err| {
                format!(
                    "--observe {shown}: the file holds something other than observations ({err}); name a new file, \
                     or remove this one"
                )
            })?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Observed::default(),
            Err(err) => return Err(format!("--observe {shown}: {err}")),
        };
        observer_write(&path, &observed).map_err(|err| format!("--observe {shown}: {err}"))?;
        Ok(Self { path, observed: Mutex::new(observed), failed: AtomicBool::new(false) })
    }

    /// Records one result of `tool` (its `structuredContent`, or its one JSON text
    /// block) and writes the file.
    pub(crate) fn record(&self, tool: &str, result: &Value, schema: Option<&Value>) {
        let Some(value) = observed_value(result) else { return };
        let mismatch = contract_runtime::client::structured_text_mismatch(result);
        let snapshot = {
            let mut observed = self.observed.lock().unwrap_or_else(PoisonError::into_inner);
            observed.record(tool, &value, schema);
            if let Some(mismatch) = &mismatch {
                observed.record_mismatch(tool, &mismatch.only_in_text, &mismatch.only_in_structured);
            }
            observed.clone()
        };
        if let Err(err) = observer_write(&self.path, &snapshot) {
            if !self.failed.swap(true, Ordering::Relaxed) {
                tracing::warn!(file = %self.path.display(), error = %err, "--observe: the file cannot be written");
            }
        }
    }
}

/// Writes `observed` beside `path` and moves it into place, so a reader never sees half
/// a file.
fn observer_write(path: &Path, observed: &Observed) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(observed).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".{}.partial", std::process::id()));
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, path)
}

/// What is observed of a result: its `structuredContent`, or the JSON its one text block
/// holds; `None` for anything else (prose, several blocks, an error).
fn observed_value(result: &Value) -> Option<Value> {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    if let Some(structured) = result.get("structuredContent") {
        return Some(structured.clone());
    }
    match result.get("content").and_then(Value::as_array).map(Vec::as_slice) {
        Some([block]) if block.get("type").and_then(Value::as_str) == Some("text") => {
            block.get("text").and_then(Value::as_str).and_then(|text| serde_json::from_str(text).ok())
        }
        _ => None,
    }
}
