// A stdio MCP server on the TypeScript SDK's low-level `Server` that lists exactly the tool
// definitions in a JSON file and answers each call as the file says: contract-audit's
// findings are checked against it, and so is what the SDK's own client does with the same
// tools (sdk_calls.mjs).
//
//   node fixture_server.mjs <tools.json>
//
// tools.json: `[{"tool": <definition as listed>, "answer": <CallToolResult> | "hang" | "exit" |
// "invalid-params"}]`. "hang" never answers the call; "exit" ends the process instead of
// answering; "invalid-params" answers with the JSON-RPC error -32602 (invalid params), as a
// server on the SDK's low-level API does when it throws `McpError(InvalidParams)`.

import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const entries = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const server = new Server({ name: 'audit-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: entries.map((e) => e.tool) }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const entry = entries.find((e) => e.tool.name === request.params.name);
  if (!entry) {
    return { isError: true, content: [{ type: 'text', text: `no tool ${request.params.name}` }] };
  }
  if (entry.answer === 'hang') {
    return new Promise(() => {});
  }
  if (entry.answer === 'exit') {
    process.exit(3);
  }
  if (entry.answer === 'invalid-params') {
    throw new McpError(ErrorCode.InvalidParams, `${entry.tool.name}: the id must name an existing ticket`);
  }
  return entry.answer;
});
await server.connect(new StdioServerTransport());
