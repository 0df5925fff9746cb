//! Build-time scale: how `cargo xtask schemas --check`, the derive and memory grow with
//! the number of contracts in a workspace.
//!
//! ```text
//! cargo run --release -p contract-tools --example build_scale -- 10 100 1000
//! cargo run --release -p contract-tools --example build_scale -- --keep 10
//! ```
//!
//! For every N given it generates, under `target/build-scale/`, a user workspace that
//! depends on this repository's crates by path:
//!
//! - `derived`: N result types of realistic size (a few scalar fields, an `Option`, a
//!   nested struct, an enum, a `Vec` of a nested struct), each `#[derive(Serialize,
//!   JsonSchema, ToolOutput)]`, and `contracts()` listing all N;
//! - `plain`: the same types with `#[derive(Serialize, JsonSchema)]` only, the baseline
//!   the derive's compile-time cost is measured against;
//! - `xtask`: the one-line xtask (`contract_tools::cli::main(derived::contracts())`);
//! - `probe`: builds the N contracts in memory and reports the RSS it took, read from
//!   `/proc/self/status`.
//!
//! It builds the workspace, writes `schemas/` with `cargo xtask schemas`, then measures:
//! the wall time of `cargo xtask schemas --check` (through cargo, as CI runs it, and of the
//! built binary alone, whose CPU time is also read via `/usr/bin/time` when present), with a tampered schema file as the control that the check really
//! compares; the `cargo build -p` time of `derived` and of `plain` after `cargo clean -p`;
//! the peak RSS of that build (rustc, via `/usr/bin/time -f %M` when present); and the
//! runtime memory per compiled contract. The generated workspaces share one target folder
//! (dependencies compile once) and are deleted at the end unless `--keep` is given.
//!
//! Timings are wall clock on whatever else the machine runs: medians of a few rounds,
//! to read as orders of magnitude and slopes, not as exact figures.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Rounds of the `--check` timing (median reported).
const CHECK_ROUNDS: usize = 5;

fn main() {
    let mut keep = false;
    let mut sizes = Vec::new();
    let mut build_rounds = 1;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--keep" => keep = true,
            "--build-rounds" => {
                build_rounds = args.next().and_then(|v| v.parse().ok()).expect("--build-rounds takes a number");
            }
            n => sizes.push(n.parse::<usize>().unwrap_or_else(|_| panic!("not a number of contracts: {n}"))),
        }
    }
    if sizes.is_empty() {
        sizes = vec![10, 100, 1000];
    }
    let repo =
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("contract-tools sits in the repository").to_path_buf();
    let base = repo.join("target").join("build-scale");
    let target_dir = base.join("target");
    let mut rows = Vec::new();
    for &n in &sizes {
        let ws = base.join(format!("ws-{n}"));
        generate(&repo, &ws, n);
        rows.push(measure(&ws, &target_dir, n, build_rounds));
    }
    print_table(&rows);
    if !keep {
        // Only the folder this command made; nothing else under target/ is touched.
        let _ = fs::remove_dir_all(&base);
    }
}

/// What one workspace measured.
struct Row {
    n: usize,
    check_cargo: Duration,
    check_bin: Duration,
    /// User + system CPU time of the built binary (median), when GNU time is installed.
    check_cpu: Option<Duration>,
    build_plain: Duration,
    build_derived: Duration,
    rustc_peak_plain_kib: Option<u64>,
    rustc_peak_derived_kib: Option<u64>,
    runtime_rss_kib: u64,
}

