//! The contracts a server publishes, each bound once to the tool that returns it.
//!
//! A [`ContractSet`] is what the rmcp adapter serves and what the build-time tooling
//! (`contract-tools`: `cargo xtask schemas`) writes and checks, so both read the same
//! list. A tool's name is the contract's name (`#[tool_output(name = "…")]`, or the
//! type's name in snake case), written once next to the type; [`ContractSet::bind`]
//! covers the rare tool that serves another tool's contract.

use std::fmt;

use crate::contract::{ContractError, OutputContract, ToolOutput};

/// A list of output contracts, each bound to a tool name.
///
/// Build it with [`contracts!`](crate::contracts). Problems — a contract that fails to
/// build, two bindings for one tool name — are collected rather than raised, so that
/// every consumer reports all of them at once: [`ContractSet::check`] returns them, the
/// schemas CLI prints them, the rmcp adapter refuses to start with them.
///
/// # Examples
///
/// ```
/// use contract_runtime::{contracts, ToolOutput};
///
/// /// Health of the agent fleet.
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct FleetStatus { healthy: u32 }
///
/// let set = contracts![FleetStatus];
/// assert!(set.check().is_ok());
/// assert_eq!(set.tools().collect::<Vec<_>>(), ["fleet_status"]);
///
/// // The server's own tool list is checked against the set: a contract without its
/// // tool, or a structured tool without a contract, is reported by name.
/// let err = set.check_tools([("fleet_status", true), ("task_status", true)]).unwrap_err();
/// assert_eq!(err.to_string(), "tool `task_status` declares an outputSchema but has no contract: add its result type to `contracts![…]`");
/// ```
#[derive(Clone, Debug, Default)]
pub struct ContractSet {
    bindings: Vec<Binding>,
    errors: Vec<ContractError>,
}

/// One tool bound to its contract.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    tool: &'static str,
    contract: &'static OutputContract,
}

impl Binding {
    /// The tool name.
    #[must_use]
    pub fn tool(&self) -> &'static str {
        self.tool
    }

    /// The contract its results are checked against.
    #[must_use]
    pub fn contract(&self) -> &'static OutputContract {
        self.contract
    }
}

impl ContractSet {
    /// An empty set.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `T`'s contract, bound to the tool of the same name.
    #[must_use]
    pub fn with<T: ToolOutput + ?Sized>(mut self) -> Self {
        self.push(T::try_contract(), None);
        self
    }

    /// Binds `T`'s contract to one more tool, `tool`, which returns the same type.
    ///
    /// The contract's schema file is written once, under the contract's name; the
    /// extra tool advertises and enforces the same schema.
    #[must_use]
    pub fn bind<T: ToolOutput + ?Sized>(mut self, tool: &'static str) -> Self {
        self.push(T::try_contract(), Some(tool));
        self
    }

    /// Adds a contract that may have failed to build (what
    /// [`ToolOutput::try_contract`] returns), bound to `tool` or, when `None`, to the
    /// contract's own name.
    pub fn push(&mut self, contract: Result<&'static OutputContract, ContractError>, tool: Option<&'static str>) {
        match contract {
            Ok(contract) => {
                // A contract name lives as long as its contract, which is 'static.
                let tool = tool.unwrap_or_else(|| contract.name());
                self.bindings.push(Binding { tool, contract });
            }
            Err(err) => self.errors.push(err),
        }
    }

