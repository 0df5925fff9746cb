//! `cargo test` catches schema drift too, not only `cargo xtask schemas --check`.

use std::path::Path;

#[test]
fn checked_in_schemas_match_the_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    if let Err(err) = contract_tools::schemas::check(&dir, &qe_server::all_contracts()) {
        panic!("{err}");
    }
}
