//! MCP Inspector's CLI (2.12, the official TypeScript SDK v2 client inside) in front of
//! the reference servers (filesystem, memory, everything), directly, through contract-proxy
//! over stdio and through `contract-proxy --http`, judged on the wire.
//!
//! One Inspector process per request, as a person or a script uses the CLI. Every stdio run
//! is tapped on both sides (`proxy_transparent`'s taps): through the proxy the server reads
//! the Inspector's lines and the Inspector the server's, byte for byte and in order. Behind
//! `--http` the server side is tapped: the server reads the requests and notifications it
//! reads directly, under the same ids, and the Inspector prints the same results it prints
//! directly. Nothing here is refused, so no documented difference applies: every message
//! is the peer's own.

use crate::proxy_transparent::{everything, interop, reference, scratch, serve_http, teed, Group, Tap, DEADLINE};
use crate::support::bins;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Single quotes for `sh`.
fn quoted(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// A script that runs `argv` in a process group of its own and ends that group once the
/// Inspector closed its input (a server with timers of its own outlives its input, and the
/// taps keep the Inspector's pipes open while it lives).
fn launcher_script(dir: &Path, name: &str, argv: &[String]) -> PathBuf {
    let script = dir.join(format!("{name}.sh"));
    let command: Vec<String> = argv.iter().map(|a| quoted(a)).collect();
    let body = format!(
        "#!/bin/sh\nfifo={fifo}\nrm -f \"$fifo\"\nmkfifo \"$fifo\"\nexec 3<&0\nsetsid {} < \"$fifo\" &\npid=$!\ncat <&3 > \"$fifo\" &\nfeeder=$!\ntrap 'kill -TERM -$pid 2>/dev/null; kill $feeder 2>/dev/null; exit 0' TERM INT HUP\nwait $feeder\nsleep 0.3\nkill -TERM -$pid 2>/dev/null\nwait $pid\nexit 0\n",
        command.join(" "),
        fifo = quoted(&dir.join(format!("{name}.fifo")).display().to_string())
    );
    std::fs::write(&script, body).unwrap();
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).unwrap();
    script
}

/// Where the Inspector reaches the server.
enum Target<'a> {
    Stdio(&'a Path),
    Http(&'a str),
}

/// One Inspector CLI run of `request`: what it printed on stdout, parsed.
fn inspector(dir: &Path, target: &Target<'_>, envs: &[(&str, &str)], request: &[&str]) -> Value {
    bins::server_everything(); // installs the pinned packages
    let launcher = interop("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let mut command = Command::new("node");
    command.arg(launcher).arg("--cli");
    match target {
        Target::Stdio(script) => command.arg(script),
        Target::Http(url) => command.args(["--transport", "http", "--server-url", url]),
    };
    command
        .args(["--protocol-era", "legacy", "--format", "json"])
        .args(request)
        // The Inspector passes a stdio server only the variables given with `-e`.
        .args(envs.iter().flat_map(|(key, value)| ["-e".to_owned(), format!("{key}={value}")]))
        // The Inspector keeps its catalog and client config under HOME; point it at nothing.
        .env("MCP_CATALOG_PATH", dir.join("inspector-catalog.json"))
        .env("MCP_CLIENT_CONFIG_PATH", dir.join("inspector-client.json"))
        .process_group(0);
    let out = bins::run_to_end(&mut command, DEADLINE);
    assert!(out.status.success(), "the Inspector failed on {request:?}:\n{}\n{}", out.stdout, out.stderr);
    serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("the Inspector's JSON ({e}) on {request:?}:\n{}\n{}", out.stdout, out.stderr))
}

/// The messages of `lines` that carry a method (the peer's requests and notifications).
fn with_method(lines: &[String]) -> Vec<&String> {
    lines.iter().filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|m| m.get("method").is_some())).collect()
}

