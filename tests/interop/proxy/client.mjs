// The official TypeScript SDK client (pinned in ../package.json) making every request the
// spec defines that server.mjs supports, and answering its server-to-client requests
// (roots/list, sampling/createMessage) with fixed values. Prints one JSON object on
// stdout: each request's result (or `{"error": message}`) under its method, every
// logging notification received, in order, and the progress reported for one call.
//
//   node client.mjs <server command> [args...]
//   node client.mjs --url <streamable HTTP endpoint>

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [command, ...args] = process.argv.slice(2);
const client = new Client(
  { name: 'proxy-passthrough', version: '1.0.0' },
  { capabilities: { roots: { listChanged: true }, sampling: {} } },
);
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  role: 'assistant',
  content: { type: 'text', text: 'hello' },
  model: 'fixed-model',
  stopReason: 'endTurn',
}));
const logs = [];
const progress = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
await client.connect(
  command === '--url'
    ? new StreamableHTTPClientTransport(new URL(args[0]))
    : new StdioClientTransport({ command, args, stderr: 'inherit' }),
);

const out = { serverVersion: client.getServerVersion(), instructions: client.getInstructions() };
const steps = [
  ['ping', () => client.ping()],
  ['tools/list', () => client.listTools()],
  ['resources/list', () => client.listResources()],
  ['resources/templates/list', () => client.listResourceTemplates()],
  ['resources/read', () => client.readResource({ uri: 'fixture://notes/1' })],
  ['prompts/list', () => client.listPrompts()],
  ['prompts/get', () => client.getPrompt({ name: 'greet', arguments: { who: 'proxy' } })],
  ['completion/complete', () =>
    client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'al' } })],
  ['logging/setLevel', () => client.setLoggingLevel('debug')],
  ['roots/list', () => client.callTool({ name: 'ask_roots', arguments: {} })],
  ['sampling/createMessage', () => client.callTool({ name: 'ask_sample', arguments: {} })],
  ['notifications/message', () => client.callTool({ name: 'log_then_answer', arguments: {} })],
  ['notifications/progress', () =>
    client.callTool({ name: 'with_progress', arguments: {} }, undefined, { onprogress: (p) => progress.push(p) })],
];
for (const [name, step] of steps) {
  try {
    out[name] = await step();
  } catch (err) {
    out[name] = { error: String(err.message ?? err) };
  }
}
// Notifications may trail their request's answer by a moment.
await new Promise((resolve) => setTimeout(resolve, 200));
out.logs = logs;
out.progress = progress;
process.stdout.write(JSON.stringify(out));
await client.close();
