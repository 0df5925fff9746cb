//! The contracts a server publishes, each bound once to the tool that returns it.
//!
//! A [`ContractSet`] is what the rmcp adapter serves and what the build-time tooling
//! (`contract-tools`: `cargo xtask schemas`) writes and checks, so both read the same
//! list. A type listed alone is bound to the tool of its contract's name
//! (`#[tool_output(name = "…")]`, or the type's name in snake case); `Type => "tool"`
//! in [`contracts!`](crate::contracts), or [`ContractSet::bind`], binds it to a tool
//! by name: a second tool returning the same type, or each instantiation of a generic
//! result type.

use std::fmt;

use crate::contract::{ContractError, ErrorShape, LoadError, OutputContract, ToolOutput};

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
/// assert_eq!(
///     err.to_string(),
///     "tool `task_status` declares an outputSchema but has no contract: add its result type to `contracts![…]` \
///      (`Type => \"task_status\"` when the type's contract has another name)"
/// );
/// ```
#[derive(Clone, Debug, Default)]
pub struct ContractSet {
    bindings: Vec<Binding>,
    errors: Vec<ContractError>,
    /// Declared error shapes, by contract name.
    error_shapes: Vec<(&'static str, ErrorShape)>,
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

    /// Binds `T`'s contract to the tool `tool`: what `T => "tool"` in
    /// [`contracts!`](crate::contracts) writes.
    ///
    /// - For a type without type parameters, `tool` serves the type's one contract:
    ///   its schema file is written once, under the contract's name, and every tool
    ///   bound to it advertises and enforces the same schema. Use it for a second tool
    ///   returning the same type, or for a tool whose name is not the contract's.
    /// - For a generic type, each instantiation bound to a tool has its own contract
    ///   named after that tool (`schemas/<tool>.json`), so `ToolOutput<GoalData>` bound
    ///   to `set_goal` and `ToolOutput<PlanData>` bound to `make_plan` are two
    ///   contracts. Every instantiation has the version and compatibility the generic
    ///   type declares in `#[tool_output(…)]`; each has its own schema and hash.
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::{contracts, ContractSet, ToolOutput};
    ///
    /// /// Health of the agent fleet.
    /// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
    /// #[tool_output(version = "1.0.0", compatibility = "exact")]
    /// struct FleetStatus { healthy: u32 }
    ///
    /// /// The generic result wrapper of several tools.
    /// #[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
    /// #[tool_output(version = "2.0.0", compatibility = "exact")]
    /// struct Reply<D> { data: Option<D> }
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Goal { id: u32 }
    ///
    /// // `fleet_health` returns `FleetStatus` too; `set_goal` returns `Reply<Goal>`.
    /// let set = ContractSet::new().with::<FleetStatus>().bind::<FleetStatus>("fleet_health").bind::<Reply<Goal>>("set_goal");
    /// assert!(set.check().is_ok());
    /// assert_eq!(set.tools().collect::<Vec<_>>(), ["fleet_status", "fleet_health", "set_goal"]);
    /// // One schema file for both fleet tools; the instantiation is named after its tool.
    /// let names: Vec<&str> = set.contracts().iter().map(|c| c.name()).collect();
    /// assert_eq!(names, ["fleet_status", "set_goal"]);
    /// assert_eq!(set.get("set_goal").unwrap().type_name(), "Reply<Goal>");
    /// // The same set, written with the macro.
    /// let same = contracts![FleetStatus, FleetStatus => "fleet_health", Reply<Goal> => "set_goal"];
    /// assert_eq!(same.tools().collect::<Vec<_>>(), set.tools().collect::<Vec<_>>());
    /// ```
    #[must_use]
    pub fn bind<T: ToolOutput + ?Sized>(mut self, tool: &'static str) -> Self {
        self.push(T::try_contract_for(tool), Some(tool));
        self
    }

    /// `T` bound to `tool`, or to its contract's name when `None`: what each entry of
    /// [`contracts!`](crate::contracts) expands to.
    #[doc(hidden)]
    #[must_use]
    pub fn entry<T: ToolOutput + ?Sized>(self, tool: Option<&'static str>) -> Self {
        match tool {
            Some(tool) => self.bind::<T>(tool),
            None => self.with::<T>(),
        }
    }

    /// The contracts of a run-time folder (the layout of `schemas/`: one canonical schema
    /// file per contract and an `inventory.json`), each bound to the tool of its name:
    /// for tools whose result type is not a Rust type known at build time. Every file is
    /// checked as `cargo xtask schemas --check` checks a derived contract's (canonical
    /// form, the declared SHA-256, a semver version, no silent `{}`; see
    /// [`OutputContract::from_file`]).
    ///
    /// # Errors
    ///
    /// Every problem of the folder at once, each naming the file and the JSON pointer.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = contract_runtime::ContractSet::load_dir("../tests/fixtures/dynamic").unwrap();
    /// assert!(set.check().is_ok());
    /// assert!(set.get("weather").is_some());
    /// ```
    pub fn load_dir(dir: impl AsRef<std::path::Path>) -> Result<Self, LoadError> {
        let mut set = Self::new();
        for (contract, error) in crate::contract::load_dir(dir)? {
            set.push(Ok(contract), None);
            if let Some(error) = error {
                set.set_error_shape(contract.name(), error);
            }
        }
        Ok(set)
    }

    /// Declares the error shape of the contract named `contract`: a result of its tool
    /// that breaks the contract and matches the shape is the server's own error (a
    /// server that answers failures as ordinary results). Replaces an earlier one.
    pub fn set_error_shape(&mut self, contract: &'static str, shape: ErrorShape) {
        self.error_shapes.retain(|(name, _)| *name != contract);
        self.error_shapes.push((contract, shape));
    }

    /// The declared error shape of the contract named `contract`.
    #[must_use]
    pub fn error_shape(&self, contract: &str) -> Option<&ErrorShape> {
        self.error_shapes.iter().find(|(name, _)| *name == contract).map(|(_, shape)| shape)
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
                    type_name: binding.contract.type_name().to_owned(),
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
        /// The type of the first binding (with its type arguments, for a generic type).
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
        /// The type of the binding (with its type arguments, for a generic type).
        type_name: String,
    },
    /// A tool declares an `outputSchema` but no contract is bound to it.
    NoContract {
        /// The tool name.
        tool: String,
    },
}

/// Whether `type_name` names an instantiation of a generic type (`ToolOutput<GoalData>`):
/// contract type names carry their type arguments.
fn is_instantiation(type_name: &str) -> bool {
    type_name.contains('<')
}

/// The fix that binds `ty` to a tool of its own, as `contracts![…]` and `bind` write it.
fn bind_fix(ty: &str, tool: &str) -> String {
    format!("`{ty} => \"{tool}\"` in `contracts![…]`, or `.bind::<{ty}>(\"{tool}\")`")
}

impl fmt::Display for SetProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Contract(err) => err.fmt(f),
            Self::DuplicateTool { tool, first, second } if first == second => {
                write!(f, "tool `{tool}` is bound twice to `{first}`: list it once")
            }
            Self::DuplicateTool { tool, first, second } if is_instantiation(second) => write!(
                f,
                "tool `{tool}` is bound twice (to `{first}` and to `{second}`): bind each instantiation of a generic type to the tool that returns it: {}",
                bind_fix(second, "…")
            ),
            Self::DuplicateTool { tool, first, second } => {
                write!(f, "tool `{tool}` is bound twice (to `{first}` and to `{second}`): give one of them another `#[tool_output(name = \"…\")]`")
            }
            Self::DuplicateContract { contract, first, second } if is_instantiation(second) => write!(
                f,
                "types `{first}` and `{second}` both have contract `{contract}`: bind each instantiation of a generic type to the tool that returns it, which names its contract: {}",
                bind_fix(second, "…")
            ),
            Self::DuplicateContract { contract, first, second } => write!(
                f,
                "types `{first}` and `{second}` both derive contract `{contract}`: give one of them another `#[tool_output(name = \"…\")]`"
            ),
            Self::NoTool { tool, contract, type_name } => write!(
                f,
                "contract `{contract}` (type `{type_name}`) is bound to tool `{tool}`, which the server does not have: bind it to the tool that returns it, {}",
                bind_fix(type_name, "…")
            ),
            Self::NoContract { tool } => write!(
                f,
                "tool `{tool}` declares an outputSchema but has no contract: add its result type to `contracts![…]` (`Type => \"{tool}\"` when the type's contract has another name)"
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

/// Builds a [`ContractSet`] from result types: `Type` binds the type to the tool of its
/// contract's name, `Type => "tool"` binds it to `tool` (see [`ContractSet::bind`]: a
/// second tool returning the same type, or an instantiation of a generic type, whose
/// contract is then named after the tool). Type aliases work as types do.
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
/// // A second tool returning `Ping`, by name.
/// assert!(contracts![Ping, Ping => "health_check"].check().is_ok());
/// ```
#[macro_export]
macro_rules! contracts {
    ($($ty:ty $(=> $tool:expr)?),* $(,)?) => {
        $crate::ContractSet::new()$(.entry::<$ty>(::core::option::Option::<&'static str>::None $(.or(::core::option::Option::Some($tool)))?))*
    };
}
