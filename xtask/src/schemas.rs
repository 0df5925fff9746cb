//! `cargo xtask schemas [--check] [--format text|json]`: the few lines a project's own
//! xtask needs. The comparison, classification and version policy live in
//! `contract_runtime::snapshot::review`.

use contract_runtime::snapshot;

const ARGS: &str = "expected `schemas [--check] [--format text|json]`";

pub(crate) fn run(args: &[&str]) -> Result<(), String> {
    let mut check = false;
    let mut json = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--check" => check = true,
            "--format" => match rest.next() {
                Some(&"json") => json = true,
                Some(&"text") => json = false,
                other => return Err(format!("`--format` takes `text` or `json`, got `{}`", other.unwrap_or(&""))),
            },
            "--format=json" => json = true,
            "--format=text" => json = false,
            other => return Err(format!("unknown argument `{other}`: {ARGS}")),
        }
    }
    let dir = crate::project_root().join("schemas");
    let contracts = qe_server::all_contracts();
    let review = snapshot::review(&dir, &contracts).map_err(|e| e.to_string())?;
    if json {
        // The report goes to stdout whatever the outcome; the exit code says pass or fail.
        // A closed pipe (`| head`) is the reader's choice, not an error worth a panic.
        let report = contract_runtime::schema::canonical_string(&review.to_json());
        let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), report.as_bytes());
    }
    if check {
        review.check().map_err(|e| {
            if json {
                "schemas/ is not up to date (see the JSON report)".to_owned()
            } else {
                e.to_string()
            }
        })?;
        if !json {
            println!("schemas/ is up to date ({} contracts)", contracts.len());
        }
        return Ok(());
    }
    let summary = review.write(&dir).map_err(|e| e.to_string())?;
    if !json {
        for line in review.lines() {
            println!("{line}");
        }
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
