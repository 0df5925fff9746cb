//! Support for the derive's generated code. Not a public API.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

pub use schemars;
pub use serde;

pub use crate::contract::schema::{all_or_none_of, key_names_of};
use crate::contract::{ContractError, OutputContract};
pub use crate::contract::{ContractSpec, SchemaFact};

/// The per-type cache of a non-generic contract.
#[derive(Debug)]
pub struct ContractCell(OnceLock<Result<OutputContract, ContractError>>);

impl ContractCell {
    #[must_use]
    pub const fn new() -> Self {
        Self(OnceLock::new())
    }

    pub fn get_or_build<T: schemars::JsonSchema + ?Sized>(
        &'static self,
        spec: &ContractSpec,
    ) -> Result<&'static OutputContract, ContractError> {
        self.0.get_or_init(|| OutputContract::build::<T>(spec)).as_ref().map_err(Clone::clone)
    }
}

impl Default for ContractCell {
    fn default() -> Self {
        Self::new()
    }
}

/// Contracts of generic types by instantiation, each with the tool it is bound to
/// (`None`: not bound, named as the derive names it). A type has few tools: a list.
type Registry = RwLock<HashMap<TypeId, Vec<(Option<&'static str>, Entry)>>>;

type Entry = &'static Result<OutputContract, ContractError>;

/// The contract of a generic type, one per instantiation and tool: bound to `tool`, it
/// is named after the tool; unbound, as the derive names it. Its type name carries the
/// type arguments (`ToolOutput<GoalData>`). Entries live for the process, like the
/// statics of non-generic contracts.
pub fn generic_contract<T: schemars::JsonSchema + 'static>(
    spec: &ContractSpec,
    tool: Option<&str>,
) -> Result<&'static OutputContract, ContractError> {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    let registry = REGISTRY.get_or_init(Registry::default);
    // Bound to the tool of its own name, it is the unbound contract.
    let tool = tool.filter(|tool| *tool != spec.name);
    let find = |entries: &[(Option<&'static str>, Entry)]| entries.iter().find(|(t, _)| *t == tool).map(|(_, e)| *e);
    let id = TypeId::of::<T>();
    let cached = registry.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(&id).and_then(|e| find(e));
    let entry = if let Some(entry) = cached {
        entry
    } else {
        // Leaked once per instantiation and tool, as the contract itself is.
        let type_name: &'static str = Box::leak(short_type_name(std::any::type_name::<T>()).into_boxed_str());
        let tool: Option<&'static str> = tool.map(|tool| &*Box::leak(tool.to_owned().into_boxed_str()));
        let spec = ContractSpec { name: tool.unwrap_or(spec.name), type_name, ..*spec };
        let built = OutputContract::build::<T>(&spec);
        let mut map = registry.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let entries = map.entry(id).or_default();
        if let Some(entry) = find(entries) {
            entry
        } else {
            let entry: Entry = Box::leak(Box::new(built));
            entries.push((tool, entry));
            entry
        }
    };
    entry.as_ref().map_err(Clone::clone)
}

/// `std::any::type_name` without module paths: `ToolOutput<GoalData>` for
/// `my_server::ToolOutput<my_server::GoalData>`.
#[must_use]
pub fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut path = String::new();
    let flush = |path: &mut String, out: &mut String| {
        out.push_str(path.rsplit("::").next().unwrap_or(path));
        path.clear();
    };
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            path.push(c);
        } else {
            flush(&mut path, &mut out);
            out.push(c);
        }
    }
    flush(&mut path, &mut out);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn type_names_lose_their_module_paths_only() {
        let short = super::short_type_name;
        assert_eq!(short("my_server::ToolOutput<my_server::data::GoalData>"), "ToolOutput<GoalData>");
        assert_eq!(short("a::Pair<core::option::Option<b::X>, [u8; 3]>"), "Pair<Option<X>, [u8; 3]>");
        assert_eq!(short("Plain"), "Plain");
        assert_eq!(short("a::Grid<2>"), "Grid<2>");
    }
}
