//! What the schema lint tests share: a refusal by the lint, and an acceptance.

use contract_runtime::{ContractError, OutputContract, ToolOutput};

/// The refusal of `T`, or a panic naming what was accepted. Only the "accepts anything"
/// lints carry a schema pointer, so a refusal for another reason fails here too.
pub(crate) fn refusal<T: ToolOutput>() -> ContractError {
    match T::try_contract() {
        Ok(contract) => panic!("`{}` must be refused, got {}", contract.type_name(), contract.id()),
        Err(err) if err.pointer().is_some() && err.to_string().contains("any JSON value") => err,
        Err(err) => panic!("refused for another reason than the lint: {err}"),
    }
}

pub(crate) fn accepted<T: ToolOutput>() -> &'static OutputContract {
    T::try_contract().unwrap_or_else(|err| panic!("must be accepted: {err}"))
}
