// Drives qe-server with the MCP Inspector's CLI (`@modelcontextprotocol/inspector`, pinned in
// package.json), which runs the official TypeScript SDK v2 client inside and declares the
// tasks extension in both protocol eras (at `initialize` in the legacy one, in every
// request's `_meta` in the modern one). qe-server answers it with a task only in the modern
// era, which the Inspector settles; in the legacy era every result is complete.
//
//   node inspector_client.mjs stdio <server-binary> [server args...] [--era legacy|modern]
//   node inspector_client.mjs http <url> [--era legacy|modern]
//
// One Inspector process per request, as a person or a script uses the CLI: `tools/list`
// (and, with `--strict`, the full portability report), then `tools/call` (`--format json`)
// for the first entry of calls.json of each tool and of each expected outcome (every tool
// once, every kind of error once: an Inspector process costs about a second), then a call
// of a tool that does not exist. Two run at a time. Prints one JSON summary on stdout;
// each request's exit code and every line the Inspector wrote on stderr go into the
// summary (`exit`, `stderr`), so the Rust test can prove that nothing was warned and that
// every error line belongs to a call that must fail.
//
//   node inspector_client.mjs ... [--strict]

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const strictAt = argv.indexOf('--strict');
const withStrict = strictAt >= 0;
if (withStrict) argv.splice(strictAt, 1);
let era = 'legacy';
const eraAt = argv.indexOf('--era');
if (eraAt >= 0) {
  era = argv[eraAt + 1];
  argv.splice(eraAt, 2);
}
const [transportKind, target, ...serverArgs] = argv;
if (!['stdio', 'http'].includes(transportKind) || !target || !['legacy', 'modern'].includes(era)) {
  process.stderr.write('usage: node inspector_client.mjs stdio <server-binary> [args...] | http <url> [--era legacy|modern]\n');
  process.exit(2);
}

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const launcher = here('./node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
const seen = new Set();
const calls = JSON.parse(readFileSync(here('./calls.json'), 'utf8')).calls.filter((call) => {
  const fresh = !seen.has(`tool:${call.name}`) || !seen.has(`expect:${call.expect}`);
  seen.add(`tool:${call.name}`);
  seen.add(`expect:${call.expect}`);
  return fresh;
});
const version = JSON.parse(readFileSync(here('./node_modules/@modelcontextprotocol/inspector/package.json'), 'utf8')).version;
const sdk = JSON.parse(
  readFileSync(here('./node_modules/@modelcontextprotocol/inspector/node_modules/@modelcontextprotocol/client/package.json'), 'utf8'),
).version;

const targetArgs = transportKind === 'stdio' ? [target, ...serverArgs] : ['--transport', 'http', '--server-url', target];

/** One Inspector run: its exit code, the parsed stdout, and its stderr lines. */
function inspector(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [launcher, '--cli', ...targetArgs, '--protocol-era', era, '--format', 'json', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // The Inspector keeps its catalog and client config under HOME; point it at nothing.
      env: { ...process.env, MCP_CATALOG_PATH: here('./.inspector/mcp.json'), MCP_CLIENT_CONFIG_PATH: here('./.inspector/client.json') },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      let parsed = null;
      try {
        parsed = out.trim() ? JSON.parse(out) : null;
      } catch {
        parsed = { unparsed: out };
      }
      resolve({ exit: code, out: parsed, stderr: err.split('\n').filter((l) => l.trim() !== '') });
    });
  });
}

/** Runs `jobs` two at a time, keeping their order. */
async function pool(jobs, width = 2) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

const started = Date.now();
const summary = { client: 'inspector', inspector: version, sdk, transport: transportKind, era };
const list = await inspector(['--method', 'tools/list']);
summary.list = { exit: list.exit, stderr: list.stderr };
summary.tools = (list.out?.result?.tools ?? []).map((t) => ({
  name: t.name,
  outputSchema: t.outputSchema ?? null,
  meta: t._meta ?? null,
  inputSchema: t.inputSchema,
}));
if (withStrict) {
  const strict = await inspector(['--method', 'tools/list', '--strict']);
  summary.strict = { exit: strict.exit, stderr: strict.stderr };
}

const runs = await pool(
  [...calls, { name: 'no_such_tool', arguments: {}, expect: 'unknown_tool' }].map((call) => () =>
    inspector(['--method', 'tools/call', '--tool-name', call.name, '--tool-args-json', JSON.stringify(call.arguments)]).then(
      (run) => ({ ...call, exit: run.exit, stderr: run.stderr, result: run.out?.result ?? null, output: run.out }),
    ),
  ),
);
summary.unknownTool = runs.pop();
summary.calls = runs;
summary.millis = Date.now() - started;
process.stdout.write(JSON.stringify(summary) + '\n');
