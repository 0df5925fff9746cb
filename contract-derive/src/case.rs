//! serde's `rename_all` rules, so that field markers point at the names serde writes.

/// The rename rules serde accepts in `rename_all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    pub(crate) const NAMES: &'static [(&'static str, RenameRule)] = &[
        ("lowercase", RenameRule::Lower),
        ("UPPERCASE", RenameRule::Upper),
        ("PascalCase", RenameRule::Pascal),
        ("camelCase", RenameRule::Camel),
        ("snake_case", RenameRule::Snake),
        ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
        ("kebab-case", RenameRule::Kebab),
        ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
    ];

    pub(crate) fn from_str(s: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(n, _)| *n == s).map(|(_, r)| *r)
    }

    /// Applies the rule to a field name written in Rust's snake case, as serde does.
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal | RenameRule::Camel => {
                let mut out = String::new();
                let mut capitalize = self == RenameRule::Pascal;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(ch);
                    }
                }
                out
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.replace('_', "-").to_ascii_uppercase(),
        }
    }
}

/// `FleetStatus` → `fleet_status`, the default contract name.
pub(crate) fn to_snake_case(ident: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = ident.chars().collect();
    for (i, &ch) in chars.iter().enumerate() {
        if ch.is_uppercase() {
            let prev_lower = i > 0 && (chars[i - 1].is_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.extend(ch.to_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_rules_match_serde() {
        let f = "returned_count";
        assert_eq!(RenameRule::Camel.apply_to_field(f), "returnedCount");
        assert_eq!(RenameRule::Pascal.apply_to_field(f), "ReturnedCount");
        assert_eq!(RenameRule::ScreamingSnake.apply_to_field(f), "RETURNED_COUNT");
        assert_eq!(RenameRule::Kebab.apply_to_field(f), "returned-count");
        assert_eq!(RenameRule::ScreamingKebab.apply_to_field(f), "RETURNED-COUNT");
        assert_eq!(RenameRule::Lower.apply_to_field(f), "returned_count");
    }

    #[test]
    fn snake_case_names() {
        assert_eq!(to_snake_case("FleetStatus"), "fleet_status");
        assert_eq!(to_snake_case("HTTPStatus"), "http_status");
        assert_eq!(to_snake_case("Scan2Result"), "scan2_result");
        assert_eq!(to_snake_case("A"), "a");
    }
}
