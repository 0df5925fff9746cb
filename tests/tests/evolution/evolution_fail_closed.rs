//! The classifier fails closed: a change past the depth it walks, behind a long `$ref`
//! chain or a `$ref` cycle, behind a `$ref` that does not resolve, deep inside a keyword it
//! does not classify, or in a form of a known keyword it does not read, is breaking; bounds
//! beyond `f64` precision are compared exactly. Each case has a clean control.

use contract_tools::evolution::{self, Bump, Verdict};
use serde_json::Value;

use crate::support::evolution::only_change;

/// An object nested `levels` property levels deep (each level one property `a`), with
/// `leaf` at the bottom.
fn nested(levels: usize, leaf: &Value) -> Value {
    let mut node = leaf.clone();
    for _ in 0..levels {
        // Built by hand: `json!` would copy `node` through serde on every level.
        let properties = serde_json::Map::from_iter([("a".to_owned(), node)]);
        node = Value::Object(serde_json::Map::from_iter([
            ("type".to_owned(), Value::from("object")),
            ("properties".to_owned(), Value::Object(properties)),
        ]));
    }
    node
}

/// The pointer of the leaf under [`nested`], written out by hand (not by the walker).
fn nested_pointer(levels: usize) -> String {
    "/properties/a".repeat(levels)
}

#[test]
fn a_change_deeper_than_the_walk_goes_is_breaking_and_names_where_it_stopped() {
    let string = serde_json::json!({ "type": "string" });
    let integer = serde_json::json!({ "type": "integer" });

    // 300 property levels: past the walk's limit of 256.
    let changes = evolution::diff(&nested(300, &string), &nested(300, &integer));
    let (kind, verdict, pointer, detail) = only_change(&changes);
    assert_eq!((kind, verdict), ("unclassified", Verdict::Breaking));
    assert_eq!(pointer, nested_pointer(257), "the pointer where the walk stopped");
    assert!(detail.contains("deeper than 256"), "{detail}");
    assert_eq!(evolution::required_bump(&changes), Bump::Major);

    // Clean control: the same depth without a change is no change at all.
    assert!(evolution::diff(&nested(300, &string), &nested(300, &string)).is_empty());
    // Clean control: within the limit the same change is classified as what it is.
    let changes = evolution::diff(&nested(200, &string), &nested(200, &integer));
    let (kind, verdict, pointer, _) = only_change(&changes);
    assert_eq!((kind, verdict), ("type_changed", Verdict::Breaking));
    assert_eq!(pointer, format!("{}/type", nested_pointer(200)));
    // A harmless change deep down (a description) is still not cosmetic past the limit,
    // since nothing there was judged, but it is cosmetic within it.
    let described = serde_json::json!({ "type": "string", "description": "a name" });
    assert_eq!(
        evolution::verdict(&evolution::diff(&nested(300, &string), &nested(300, &described))),
        Some(Verdict::Breaking)
    );
    assert_eq!(
        evolution::verdict(&evolution::diff(&nested(200, &string), &nested(200, &described))),
        Some(Verdict::Cosmetic)
    );

    // Far deeper (1,000 levels): a verdict, not a stack overflow.
    let changes = evolution::diff(&nested(1_000, &string), &nested(1_000, &integer));
    let (kind, verdict, pointer, _) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, nested_pointer(257).as_str()));
    assert!(evolution::diff(&nested(1_000, &string), &nested(1_000, &string)).is_empty());
}

#[test]
fn a_checked_in_schema_deeper_than_the_diff_goes_is_refused_by_the_shape_check() {
    let string = serde_json::json!({ "type": "string" });
    let err = evolution::check_schema(&nested(300, &string)).expect_err("too deep to judge");
    assert_eq!(err.pointer(), nested_pointer(257));
    assert!(err.message().contains("deeper than 256"), "{err}");
    // Clean control: within the limit the shape check passes.
    evolution::check_schema(&nested(200, &string)).expect("200 levels are checked");
}

