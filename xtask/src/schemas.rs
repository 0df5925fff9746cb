//! `cargo xtask schemas [--check [--against REV]] [--format text|json]`: the few lines a
//! project's own xtask needs. The comparison, classification and version policy live in
//! `contract_runtime::snapshot::review`.

use std::path::PathBuf;
use std::process::Command;

use contract_runtime::snapshot;

const ARGS: &str = "expected `schemas [--check [--against REV]] [--format text|json]`";

pub(crate) fn run(args: &[&str]) -> Result<(), String> {
    let mut check = false;
    let mut json = false;
    let mut against = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--check" => check = true,
            "--format" => match rest.next() {
                Some(&"json") => json = true,
                Some(&"text") => json = false,
                other => return Err(format!("`--format` takes `text` or `json`, got `{}`", other.unwrap_or(&""))),
            },
            "--against" => match rest.next() {
                Some(rev) if !rev.starts_with('-') => against = Some(*rev),
                _ => return Err("`--against` takes a git revision, such as `--against origin/main`".to_owned()),
            },
            "--format=json" => json = true,
            "--format=text" => json = false,
            other => return Err(format!("unknown argument `{other}`: {ARGS}")),
        }
    }
    if against.is_some() && !check {
        return Err("`--against` goes with `--check`: `schemas --check --against origin/main`".to_owned());
    }
    let dir = crate::project_root().join("schemas");
    let contracts = qe_server::all_contracts();
    if let Some(rev) = against {
        // The checked-in files can be regenerated or edited in the same change they
        // judge; the base revision cannot. Its schemas are the old side of the policy.
        let base = base_schemas(rev)?;
        let review = snapshot::review(&base, &contracts).map_err(|e| e.to_string())?;
        for line in review.lines() {
            eprintln!("against {rev}: {line}");
        }
        if !review.policy_ok() {
            return Err(format!(
                "against {rev}: a declared version does not cover the schema change since {rev}; bump it as the lines above say"
            ));
        }
        eprintln!("against {rev}: every change since {rev} is covered by its version bump");
    }
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

/// Exports `schemas/*.json` as they are at git revision `rev` into a folder under
/// `target/`, and returns it. A revision without a `schemas/` folder gives an empty one.
fn base_schemas(rev: &str) -> Result<PathBuf, String> {
    let root = crate::project_root();
    let git = |args: &[&str]| -> Result<Vec<u8>, String> {
        let out =
            Command::new("git").args(args).current_dir(&root).output().map_err(|e| format!("cannot run git: {e}"))?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(format!("`git {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
        }
    };
    git(&["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
        .map_err(|_| format!("`--against {rev}`: not a git revision here"))?;
    let safe: String = rev.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let dir = root.join("target").join("schemas-against").join(safe);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let listing = git(&["ls-tree", "--name-only", "-z", rev, "schemas/"])?;
    for path in listing.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let path = String::from_utf8_lossy(path).into_owned();
        let Some(name) = path
            .strip_prefix("schemas/")
            .filter(|n| !n.contains('/') && std::path::Path::new(n).extension().is_some_and(|e| e == "json"))
        else {
            continue;
        };
        let bytes = git(&["show", &format!("{rev}:{path}")])?;
        std::fs::write(dir.join(name), bytes).map_err(|e| format!("{}: {e}", dir.join(name).display()))?;
    }
    Ok(dir)
}
