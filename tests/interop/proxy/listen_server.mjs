// A stdio MCP server on the TypeScript SDK v2 (`@modelcontextprotocol/server`), which
// speaks 2026-07-28: notifications reach a client only on a `subscriptions/listen`
// stream it opened. For the contract-proxy's subscription tests.
//
//   node listen_server.mjs
//
// Tools:
//   grow    registers the tool `extra` (once), which sends tools/list_changed
//   touch   sends resources/updated for memo://note
//   extra   (after grow) answers "extra"
//   whoami  answers, as JSON text, the id its request came with and the client info,
//           protocol revision and client capabilities of the request's `_meta` envelope
//   weather, weather_ok   ask for input first (an input-required result carrying only
//           `requestState`), and answer the retry that echoes it: weather with
//           {"city": "Oslo"}, weather_ok with {"city": "Oslo", "celsius": 4.5} (the
//           contract of tests/fixtures/dynamic requires both fields)
// Resource: memo://note, whose text counts the touches.

import { McpServer, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

// One instance per connection (and one for the `server/discover` probe), in the era the
// connection opened with.
serveStdio(() => {
  const server = new McpServer(
    { name: 'proxy-listen-fixture', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } } },
  );
  let touches = 0;
  let grown = false;

  server.registerTool('grow', { description: 'Adds the tool extra.' }, async () => {
    if (!grown) {
      grown = true;
      server.registerTool('extra', { description: 'Added by grow.' }, async () => ({
        content: [{ type: 'text', text: 'extra' }],
      }));
    }
    return { content: [{ type: 'text', text: 'grown' }] };
  });

  server.registerTool('whoami', { description: 'Who asked.' }, async (ctx) => {
    const envelope = ctx.mcpReq.envelope ?? {};
    const seen = {
      id: ctx.mcpReq.id,
      clientInfo: envelope['io.modelcontextprotocol/clientInfo'] ?? null,
      protocolVersion: envelope['io.modelcontextprotocol/protocolVersion'] ?? null,
      clientCapabilities: envelope['io.modelcontextprotocol/clientCapabilities'] ?? null,
    };
    return { content: [{ type: 'text', text: JSON.stringify(seen) }] };
  });

  server.registerTool('touch', { description: 'Updates memo://note.' }, async () => {
    touches += 1;
    await server.server.sendResourceUpdated({ uri: 'memo://note' });
    return { content: [{ type: 'text', text: `touched ${touches}` }] };
  });

  for (const [name, answer] of [
    ['weather', { city: 'Oslo' }],
    ['weather_ok', { city: 'Oslo', celsius: 4.5 }],
  ]) {
    server.registerTool(name, { description: 'The weather, once the client has been asked.' }, async (ctx) => {
      if (ctx.mcpReq.requestState() !== 'asked') {
        return inputRequired({ requestState: 'asked' });
      }
      return { content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: answer };
    });
  }

  server.registerResource('note', 'memo://note', { mimeType: 'text/plain' }, async () => ({
    contents: [{ uri: 'memo://note', text: `touches: ${touches}` }],
  }));
  return server;
});
