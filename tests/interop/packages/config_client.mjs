// Runs one server entry of an MCP client configuration (the `mcpServers` JSON that Claude
// Desktop and the MCP Inspector read) the way such a client does, with the official
// TypeScript SDK v2 client (pinned in ../package.json): it launches `command` with `args`
// over stdio, lists the tools and calls one, and prints one JSON summary on stdout.
//
//   node config_client.mjs <config.json> <server-name> <tool> [arguments-json]

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [configPath, name, tool, argumentsJson] = process.argv.slice(2);
if (!configPath || !name || !tool) {
  process.stderr.write('usage: node config_client.mjs <config.json> <server-name> <tool> [arguments-json]\n');
  process.exit(2);
}
const entry = JSON.parse(readFileSync(configPath, 'utf8')).mcpServers[name];
const deadline = setTimeout(() => {
  process.stderr.write('config_client: gave up after 120 s\n');
  process.exit(3);
}, 120_000);

const transport = new StdioClientTransport({
  command: entry.command,
  args: entry.args ?? [],
  env: { ...process.env, ...(entry.env ?? {}) },
  cwd: process.cwd(),
  stderr: 'inherit',
});
const client = new Client({ name: 'tool-contracts-config-client', version: '1.0.0' });
await client.connect(transport);
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: argumentsJson ? JSON.parse(argumentsJson) : {} });
process.stdout.write(
  `${JSON.stringify({
    client: 'typescript',
    tools: listed.tools.map((t) => t.name).sort(),
    definitions: Object.fromEntries(listed.tools.map((t) => [t.name, t])),
    result,
  })}\n`,
);
await client.close();
clearTimeout(deadline);
