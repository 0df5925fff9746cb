//! Attribute parsing: `#[tool_output(...)]` and the parts of `#[serde(...)]` and
//! `#[schemars(...)]` that decide what a contract looks like. Every problem is pushed
//! into a [`Ctxt`] so the user sees all of them at once.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Attribute, LitStr, Token};

use crate::case::RenameRule;
use crate::ctxt::Ctxt;

const TOOL_OUTPUT: &str = "tool_output";
const VERSION: &str = "version";
const COMPATIBILITY: &str = "compatibility";
const NAME: &str = "name";
const SENSITIVE: &str = "sensitive";
const OPAQUE: &str = "opaque";
const COUNTS: &str = "counts";

/// A value together with the token that set it, so duplicates can point at both.
pub(crate) struct WithSpan<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// Stores `value` unless the key was already set; `span` is the key's, so a duplicate is
/// reported on the second key.
fn set<T>(cx: &mut Ctxt, slot: &mut Option<WithSpan<T>>, key: &str, value: T, span: Span) {
    if slot.is_some() {
        cx.error(span, format!("duplicate tool_output attribute `{key}`: write `{key}` once and remove this one"));
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
    /// The first `#[tool_output]` attribute, on which "missing …" errors are spanned.
    pub(crate) attr: Option<Attribute>,
    /// Keys that were written, even with a bad value (already reported), so that a bad
    /// value is not also reported as missing.
    pub(crate) seen: Vec<&'static str>,
}

fn is_tool_output(attr: &Attribute) -> bool {
    attr.path().is_ident(TOOL_OUTPUT)
}

/// Reads the string of `key = "…"`. A missing or non-string value is reported with
/// `example`, what to write, and skipped, so that the keys after it are still checked.
fn string_value(cx: &mut Ctxt, meta: &ParseNestedMeta<'_>, key: &str, example: &str) -> syn::Result<Option<LitStr>> {
    if !meta.input.peek(Token![=]) {
        cx.error(meta.path.span(), format!("`{key}` needs a value: write `{example}`"));
        skip_value(meta)?;
        return Ok(None);
    }
    let mut expr = meta.value()?.parse::<syn::Expr>()?;
    // A `$value:literal` from a `macro_rules!` arrives wrapped in an invisible group.
    while let syn::Expr::Group(group) = expr {
        expr = *group.expr;
    }
    match expr {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(lit), .. }) => Ok(Some(lit)),
        other => {
            cx.error_spanned_by(other, format!("`{key}` takes a string in double quotes: write `{example}`"));
            Ok(None)
        }
    }
}

fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    let path = &meta.path;
    path.get_ident().map_or_else(|| quote::quote!(#path).to_string().replace(' ', ""), ToString::to_string)
}

/// Reports `#[tool_output]` and `#[tool_output = …]`, which carry no keys, and says
/// what to write instead. Returns whether the attribute has a list to parse.
fn has_list(cx: &mut Ctxt, attr: &Attribute, example: &str) -> bool {
    if matches!(attr.meta, syn::Meta::List(_)) {
        return true;
    }
    cx.error_spanned_by(attr, format!("`#[tool_output]` needs arguments: write `{example}`"));
    false
}

const CONTAINER_EXAMPLE: &str = "#[tool_output(version = \"1.0.0\", compatibility = \"exact\")]";

pub(crate) fn container(cx: &mut Ctxt, attrs: &[Attribute]) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    for attr in attrs.iter().filter(|a| is_tool_output(a)) {
        if out.attr.is_none() {
            out.attr = Some(attr.clone());
        }
        if !has_list(cx, attr, CONTAINER_EXAMPLE) {
            // The error above already says to write both keys.
            out.seen.extend([VERSION, COMPATIBILITY]);
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let key = key_of(&meta);
            match key.as_str() {
                // #[tool_output(version = "1.2.0")]
                VERSION => {
                    out.seen.push(VERSION);
                    let Some(lit) = string_value(cx, &meta, VERSION, "version = \"1.0.0\"")? else {
                        return Ok(());
                    };
                    match semver::Version::parse(&lit.value()) {
                        Ok(_) => set(cx, &mut out.version, VERSION, lit.value(), meta.path.span()),
                        Err(err) => cx.error(
                            lit.span(),
                            format!(
                                "`version` must be a semantic version MAJOR.MINOR.PATCH such as `version = \"1.2.0\"`: {err}"
                            ),
                        ),
                    }
                }
                // #[tool_output(compatibility = "exact")] or "additive"
                COMPATIBILITY => {
                    out.seen.push(COMPATIBILITY);
                    let Some(lit) = string_value(cx, &meta, COMPATIBILITY, "compatibility = \"exact\"")? else {
                        return Ok(());
                    };
                    let compat = match lit.value().as_str() {
                        "exact" => Some(Compatibility::Exact),
                        "additive" => Some(Compatibility::Additive),
                        _ => None,
                    };
                    match compat {
                        Some(c) => set(cx, &mut out.compatibility, COMPATIBILITY, c, meta.path.span()),
                        None => cx.error(
                            lit.span(),
                            "unknown compatibility: expected `compatibility = \"exact\"` (every object closed) or `compatibility = \"additive\"` (objects open, required fields and types strict)",
                        ),
                    }
                }
                // #[tool_output(name = "fleet_status")]
                NAME => {
                    let Some(lit) = string_value(cx, &meta, NAME, "name = \"fleet_status\"")? else {
                        return Ok(());
                    };
                    match check_tool_name(&lit.value()) {
                        Ok(()) => set(cx, &mut out.name, NAME, lit.value(), meta.path.span()),
                        Err(why) => cx.error(lit.span(), why),
                    }
                }
                SENSITIVE | OPAQUE | COUNTS => {
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
    const EXAMPLE: &str = "for example `name = \"fleet_status\"` or `name = \"qe/coverage_gaps\"`";
    let ok_chars = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    if name.is_empty() || name.len() > 128 {
        return Err(format!("`name` must have 1 to 128 characters, {EXAMPLE}"));
    }
    if !ok_chars {
        return Err(format!("`name` may contain only ASCII letters, digits, `_`, `-`, `.` and `/`, {EXAMPLE}"));
    }
    if name.starts_with(['/', '.']) || name.ends_with('/') || name.contains("//") || name.contains("..") {
        return Err(format!(
            "`name` must not start with `/` or `.`, end with `/`, or contain `//` or `..`; write path segments joined by single slashes, {EXAMPLE}"
        ));
    }
    Ok(())
}

/// Consumes `= value` or `(...)` after a key we do not handle, so parsing can go on.
/// A parenthesized group is taken as raw tokens: schemars accepts forms such as
/// `extend("x-key" = 1)` that are not nested meta.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _: proc_macro2::Group = meta.input.parse()?;
    }
    Ok(())
}

/// `#[tool_output(...)]` on a field.
#[derive(Default)]
pub(crate) struct FieldAttrs {
    pub(crate) sensitive: Option<WithSpan<()>>,
    pub(crate) opaque: Option<WithSpan<()>>,
    /// `#[tool_output(counts = "items")]` on a `Completeness` field: the Rust name of the
    /// sibling field whose items `returned_count` counts.
    pub(crate) counts: Option<WithSpan<String>>,
    /// Container keys written on the field (already reported), so that they are not
    /// also reported as missing from the type.
    pub(crate) misplaced: Vec<&'static str>,
}

impl FieldAttrs {
    /// Each marker that is set, as (key, span of the key).
    pub(crate) fn markers(&self) -> impl Iterator<Item = (&'static str, Span)> + '_ {
        [(SENSITIVE, &self.sensitive), (OPAQUE, &self.opaque)]
            .into_iter()
            .filter_map(|(key, slot)| slot.as_ref().map(|s| (key, s.span)))
            .chain(self.counts.as_ref().map(|c| (COUNTS, c.span)))
    }
}

pub(crate) fn field(cx: &mut Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for attr in attrs.iter().filter(|a| is_tool_output(a)) {
        if !has_list(cx, attr, "#[tool_output(sensitive)]` or `#[tool_output(opaque)]") {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let key = key_of(&meta);
            match key.as_str() {
                // #[tool_output(sensitive)]
                SENSITIVE => {
                    set(cx, &mut out.sensitive, SENSITIVE, (), meta.path.span());
                    no_value(cx, &meta, SENSITIVE)?;
                }
                // #[tool_output(opaque)]
                OPAQUE => {
                    set(cx, &mut out.opaque, OPAQUE, (), meta.path.span());
                    no_value(cx, &meta, OPAQUE)?;
                }
                // #[tool_output(counts = "tickets")] on a `Completeness` field
                COUNTS => {
                    if let Some(lit) = string_value(cx, &meta, COUNTS, "counts = \"items\"")? {
                        set(cx, &mut out.counts, COUNTS, lit.value(), lit.span());
                    }
                }
                VERSION | COMPATIBILITY | NAME => {
                    out.misplaced.push(match key.as_str() {
                        VERSION => VERSION,
                        COMPATIBILITY => COMPATIBILITY,
                        _ => NAME,
                    });
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
                            "unknown tool_output field attribute `{key}`: expected `#[tool_output(sensitive)]`, `#[tool_output(opaque)]` or, on a `Completeness` field, `#[tool_output(counts = \"items\")]`"
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

/// Reports and skips a value after a marker (`sensitive = true`), which takes none.
fn no_value(cx: &mut Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        cx.error(meta.path.span(), format!("`{key}` takes no value: write `#[tool_output({key})]`"));
        skip_value(meta)?;
    }
    Ok(())
}

/// Reports any `#[tool_output]` on an enum variant, where it has no meaning.
pub(crate) fn forbid_on_variant(cx: &mut Ctxt, attrs: &[Attribute]) {
    for attr in attrs.iter().filter(|a| is_tool_output(a)) {
        cx.error_spanned_by(
            attr,
            "`#[tool_output]` is not allowed on an enum variant: put `version` and `compatibility` on the enum, and mark fields inside variants with `#[schemars(transform = contract_runtime::sensitive)]` or `#[schemars(transform = contract_runtime::opaque)]`",
        );
    }
}

/// The parts of `#[serde(...)]` and `#[schemars(...)]` on the container that matter to us.
#[derive(Default)]
pub(crate) struct SerdeContainer {
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) deny_unknown_fields: Option<Span>,
    /// `#[serde(tag = "…")]`, with the span of `tag`.
    pub(crate) tag: Option<Span>,
    pub(crate) transparent: bool,
    /// `#[serde(into = "T")]`: the type serde writes instead, with the span of `into`.
    pub(crate) into: Option<(String, Span)>,
    /// `#[schemars(with = …)]` or `#[schemars(schema_with = …)]` on the container.
    pub(crate) schemars_with: bool,
}

pub(crate) fn serde_container(attrs: &[Attribute]) -> SerdeContainer {
    let mut out = SerdeContainer::default();
    for attr in attrs {
        let is_serde = attr.path().is_ident("serde");
        if !is_serde && !attr.path().is_ident("schemars") {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            match (is_serde, key_of(&meta).as_str()) {
                (true, "rename_all") => {
                    // serde itself reports an unknown rule; stay quiet to avoid a double error.
                    if let Some(rule) = serialize_name(&meta)?.and_then(|lit| RenameRule::from_str(&lit.value())) {
                        out.rename_all = Some(rule);
                    }
                }
                (true, "deny_unknown_fields") => out.deny_unknown_fields = Some(meta.path.span()),
                (true, "transparent") => out.transparent = true,
                (true, "tag") => {
                    out.tag = Some(meta.path.span());
                    skip_value(&meta)?;
                }
                (true, "into") => {
                    let lit = lit_str(&meta)?;
                    out.into = Some((lit.value(), meta.path.span()));
                }
                (false, "with" | "schema_with") => {
                    out.schemars_with = true;
                    skip_value(&meta)?;
                }
                _ => skip_value(&meta)?,
            }
            Ok(())
        });
        // A malformed serde or schemars attribute is reported by its own derive;
        // repeating the error here would only add noise.
        drop(result);
    }
    out
}

/// The parts of `#[serde(...)]` and `#[schemars(...)]` on a field or a variant that
/// matter to us.
#[derive(Default)]
pub(crate) struct SerdeField {
    pub(crate) rename: Option<String>,
    pub(crate) skipped: bool,
    pub(crate) flatten: bool,
    /// `serialize_with` or `with`, with the span of the key.
    pub(crate) custom_serialize: Option<(String, Span)>,
    pub(crate) schemars_with: bool,
}

/// Reads `key = "x"` in a serde attribute; serde reports anything else itself.
fn lit_str(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    meta.value()?.parse::<LitStr>()
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

pub(crate) fn serde_field(attrs: &[Attribute]) -> SerdeField {
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
        // A malformed serde or schemars attribute is reported by its own derive;
        // repeating the error here would only add noise.
        drop(result);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::check_tool_name;

    #[test]
    fn tool_names_that_clients_accept_pass() {
        for name in ["fleet_status", "qe/coverage_gaps", "scan-2.v1", "A"] {
            assert_eq!(check_tool_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn tool_names_that_are_not_portable_fail() {
        let long = "a".repeat(129);
        for name in ["", "a b", "/x", "x/", ".hidden", "a//b", "a/../b", "é", long.as_str()] {
            assert!(check_tool_name(name).is_err(), "{name}");
        }
    }
}
