//! Contracts bound at run time, to tools the handler registers after the server started
//! (registry-backed, bridged or lazily registered tools): [`ContractedServer::bind`],
//! [`ContractedServer::unbind`] and [`ContractedServer::notify_tool_list_changed`], which
//! re-checks every binding before it tells the client to list the tools again.

use rmcp::service::{Peer, RoleServer};
use rmcp::ServerHandler;

use super::{AdapterError, ContractedServer};
use crate::contract::OutputContract;

impl<H: ServerHandler> ContractedServer<H> {
    /// Binds `contract` to `tool`, a tool the handler has registered at run time (rmcp's
    /// `ToolRouter::add_route`, a registry, a bridge): from then on `tools/list`
    /// advertises the contract for it and every call of it is enforced, on this server
    /// and on every clone of it (each streamable HTTP session). Binding a tool again
    /// replaces its contract (a re-registered tool with a new schema); cached results of
    /// the old identity are never served under the new one. Returns the contract it
    /// replaced.
    ///
    /// The contract usually comes from a checked-in file
    /// ([`ContractSet::load_dir`](crate::set::ContractSet::load_dir),
    /// [`OutputContract::from_file`]); a derived one binds as well. Register the tool
    /// before binding it, bind it before telling the client
    /// ([`ContractedServer::notify_tool_list_changed`]).
    ///
    /// # Errors
    ///
    /// The handler's `get_tool` does not know `tool`, or another tool is bound to a
    /// different contract of the same name (a contract name has one schema at a time).
    pub fn bind(
        &self,
        tool: impl Into<String>,
        contract: &'static OutputContract,
    ) -> Result<Option<&'static OutputContract>, AdapterError> {
        let tool = tool.into();
        let mut problems = Vec::new();
        if self.inner().get_tool(&tool).is_none() {
            problems.push(format!(
                "contract `{}` cannot be bound to tool `{tool}`: the handler's `get_tool` does not know it; register \
                 the tool first, then bind its contract",
                contract.name()
            ));
        }
        let mut contracts = self.enforcer.shared.contracts_mut();
        let clash = contracts.iter().find(|(other, bound)| {
            **other != tool && bound.name() == contract.name() && !std::ptr::eq(**bound, contract)
        });
        if let Some((other, bound)) = clash {
            problems.push(format!(
                "contract `{}` cannot be bound to tool `{tool}`: tool `{other}` is bound to another contract of that \
                 name ({}); bind the same contract to both, or unbind `{other}` first",
                contract.name(),
                bound.id()
            ));
        }
        if !problems.is_empty() {
            return Err(AdapterError { problems });
        }
        Ok(contracts.insert(tool, contract))
    }

    /// Removes the contract bound to `tool` (a tool the handler unregistered); returns it.
    /// A tool the handler still has is then served unvalidated (`qualified: false`).
    #[allow(clippy::must_use_candidate)] // Unbinding is the point; the contract is a courtesy.
    pub fn unbind(&self, tool: &str) -> Option<&'static OutputContract> {
        self.enforcer.shared.contracts_mut().remove(tool)
    }

    /// Every binding against the handler's tools as they are now: each bound tool must
    /// still be known to the handler's `get_tool`.
    ///
    /// # Errors
    ///
    /// Every binding whose tool is gone, each with its fix.
    pub fn check_bindings(&self) -> Result<(), AdapterError> {
        // Copied out first: the handler's `get_tool` runs without the bindings locked.
        let bindings: Vec<(String, &'static OutputContract)> =
            self.enforcer.shared.contracts().iter().map(|(tool, contract)| (tool.clone(), *contract)).collect();
        let problems: Vec<String> = bindings
            .iter()
            .filter(|(tool, _)| self.inner().get_tool(tool).is_none())
            .map(|(tool, contract)| {
                format!(
                    "contract `{}` is bound to tool `{tool}`, which the handler no longer has: unbind it \
                     (`ContractedServer::unbind`) or register the tool again",
                    contract.name()
                )
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(AdapterError { problems })
        }
    }

    /// Sends `notifications/tools/list_changed` to `peer` once every binding passes
    /// [`ContractedServer::check_bindings`]: the client lists the tools again and sees
    /// each run-time tool with its contract. Nothing is sent when a binding is broken.
    ///
    /// # Errors
    ///
    /// The problems of [`ContractedServer::check_bindings`], or the notification could
    /// not be sent (the peer is gone).
    pub async fn notify_tool_list_changed(&self, peer: &Peer<RoleServer>) -> Result<(), AdapterError> {
        self.check_bindings()?;
        peer.notify_tool_list_changed().await.map_err(|err| AdapterError {
            problems: vec![format!("notifications/tools/list_changed could not be sent: {err}")],
        })
    }
}
