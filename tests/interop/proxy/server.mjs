// A stdio MCP server on the TypeScript SDK's low-level `Server` for the contract-proxy
// tests: tools from a JSON file answered as the file says (as fixture_server.mjs does),
// and fixed answers to every other request the spec defines for servers, so that what a
// client sees through the proxy can be compared with what it sees directly.
//
//   node server.mjs <tools.json> [<tools-after-swap.json>]
//
// tools.json: `[{"tool": <definition as listed>, "answer": <CallToolResult> | <special>}]`,
// special being one of:
//   "hang"     never answers the call          "exit"   ends the process instead
//   "roots"    asks the client for roots/list and answers with what it got
//   "sample"   asks the client for sampling/createMessage and answers with what it got
//   "swap"     lists the second file from now on, sends tools/list_changed, answers {}
//   "log"      sends a notifications/message, then answers
//   "progress" sends two notifications/progress for the call's progressToken, then answers
//   "cancellable" answers only when the client cancels the call, after sending a
//              notifications/message saying so
//   "request_id" answers with the JSON-RPC id the call reached this server under
//   "echo_after" answers with the call's arguments after `arguments.ms` milliseconds
// or an object `{"write": <text>, "after_ms"?: <n>, "then": <answer>}`:
// writes <text> to stdout as it is (`{id}` in it replaced by the call's JSON-RPC id, no
// newline added), waits `after_ms`, then answers as <answer> says (a result, or one of the
// specials above): a server that writes what is no answer, or a request, before it
// answers or dies.

import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [first, second] = process.argv.slice(2);
let entries = JSON.parse(readFileSync(first, 'utf8'));
const server = new Server(
  { name: 'proxy-fixture', version: '2.0.0' },
  {
    capabilities: { tools: { listChanged: true }, resources: {}, prompts: {}, completions: {}, logging: {} },
    instructions: 'A fixture for the proxy tests.',
  },
);

const asJson = (value) => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value });

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: entries.map((e) => e.tool) }));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const entry = entries.find((e) => e.tool.name === request.params.name);
  if (!entry) {
    return { isError: true, content: [{ type: 'text', text: `no tool ${request.params.name}` }] };
  }
  let answer = entry.answer;
  if (typeof answer === 'object' && answer !== null && 'write' in answer) {
    const { write, after_ms: afterMs = 0, then } = answer;
    await new Promise((resolve) => process.stdout.write(write.replaceAll('{id}', JSON.stringify(extra.requestId)), resolve));
    await new Promise((resolve) => setTimeout(resolve, afterMs));
    answer = then;
  }
  switch (answer) {
    case 'hang':
      return new Promise(() => {});
    case 'exit':
      process.exit(3);
      break;
    case 'roots':
      return asJson(await server.listRoots());
    case 'sample':
      return asJson(
        await server.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }],
          maxTokens: 16,
        }),
      );
    case 'swap':
      entries = JSON.parse(readFileSync(second, 'utf8'));
      await server.sendToolListChanged();
      return { content: [] };
    case 'log':
      await server.sendLoggingMessage({ level: 'warning', logger: 'fixture', data: { note: 'about to answer' } });
      return asJson({ logged: true });
    case 'cancellable':
      return new Promise((resolve) => {
        const cancelled = () => {
          void server.sendLoggingMessage({ level: 'notice', logger: 'fixture', data: `cancelled ${request.params.name}` });
          resolve({ content: [] });
        };
        // A `write` before it may have let the cancellation come first.
        if (extra.signal.aborted) cancelled();
        else extra.signal.addEventListener('abort', cancelled);
      });
    case 'request_id':
      return asJson({ id: extra.requestId });
    case 'echo_after': {
      const args = request.params.arguments ?? {};
      await new Promise((resolve) => setTimeout(resolve, args.ms ?? 0));
      return asJson(args);
    }
    case 'progress': {
      const progressToken = request.params._meta?.progressToken;
      for (const progress of [1, 2]) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 2, message: `step ${progress}` },
        });
      }
      // The SDK client drops a call's progress handler on its response, before it reads
      // notifications queued ahead of it: let them land first (a loaded machine can take
      // more than a tenth of a second to deliver them through two hops).
      await new Promise((resolve) => setTimeout(resolve, 300));
      return asJson({ hadProgressToken: progressToken !== undefined });
    }
    default:
      return answer;
  }
});
server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: [{ uri: 'fixture://notes/1', name: 'note one', mimeType: 'text/plain', description: 'The first note.' }],
}));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: [{ uriTemplate: 'fixture://notes/{id}', name: 'note by id', mimeType: 'text/plain' }],
}));
server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
  contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: `the text of ${request.params.uri}` }],
}));
server.setRequestHandler(ListPromptsRequestSchema, async () => ({
  prompts: [{ name: 'greet', description: 'A greeting.', arguments: [{ name: 'who', required: true }] }],
}));
server.setRequestHandler(GetPromptRequestSchema, async (request) => ({
  description: 'A greeting.',
  messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${request.params.arguments?.who}!` } }],
}));
server.setRequestHandler(CompleteRequestSchema, async (request) => {
  const values = ['alpha', 'alpine', 'beta'].filter((v) => v.startsWith(request.params.argument.value));
  return { completion: { values, total: values.length, hasMore: false } };
});
server.setRequestHandler(SetLevelRequestSchema, async (request) => {
  await server.sendLoggingMessage({ level: 'info', logger: 'fixture', data: `level set to ${request.params.level}` });
  return {};
});
await server.connect(new StdioServerTransport());