/// A root that is `$ref` → `d0` → `d1` → … → `d{links-1}` → `{ "type": leaf }`: a chain of
/// `links + 1` references.
fn ref_chain(links: usize, leaf: &str) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..links {
        defs.insert(format!("d{i}"), serde_json::json!({ "$ref": format!("#/$defs/d{}", i + 1) }));
    }
    defs.insert(format!("d{links}"), serde_json::json!({ "type": leaf }));
    serde_json::json!({ "$ref": "#/$defs/d0", "$defs": defs })
}

#[test]
fn a_change_behind_a_long_ref_chain_is_breaking() {
    for links in [63, 64, 65, 100] {
        let changes = evolution::diff(&ref_chain(links, "string"), &ref_chain(links, "integer"));
        assert_eq!(evolution::verdict(&changes), Some(Verdict::Breaking), "{links} links: {changes:#?}");
        // Clean control: the same chain unchanged.
        assert!(evolution::diff(&ref_chain(links, "string"), &ref_chain(links, "string")).is_empty(), "{links}");
    }
    let changes = evolution::diff(&ref_chain(100, "string"), &ref_chain(100, "integer"));
    let (kind, _, pointer, detail) = only_change(&changes);
    assert_eq!((kind, pointer), ("unclassified", ""));
    assert!(detail.contains("`$ref` chain longer than 64"), "{detail}");
    // Clean control: a short chain is followed and the change classified.
    let short = evolution::diff(&ref_chain(5, "string"), &ref_chain(5, "integer"));
    let (kind, verdict, pointer, _) = only_change(&short);
    assert_eq!((kind, verdict, pointer), ("type_changed", Verdict::Breaking, "/type"));

    // A `$ref` cycle that never reaches a schema: the same cycle is no change, a
    // different one is breaking.
    let cycle = |extra: &str| {
        serde_json::json!({
            "$ref": "#/$defs/a",
            "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a", "description": extra } }
        })
    };
    assert!(evolution::diff(&cycle("x"), &cycle("x")).is_empty());
    assert_eq!(evolution::verdict(&evolution::diff(&cycle("x"), &cycle("y"))), Some(Verdict::Breaking));
}

#[test]
fn bounds_beyond_f64_precision_are_compared_exactly() {
    let max = |m: Value| serde_json::json!({ "type": "integer", "maximum": m });
    // u64::MAX and one below are the same `f64`; raising the bound by one is relaxed.
    let changes = evolution::diff(&max(serde_json::json!(u64::MAX - 1)), &max(serde_json::json!(u64::MAX)));
    let (kind, verdict, pointer, _) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("bound_relaxed", Verdict::Breaking, "/maximum"));
    let changes = evolution::diff(&max(serde_json::json!(u64::MAX)), &max(serde_json::json!(u64::MAX - 1)));
    assert_eq!(only_change(&changes).0, "bound_tightened");
    // An integer beyond 2^53 against the fraction `f64` rounds onto it: breaking.
    let changes = evolution::diff(
        &max(serde_json::json!(9_007_199_254_740_993_u64)),
        &max(serde_json::json!(9_007_199_254_740_992.0)),
    );
    let (kind, verdict, ..) = only_change(&changes);
    assert_eq!((kind, verdict), ("unclassified", Verdict::Breaking));
    // Clean controls: the same bound, and the same value written as 10 and 10.0.
    assert!(evolution::diff(&max(serde_json::json!(u64::MAX)), &max(serde_json::json!(u64::MAX))).is_empty());
    let same_value = evolution::diff(&max(serde_json::json!(10)), &max(serde_json::json!(10.0)));
    assert_ne!(evolution::verdict(&same_value), Some(Verdict::Breaking), "{same_value:#?}");
}

