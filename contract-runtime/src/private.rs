//! Support for the derive's generated code. Not a public API.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

pub use schemars;
pub use serde;

pub use crate::contract::schema::{all_or_none_of, key_names_of};
pub use crate::contract::ContractSpec;
use crate::contract::{ContractError, OutputContract};

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

type Registry = RwLock<HashMap<TypeId, &'static Result<OutputContract, ContractError>>>;

/// The contract of a generic type, one per instantiation. Entries live for the
/// process, like the statics of non-generic contracts.
pub fn generic_contract<T: schemars::JsonSchema + 'static>(
    spec: &ContractSpec,
) -> Result<&'static OutputContract, ContractError> {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    let registry = REGISTRY.get_or_init(Registry::default);
    let id = TypeId::of::<T>();
    let cached = registry.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(&id).copied();
    let entry = if let Some(entry) = cached {
        entry
    } else {
        let built = OutputContract::build::<T>(spec);
        let mut map = registry.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        *map.entry(id).or_insert_with(|| Box::leak(Box::new(built)))
    };
    entry.as_ref().map_err(Clone::clone)
}
