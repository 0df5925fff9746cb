//! The stdio server's stderr in `--stderr tail` mode: drained for as long as the child
//! lives (so a server that writes a lot never blocks on a full pipe), with only the last
//! [`MAX_BYTES`] kept, and shown as at most [`MAX_LINES`] escaped lines when the audit
//! cannot run.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

use crate::shown::escape;

/// The most bytes of stderr kept: older bytes are dropped as newer ones arrive.
pub(crate) const MAX_BYTES: usize = 8 * 1024;
/// The most lines shown under a failure.
pub(crate) const MAX_LINES: usize = 40;

#[derive(Default)]
struct Ring {
    bytes: VecDeque<u8>,
    /// Bytes read and no longer kept.
    dropped: u64,
}

/// The kept end of a child's stderr.
pub(crate) struct Tail {
    ring: Arc<Mutex<Ring>>,
    reader: JoinHandle<()>,
}

impl Tail {
    /// Starts draining `pipe` on the runtime.
    pub(crate) fn capture(mut pipe: impl AsyncRead + Unpin + Send + 'static) -> Self {
        let ring = Arc::new(Mutex::new(Ring::default()));
        let kept = Arc::clone(&ring);
        let reader = tokio::spawn(async move {
            let mut chunk = vec![0_u8; 8 * 1024];
            while let Ok(n) = pipe.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                let mut ring = kept.lock().unwrap_or_else(PoisonError::into_inner);
                ring.bytes.extend(&chunk[..n]);
                let excess = ring.bytes.len().saturating_sub(MAX_BYTES);
                ring.bytes.drain(..excess);
                ring.dropped += excess as u64;
            }
        });
        Self { ring, reader }
    }

    /// Waits up to `wait` for the pipe to close (the child has exited or was killed),
    /// then renders what was kept: `""` when the server wrote nothing.
    pub(crate) async fn render(self, wait: Duration) -> String {
        let Self { ring, mut reader } = self;
        let finished = tokio::time::timeout(wait, &mut reader).await.is_ok();
        reader.abort();
        let ring = ring.lock().unwrap_or_else(PoisonError::into_inner);
        let (front, back) = ring.bytes.as_slices();
        let text = String::from_utf8_lossy(&[front, back].concat()).into_owned();
        render(&text, ring.dropped, finished)
    }
}

/// The kept text as indented, escaped lines under a heading.
fn render(text: &str, dropped: u64, finished: bool) -> String {
    let text = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() && dropped == 0 {
        return String::new();
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let shown = &lines[lines.len().saturating_sub(MAX_LINES)..];
    let mut out = String::from("\nthe server's stderr");
    if dropped > 0 || shown.len() < lines.len() {
        let _ = write!(out, " (its last {} lines; {dropped} earlier bytes not kept)", shown.len());
    }
    out.push_str(if finished { ":" } else { " (still open):" });
    for line in shown {
        out.push_str("\n  | ");
        out.push_str(&escape(line.strip_suffix('\r').unwrap_or(line)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{escape, render};

    #[test]
    fn control_characters_are_escaped_and_text_is_kept() {
        assert_eq!(escape("\u{1b}[31mred\u{7}\tx"), "\\u{1b}[31mred\\u{7}\\tx");
        // Control: printable text, including non-ASCII, is unchanged.
        assert_eq!(escape("panicked at src/main.rs:3: ünïcode"), "panicked at src/main.rs:3: ünïcode");
    }

    #[test]
    fn only_the_last_lines_are_shown_and_the_cut_is_said() {
        let text = (0..100).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n") + "\n";
        let out = render(&text, 0, true);
        assert!(out.contains("its last 40 lines"), "{out}");
        assert!(out.ends_with("  | line 99"), "{out}");
        assert!(!out.contains("line 59\n"), "{out}");
        assert!(out.contains("line 60"), "{out}");
        // Control: a short stderr is shown whole, with no note about a cut.
        assert_eq!(render("one\r\ntwo\n", 0, true), "\nthe server's stderr:\n  | one\n  | two");
        assert_eq!(render("", 0, true), "");
    }
}
