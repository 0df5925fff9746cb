// Tiny stdio MCP servers on three pinned TypeScript libraries, for contract-audit's call
// findings (tests/tests/client/audit_real.rs): what each library does with a tool's own result.
//
//   node sdk_servers.mjs fastmcp   fastmcp 4.3.2 (the version firecrawl-mcp 3.26.0 runs on)
//   node sdk_servers.mjs ts1       @modelcontextprotocol/sdk 1.32.2, McpServer
//   node sdk_servers.mjs ts2       @modelcontextprotocol/server 2.4.0, McpServer
//
// Every server has, with the zod output schema `page` ({markdown: string, metadata: {title:
// string}}):
//   wrong_type     returns `markdown: 42`: the library refuses its own result (or not)
//   own_error      fails the way the library lets a tool fail: an ordinary isError result
//   fine           returns a valid page, the same in structuredContent and in the text
// and fastmcp also:
//   extra_keys     returns a page with keys the schema does not name, at the top
//                  (`creditsUsed`, `cacheState`) and inside `metadata` (`statusCode`), in
//                  both structuredContent and the text: fastmcp's zod parse strips them
//                  from structuredContent only
import * as z from 'zod';

const page = z.object({ markdown: z.string(), metadata: z.object({ title: z.string() }) });
const good = { markdown: '# Example Domain', metadata: { title: 'Example Domain' } };
const extra = {
  markdown: '# Example Domain',
  metadata: { title: 'Example Domain', statusCode: 200 },
  creditsUsed: 1,
  cacheState: 'miss',
};
const wrong = { markdown: 42, metadata: { title: 'Example Domain' } };
const both = (value) => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value });

const which = process.argv[2];
if (which === 'fastmcp') {
  const { FastMCP, UserError } = await import('fastmcp');
  const server = new FastMCP({ name: 'fastmcp-fixture', version: '1.0.0' });
  const tool = (name, execute) =>
    server.addTool({ name, description: name, parameters: z.object({}), outputSchema: page, execute });
  tool('wrong_type', async () => both(wrong));
  tool('own_error', async () => {
    throw new UserError('page not found');
  });
  tool('fine', async () => both(good));
  tool('extra_keys', async () => both(extra));
  await server.start({ transportType: 'stdio' });
} else if (which === 'ts1' || which === 'ts2') {
  const { McpServer } =
    which === 'ts1' ? await import('@modelcontextprotocol/sdk/server/mcp.js') : await import('@modelcontextprotocol/server');
  const server = new McpServer({ name: `${which}-fixture`, version: '1.0.0' });
  const tool = (name, handler) =>
    server.registerTool(name, { description: name, inputSchema: z.object({}), outputSchema: page }, handler);
  tool('wrong_type', async () => both(wrong));
  tool('own_error', async () => ({ isError: true, content: [{ type: 'text', text: 'page not found' }] }));
  tool('fine', async () => both(good));
  if (which === 'ts1') {
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    await server.connect(new StdioServerTransport());
  } else {
    const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
    serveStdio(() => server);
  }
} else {
  console.error('usage: node sdk_servers.mjs fastmcp|ts1|ts2');
  process.exit(2);
}