#[test]
fn a_ref_that_does_not_resolve_is_breaking_when_it_changes() {
    let to = |target: &str| serde_json::json!({ "type": "object", "properties": { "x": { "$ref": target } } });
    let changes = evolution::diff(&to("#/$defs/Missing"), &to("#/$defs/Other"));
    let (kind, verdict, pointer, detail) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, "/properties/x"));
    assert!(detail.contains("does not resolve"), "{detail}");
    // Clean control: the same unresolvable reference on both sides is no change.
    assert!(evolution::diff(&to("#/$defs/Missing"), &to("#/$defs/Missing")).is_empty());
}

/// `{ keyword: nested(levels, $ref Leaf) }` with `Leaf` of type `leaf`: a change that only
/// the `$ref` target shows.
fn deep_under(keyword: &str, levels: usize, leaf: &str) -> Value {
    let mut schema = serde_json::json!({
        "type": "object",
        "$defs": { "Leaf": { "type": leaf } }
    });
    let inner = nested(levels, &serde_json::json!({ "$ref": "#/$defs/Leaf" }));
    if keyword == "properties" {
        schema["properties"] = serde_json::json!({ "x": inner });
    } else {
        schema[keyword] = inner;
    }
    schema
}

#[test]
fn a_change_deep_inside_an_unknown_keyword_is_breaking() {
    // `not` is not classified: it is compared as a whole with `$ref`s inlined, which
    // stops after 16 property levels. 20 levels: the change is past that.
    let changes = evolution::diff(&deep_under("not", 20, "string"), &deep_under("not", 20, "integer"));
    let (kind, verdict, pointer, detail) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, "/not"));
    assert!(detail.contains("more than 16 property levels"), "{detail}");

    // Clean control: the same depth unchanged.
    assert!(evolution::diff(&deep_under("not", 20, "string"), &deep_under("not", 20, "string")).is_empty());
    // Clean control: a shallow change in `not` is reported the ordinary way.
    let changes = evolution::diff(&deep_under("not", 3, "string"), &deep_under("not", 3, "integer"));
    let (kind, verdict, pointer, detail) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, "/not"));
    assert!(detail.contains("not classified") && !detail.contains("levels"), "{detail}");
    // Clean control: under a keyword the classifier knows, the same 20 levels are
    // walked and the change classified where it is.
    let changes = evolution::diff(&deep_under("properties", 20, "string"), &deep_under("properties", 20, "integer"));
    let (kind, verdict, pointer, _) = only_change(&changes);
    assert_eq!((kind, verdict), ("type_changed", Verdict::Breaking));
    assert_eq!(pointer, format!("/properties/x{}/type", nested_pointer(20)));
}

#[test]
fn a_known_keyword_in_a_form_the_classifier_does_not_read_is_breaking() {
    let cases = [
        (serde_json::json!({ "enum": 5 }), serde_json::json!({ "enum": 6 }), ""),
        (serde_json::json!({ "maximum": "10" }), serde_json::json!({ "maximum": "20" }), ""),
        (serde_json::json!({ "required": [5] }), serde_json::json!({ "required": [6] }), ""),
        (
            serde_json::json!({ "properties": { "a": 5 } }),
            serde_json::json!({ "properties": { "a": 6 } }),
            "/properties/a",
        ),
        (
            serde_json::json!({ "properties": { "a": { "allOf": {} } } }),
            serde_json::json!({ "properties": { "a": { "allOf": { "type": "string" } } } }),
            "/properties/a",
        ),
    ];
    for (old, new, at) in &cases {
        let changes = evolution::diff(old, new);
        let (kind, verdict, pointer, detail) = only_change(&changes);
        assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, *at), "{old} → {new}");
        assert!(detail.contains("does not understand"), "{detail}");
        // Clean control: unchanged is no change, even in a form not understood.
        assert!(evolution::diff(old, old).is_empty(), "{old}");
    }
    // Clean control: the well-formed version of the first case is classified.
    let well_formed = evolution::diff(&serde_json::json!({ "enum": [5] }), &serde_json::json!({ "enum": [5, 6] }));
    let (kind, ..) = only_change(&well_formed);
    assert_eq!(kind, "enum_value_added");
}
