//! Attribute parsing: `#[tool_output(...)]` and the parts of `#[serde(...)]` and
//! `#[schemars(...)]` that decide what a contract looks like. Every problem is pushed
//! into a [`Ctxt`] so the user sees all of them at once.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Attribute, LitStr, Token};

use crate::case::RenameRule;

const TOOL_OUTPUT: &str = "tool_output";
const VERSION: &str = "version";
const COMPATIBILITY: &str = "compatibility";
const NAME: &str = "name";
const SENSITIVE: &str = "sensitive";
const OPAQUE: &str = "opaque";

/// Collects every error of one derive input; they are reported together.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub(crate) fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    pub(crate) fn push(&mut self, err: syn::Error) {
        self.errors.push(err);
    }

    pub(crate) fn finish(self) -> Result<(), syn::Error> {
        let mut iter = self.errors.into_iter();
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

/// A value together with the token that set it, so duplicates can point at both.
pub(crate) struct WithSpan<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

fn set<T>(cx: &mut Ctxt, slot: &mut Option<WithSpan<T>>, key: &str, value: T, span: Span) {
    if slot.is_some() {
        cx.error(span, format!("duplicate tool_output attribute `{key}`"));
    } else {
        *slot = Some(WithSpan { value, span });
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Compatibility {
    Exact,
    Additive,
}

/// `#[tool_output(...)]` on the type.
#[derive(Default)]
pub(crate) struct ContainerAttrs {
    pub(crate) version: Option<WithSpan<String>>,
    pub(crate) compatibility: Option<WithSpan<Compatibility>>,
    pub(crate) name: Option<WithSpan<String>>,
    /// Set when any `#[tool_output]` attribute was present, for the "missing" message span.
    pub(crate) attr_span: Option<Span>,
    /// Keys that were written, even with a bad value (already reported), so that a bad
    /// value is not also reported as missing.
    pub(crate) seen: Vec<&'static str>,
}

fn is_tool_output(attr: &Attribute) -> bool {
    attr.path().is_ident(TOOL_OUTPUT)
}

fn lit_str(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    let value = meta.value()?;
    value.parse::<LitStr>()
}

fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    let path = &meta.path;
    path.get_ident().map_or_else(|| quote::quote!(#path).to_string().replace(' ', ""), ToString::to_string)
}

pub(crate) fn container(cx: &mut Ctxt, attrs: &[Attribute]) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    for attr in attrs.iter().filter(|a| is_tool_output(a)) {
        out.attr_span.get_or_insert(attr.span());
        let result = attr.parse_nested_meta(|meta| {
            let key = key_of(&meta);
            match key.as_str() {
                // #[tool_output(version = "1.2.0")]
                VERSION => {
                    out.seen.push(VERSION);
                    let lit = lit_str(&meta)?;
                    match semver::Version::parse(&lit.value()) {
                        Ok(_) => set(cx, &mut out.version, VERSION, lit.value(), lit.span()),
                        Err(err) => cx.error(
                            lit.span(),
                            format!(
                                "`version` must be a semantic version such as `version = \"1.2.0\"`: {err}"
                            ),
                        ),
                    }
                }
                // #[tool_output(compatibility = "exact")] or "additive"
                COMPATIBILITY => {
                    out.seen.push(COMPATIBILITY);
                    let lit = lit_str(&meta)?;
                    let compat = match lit.value().as_str() {
                        "exact" => Some(Compatibility::Exact),
                        "additive" => Some(Compatibility::Additive),
                        _ => None,
                    };
                    match compat {
                        Some(c) => set(cx, &mut out.compatibility, COMPATIBILITY, c, lit.span()),
                        None => cx.error(
                            lit.span(),
                            "unknown compatibility: expected `compatibility = \"exact\"` (every object closed) or `compatibility = \"additive\"` (objects open, required fields and types strict)",
                        ),
                    }
                }
                // #[tool_output(name = "fleet_status")]
                NAME => {
                    let lit = lit_str(&meta)?;
                    match check_tool_name(&lit.value()) {
                        Ok(()) => set(cx, &mut out.name, NAME, lit.value(), lit.span()),
                        Err(why) => cx.error(lit.span(), why),
                    }
                }
                SENSITIVE | OPAQUE => {
                    cx.error(
                        meta.path.span(),
                        format!(
                            "`{key}` is a field attribute: write `#[tool_output({key})]` on the field it applies to, not on the type"
                        ),
                    );
                    skip_value(&meta)?;
                }
                _ => {
                    cx.error(
                        meta.path.span(),
                        format!(
                            "unknown tool_output attribute `{key}`: expected `version = \"…\"`, `compatibility = \"exact\" | \"additive\"` or `name = \"…\"`"
                        ),
                    );
                    skip_value(&meta)?;
                }
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    out
}

/// Tool names as MCP clients accept them, and usable as portable file names once `/` is
/// mapped (the snapshot module does that).
fn check_tool_name(name: &str) -> Result<(), String> {
    let ok_chars = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    if name.is_empty() || name.len() > 128 {
        return Err("`name` must have 1 to 128 characters".into());
    }
    if !ok_chars {
        return Err(
            "`name` may contain only ASCII letters, digits, `_`, `-`, `.` and `/`, for example `name = \"qe/coverage_gaps\"`"
                .into(),
        );
    }
    if name.starts_with(['/', '.']) || name.ends_with('/') || name.contains("//") || name.contains("..") {
        return Err("`name` must not start with `/` or `.`, end with `/`, or contain `//` or `..`".into());
    }
    Ok(())
}

/// Consumes `= value` or `(...)` after a key we do not handle, so parsing can go on.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

/// `#[tool_output(...)]` on a field.
#[derive(Default)]
pub(crate) struct FieldAttrs {
    pub(crate) sensitive: Option<WithSpan<()>>,
    pub(crate) opaque: Option<WithSpan<()>>,
}

impl FieldAttrs {
    pub(crate) fn any_span(&self) -> Option<Span> {
        self.sensitive.as_ref().or(self.opaque.as_ref()).map(|s| s.span)
    }
}

pub(crate) fn field(cx: &mut Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for attr in attrs.iter().filter(|a| is_tool_output(a)) {
        let result = attr.parse_nested_meta(|meta| {
            let key = key_of(&meta);
            match key.as_str() {
                // #[tool_output(sensitive)]
                SENSITIVE => set(cx, &mut out.sensitive, SENSITIVE, (), meta.path.span()),
                // #[tool_output(opaque)]
                OPAQUE => set(cx, &mut out.opaque, OPAQUE, (), meta.path.span()),
                VERSION | COMPATIBILITY | NAME => {
                    cx.error(
                        meta.path.span(),
                        format!(
                            "`{key}` belongs on the type: write `#[tool_output({key} = \"…\")]` above the struct or enum, not on a field"
                        ),
                    );
                    skip_value(&meta)?;
                }
                _ => {
                    cx.error(
                        meta.path.span(),
                        format!(
                            "unknown tool_output field attribute `{key}`: expected `sensitive` or `opaque`"
                        ),
                    );
                    skip_value(&meta)?;
                }
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    out
}

/// Reports any `#[tool_output]` on an enum variant, where it has no meaning.
pub(crate) fn forbid_on_variant(cx: &mut Ctxt, attrs: &[Attribute]) {
    for attr in attrs.iter().filter(|a| is_tool_output(a)) {
        cx.error(
            attr.span(),
            "`#[tool_output]` is not allowed on an enum variant: put `version` and `compatibility` on the enum, and mark fields inside variants with `#[schemars(transform = contract_runtime::sensitive)]` or `contract_runtime::opaque`",
        );
    }
}

/// The parts of `#[serde(...)]` on the container that matter to us.
#[derive(Default)]
pub(crate) struct SerdeContainer {
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) deny_unknown_fields: Option<Span>,
}

/// The parts of `#[serde(...)]` and `#[schemars(...)]` on a field that matter to us.
#[derive(Default)]
pub(crate) struct SerdeField {
    pub(crate) rename: Option<String>,
    pub(crate) skipped: bool,
    pub(crate) flatten: bool,
    /// `serialize_with` or `with`, with the span of the key.
    pub(crate) custom_serialize: Option<(String, Span)>,
    pub(crate) schemars_with: bool,
}

pub(crate) fn serde_container(cx: &mut Ctxt, attrs: &[Attribute]) -> SerdeContainer {
    let mut out = SerdeContainer::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename_all") {
                if let Some(lit) = serialize_name(&meta)? {
                    match RenameRule::from_str(&lit.value()) {
                        Some(rule) => out.rename_all = Some(rule),
                        // serde itself reports an unknown rule; stay quiet to avoid a double error.
                        None => {}
                    }
                }
            } else if meta.path.is_ident("deny_unknown_fields") {
                out.deny_unknown_fields = Some(meta.path.span());
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    out
}

/// Reads `key = "x"` or `key(serialize = "x", deserialize = "y")`, returning the
/// serialize-side string.
fn serialize_name(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(Token![=]) {
        return lit_str(meta).map(Some);
    }
    let mut found = None;
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("serialize") {
                found = Some(lit_str(&inner)?);
            } else {
                skip_value(&inner)?;
            }
            Ok(())
        })?;
    }
    Ok(found)
}

pub(crate) fn serde_field(cx: &mut Ctxt, attrs: &[Attribute]) -> SerdeField {
    let mut out = SerdeField::default();
    for attr in attrs {
        let is_serde = attr.path().is_ident("serde");
        let is_schemars = attr.path().is_ident("schemars");
        if !is_serde && !is_schemars {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let key = key_of(&meta);
            match (is_serde, key.as_str()) {
                (true, "rename") => {
                    if let Some(lit) = serialize_name(&meta)? {
                        out.rename = Some(lit.value());
                    }
                }
                (true, "skip" | "skip_serializing") => out.skipped = true,
                (true, "flatten") => out.flatten = true,
                (true, "serialize_with" | "with") => {
                    out.custom_serialize = Some((key.clone(), meta.path.span()));
                    skip_value(&meta)?;
                }
                (false, "with" | "schema_with") => {
                    out.schemars_with = true;
                    skip_value(&meta)?;
                }
                _ => skip_value(&meta)?,
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    out
}
