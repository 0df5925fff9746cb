//! The command line of the peers command, and the configurations it can pick: transport,
//! protocol era, the root of the result, and how ours serves stdio.

use std::time::Duration;

use serde_json::Value;

use super::{page, ARRAY_TOOL, PROTOCOL, STATELESS, TOOL};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Transport {
    Stdio,
    Http,
}

/// The two ways a client speaks MCP.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Era {
    /// 2025-11-25: `initialize` first (per connection over HTTP, then the session id on
    /// every request).
    Sessions,
    /// 2026-07-28: no handshake, no session; every request carries its `_meta` (and over
    /// HTTP the `Mcp-*` headers).
    Stateless,
}

/// The `_meta` of a 2026-07-28 request.
const STATELESS_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"peers","version":"1"}}"#;

impl Era {
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Sessions => PROTOCOL,
            Self::Stateless => STATELESS,
        }
    }

    /// The member a request's `params` end with: `,"_meta":{…}` in 2026-07-28, nothing
    /// in a session.
    pub(super) fn meta_member(self) -> String {
        match self {
            Self::Sessions => String::new(),
            Self::Stateless => format!(r#","_meta":{STATELESS_META}"#),
        }
    }
}

/// The root of the tool's result: the page object (`search_tickets_page`) or the page's
/// tickets as a top-level array (`search_tickets`, which MCP allows from 2026-07-28 on).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Root {
    Object,
    Array,
}

impl Root {
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::Array => "array",
        }
    }

    pub(super) fn tool(self) -> &'static str {
        match self {
            Self::Object => TOOL,
            Self::Array => ARRAY_TOOL,
        }
    }

    /// The result every server must carry for `limit` items: the page, or its tickets.
    pub(super) fn expected(self, query: &str, limit: u32) -> Result<Value, String> {
        let page = page(query, limit);
        match self {
            Self::Object => serde_json::to_value(page),
            Self::Array => serde_json::to_value(page.tickets),
        }
        .map_err(|err| err.to_string())
    }
}

/// Whether instructions per call are counted under callgrind.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Instructions {
    /// After the timed rounds (the default).
    After,
    /// `--no-instructions`: not counted.
    Off,
    /// `--instructions-only`: counted, no timed rounds.
    Only,
}

/// How our server serves stdio: the library's `serve_stdio`, or rmcp's `serve` on
/// `stdio_pipes()` written out by hand.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Serving {
    ServeStdio,
    Pipes,
}

pub(super) struct Options {
    pub(super) rounds: usize,
    pub(super) round: Duration,
    pub(super) sizes: Vec<u32>,
    pub(super) blocking_stdio: bool,
    pub(super) transport: Transport,
    pub(super) connections: Vec<usize>,
    pub(super) invalid: bool,
    /// `--servers`: the lower-cased parts of server names to keep (ours is always kept).
    pub(super) servers: Option<Vec<String>>,
    /// `--era` (stdio): the protocol eras of the rows.
    pub(super) eras: Vec<Era>,
    /// `--root` (stdio): the roots of the result.
    pub(super) roots: Vec<Root>,
    /// `--ours-stdio`: how ours serves stdio, one row each; the first is the row the
    /// ratios compare with.
    pub(super) ours_stdio: Vec<Serving>,
    /// Instructions per call under callgrind (stdio).
    pub(super) instructions: Instructions,
    /// `--instruction-calls`: the calls counted at each size (one per `--sizes` entry, or
    /// one for every size); by default 200 up to 10 items, 50 up to 100, 20 above.
    pub(super) instruction_calls: Option<Vec<u32>>,
}

impl Options {
    /// How many calls are counted under callgrind at each size, in `sizes` order.
    pub(super) fn calls_per_size(&self) -> Vec<u32> {
        match self.instruction_calls.as_deref() {
            Some([all]) => vec![*all; self.sizes.len()],
            Some(list) => list.to_vec(),
            None => self
                .sizes
                .iter()
                .map(|&size| match size {
                    0..=10 => 200,
                    11..=100 => 50,
                    _ => 20,
                })
                .collect(),
        }
    }
}

/// The comma-separated parts of `value`, each mapped by `one`; a part `one` does not know
/// is an error naming `flag` and what it expects.
fn choices<T: PartialEq>(
    flag: &str,
    value: Option<&String>,
    expected: &str,
    one: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, String> {
    let list = value.ok_or_else(|| format!("`{flag}` needs a list of {expected}"))?;
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim) {
        let choice = one(part).ok_or_else(|| format!("`{flag} {list}`: `{part}` is not one of {expected}"))?;
        if !out.contains(&choice) {
            out.push(choice);
        }
    }
    Ok(out)
}

