// One scripted session of the TypeScript SDK v2 client (`@modelcontextprotocol/client`)
// with a stdio server, for the transparent proxy's wire comparison
// (tests/tests/proxy/proxy_transparent.rs). The client offers roots (one root, `root`) and
// sampling; it lists the tools, makes every call of calls.json, pings, and prints one JSON
// summary on stdout: the listed tool names and, per call, the result or what was thrown.
//
//   node ts2_session.mjs <calls.json> <root-uri> <command> [args...]
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [callsFile, root, command, ...args] = process.argv.slice(2);
if (!callsFile || !root || !command) {
  process.stderr.write('usage: node ts2_session.mjs <calls.json> <root-uri> <command> [args...]\n');
  process.exit(2);
}
const calls = JSON.parse(readFileSync(callsFile, 'utf8'));
const client = new Client(
  { name: 'ts2-session', version: '1.0.0' },
  { capabilities: { roots: { listChanged: true }, sampling: {} } },
);
client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: root, name: 'granted' }] }));
client.setRequestHandler('sampling/createMessage', async () => ({
  role: 'assistant',
  content: { type: 'text', text: 'sampled 0.7' },
  model: 'fixed-model',
  stopReason: 'endTurn',
}));
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'inherit' });
const summary = { calls: [] };
await client.connect(transport);
summary.tools = (await client.listTools()).tools.map((tool) => tool.name);
for (const call of calls) {
  try {
    summary.calls.push({ name: call.name, result: await client.callTool({ name: call.name, arguments: call.arguments }), threw: null });
  } catch (err) {
    summary.calls.push({ name: call.name, result: null, threw: String(err) });
  }
}
summary.ping = await client.ping();
await client.close();
process.stdout.write(JSON.stringify(summary) + '\n');