/// Writes the generated workspace for `n` contracts into `ws`.
fn generate(repo: &Path, ws: &Path, n: usize) {
    let _ = fs::remove_dir_all(ws);
    let write = |rel: &str, text: &str| {
        let path = ws.join(rel);
        fs::create_dir_all(path.parent().expect("a file in a folder")).expect("create folder");
        fs::write(&path, text).expect("write generated file");
    };
    let repo = repo.display();
    write(
        "Cargo.toml",
        &format!(
            "[workspace]\nresolver = \"2\"\nmembers = [\"derived\", \"plain\", \"xtask\", \"probe\"]\n\n\
             [workspace.dependencies]\n\
             contract-runtime = {{ path = \"{repo}/contract-runtime\" }}\n\
             contract-tools = {{ path = \"{repo}/contract-tools\" }}\n\
             serde = {{ version = \"1\", features = [\"derive\"] }}\n\
             schemars = \"1.2\"\n"
        ),
    );
    write(".cargo/config.toml", "[alias]\nxtask = \"run --quiet --package xtask --\"\n");
    // The repository's lock file pins the same dependency versions the project is tested
    // with; cargo drops the entries this workspace does not use.
    fs::copy(format!("{repo}/Cargo.lock"), ws.join("Cargo.lock")).expect("copy Cargo.lock");
    let manifest = |name: &str, deps: &str| {
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\n{deps}")
    };
    let types_deps = "serde.workspace = true\nschemars.workspace = true\n";
    write("derived/Cargo.toml", &manifest("derived", &format!("contract-runtime.workspace = true\n{types_deps}")));
    write("plain/Cargo.toml", &manifest("plain", types_deps));
    write("derived/src/lib.rs", &types_source(n, true));
    write("plain/src/lib.rs", &types_source(n, false));
    write(
        "xtask/Cargo.toml",
        &manifest("xtask", "contract-tools.workspace = true\nderived = { path = \"../derived\" }\n"),
    );
    write(
        "xtask/src/main.rs",
        "fn main() -> std::process::ExitCode {\n    contract_tools::cli::main(derived::contracts())\n}\n",
    );
    write(
        "probe/Cargo.toml",
        &manifest("probe", "contract-runtime.workspace = true\nderived = { path = \"../derived\" }\n"),
    );
    write("probe/src/main.rs", PROBE);
}

/// The probe: RSS before and after building every contract (schema generation, canonical
/// form, hash and compiled validator), from the kernel's own accounting.
const PROBE: &str = r#"fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS line");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("VmRSS in kB")
}

fn main() {
    let before = rss_kib();
    let set = derived::contracts();
    let after = rss_kib();
    assert!(set.errors().is_empty(), "every generated contract builds");
    println!("{} {}", set.len(), after.saturating_sub(before));
    drop(set);
}
"#;

/// The Rust source of `n` result types; with `contract` they also derive `ToolOutput`
/// and the crate lists them in `contracts()`.
fn types_source(n: usize, contract: bool) -> String {
    let mut s = String::from("//! Generated by contract-tools' build_scale example.\n\n");
    s.push_str("use schemars::JsonSchema;\nuse serde::Serialize;\n");
    if contract {
        s.push_str("use contract_runtime::{ContractSet, ToolOutput};\n");
    }
    for i in 0..n {
        let (derive, attr) = if contract {
            (
                "Serialize, JsonSchema, ToolOutput",
                format!(
                    "#[tool_output(name = \"tool_{i}\", version = \"1.{}.0\", compatibility = \"additive\")]\n",
                    i % 7
                ),
            )
        } else {
            ("Serialize, JsonSchema", String::new())
        };
        let _ = write!(
            s,
            r#"
/// What tool {i} returns.
#[derive({derive})]
{attr}pub struct Result{i} {{
    /// Identifier of the record.
    pub id: String,
    /// How many records matched.
    pub total: u32,
    /// Relevance between 0 and 1.
    pub score: f64,
    /// A note, when there is one.
    pub note: Option<String>,
    /// State of the record.
    pub status: Status{i},
    /// Who owns the record.
    pub owner: Owner{i},
    /// The lines of the record.
    pub items: Vec<Item{i}>,
}}

/// The owner of a record of tool {i}.
#[derive(Serialize, JsonSchema)]
pub struct Owner{i} {{
    /// Display name.
    pub name: String,
    /// Contact address.
    pub email: String,
    /// Team, if any.
    pub team: Option<String>,
}}

/// One line of a record of tool {i}.
#[derive(Serialize, JsonSchema)]
pub struct Item{i} {{
    /// Stock keeping unit.
    pub sku: String,
    /// Quantity.
    pub qty: u16,
    /// Free labels.
    pub tags: Vec<String>,
}}

/// The state of a record of tool {i}.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status{i} {{
    /// Being worked on.
    Open,
    /// Waiting for someone.
    Pending,
    /// Done.
    Closed,
}}
"#
        );
    }
    if contract {
        // One statement per contract rather than one `contracts![...]` chain: a method
        // chain a thousand calls deep would measure rustc's expression nesting, not the
        // derive.
        s.push_str("\n/// Every contract of this crate.\npub fn contracts() -> ContractSet {\n    let mut set = ContractSet::new();\n");
        for i in 0..n {
            let _ = writeln!(s, "    set = set.with::<Result{i}>();");
        }
        s.push_str("    set\n}\n");
    }
    s
}

