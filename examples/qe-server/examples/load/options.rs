//! The command line, and the binaries it drives: named, or built now in this example's
//! profile.

#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;

pub(super) const USAGE: &str = "usage: load [--calls N] [--concurrency N] [--transport both|http|stdio] \
     [--era 2025-11-25|2026-07-28|both] [--server PATH]\n       load --soak [--calls N (1000000)] [--concurrency N] \
     [--transport both|http|stdio] [--era …] [--rss-every N (10000)] [--warmup N (100000)] [--svg PATH] [--server PATH] \
     [--proxy PATH] [--upstream PATH]";

pub(super) struct Options {
    pub(super) calls: u64,
    pub(super) concurrency: u64,
    pub(super) http: bool,
    pub(super) stdio: bool,
    pub(super) eras: Vec<Era>,
    pub(super) server: Option<PathBuf>,
    /// The soak: RSS sampled as the calls go, judged after the warm-up.
    pub(super) soak: bool,
    pub(super) rss_every: u64,
    pub(super) warmup: u64,
    pub(super) svg: Option<PathBuf>,
    pub(super) proxy: Option<PathBuf>,
    pub(super) upstream: Option<PathBuf>,
}

fn number(flag: &str, value: &str) -> Result<u64, String> {
    value.replace('_', "").parse().map_err(|_| format!("`{flag} {value}`: expected a whole number"))
}

pub(super) fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        calls: 0,
        concurrency: 8,
        http: true,
        stdio: true,
        eras: Vec::new(),
        server: None,
        soak: false,
        rss_every: 10_000,
        warmup: 100_000,
        svg: None,
        proxy: None,
        upstream: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("`{arg}` needs a value"));
        match arg.as_str() {
            "--calls" => options.calls = number(arg, value()?)?,
            "--concurrency" => options.concurrency = number(arg, value()?)?,
            "--transport" => match value()?.as_str() {
                "both" => (options.http, options.stdio) = (true, true),
                "http" => (options.http, options.stdio) = (true, false),
                "stdio" => (options.http, options.stdio) = (false, true),
                other => return Err(format!("`--transport {other}`: expected both, http or stdio")),
            },
            "--era" => {
                options.eras = match value()?.as_str() {
                    PROTOCOL => vec![Era::Sessions],
                    STATELESS => vec![Era::Stateless],
                    "both" => vec![Era::Sessions, Era::Stateless],
                    other => return Err(format!("`--era {other}`: expected {PROTOCOL}, {STATELESS} or both")),
                }
            }
            "--server" => options.server = Some(PathBuf::from(value()?)),
            "--soak" => options.soak = true,
            "--rss-every" => options.rss_every = number(arg, value()?)?,
            "--warmup" => options.warmup = number(arg, value()?)?,
            "--svg" => options.svg = Some(PathBuf::from(value()?)),
            "--proxy" => options.proxy = Some(PathBuf::from(value()?)),
            "--upstream" => options.upstream = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.calls == 0 {
        options.calls = if options.soak { 1_000_000 } else { 50_000 };
    }
    if options.eras.is_empty() {
        options.eras = if options.soak { vec![Era::Sessions, Era::Stateless] } else { vec![Era::Sessions] };
    }
    if options.concurrency == 0 {
        return Err("`--concurrency` must be positive".to_owned());
    }
    if options.soak && (options.rss_every == 0 || options.warmup >= options.calls) {
        return Err("`--rss-every` must be positive and `--warmup` below `--calls`".to_owned());
    }
    Ok(options)
}

/// What cargo builds: a binary or an example of a package.
pub(super) enum Artifact {
    Bin(&'static str),
    Example(&'static str),
}

/// This example's profile directory: `target/<profile>` of `target/<profile>/examples/load`.
pub(super) fn profile_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or_else(|| "cannot locate the target directory".to_owned())
}

/// `explicit`, or `artifact` of `package` (with `features`) built now in this example's
/// profile.
pub(super) fn built(
    explicit: Option<PathBuf>,
    package: &str,
    features: &[&str],
    artifact: &Artifact,
) -> Result<PathBuf, String> {
    if let Some(path) = explicit {
        return Ok(path);
    }
    let profile_dir = profile_dir()?;
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = std::process::Command::new(cargo);
    build.args(["build", "-p", package]);
    if !features.is_empty() {
        build.args(["--features", &features.join(",")]);
    }
    let (flag, name, dir) = match *artifact {
        Artifact::Bin(name) => ("--bin", name, profile_dir.clone()),
        Artifact::Example(name) => ("--example", name, profile_dir.join("examples")),
    };
    build.args([flag, name]);
    if release {
        build.arg("--release");
    }
    let status = build.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building {name} failed"));
    }
    Ok(dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
}
