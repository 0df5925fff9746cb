// Drives qe-server with the official MCP TypeScript SDK client (pinned in package.json).
//
//   node ts_client.mjs stdio <server-binary> [server args...]
//   node ts_client.mjs http <url>
//
// Lists the tools (which is what makes the SDK compile its Ajv output validators), makes
// every call in calls.json, and prints one JSON summary on stdout. Everything the SDK
// or Ajv logs through the console is captured into `console` in the summary (and echoed
// to stderr), so the Rust test can prove no "unknown format"/"unknown keyword" warning
// was printed. A call that throws is recorded, never fatal: the test decides.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const captured = [];
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    captured.push({ level, text: args.map((a) => (typeof a === 'string' ? a : String(a))).join(' ') });
    // Keep stdout for the summary alone.
    process.stderr.write(`[ts ${level}] ${args.join(' ')}\n`);
    void original;
  };
}

const [mode, target, ...serverArgs] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !target) {
  process.stderr.write('usage: node ts_client.mjs stdio <server-binary> [args...] | http <url>\n');
  process.exit(2);
}

const calls = JSON.parse(readFileSync(new URL('./calls.json', import.meta.url), 'utf8')).calls;
const transport =
  mode === 'stdio'
    ? new StdioClientTransport({ command: target, args: serverArgs, env: { ...process.env }, stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: 'tool-contracts-interop-ts', version: '1.0.0' });

const summary = { client: 'typescript', sdk: '', transport: mode, requestedProtocolVersion: LATEST_PROTOCOL_VERSION };
// Record the protocol version the server actually negotiated in its initialize result.
const request = client.request.bind(client);
client.request = async (req, ...rest) => {
  const result = await request(req, ...rest);
  if (req.method === 'initialize') {
    summary.protocolVersion = result.protocolVersion;
  }
  return result;
};
try {
  const pkg = JSON.parse(
    readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
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
  process.stderr.write('ts_client: gave up after 60 s\n');
  process.exit(3);
}, 60_000);

try {
  await client.connect(transport);
  summary.server = client.getServerVersion() ?? null;
  const listed = await client.listTools();
  summary.tools = listed.tools.map((t) => ({
    name: t.name,
    outputSchema: t.outputSchema ?? null,
    meta: t._meta ?? null,
    inputSchema: t.inputSchema,
    // The SDK compiles a validator per listed outputSchema; a call is validated only if one exists.
    validatorCompiled: Boolean(client.getToolOutputValidator(t.name)),
  }));

  // A clean control for the client's validator itself: the extra-key ticket payload with an
  // extra key must be rejected by the compiled search_tickets validator.
  const search = client.getToolOutputValidator('search_tickets');
  if (search) {
    const ticket = { id: 'T-1', title: 'Login bug', status: 'open' };
    const wrapped = (v) => (listed.tools.find((t) => t.name === 'search_tickets')?.outputSchema?.type === 'object' ? { result: v } : v);
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
