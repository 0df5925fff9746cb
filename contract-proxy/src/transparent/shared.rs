//! What the relay of one upstream session shares across its client's requests
//! ([`Shared`]): the policy, the latest judged listing, the timeout of a forwarded request
//! and the tasks its calls were answered with.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use contract_runtime::wire::ErrorCode;
use serde_json::{Map, Value};

use super::tasks::{TaskBook, TaskRecord};
use crate::verdicts::{error_result, Listing, Policy};

/// The policy and what one upstream session has learned under it.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) policy: Arc<Policy>,
    /// The latest upstream listing, judged.
    pub(crate) listing: tokio::sync::RwLock<Arc<Listing>>,
    /// How long one forwarded request may take.
    pub(crate) timeout: Duration,
    /// The tasks upstream `tools/call`s were answered with, by task id.
    tasks: Mutex<TaskBook>,
}

impl Shared {
    /// The state of a session with `policy` whose tools are not listed yet.
    pub(crate) fn fresh(policy: Arc<Policy>, timeout: Duration) -> Self {
        Self {
            policy,
            listing: tokio::sync::RwLock::new(Arc::new(Listing::default())),
            timeout,
            tasks: Mutex::new(TaskBook::default()),
        }
    }

    fn tasks(&self) -> MutexGuard<'_, TaskBook> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers the task a `tools/call` of `tool` was answered with: its result is
    /// judged when `tasks/get`, `tasks/result` or `notifications/tasks` brings it.
    pub(crate) fn record_task(&self, id: String, tool: String, arguments: Value, listing: Arc<Listing>) {
        self.tasks().insert(id, TaskRecord { tool, arguments, listing, judged: None });
    }

    /// The judged form of the result of task `id` (from `tasks/get`, `tasks/result` or
    /// `notifications/tasks`): judged once as the tool's direct result would be, and the
    /// same form every later time; withheld when the proxy did not see the task created.
    pub(crate) fn judge_task_result(&self, id: &str, result: Map<String, Value>) -> Map<String, Value> {
        let known = self.tasks().get(id).map(|record| {
            (record.tool.clone(), record.arguments.clone(), Arc::clone(&record.listing), record.judged.clone())
        });
        match known {
            None => {
                tracing::info!(task = %id, "task result withheld: its tools/call was not seen");
                let message = format!(
                    "the result of task `{id}` is withheld: the proxy did not see the tools/call that created it \
                     (or has forgotten it), so it cannot tell which tool's contract the result must keep"
                );
                as_object(error_result(ErrorCode::OutputContractViolation, &message, &[], None))
            }
            Some((_, _, _, Some(judged))) => judged,
            Some((tool, arguments, listing, None)) => {
                // Judged outside the lock: the session's other tasks are not held up by it.
                let judged = as_object(self.policy.judge(&listing, &tool, &arguments, Value::Object(result)));
                match self.tasks().get_mut(id) {
                    // The first judged form wins, so every poll sees the same result.
                    Some(record) => record.judged.get_or_insert(judged).clone(),
                    None => judged,
                }
            }
        }
    }
}

/// A JSON object; anything else as an empty one.
fn as_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(object) => object,
        _ => Map::new(),
    }
}
