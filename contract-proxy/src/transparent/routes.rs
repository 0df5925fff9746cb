//! Where one HTTP session's lines for the client go: the answer to a POSTed request ends
//! that POST's response; anything else goes to the POST waiting last, or the session's GET
//! stream.

use std::sync::{Mutex, PoisonError};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
}

/// Where one session's lines for the client go.
#[derive(Debug, Default)]
pub(crate) struct Routes {
    state: Mutex<RouteState>,
}

#[derive(Debug, Default)]
pub(super) struct RouteState {
    /// The POSTed requests waiting for their answers, oldest first, by id (JSON text).
    pub(super) posts: Vec<(String, mpsc::UnboundedSender<Vec<u8>>)>,
    /// The session's GET stream, when the client opened one.
    pub(super) get: Option<mpsc::UnboundedSender<Vec<u8>>>,
}

impl Routes {
    pub(super) fn state(&self) -> std::sync::MutexGuard<'_, RouteState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes one line: an answer to the POST that asked; anything else to the POST
    /// waiting last, or the GET stream.
    pub(crate) fn deliver(&self, line: Vec<u8>) {
        let answer_to = serde_json::from_slice::<Top<'_>>(&line)
            .ok()
            .filter(|top| top.method.is_none())
            .and_then(|top| top.id.map(|id| id.get().to_owned()));
        let mut state = self.state();
        if let Some(id) = answer_to {
            // An answer goes to the POST that asked, or nowhere (its client went away).
            if let Some(at) = state.posts.iter().position(|(waiting, _)| *waiting == id) {
                let (_, post) = state.posts.remove(at);
                let _ = post.send(line);
            }
            return;
        }
        state.posts.retain(|(_, post)| !post.is_closed());
        let target = state.posts.last().map(|(_, post)| post.clone()).or_else(|| state.get.clone());
        if let Some(target) = target {
            let _ = target.send(line);
        } else {
            tracing::debug!("a message for an HTTP client with no stream open is dropped");
        }
    }

    pub(super) fn wait_for(&self, id: &str) -> mpsc::UnboundedReceiver<Vec<u8>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.state().posts.push((id.to_owned(), tx));
        rx
    }
}
