// A stdio relay that decodes every message and writes it anew, as a proxy built on an
// SDK's client and server halves does: the negative control of the contract-proxy tests
// that prove the proxy passes the client's and the server's own bytes
// (tests/tests/proxy/). What it changes, each time:
//   - every line, both ways, is parsed and written again with JSON.stringify: numbers
//     are respelled (1e2 as 100, 1.0 as 1); a line that is not JSON is dropped
//   - a request of the client's reaches the server under an id of the relay's own (1, 2,
//     ...), and its answer goes back under the client's id
//   - a `tools/call` carries the relay's own envelope in `params._meta`
//     (protocolVersion 2026-07-28, clientInfo `reencoding-relay`)
//   - a `ping` is answered by the relay itself, with an empty result
//
//   node reencoding_relay.mjs -- <command> [<args>...]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const at = process.argv.indexOf('--');
const [command, ...args] = at < 0 ? [] : process.argv.slice(at + 1);
if (command === undefined) {
  process.stderr.write('usage: node reencoding_relay.mjs -- <command> [<args>...]\n');
  process.exit(2);
}
const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
server.on('exit', (code) => process.exit(code ?? 1));

const parse = (line) => {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
};
const toClient = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const toServer = (message) => server.stdin.write(JSON.stringify(message) + '\n');

// The client's id of each request in flight, by the relay's id.
const theirs = new Map();
let next = 0;

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = parse(line);
  if (message === undefined) return;
  if (message.method === undefined || message.id === undefined) return toServer(message);
  if (message.method === 'ping') return toClient({ jsonrpc: '2.0', id: message.id, result: {} });
  next += 1;
  theirs.set(next, message.id);
  if (message.method === 'tools/call') {
    message.params ??= {};
    message.params._meta = {
      ...message.params._meta,
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'reencoding-relay', version: '0' },
    };
  }
  toServer({ ...message, id: next });
}).on('close', () => server.stdin.end());

createInterface({ input: server.stdout }).on('line', (line) => {
  const message = parse(line);
  if (message === undefined) return;
  if (message.method === undefined && theirs.has(message.id)) {
    const id = theirs.get(message.id);
    theirs.delete(message.id);
    return toClient({ ...message, id });
  }
  toClient(message);
});
