// A tiny MCP server on raw JSON-RPC lines (no SDK), for the transparent proxy's tests
// (tests/tests/proxy/proxy_transparent.rs). Its messages are written by hand, so their bytes
// are known: numbers spelled 0.7, 1, 1.0 and 1e2, keys in an unsorted order, a `ping`
// answered with {"pong": true}. Its one tool, `burst`, sends `n` notifications (progress
// for the call's token, log messages, resource updates) before its result, and echoes
// the numbers it was called with.
//
//   node raw_server.mjs
import { createInterface } from 'node:readline';

const write = (text) => process.stdout.write(text + '\n');
const id = (message) => JSON.stringify(message.id);

createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.method === undefined || message.id === undefined) return;
  switch (message.method) {
    case 'initialize':
      write(`{"jsonrpc":"2.0","id":${id(message)},"result":{"protocolVersion":"2025-11-25","serverInfo":{"version":"1.0.0","name":"raw-fixture"},"capabilities":{"tools":{},"logging":{},"resources":{"subscribe":true}},"instructions":"ratio 0.7"}}`);
      break;
    case 'ping':
      write(`{"jsonrpc":"2.0","id":${id(message)},"result":{"pong":true}}`);
      break;
    case 'tools/list':
      write(`{"jsonrpc":"2.0","id":${id(message)},"result":{"tools":[{"name":"burst","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":0},"x":{"type":"number","maximum":1.0}}},"outputSchema":{"type":"object","required":["ratio"],"properties":{"ratio":{"type":"number"}}},"execution":{"taskSupport":"optional"},"_meta":{"weight":0.7}}]}}`);
      break;
    case 'tools/call': {
      const params = message.params ?? {};
      const n = params.arguments?.n ?? 0;
      const token = params._meta?.progressToken;
      for (let i = 0; i < n; i++) {
        if (i % 3 === 0 && token !== undefined) {
          write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${JSON.stringify(token)},"progress":${i},"total":${n}.0}}`);
        } else if (i % 3 === 1) {
          write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"step":${i},"ratio":0.7}}}`);
        } else {
          write(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"raw://item/${i}"}}`);
        }
      }
      write(`{"jsonrpc":"2.0","id":${id(message)},"result":{"structuredContent":{"ratio":0.7,"one":1,"oneFloat":1.0,"hundred":1e2,"n":${n}},"content":[{"type":"text","text":"{\\"ratio\\":0.7}"}],"isError":false}}`);
      break;
    }
    default:
      write(`{"jsonrpc":"2.0","id":${id(message)},"error":{"code":-32601,"message":"no ${message.method}"}}`);
  }
});