/// One reference server as the Inspector meets it three ways: directly, through the proxy
/// over stdio, through the proxy behind `--http`. `server` is its command line, `setup`
/// makes the fresh state of one way (a file the server keeps) and returns its environment.
fn compare(name: &str, server: &[String], requests: &[&[&str]], setup: &dyn Fn(&Path) -> Vec<(String, String)>) {
    let dir = scratch(&format!("inspector-{name}"));
    let run_all = |way: &str, target: &dyn Fn(&Tap) -> (Option<std::process::Child>, String)| {
        let state = dir.join(way);
        std::fs::create_dir_all(&state).unwrap();
        let envs = setup(&state);
        let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let tap = Tap::new(&dir, way);
        let (front, url) = target(&tap);
        // The front's process group ends with this run, whatever happens in it.
        let front = front.map(Group);
        let mut printed = Vec::new();
        for (n, request) in requests.iter().enumerate() {
            let answer = if url.is_empty() {
                let options: Option<&[&str]> = if way == "direct" { None } else { Some(&[]) };
                let script = launcher_script(&dir, &format!("{way}-{n}"), &tap.command(options, server));
                inspector(&dir, &Target::Stdio(&script), &envs, request)
            } else {
                inspector(&dir, &Target::Http(&url), &envs, request)
            };
            printed.push(answer);
        }
        drop(front);
        (tap, printed)
    };
    let (direct, direct_printed) = run_all("direct", &|_| (None, String::new()));
    direct.assert_transparent(&[]);
    let (through, through_printed) = run_all("stdio", &|_| (None, String::new()));
    // Over stdio, every byte both ways, in order.
    through.assert_transparent(&[]);
    assert_eq!(
        through_printed, direct_printed,
        "{name}: the Inspector prints through the proxy what it prints directly"
    );
    std::fs::create_dir_all(dir.join("http")).unwrap();
    let env_of_http = setup(&dir.join("http"));
    let (http, http_printed) = run_all("http", &|tap| {
        let envs: Vec<(&str, &str)> = env_of_http.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let (child, url) = serve_http(&teed(&tap.server_in, &tap.server_out, server), &envs);
        (Some(child), url)
    });
    assert_eq!(http_printed, direct_printed, "{name}: the Inspector prints behind --http what it prints directly");
    // Behind --http, the server reads the Inspector's requests and notifications as it
    // reads them directly, byte for byte.
    let (direct_in, http_in) = (Tap::lines(&direct.server_in), Tap::lines(&http.server_in));
    assert_eq!(with_method(&http_in), with_method(&direct_in), "{name}: what the server read behind --http");
    // And every answer the server wrote to them, as written, reached the Inspector: its
    // printed results are the server's (above), and the server wrote the same answers.
    let answers = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|m| m.get("method").is_none()))
            .cloned()
            .collect()
    };
    let (direct_out, http_out) = (Tap::lines(&direct.server_out), Tap::lines(&http.server_out));
    assert_eq!(answers(&http_out), answers(&direct_out), "{name}: what the server answered behind --http");
}

#[test]
fn the_inspector_meets_the_filesystem_server_through_the_proxy_as_directly() {
    let allowed = scratch("inspector-filesystem-allowed");
    std::fs::write(allowed.join("notes.txt"), "ratio 0.7\none 1\n").unwrap();
    let server = vec!["node".to_owned(), reference("server-filesystem"), allowed.display().to_string()];
    let file = allowed.join("notes.txt").display().to_string();
    let read = format!("path={file}");
    compare(
        "filesystem",
        &server,
        &[
            &["--method", "tools/list"],
            &["--method", "tools/call", "--tool-name", "list_allowed_directories"],
            &["--method", "tools/call", "--tool-name", "read_text_file", "--tool-arg", &read],
        ],
        &|_| Vec::new(),
    );
}

#[test]
fn the_inspector_meets_the_memory_server_through_the_proxy_as_directly() {
    let server = vec!["node".to_owned(), reference("server-memory")];
    let entities = r#"{"entities":[{"name":"Ada","entityType":"person","observations":["ratio 0.7","weight 1.0"]}]}"#;
    compare(
        "memory",
        &server,
        &[
            &["--method", "tools/list"],
            &["--method", "tools/call", "--tool-name", "create_entities", "--tool-args-json", entities],
            &["--method", "tools/call", "--tool-name", "read_graph"],
        ],
        &|state| vec![("MEMORY_FILE_PATH".to_owned(), state.join("memory.jsonl").display().to_string())],
    );
}

#[test]
fn the_inspector_meets_the_everything_server_through_the_proxy_as_directly() {
    compare(
        "everything",
        &everything(),
        &[
            &["--method", "tools/list"],
            &["--method", "tools/call", "--tool-name", "get-sum", "--tool-args-json", r#"{"a":0.7,"b":1}"#],
            &["--method", "tools/call", "--tool-name", "get-structured-content", "--tool-arg", "location=New York"],
        ],
        &|_| Vec::new(),
    );
}
