//! The error context of one derive input: every problem is collected, and they are
//! reported together. A context dropped with its errors unread is a bug in the derive,
//! caught at once rather than shipped as a silently accepted input.

use proc_macro2::Span;

/// Collects every error of one derive input; [`Ctxt::finish`] reports them.
pub(crate) struct Ctxt {
    /// `None` once [`Ctxt::finish`] has read them.
    errors: Option<Vec<syn::Error>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Self { errors: Some(Vec::new()) }
    }

    pub(crate) fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.push(syn::Error::new(span, msg));
    }

    /// An error spanned on every token of `tokens` (a whole attribute, a whole
    /// expression), not only the first one.
    pub(crate) fn error_spanned_by(&mut self, tokens: impl quote::ToTokens, msg: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, msg));
    }

    pub(crate) fn push(&mut self, err: syn::Error) {
        self.errors.as_mut().expect("the derive's errors were already reported").push(err);
    }

    /// Every error combined into one, or `Ok` when there were none.
    pub(crate) fn finish(mut self) -> Result<(), syn::Error> {
        let mut iter = self.errors.take().expect("the derive's errors are reported once").into_iter();
        match iter.next() {
            None => Ok(()),
            Some(mut first) => {
                for err in iter {
                    first.combine(err);
                }
                Err(first)
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // Not while unwinding from another panic: that one is the news.
        assert!(
            self.errors.is_none() || std::thread::panicking(),
            "the derive dropped its error context without reporting its errors (`Ctxt::finish`)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::Ctxt;
    use proc_macro2::Span;

    #[test]
    fn errors_are_reported_together() {
        // Clean control: no error, no report.
        assert!(Ctxt::new().finish().is_ok());
        let mut cx = Ctxt::new();
        cx.error(Span::call_site(), "first");
        cx.error(Span::call_site(), "second");
        let err = cx.finish().unwrap_err();
        let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    #[should_panic(expected = "without reporting its errors")]
    fn a_context_dropped_unread_is_caught() {
        let mut cx = Ctxt::new();
        cx.error(Span::call_site(), "lost");
        drop(cx);
    }
}
