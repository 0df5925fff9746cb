//! `cargo xtask schemas [--check]`: the few lines a project's own xtask needs.

use contract_runtime::snapshot;

pub(crate) fn run(args: &[&str]) -> Result<(), String> {
    let check = match args {
        [] => false,
        ["--check"] => true,
        _ => return Err(format!("unknown arguments `{}`: expected `schemas` or `schemas --check`", args.join(" "))),
    };
    let dir = crate::project_root().join("schemas");
    let contracts = qe_server::all_contracts();
    if check {
        snapshot::check(&dir, &contracts).map_err(|e| e.to_string())?;
        println!("schemas/ is up to date ({} contracts)", contracts.len());
    } else {
        let summary = snapshot::write(&dir, &contracts).map_err(|e| e.to_string())?;
        for name in &summary.written {
            println!("wrote schemas/{name}");
        }
        for name in &summary.removed {
            println!("removed schemas/{name}");
        }
        println!("{} unchanged", summary.unchanged.len());
    }
    Ok(())
}
