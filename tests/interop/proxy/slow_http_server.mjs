// A tiny streamable HTTP MCP server (node:http, no SDK) that is slow to take some requests,
// for the order of a client's messages through contract-proxy --upstream-url
// (tests/tests/proxy/proxy_transparent_http.rs). Every POST body is appended to the log
// file, as its bytes, when the server takes it; a `tools/call` of `slow` is taken only
// after `arguments.ms` milliseconds, and its response begins after that. A client whose
// next POST does not wait for the previous one's response to begin has it taken first.
//
//   node slow_http_server.mjs <log-file>
// Prints `listening <url>` on stdout.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';

const log = process.argv[2];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const server = createServer((req, res) => {
  if (req.method === 'DELETE') {
    res.writeHead(200).end();
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (message.method === 'tools/call' && message.params?.name === 'slow') {
      await sleep(Number(message.params.arguments?.ms ?? 0));
    }
    appendFileSync(log, body + '\n');
    if (message.id === undefined || message.method === undefined) {
      res.writeHead(202).end();
      return;
    }
    const answer = (result) => {
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'slow-session' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    };
    switch (message.method) {
      case 'initialize':
        answer({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'slow-fixture', version: '1.0.0' } });
        break;
      case 'tools/list':
        answer({ tools: [{ name: 'slow', inputSchema: { type: 'object', properties: { ms: { type: 'integer', minimum: 0 } } } }] });
        break;
      case 'tools/call':
        answer({ content: [{ type: 'text', text: 'taken' }] });
        break;
      default:
        answer({});
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}/mcp\n`);
});
