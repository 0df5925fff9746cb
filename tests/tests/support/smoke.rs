//! The packaged-crates path shared by package_smoke.rs and real_shapes.rs: `cargo
//! package` packs contract-derive, contract-runtime and contract-tools into `.crate`
//! files as crates.io would receive them; a user workspace from `tests/fixtures/` is
//! copied under `target/package-smoke/` and built against the unpacked `.crate` contents
//! through a generated `[patch.crates-io]`, never through path dependencies on this
//! repository's sources, in the tests' outside target directory
//! ([`bins::outside_target`](super::bins::outside_target), so the tests neither wait on
//! nor invalidate the main build); its server is driven over stdio.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

const PACKAGES: [&str; 3] = ["contract-derive", "contract-runtime", "contract-tools"];

/// The workspace root.
pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the tests crate sits in the workspace").to_path_buf()
}

/// The folder everything of the packaged-crates tests lives in.
pub(crate) fn smoke_dir() -> PathBuf {
    workspace().join("target/package-smoke")
}

pub(crate) fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

pub(crate) fn run(mut command: Command, what: &str) -> Output {
    command.output().unwrap_or_else(|err| panic!("{what}: cannot start: {err}"))
}

pub(crate) fn ok(command: Command, what: &str) -> Output {
    let output = run(command, what);
    assert!(
        output.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|err| panic!("{}: {err}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|err| panic!("{}: {err}", from.display())) {
        let entry = entry.expect("a directory entry");
        let name = entry.file_name();
        if name == "target" || name == ".cargo" || name == "Cargo.lock" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        }
    }
}

/// Packs `packages` into `target` and unpacks them under `crates`; returns each crate's
/// folder.
///
/// `cargo package` gives every file of a `.crate` the same fixed mtime, and cargo judges
/// a path dependency fresh by mtimes: a crate unpacked over an older one with its
/// archived mtimes would never be rebuilt. So a crate whose `.crate` changed is unpacked
/// afresh with the current time on its files (`tar -m`), and one that did not change is
/// left as it is, so its build stays fresh.
pub(crate) fn pack(crates: &Path, target: &Path, packages: &[&str]) -> Vec<(String, PathBuf)> {
    let mut pack = cargo();
    pack.current_dir(workspace())
        .args(["package", "--no-verify", "--allow-dirty", "--quiet", "--target-dir"])
        .arg(target);
    for package in packages {
        pack.args(["-p", package]);
    }
    ok(pack, "cargo package");
    std::fs::create_dir_all(crates).expect("creates the crates folder");
    let version = env!("CARGO_PKG_VERSION");
    packages
        .iter()
        .map(|package| {
            let file = target.join("package").join(format!("{package}-{version}.crate"));
            let packed =
                std::fs::read(&file).unwrap_or_else(|err| panic!("cargo package wrote no {}: {err}", file.display()));
            let unpacked = crates.join(format!("{package}-{version}"));
            let copy = crates.join(format!("{package}-{version}.crate"));
            if std::fs::read(&copy).ok().as_ref() != Some(&packed) || !unpacked.is_dir() {
                let _ = std::fs::remove_dir_all(&unpacked);
                let mut untar = Command::new("tar");
                untar.arg("-xzmf").arg(&file).arg("-C").arg(crates);
                ok(untar, "tar");
                std::fs::write(&copy, &packed).expect("keeps the unpacked crate's archive");
            }
            let manifest = std::fs::read_to_string(unpacked.join("Cargo.toml")).expect("a packaged manifest");
            assert!(!manifest.contains("path = \"../"), "{package}: the packaged manifest still has a path dependency");
            ((*package).to_owned(), unpacked)
        })
        .collect()
}

