//! Where one HTTP session's lines for the client go: the answer to a POSTed request ends
//! that POST's response; anything else goes to the POST waiting last, or the session's GET
//! stream. The routes of the stateless requests, whose POSTs are of different clients,
//! send anything else only where it belongs: to the one POST waiting, or to the POST whose
//! request named the notification's progress token; what belongs to no one is dropped.

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
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// The progress token of a request's `_meta` or of a progress notification's parameters,
/// as JSON text.
pub(super) fn progress_token(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "progressToken", borrow, default)]
        token: Option<&'a RawValue>,
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<Meta<'a>>,
    }
    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(rename = "progressToken", borrow, default)]
        token: Option<&'a RawValue>,
    }
    let params = serde_json::from_str::<Params<'_>>(params?.get()).ok()?;
    params.token.or_else(|| params.meta?.token).map(|token| token.get().to_owned())
}

/// Where one session's lines for the client go.
#[derive(Debug, Default)]
pub(crate) struct Routes {
    state: Mutex<RouteState>,
    /// The POSTs are of different clients (the stateless requests).
    shared: bool,
}

#[derive(Debug, Default)]
pub(super) struct RouteState {
    /// The POSTed requests waiting for their answers, oldest first, by id (JSON text).
    pub(super) posts: Vec<Post>,
    /// The session's GET stream, when the client opened one.
    pub(super) get: Option<mpsc::UnboundedSender<Vec<u8>>>,
}

/// A POSTed request waiting for its answer.
#[derive(Debug)]
pub(super) struct Post {
    id: String,
    /// The progress token its request named (JSON text).
    token: Option<String>,
    tx: mpsc::UnboundedSender<Vec<u8>>,
}

impl Routes {
    /// The routes of the stateless requests.
    pub(super) fn shared() -> Self {
        Self { state: Mutex::default(), shared: true }
    }

    pub(super) fn state(&self) -> std::sync::MutexGuard<'_, RouteState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes one line: an answer to the POST that asked; anything else to the POST
    /// waiting last, or the GET stream.
    pub(crate) fn deliver(&self, line: Vec<u8>) {
        let top = serde_json::from_slice::<Top<'_>>(&line).ok();
        let answer_to =
            top.as_ref().filter(|top| top.method.is_none()).and_then(|top| top.id.map(|id| id.get().to_owned()));
        let mut state = self.state();
        if let Some(id) = answer_to {
            // An answer goes to the POST that asked, or nowhere (its client went away).
            if let Some(at) = state.posts.iter().position(|post| post.id == id) {
                let post = state.posts.remove(at);
                let _ = post.tx.send(line);
            }
            return;
        }
        state.posts.retain(|post| !post.tx.is_closed());
        let target = if self.shared {
            let token = top.and_then(|top| progress_token(top.params));
            let owner = match (&state.posts[..], token) {
                ([only], _) => Some(only),
                (posts, Some(token)) => posts.iter().find(|post| post.token.as_deref() == Some(token.as_str())),
                _ => None,
            };
            owner.map(|post| post.tx.clone())
        } else {
            state.posts.last().map(|post| post.tx.clone()).or_else(|| state.get.clone())
        };
        if let Some(target) = target {
            let _ = target.send(line);
        } else {
            tracing::debug!("a message for an HTTP client with no stream open is dropped");
        }
    }

    /// Forgets the POST of request `id`, whose client went away.
    pub(super) fn forget(&self, id: &str) {
        self.state().posts.retain(|post| post.id != id);
    }

    /// The answer to the POSTed request `id` (whose request named `token`), and what
    /// comes before it.
    pub(super) fn wait_for(&self, id: &str, token: Option<String>) -> mpsc::UnboundedReceiver<Vec<u8>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.state().posts.push(Post { id: id.to_owned(), token, tx });
        rx
    }
}