    /// Every binding, in the order they were added.
    pub fn bindings(&self) -> impl Iterator<Item = Binding> + '_ {
        self.bindings.iter().copied()
    }

    /// Every bound tool name, in the order they were added.
    pub fn tools(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.bindings.iter().map(|b| b.tool)
    }

    /// The contract bound to `tool`.
    #[must_use]
    pub fn get(&self, tool: &str) -> Option<&'static OutputContract> {
        self.bindings.iter().find(|b| b.tool == tool).map(|b| b.contract)
    }

    /// Each distinct contract once (a contract bound to several tools appears once), in
    /// the order they were first added: what `schemas/` holds.
    #[must_use]
    pub fn contracts(&self) -> Vec<&'static OutputContract> {
        let mut out: Vec<&'static OutputContract> = Vec::new();
        for binding in &self.bindings {
            if !out.iter().any(|c| std::ptr::eq(*c, binding.contract)) {
                out.push(binding.contract);
            }
        }
        out
    }

    /// The set taken apart: the contracts that failed to build, and the bindings.
    #[must_use]
    pub fn into_parts(self) -> (Vec<ContractError>, Vec<Binding>) {
        (self.errors, self.bindings)
    }

    /// The contracts that failed to build.
    #[must_use]
    pub fn errors(&self) -> &[ContractError] {
        &self.errors
    }

    /// Number of bindings.
    #[must_use]
    pub fn len(&self) -> usize {
        self.bindings.len()
    }

    /// Whether the set binds no tool.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.bindings.is_empty()
    }

    /// Every problem of the set on its own: contracts that failed to build, a tool name
    /// bound twice, and two different contracts sharing a name (their schema files
    /// would collide).
    ///
    /// # Errors
    ///
    /// A [`SetError`] listing every problem found.
    pub fn check(&self) -> Result<(), SetError> {
        let mut problems: Vec<SetProblem> = self.errors.iter().cloned().map(SetProblem::Contract).collect();
        for (i, binding) in self.bindings.iter().enumerate() {
            let earlier = &self.bindings[..i];
            if let Some(first) = earlier.iter().find(|b| b.tool == binding.tool) {
                problems.push(SetProblem::DuplicateTool {
                    tool: binding.tool.to_owned(),
                    first: first.contract.type_name().to_owned(),
                    second: binding.contract.type_name().to_owned(),
                });
            } else if let Some(other) = earlier
                .iter()
                .find(|b| b.contract.name() == binding.contract.name() && !std::ptr::eq(b.contract, binding.contract))
            {
                problems.push(SetProblem::DuplicateContract {
                    contract: binding.contract.name().to_owned(),
                    first: other.contract.type_name().to_owned(),
                    second: binding.contract.type_name().to_owned(),
                });
            }
        }
        SetError::from_problems(problems)
    }

    /// [`ContractSet::check`], plus the set against the server's tools: `tools` gives
    /// each tool's name and whether it declares an `outputSchema` (a tool that returns
    /// structured content). A binding whose tool the server does not have, and a
    /// structured tool without a contract, are problems; a plain-text tool without one
    /// is not (it is served as `qualified: false`).
    ///
    /// # Errors
    ///
    /// A [`SetError`] listing every problem found.
    pub fn check_tools<'a>(&self, tools: impl IntoIterator<Item = (&'a str, bool)>) -> Result<(), SetError> {
        let mut problems = self.check().err().map(SetError::into_problems).unwrap_or_default();
        let tools: Vec<(&str, bool)> = tools.into_iter().collect();
        for binding in &self.bindings {
            if !tools.iter().any(|(name, _)| *name == binding.tool) {
                problems.push(SetProblem::NoTool {
                    tool: binding.tool.to_owned(),
                    contract: binding.contract.name().to_owned(),
                });
            }
        }
        for (name, structured) in tools {
            if structured && self.get(name).is_none() {
                problems.push(SetProblem::NoContract { tool: name.to_owned() });
            }
        }
        SetError::from_problems(problems)
    }
}

/// One problem of a [`ContractSet`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetProblem {
    /// A contract failed to build.
    Contract(ContractError),
    /// Two bindings name the same tool.
    DuplicateTool {
        /// The tool name.
        tool: String,
        /// The type of the first binding.
        first: String,
        /// The type of the second binding.
        second: String,
    },
    /// Two different types derive a contract of the same name.
    DuplicateContract {
        /// The contract name.
        contract: String,
        /// The first type.
        first: String,
        /// The second type.
        second: String,
    },
    /// A contract is bound to a tool the server does not have.
    NoTool {
        /// The tool name of the binding.
        tool: String,
        /// The contract name.
        contract: String,
    },
    /// A tool declares an `outputSchema` but no contract is bound to it.
    NoContract {
        /// The tool name.
        tool: String,
    },
}

impl fmt::Display for SetProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Contract(err) => err.fmt(f),
            Self::DuplicateTool { tool, first, second } => {
                write!(f, "tool `{tool}` is bound twice (to `{first}` and to `{second}`): give one of them another `#[tool_output(name = \"…\")]`")
            }
            Self::DuplicateContract { contract, first, second } => write!(
                f,
                "types `{first}` and `{second}` both derive contract `{contract}`: give one of them another `#[tool_output(name = \"…\")]`"
            ),
            Self::NoTool { tool, contract } => write!(
                f,
                "contract `{contract}` is bound to tool `{tool}`, which the server does not have: rename the tool or the contract (`#[tool_output(name = \"…\")]`)"
            ),
            Self::NoContract { tool } => write!(
                f,
                "tool `{tool}` declares an outputSchema but has no contract: add its result type to `contracts![…]`"
            ),
        }
    }
}

/// Every problem of a [`ContractSet`], one per line when displayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetError {
    problems: Vec<SetProblem>,
}

impl SetError {
    fn from_problems(problems: Vec<SetProblem>) -> Result<(), Self> {
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Self { problems })
        }
    }

    /// Every problem found.
    #[must_use]
    pub fn problems(&self) -> &[SetProblem] {
        &self.problems
    }

    /// The problems, owned.
    #[must_use]
    pub fn into_problems(self) -> Vec<SetProblem> {
        self.problems
    }
}

impl fmt::Display for SetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            problem.fmt(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for SetError {}

/// Builds a [`ContractSet`] from result types, each bound to the tool of its contract's
/// name.
///
/// # Examples
///
/// ```
/// use contract_runtime::{contracts, ToolOutput};
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Ping { ok: bool }
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(name = "ping", version = "1.0.0", compatibility = "exact")]
/// struct Pong { ok: bool }
///
/// assert!(contracts![Ping].check().is_ok());
/// // Two types claiming one tool name is reported, not discovered at startup.
/// let err = contracts![Ping, Pong].check().unwrap_err();
/// assert!(err.to_string().starts_with("tool `ping` is bound twice"));
/// ```
#[macro_export]
macro_rules! contracts {
    ($($ty:ty),* $(,)?) => {
        $crate::ContractSet::new()$(.with::<$ty>())*
    };
}