pub(super) fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        rounds: 10,
        round: Duration::from_millis(250),
        sizes: vec![1, 100, 1_000],
        blocking_stdio: false,
        transport: Transport::Stdio,
        connections: vec![1, 8],
        invalid: false,
        servers: None,
        eras: vec![Era::Sessions],
        roots: vec![Root::Object],
        ours_stdio: vec![Serving::ServeStdio],
        instructions: Instructions::After,
        instruction_calls: None,
    };
    let mut args = args.iter();
    let number = |flag: &str, value: Option<&String>| -> Result<u64, String> {
        value
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("`{flag}` needs a positive whole number"))
    };
    let list = |flag: &str, value: Option<&String>| -> Result<Vec<u32>, String> {
        let list = value.ok_or_else(|| format!("`{flag}` needs a list such as 1,100,1000"))?;
        list.split(',')
            .map(|s| s.trim().parse::<u32>().ok().filter(|&n| n > 0))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("`{flag} {list}`: expected positive whole numbers, comma-separated"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => options.rounds = usize::try_from(number(arg, args.next())?).map_err(|e| e.to_string())?,
            "--round-ms" => options.round = Duration::from_millis(number(arg, args.next())?),
            "--sizes" => options.sizes = list(arg, args.next())?,
            "--connections" => {
                options.connections = list(arg, args.next())?.into_iter().map(|n| n as usize).collect();
            }
            "--servers" => {
                let list = args.next().ok_or("`--servers` needs a list such as typescript,python")?;
                let parts: Vec<String> =
                    list.split(',').map(|s| s.trim().to_lowercase()).filter(|s| !s.is_empty()).collect();
                if parts.is_empty() {
                    return Err(format!("`--servers {list}`: expected parts of server names, comma-separated"));
                }
                options.servers = Some(parts);
            }
            "--era" => {
                options.eras = choices(arg, args.next(), "2025-11-25, 2026-07-28", |part| match part {
                    PROTOCOL => Some(Era::Sessions),
                    STATELESS => Some(Era::Stateless),
                    _ => None,
                })?;
            }
            "--root" => {
                options.roots = choices(arg, args.next(), "object, array", |part| match part {
                    "object" => Some(Root::Object),
                    "array" => Some(Root::Array),
                    _ => None,
                })?;
            }
            "--ours-stdio" => {
                options.ours_stdio = choices(arg, args.next(), "serve_stdio, pipes", |part| match part {
                    "serve_stdio" => Some(Serving::ServeStdio),
                    "pipes" => Some(Serving::Pipes),
                    _ => None,
                })?;
            }
            "--instruction-calls" => options.instruction_calls = Some(list(arg, args.next())?),
            "--no-instructions" | "--instructions-only" => {
                let wanted = if arg == "--no-instructions" { Instructions::Off } else { Instructions::Only };
                if options.instructions != Instructions::After && options.instructions != wanted {
                    return Err("`--no-instructions` and `--instructions-only` exclude each other".to_owned());
                }
                options.instructions = wanted;
            }
            "--blocking-stdio" => options.blocking_stdio = true,
            "--invalid" => options.invalid = true,
            "--transport" => {
                options.transport = match args.next().map(String::as_str) {
                    Some("stdio") => Transport::Stdio,
                    Some("http") => Transport::Http,
                    _ => return Err("`--transport` needs `stdio` or `http`".to_owned()),
                }
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if let Some(calls) = &options.instruction_calls {
        if calls.len() != 1 && calls.len() != options.sizes.len() {
            return Err(format!(
                "`--instruction-calls`: {} numbers for {} sizes; give one per size (in `--sizes` order) or one for all",
                calls.len(),
                options.sizes.len()
            ));
        }
    }
    let picked = options.eras != [Era::Sessions]
        || options.roots != [Root::Object]
        || options.ours_stdio != [Serving::ServeStdio];
    if options.transport == Transport::Http && picked {
        return Err("`--era`, `--root` and `--ours-stdio` pick stdio configurations; over HTTP every server is \
                    tried in both eras, with the object root"
            .to_owned());
    }
    if options.instructions == Instructions::Only && options.invalid {
        return Err("`--instructions-only` counts instructions; it does not go with `--invalid`".to_owned());
    }
    Ok(options)
}