/// A user workspace built against the packaged crates.
///
/// The user workspaces share one target directory, where packages of the same names
/// (`xtask`, `weather-server`) from two copies would overwrite each other's binaries
/// between a build and its run: one user workspace exists at a time in a test process,
/// the others wait for it.
pub(crate) struct UserWorkspace {
    /// The copy of the fixture, free to edit.
    pub(crate) dir: PathBuf,
    /// The target directory every build of it uses.
    pub(crate) target: PathBuf,
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

/// Held by the one [`UserWorkspace`] of the moment.
static USER_WORKSPACE: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl UserWorkspace {
    /// Packs the crates and copies `tests/fixtures/{fixture}` to
    /// `target/package-smoke/{name}/ws` (so that edits never touch the repository), with
    /// a `.cargo/config.toml` that patches the packaged crates in and the `xtask` alias,
    /// and this repository's lock file, which pins shared dependencies to the versions it
    /// tests.
    pub(crate) fn new(fixture: &str, name: &str) -> Self {
        let one_at_a_time = USER_WORKSPACE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let root = workspace();
        let target = super::bins::outside_target();
        let own = smoke_dir().join(name);
        let crates = pack(&own.join("crates"), &target, &PACKAGES);
        let dir = own.join("ws");
        let _ = std::fs::remove_dir_all(&dir);
        copy_dir(&root.join("tests/fixtures").join(fixture), &dir);
        let patches: Vec<String> = crates
            .iter()
            .map(|(package, path)| format!("{package} = {{ path = {:?} }}\n", path.display().to_string()))
            .collect();
        let config =
            format!("[alias]\nxtask = \"run --quiet --package xtask --\"\n\n[patch.crates-io]\n{}", patches.concat());
        std::fs::create_dir_all(dir.join(".cargo")).unwrap();
        std::fs::write(dir.join(".cargo/config.toml"), config).unwrap();
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        Self { dir, target, _one_at_a_time: one_at_a_time }
    }

    /// `cargo ARGS` in the workspace, in the outside target directory.
    pub(crate) fn cargo(&self, args: &[&str]) -> Command {
        let mut command = cargo();
        super::bins::outside_env(command.current_dir(&self.dir)).args(args);
        command
    }

    /// The path of the binary `name` in the target directory.
    pub(crate) fn exe(&self, name: &str) -> PathBuf {
        self.target.join("debug").join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    }
}

/// A JSON-RPC session with a server over its stdin/stdout.
pub(crate) struct Session {
    child: std::process::Child,
    reader: BufReader<std::process::ChildStdout>,
    /// The `_meta` of every request from a 2026-07-28 peer.
    meta: Option<Value>,
}

impl Session {
    /// Starts `exe` with `args`, for a peer on `protocol`: a peer before 2026-07-28
    /// initializes the session; one on 2026-07-28 skips the handshake and sends its
    /// version, capabilities and identity in each request's `_meta`.
    pub(crate) fn start(exe: &Path, args: &[&str], protocol: &str) -> Self {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|err| panic!("{}: {err}", exe.display()));
        let reader = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut session = Self { child, reader, meta: None };
        if protocol >= "2026-07-28" {
            session.meta = Some(json!({
                "io.modelcontextprotocol/protocolVersion": protocol,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "package-smoke", "version": "0"}
            }));
            return session;
        }
        session.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": protocol, "capabilities": {},
            "clientInfo": {"name": "package-smoke", "version": "0"}}}));
        let init = session.answer(1);
        assert_eq!(init["result"]["protocolVersion"], protocol, "initialize: {init}");
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    /// Sends request `id` and returns its answer.
    pub(crate) fn request(&mut self, id: i64, method: &str, mut params: Value) -> Value {
        if let (Some(meta), Some(params)) = (&self.meta, params.as_object_mut()) {
            params.insert("_meta".to_owned(), meta.clone());
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id)
    }

    pub(crate) fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().expect("piped stdin");
        writeln!(stdin, "{message}").expect("writes to the server");
        stdin.flush().expect("flushes");
    }

    pub(crate) fn answer(&mut self, id: i64) -> Value {
        loop {
            let mut line = String::new();
            let read = self.reader.read_line(&mut line).expect("reads from the server");
            assert!(read > 0, "the server closed stdout before answering request {id}");
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"));
            if message["id"] == id {
                return message;
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Asserts that the live `tools/list` of `session` advertises exactly the schemas and
/// the identities of the checked-in `schemas` folder; returns the listed tools.
pub(crate) fn assert_listing_matches(session: &mut Session, id: i64, schemas: &Path) -> Vec<Value> {
    let listed = session.request(id, "tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap_or_else(|| panic!("tools/list: {listed}")).clone();
    let inventory = read_json(&schemas.join("inventory.json"));
    let entries = inventory["contracts"].as_array().expect("inventory contracts");
    assert_eq!(tools.len(), entries.len(), "one tool per contract: {listed}");
    for entry in entries {
        let name = entry["name"].as_str().expect("a name");
        let tool = tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("tool `{name}` is not listed"));
        let file = read_json(&schemas.join(entry["file"].as_str().expect("a file")));
        assert_eq!(tool["outputSchema"], file, "{name}: the live outputSchema is the checked-in schema");
        let identity = &tool["_meta"]["tool-contracts.dev/contract"];
        assert_eq!(identity["qualified"], true, "{name}: contract identity in _meta: {tool}");
        assert_eq!(identity["sha256"], entry["sha256"], "{name}: live sha256 = inventory");
        assert_eq!(identity["version"], entry["version"], "{name}: live version = inventory");
    }
    tools
}