/// Runs `cargo` with `args` in `ws`, returning the wall time; panics on failure.
fn cargo(ws: &Path, target_dir: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    // The xtask prints a line per schema file; only the exit status matters here.
    let status = Command::new(env_cargo())
        .args(args)
        .current_dir(ws)
        .env("CARGO_TARGET_DIR", target_dir)
        .stdout(Stdio::null())
        .stderr(if args[0] == "xtask" { Stdio::null() } else { Stdio::inherit() })
        .status()
        .expect("run cargo");
    let took = start.elapsed();
    assert!(status.success(), "cargo {} failed in {}", args.join(" "), ws.display());
    took
}

fn env_cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

/// `cargo build -p <package>` after `cargo clean -p <package>`: wall time and, when GNU
/// time is installed, the peak RSS of the largest process of the build (rustc).
fn clean_build(ws: &Path, target_dir: &Path, package: &str) -> (Duration, Option<u64>) {
    cargo(ws, target_dir, &["clean", "-q", "-p", package]);
    let time = Path::new("/usr/bin/time");
    if time.exists() {
        let start = Instant::now();
        let out = Command::new(time)
            .args(["-f", "PEAK_KIB %M"])
            .arg(env_cargo())
            .args(["build", "-q", "-p", package])
            .current_dir(ws)
            .env("CARGO_TARGET_DIR", target_dir)
            .stderr(Stdio::piped())
            .output()
            .expect("run /usr/bin/time cargo build");
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "cargo build -p {package} failed:\n{stderr}");
        let peak = stderr.lines().find_map(|l| l.strip_prefix("PEAK_KIB ")).and_then(|v| v.trim().parse().ok());
        (took, peak)
    } else {
        (cargo(ws, target_dir, &["build", "-q", "-p", package]), None)
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn measure(ws: &Path, target_dir: &Path, n: usize, build_rounds: usize) -> Row {
    eprintln!("== {n} contracts: building the workspace in {}", ws.display());
    let full = cargo(ws, target_dir, &["build", "-q", "--workspace"]);
    eprintln!("   full build {full:.1?}");
    cargo(ws, target_dir, &["xtask", "schemas"]);
    let written = fs::read_dir(ws.join("schemas")).expect("schemas/ written").count();
    assert_eq!(written, n + 1, "one schema file per contract plus the inventory");

    // Warm once (page cache, cargo's fingerprint check), then take the median.
    cargo(ws, target_dir, &["xtask", "schemas", "--check"]);
    let check_cargo =
        median((0..CHECK_ROUNDS).map(|_| cargo(ws, target_dir, &["xtask", "schemas", "--check"])).collect());
    let bin = target_dir.join("debug").join("xtask");
    // Wall time, success and, when GNU time is installed, the CPU time (user + system) of
    // the built binary: on a shared machine the wall time grows with the load, the CPU
    // time much less, so it is the figure to compare runs by.
    let time = Path::new("/usr/bin/time");
    let run_bin = || {
        let mut command = if time.exists() {
            let mut command = Command::new(time);
            command.args(["-f", "CPU_SECONDS %U %S"]).arg(&bin);
            command
        } else {
            Command::new(&bin)
        };
        let start = Instant::now();
        let out = command
            .args(["schemas", "--check"])
            .current_dir(ws)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .expect("run xtask");
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let cpu = stderr
            .lines()
            .find_map(|l| l.strip_prefix("CPU_SECONDS "))
            .map(|v| v.split_whitespace().map(|s| s.parse::<f64>().expect("GNU time prints seconds")).sum::<f64>());
        (took, cpu.map(Duration::from_secs_f64), out.status.success())
    };
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    for _ in 0..CHECK_ROUNDS {
        let (took, cpu, ok) = run_bin();
        assert!(ok, "a clean schemas/ passes the check");
        walls.push(took);
        cpus.extend(cpu);
    }
    let check_bin = median(walls);
    let check_cpu = (!cpus.is_empty()).then(|| median(cpus));
    // The control: the check must fail when one file drifts, else its time means nothing.
    let victim = ws.join("schemas").join(format!("tool_{}.json", n / 2));
    let original = fs::read_to_string(&victim).expect("read a schema file");
    fs::write(&victim, original.replacen("\"type\"", "\"description\": \"tampered\",\n  \"type\"", 1)).expect("tamper");
    assert!(!run_bin().2, "a tampered schema file fails the check");
    fs::write(&victim, original).expect("restore");
    assert!(run_bin().2, "the restored file passes again");

    // `cargo build -p` resolves features for the one package, which may differ from the
    // whole workspace's unified set; one untimed build per package first makes sure the
    // timed builds below compile that package alone, not its dependencies again.
    cargo(ws, target_dir, &["build", "-q", "-p", "plain"]);
    cargo(ws, target_dir, &["build", "-q", "-p", "derived"]);
    let mut plain = Vec::new();
    let mut derived = Vec::new();
    let (mut peak_plain, mut peak_derived) = (None, None);
    for _ in 0..build_rounds {
        let (t, p) = clean_build(ws, target_dir, "plain");
        plain.push(t);
        peak_plain = peak_plain.max(p);
        let (t, p) = clean_build(ws, target_dir, "derived");
        derived.push(t);
        peak_derived = peak_derived.max(p);
    }

    let probe = Command::new(target_dir.join("debug").join("probe")).output().expect("run probe");
    assert!(probe.status.success(), "probe failed: {}", String::from_utf8_lossy(&probe.stderr));
    let text = String::from_utf8_lossy(&probe.stdout);
    let mut fields = text.split_whitespace().map(|v| v.parse::<u64>().expect("probe prints numbers"));
    let (count, rss) = (fields.next().expect("count"), fields.next().expect("rss"));
    assert_eq!(count, n as u64, "the probe built every contract");

    let row = Row {
        n,
        check_cargo,
        check_bin,
        check_cpu,
        build_plain: median(plain),
        build_derived: median(derived),
        rustc_peak_plain_kib: peak_plain,
        rustc_peak_derived_kib: peak_derived,
        runtime_rss_kib: rss,
    };
    eprintln!(
        "   check {:.0?} (binary {:.0?}, CPU {:.0?}); build plain {:.1?}, derived {:.1?}; runtime RSS {} KiB",
        row.check_cargo, row.check_bin, row.check_cpu, row.build_plain, row.build_derived, row.runtime_rss_kib
    );
    row
}

#[allow(clippy::cast_precision_loss)]
fn print_table(rows: &[Row]) {
    let kib = |v: Option<u64>| v.map_or_else(|| "n/a".to_owned(), |k| format!("{:.0} MiB", k as f64 / 1024.0));
    println!("| contracts | `cargo xtask schemas --check` | binary alone | binary CPU (user + sys) | per contract | `cargo build -p` plain (Serialize, JsonSchema) | derived (+ ToolOutput) | derive overhead | rustc peak RSS plain / derived | runtime RSS per compiled contract |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let ms = |d: Option<Duration>| d.map_or_else(|| "n/a".to_owned(), |d| format!("{:.0} ms", d.as_secs_f64() * 1e3));
    for r in rows {
        let n = r.n as f64;
        let overhead = r.build_derived.as_secs_f64() / r.build_plain.as_secs_f64() - 1.0;
        println!(
            "| {} | {:.0} ms | {:.0} ms | {} | {:.2} ms | {:.2} s | {:.2} s | {:+.0} % | {} / {} | {:.0} KiB |",
            r.n,
            r.check_cargo.as_secs_f64() * 1e3,
            r.check_bin.as_secs_f64() * 1e3,
            ms(r.check_cpu),
            r.check_bin.as_secs_f64() * 1e3 / n,
            r.build_plain.as_secs_f64(),
            r.build_derived.as_secs_f64(),
            overhead * 100.0,
            kib(r.rustc_peak_plain_kib),
            kib(r.rustc_peak_derived_kib),
            r.runtime_rss_kib as f64 / n,
        );
    }
}
