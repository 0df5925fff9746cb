//! The packages a user without Rust installs: the PyPI wheel and the npm packages of
//! `tool-contracts`, built by `packaging/build.sh` for this machine's platform, installed
//! into a fresh virtual environment and a fresh npm folder, and run with no Rust toolchain
//! on `PATH`: `--version` (the crate's), `--help`, an audit of the reference memory server,
//! and the README's two client configurations (`npx` and `uvx`) run as written by the
//! official TypeScript SDK v2 and Python SDK clients, each proxied call compared with the
//! same call made directly to the server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace").to_path_buf()
}

fn interop() -> PathBuf {
    root().join("tests/interop")
}

fn run(mut command: Command, what: &str) -> Output {
    let out = command.output().unwrap_or_else(|err| panic!("{what}: cannot start: {err}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `PATH` without any folder that holds `cargo` or `rustc`: what a user without Rust has.
fn path_without_rust() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    let kept: Vec<&str> = path
        .split(':')
        .filter(|dir| !dir.is_empty() && !["cargo", "rustc", "rustup"].iter().any(|t| Path::new(dir).join(t).exists()))
        .collect();
    kept.join(":")
}

/// The `mcpServers` configurations a document shows, as JSON values.
fn configurations(doc: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(doc).unwrap_or_else(|err| panic!("{}: {err}", doc.display()));
    text.split("```json")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .map(|block| {
            // A block inside a list item is indented: JSON does not mind.
            serde_json::from_str::<Value>(block)
                .unwrap_or_else(|err| panic!("{}: a json block does not parse: {err}\n{block}", doc.display()))
        })
        .filter(|value| value.get("mcpServers").is_some())
        .collect()
}

/// The one configuration of `doc` whose `server` is launched with `command`.
fn configuration(doc: &Path, command: &str, server: &str) -> Value {
    let found: Vec<Value> =
        configurations(doc).into_iter().filter(|config| config["mcpServers"][server]["command"] == command).collect();
    assert_eq!(found.len(), 1, "{} shows one `{command}` configuration of `{server}`: {found:?}", doc.display());
    found.into_iter().next().unwrap()
}

#[test]
fn the_wheel_and_the_npm_packages_run_without_a_rust_toolchain() {
    let version = env!("CARGO_PKG_VERSION");
    let root = root();

    // The packages, built as the release workflow builds them (dev profile here), in the
    // tests' outside target directory: with tool-contracts' own features, which the main
    // one's test build does not have.
    let mut build = Command::new("bash");
    crate::support::bins::outside_env(build.current_dir(&root)).arg("packaging/build.sh");
    let printed = stdout(&run(build, "bash packaging/build.sh"));
    let packages = root.join("target/packages");
    let wheel = printed
        .lines()
        .map(|line| root.join(line.trim()))
        .find(|path| path.extension().is_some_and(|e| e == "whl"))
        .unwrap_or_else(|| panic!("build.sh names the wheel:\n{printed}"));
    let wheel_name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(wheel_name.starts_with(&format!("tool_contracts-{version}-py3-none-")), "{wheel_name}");
    let launcher = packages.join(format!("npm/tool-contracts-{version}.tgz"));
    assert!(launcher.is_file(), "{} was packed:\n{printed}", launcher.display());
    let platform: Vec<PathBuf> = std::fs::read_dir(packages.join("npm"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.ends_with(&format!("-{version}.tgz")) && name != format!("tool-contracts-{version}.tgz")
        })
        .collect();
    assert_eq!(platform.len(), 1, "one platform package for this machine: {platform:?}");

    let path = path_without_rust();
    for tool in ["cargo", "rustc"] {
        let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).env("PATH", &path).output().unwrap();
        assert!(!found.status.success(), "`{tool}` is not on the PATH the packages run with: {path}");
    }
    let home = root.join("target/package-smoke/installed");
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();

    // PyPI: a fresh virtual environment, the wheel and nothing else.
    let venv = home.join("venv");
    let mut make = Command::new("python3");
    make.args(["-m", "venv"]).arg(&venv).env("PATH", &path);
    run(make, "python3 -m venv");
    let mut pip = Command::new(venv.join("bin/pip"));
    pip.args(["install", "--quiet", "--no-index", "--disable-pip-version-check"]).arg(&wheel).env("PATH", &path);
    run(pip, "pip install the wheel");
    let exe = venv.join("bin/tool-contracts");
    let mut ver = Command::new(&exe);
    ver.arg("--version").env("PATH", &path);
    assert_eq!(stdout(&run(ver, "tool-contracts --version (wheel)")).trim(), format!("tool-contracts {version}"));
    let mut help = Command::new(&exe);
    help.arg("--help").env("PATH", &path);
    let help = stdout(&run(help, "tool-contracts --help (wheel)"));
    for sub in ["audit", "pin", "proxy", "schemas"] {
        assert!(help.contains(sub), "--help names `{sub}`:\n{help}");
    }
    let memory_server = interop().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    assert!(memory_server.is_file(), "tests/interop/install.sh installed server-memory");
    let mut audit = Command::new(&exe);
    audit
        .args(["audit", "--deny", "never", "--", "node"])
        .arg(&memory_server)
        .env("PATH", &path)
        .env("MEMORY_FILE_PATH", home.join("audit-memory.jsonl"));
    let report = stdout(&run(audit, "tool-contracts audit (wheel)"));
    assert!(report.contains("read_graph"), "the audit lists the memory server's tools:\n{report}");

    // npm: a fresh folder with the two tarballs; the memory server from the pinned install.
    let folder = home.join("npm");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("package.json"), "{\"name\": \"a-user\", \"private\": true}\n").unwrap();
    let mut npm = Command::new("npm");
    npm.current_dir(&folder)
        // A folder install would run the server package's own build script; it is built already.
        .args(["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"])
        .arg(&launcher)
        .arg(&platform[0])
        .arg(interop().join("node_modules/@modelcontextprotocol/server-memory"))
        .env("PATH", &path);
    run(npm, "npm install the tarballs");
    let mut npx = Command::new("npx");
    npx.current_dir(&folder).args(["-y", "tool-contracts", "--version"]).env("PATH", &path);
    assert_eq!(stdout(&run(npx, "npx tool-contracts --version")).trim(), format!("tool-contracts {version}"));

    // The README's configurations, as written, each against the same server called directly.
    let direct = serde_json::json!({ "mcpServers": { "memory": {
        "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] } } });
    let uv_path = format!("{}:{path}", interop().join(".venv/bin").display());
    let user_home = home.join("home");
    std::fs::create_dir_all(user_home.join(".config/uv")).unwrap();
    std::fs::write(
        user_home.join(".config/uv/uv.toml"),
        format!("no-index = true\nfind-links = [{:?}]\n", packages.display().to_string()),
    )
    .unwrap();
    let drive = |client: &str, config: &Value, label: &str| -> Value {
        let file = folder.join(format!("{label}.json"));
        std::fs::write(&file, serde_json::to_vec_pretty(config).unwrap()).unwrap();
        let mut cmd = if client == "python" {
            let mut cmd = Command::new(interop().join(".venv/bin/python"));
            cmd.arg(interop().join("packages/config_client.py"));
            cmd
        } else {
            let mut cmd = Command::new("node");
            cmd.arg(interop().join("packages/config_client.mjs"));
            cmd
        };
        cmd.current_dir(&folder)
            .arg(&file)
            .args(["memory", "read_graph"])
            .env("PATH", &uv_path)
            .env("MEMORY_FILE_PATH", folder.join(format!("{label}-memory.jsonl")))
            // A user's home whose uv finds the wheel where the build put it and asks no
            // index: the Python SDK passes a server only HOME, PATH and a few more.
            .env("HOME", &user_home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_CACHE_HOME");
        let out = stdout(&run(cmd, &format!("{client} client with the {label} configuration")));
        serde_json::from_str(out.lines().last().unwrap_or_default())
            .unwrap_or_else(|err| panic!("{client} client printed JSON ({err}):\n{out}"))
    };
    let readme = root.join("README.md");
    for (command, client) in [("npx", "typescript"), ("uvx", "python")] {
        let config = configuration(&readme, command, "memory");
        assert_eq!(config["mcpServers"].as_object().map(serde_json::Map::len), Some(1), "{config}");
        let args: Vec<&str> =
            config["mcpServers"]["memory"]["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert!(args.contains(&"tool-contracts") && args.contains(&"proxy"), "{command}: {args:?}");
        let proxied = drive(client, &config, command);
        let plain = drive(client, &direct, &format!("{command}-direct"));
        assert!(proxied["tools"].as_array().is_some_and(|t| t.iter().any(|n| n == "read_graph")), "{proxied}");
        assert_eq!(proxied["tools"], plain["tools"], "{client}: the same tools through the proxy");
        assert_eq!(proxied["result"], plain["result"], "{client}: the same result through the proxy");
        assert!(proxied["result"]["isError"] != true, "{client}: {proxied}");
        // The proxy's own documentation shows the same two configurations.
        let proxy_doc = configuration(&root.join("contract-proxy/README.md"), command, "memory");
        assert_eq!(proxy_doc, config, "contract-proxy/README.md shows the README's {command} configuration");
    }
}
