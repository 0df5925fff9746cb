// Drives qe-server with the official MCP TypeScript SDK v2 client (`@modelcontextprotocol/client`,
// pinned in package.json), the client of today's TypeScript hosts.
//
//   node ts2_client.mjs stdio <server-binary> [server args...] [--mode legacy|auto]
//   node ts2_client.mjs http <url> [--mode legacy|auto]
//
// `--mode legacy` (the SDK default) keeps the 2025 `initialize` handshake; `--mode auto`
// probes `server/discover` and adopts protocol 2026-07-28. Lists the tools (which fills the
// cache the SDK validates every structured result against), makes every call in calls.json,
// and prints one JSON summary on stdout, in the shape ts_client.mjs prints. Everything the
// SDK logs through the console is captured into `console` (and echoed to stderr), so the
// Rust test can prove no warning or error was printed. A call that throws is recorded,
// never fatal: the test decides.

import { readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';

const captured = [];
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  console[level] = (...args) => {
    captured.push({ level, text: args.map((a) => (typeof a === 'string' ? a : String(a))).join(' ') });
    // Keep stdout for the summary alone.
    process.stderr.write(`[ts2 ${level}] ${args.join(' ')}\n`);
  };
}

const argv = process.argv.slice(2);
let mode = 'legacy';
const modeAt = argv.indexOf('--mode');
if (modeAt >= 0) {
  mode = argv[modeAt + 1];
  argv.splice(modeAt, 2);
}
const [transportKind, target, ...serverArgs] = argv;
if (!['stdio', 'http'].includes(transportKind) || !target || !['legacy', 'auto'].includes(mode)) {
  process.stderr.write('usage: node ts2_client.mjs stdio <server-binary> [args...] | http <url> [--mode legacy|auto]\n');
  process.exit(2);
}

const calls = JSON.parse(readFileSync(new URL('./calls.json', import.meta.url), 'utf8')).calls;
const transport =
  transportKind === 'stdio'
    ? new StdioClientTransport({ command: target, args: serverArgs, env: { ...process.env }, stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target));
const client = new Client(
  { name: 'tool-contracts-interop-ts2', version: '1.0.0' },
  { versionNegotiation: { mode } },
);

const summary = {
  client: 'typescript',
  sdk: '',
  transport: transportKind,
  mode,
  requestedProtocolVersion: LATEST_PROTOCOL_VERSION,
};
try {
  const pkg = JSON.parse(
    readFileSync(new URL('./node_modules/@modelcontextprotocol/client/package.json', import.meta.url), 'utf8'),
  );
  summary.sdk = pkg.version;
} catch {
  summary.sdk = 'unknown';
}

function errorOf(err) {
  return { name: err?.constructor?.name ?? 'Error', code: err?.code ?? null, message: String(err?.message ?? err) };
}

let exitCode = 0;
const deadline = setTimeout(() => {
  process.stderr.write('ts2_client: gave up after 60 s\n');
  process.exit(3);
}, 60_000);

try {
  await client.connect(transport);
  summary.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  summary.server = client.getServerVersion() ?? null;
  const listed = await client.listTools();
  // The SDK's own validator provider (Ajv, the default on Node), on every listed schema.
  const ajv = new AjvJsonSchemaValidator();
  const validators = new Map();
  summary.tools = listed.tools.map((t) => {
    let compiled = false;
    if (t.outputSchema) {
      try {
        validators.set(t.name, ajv.getValidator(t.outputSchema));
        compiled = true;
      } catch (err) {
        process.stderr.write(`ts2_client: ${t.name}: ${err}\n`);
      }
    }
    return {
      name: t.name,
      outputSchema: t.outputSchema ?? null,
      meta: t._meta ?? null,
      inputSchema: t.inputSchema,
      validatorCompiled: compiled,
    };
  });

  // A clean control for the validator itself: the search_tickets payload with an
  // extra key, or with a status outside its enum, must be rejected.
  const search = validators.get('search_tickets');
  if (search) {
    const ticket = { id: 'T-1', title: 'Login bug', status: 'open' };
    const objectRoot = listed.tools.find((t) => t.name === 'search_tickets')?.outputSchema?.type === 'object';
    const wrapped = (v) => (objectRoot ? { result: v } : v);
    summary.validatorControl = {
      good: search(wrapped([ticket])).valid,
      extraKey: search(wrapped([{ ...ticket, run_shell: 'rm -rf /' }])).valid,
      badEnum: search(wrapped([{ ...ticket, status: 'done' }])).valid,
    };
  }

  summary.calls = [];
  for (const call of calls) {
    try {
      const result = await client.callTool({ name: call.name, arguments: call.arguments });
      summary.calls.push({ name: call.name, arguments: call.arguments, expect: call.expect, threw: null, result });
    } catch (err) {
      summary.calls.push({ name: call.name, arguments: call.arguments, expect: call.expect, threw: errorOf(err), result: null });
    }
  }
  // An unknown tool is a protocol error: the SDK throws, and that is what must happen.
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
    summary.unknownTool = { threw: null };
  } catch (err) {
    summary.unknownTool = { threw: errorOf(err) };
  }
} catch (err) {
  summary.fatal = errorOf(err);
  exitCode = 1;
} finally {
  try {
    await client.close();
  } catch {
    // The server is gone already; nothing to close.
  }
  clearTimeout(deadline);
}

summary.console = captured;
process.stdout.write(JSON.stringify(summary) + '\n');
process.exit(exitCode);
