//! What drift is let through.

use super::drift::{DriftStatus, ToolDrift};
use crate::contract::evolution::tool::{ToolChange, ToolVerdict};

/// What happens to a tool that drifted from its pin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Served as listed now.
    Pass,
    /// Held back: its calls are refused before anything is sent, and its definition is
    /// kept from the model, until it is pinned again.
    Quarantine,
}

/// Which drift quarantines a tool. The default quarantines a tool whose text changed (a
/// model reads it: someone must read it first), a tool with a breaking change, a tool
/// that lost an output property a client may read ([`ToolVerdict::Lost`]), and a tool
/// that is not in the lock; an additive or cosmetic change passes.
///
/// ```
/// use contract_runtime::client::lock::{Action, LockPolicy};
///
/// let strict = LockPolicy::default().additive(Action::Quarantine).cosmetic(Action::Quarantine);
/// let texts_reviewed_elsewhere = LockPolicy::default().text(Action::Pass);
/// // No client of ours reads the optional output properties a server drops.
/// let removals_accepted = LockPolicy::default().lost_output(Action::Pass);
/// # let _ = (strict, texts_reviewed_elsewhere, removals_accepted);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LockPolicy {
    text: Action,
    breaking: Action,
    additive: Action,
    lost: Action,
    cosmetic: Action,
    added: Action,
}

impl Default for LockPolicy {
    fn default() -> Self {
        Self {
            text: Action::Quarantine,
            breaking: Action::Quarantine,
            additive: Action::Pass,
            lost: Action::Quarantine,
            cosmetic: Action::Pass,
            added: Action::Quarantine,
        }
    }
}

impl LockPolicy {
    /// Every change quarantines, however small: a digest that moved is enough.
    #[must_use]
    pub fn any_change() -> Self {
        Self {
            text: Action::Quarantine,
            breaking: Action::Quarantine,
            additive: Action::Quarantine,
            lost: Action::Quarantine,
            cosmetic: Action::Quarantine,
            added: Action::Quarantine,
        }
    }

    /// What a changed text does.
    #[must_use]
    pub fn text(mut self, action: Action) -> Self {
        self.text = action;
        self
    }

    /// What a breaking change does.
    #[must_use]
    pub fn breaking(mut self, action: Action) -> Self {
        self.breaking = action;
        self
    }

    /// What an additive change does.
    #[must_use]
    pub fn additive(mut self, action: Action) -> Self {
        self.additive = action;
        self
    }

    /// What the removal of an optional output property does ([`ToolVerdict::Lost`]):
    /// quarantine by default, since a client that read it loses it.
    #[must_use]
    pub fn lost_output(mut self, action: Action) -> Self {
        self.lost = action;
        self
    }

    /// What a cosmetic change (the same meaning, other bytes) does.
    #[must_use]
    pub fn cosmetic(mut self, action: Action) -> Self {
        self.cosmetic = action;
        self
    }

    /// What a tool that is not in the lock does.
    #[must_use]
    pub fn added_tools(mut self, action: Action) -> Self {
        self.added = action;
        self
    }

    /// The action for one tool's drift: quarantine when any of its changes asks for it.
    /// A removed tool has nothing to serve: [`Action::Pass`].
    #[must_use]
    pub fn judge(&self, drift: &ToolDrift) -> Action {
        match drift.status() {
            DriftStatus::Removed => return Action::Pass,
            DriftStatus::Added => return self.added,
            DriftStatus::Changed => {}
        }
        // A digest moved with nothing classified: the bytes changed, nothing else.
        let verdicts = drift.changes().iter().map(ToolChange::verdict);
        let mut actions =
            verdicts.map(|v| self.for_verdict(v)).chain(drift.changes().is_empty().then_some(self.cosmetic));
        if actions.any(|a| a == Action::Quarantine) {
            Action::Quarantine
        } else {
            Action::Pass
        }
    }

    fn for_verdict(self, verdict: ToolVerdict) -> Action {
        match verdict {
            ToolVerdict::Text => self.text,
            ToolVerdict::Breaking => self.breaking,
            ToolVerdict::Additive => self.additive,
            ToolVerdict::Lost => self.lost,
            ToolVerdict::Cosmetic => self.cosmetic,
        }
    }
}
