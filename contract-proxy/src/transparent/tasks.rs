//! The tasks `tools/call`s were answered with: which tool's call created each, with what
//! arguments and listing, and its judged result once it completed, so that every poll
//! and notification of the task carries the same verdict.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::verdicts::Listing;

/// How many tasks the proxy remembers; the oldest is forgotten first, and the result of
/// a task it no longer knows is withheld.
pub(super) const TASK_MEMORY: usize = 16_384;

/// What the proxy knows of a task a `tools/call` was answered with.
#[derive(Debug)]
pub(super) struct TaskRecord {
    pub(super) tool: String,
    pub(super) arguments: Value,
    /// The listing the call was judged with: its result is judged with the same.
    pub(super) listing: Arc<Listing>,
    /// The judged result, once the task completed: every poll and notification sends it.
    pub(super) judged: Option<Map<String, Value>>,
}

/// The tasks the proxy has seen created, oldest first.
#[derive(Debug, Default)]
pub(super) struct TaskBook {
    records: HashMap<String, TaskRecord>,
    order: VecDeque<String>,
}

impl TaskBook {
    /// Remembers task `id`, forgetting the oldest when the book is full; a task id seen
    /// again keeps its place and takes the new record.
    pub(super) fn insert(&mut self, id: String, record: TaskRecord) {
        if let Some(known) = self.records.get_mut(&id) {
            *known = record;
            return;
        }
        while self.order.len() >= TASK_MEMORY {
            if let Some(old) = self.order.pop_front() {
                self.records.remove(&old);
            }
        }
        self.records.insert(id.clone(), record);
        self.order.push_back(id);
    }

    pub(super) fn get(&self, id: &str) -> Option<&TaskRecord> {
        self.records.get(id)
    }

    pub(super) fn get_mut(&mut self, id: &str) -> Option<&mut TaskRecord> {
        self.records.get_mut(id)
    }
}

#[cfg(test)]
mod tests {
    use super::{Listing, TaskBook, TaskRecord, TASK_MEMORY};
    use serde_json::json;
    use std::sync::Arc;

    fn record(tool: &str) -> TaskRecord {
        TaskRecord { tool: tool.to_owned(), arguments: json!({}), listing: Arc::new(Listing::default()), judged: None }
    }

    #[test]
    fn the_task_book_forgets_the_oldest_task_first() {
        let mut book = TaskBook::default();
        for n in 0..=TASK_MEMORY {
            book.insert(format!("t-{n}"), record("report"));
        }
        assert_eq!(book.records.len(), TASK_MEMORY);
        assert!(!book.records.contains_key("t-0"), "the oldest is forgotten");
        // Control: the second oldest and the newest are still known.
        assert!(book.records.contains_key("t-1"));
        assert!(book.records.contains_key(&format!("t-{TASK_MEMORY}")));
        // A task id seen again keeps its place and is not counted twice.
        book.insert("t-1".to_owned(), record("report_ok"));
        assert_eq!(book.order.len(), TASK_MEMORY);
        assert_eq!(book.order.front().map(String::as_str), Some("t-1"));
        assert_eq!(book.records["t-1"].tool, "report_ok");
        assert!(book.records.contains_key("t-2"), "nothing else is forgotten for it");
    }
}
