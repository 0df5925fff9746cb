// What the official TypeScript SDK client (pinned in package.json) makes of a server's tools:
// it lists them (compiling its Ajv output validators) and makes the given calls in order.
//
//   node sdk_calls.mjs <calls.json> <server command> [args...]
//
// calls.json: `[{"name": …, "arguments": {…}}]`. Prints one JSON object on stdout:
// `{"listed": bool, "listError": string|null, "calls": [{"name", "ok", "isError",
// "structuredContent", "error"}]}`; a call that throws is recorded with its message, and a
// call gets at most 3 s. The server gets this process's whole environment (the SDK's
// default passes only a few variables), so a server configured by its environment (an API
// key and URL) runs as it would under contract-audit.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [callsFile, command, ...args] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(callsFile, 'utf8'));
const client = new Client({ name: 'audit-sdk-probe', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command, args, stderr: 'inherit', env: process.env }));
const out = { listed: false, listError: null, calls: [] };
try {
  await client.listTools();
  out.listed = true;
} catch (err) {
  out.listError = String(err.message ?? err);
}
for (const call of calls) {
  try {
    const result = await client.callTool({ name: call.name, arguments: call.arguments }, undefined, { timeout: 3000 });
    out.calls.push({
      name: call.name,
      ok: true,
      isError: result.isError === true,
      structuredContent: result.structuredContent ?? null,
      error: null,
    });
  } catch (err) {
    out.calls.push({ name: call.name, ok: false, isError: null, structuredContent: null, error: String(err.message ?? err) });
  }
}
process.stdout.write(JSON.stringify(out) + '\n');
await client.close().catch(() => {});
process.exit(0);
