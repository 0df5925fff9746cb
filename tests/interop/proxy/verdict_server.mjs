// A raw MCP server (no SDK) for the proxy's quick lane (tests/tests/proxy/proxy_quick_lane.rs):
// its tools' results are the JSON texts of a file, written byte for byte. A call's
// arguments name the text (`case`, an index) and the order of the answer's members
// (`first`: "id" writes `{"jsonrpc","id","result"}`, "result" writes
// `{"jsonrpc","result","id"}`). `judged` advertises an outputSchema the proxy's compiled
// plan judges; `unplanned` the same with a keyword the plan does not judge (`multipleOf`).
//
//   node verdict_server.mjs CASES.json SCHEMA.json
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const schema = readFileSync(process.argv[3], 'utf8');
const unplanned = JSON.stringify({ ...JSON.parse(schema), multipleOf: 1 });
const write = (text) => process.stdout.write(text + '\n');

createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.method === undefined || message.id === undefined) return;
  const id = JSON.stringify(message.id);
  switch (message.method) {
    case 'initialize':
      write(`{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"verdicts","version":"1.0.0"},"capabilities":{"tools":{}}}}`);
      break;
    case 'tools/list': {
      const input = '{"type":"object"}';
      write(`{"jsonrpc":"2.0","id":${id},"result":{"tools":[{"name":"judged","inputSchema":${input},"outputSchema":${schema}},{"name":"unplanned","inputSchema":${input},"outputSchema":${unplanned}}]}}`);
      break;
    }
    case 'tools/call': {
      const { case: index, first } = message.params.arguments;
      const result = cases[index];
      write(first === 'id' ? `{"jsonrpc":"2.0","id":${id},"result":${result}}` : `{"jsonrpc":"2.0","result":${result},"id":${id}}`);
      break;
    }
    default:
      write(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"no ${message.method}"}}`);
  }
});
