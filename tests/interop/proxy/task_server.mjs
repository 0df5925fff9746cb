// A stdio MCP server that answers tool calls with tasks (the tasks extension,
// `io.modelcontextprotocol/tasks`), written as raw JSON-RPC lines: the TypeScript SDK
// v1 speaks the older task protocol (`tasks/result`), not the extension rmcp speaks.
//
//   node task_server.mjs <tools.json>
//
// tools.json: `[{"tool": <definition as listed>, "answer": <CallToolResult>}]`. A call
// whose request declares the tasks extension (in `_meta`'s client capabilities) is
// answered with a task handle; the first `tasks/get` of it says `working`, every later
// one `completed` with the tool's answer as its result, and a `notifications/tasks`
// carrying the completed task is sent just before the second `tasks/get` is answered.
// A call that declares no tasks is answered with the result itself. The task
// `t-preexisting` exists from the start, completed with the first tool's answer, as if
// another client had created it; `tasks/result` (the 2025-11-25 tasks protocol) answers
// that answer for any task.

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const TASKS = 'io.modelcontextprotocol/tasks';
const entries = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const now = new Date().toISOString();
const tasks = new Map([['t-preexisting', { answer: entries[0].answer, polls: 1 }]]);
let next = 1;

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const task = (taskId, status) => ({ taskId, status, createdAt: now, lastUpdatedAt: now, ttlMs: null, pollIntervalMs: 10 });

function answer(method, params) {
  switch (method) {
    case 'initialize':
      return {
        protocolVersion: '2025-11-25',
        capabilities: { tools: {}, extensions: { [TASKS]: {} } },
        serverInfo: { name: 'task-fixture', version: '1.0.0' },
      };
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: entries.map((e) => e.tool) };
    case 'tools/call': {
      const entry = entries.find((e) => e.tool.name === params.name);
      if (!entry) {
        return { isError: true, content: [{ type: 'text', text: `no tool ${params.name}` }] };
      }
      const declared = params._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS];
      if (!declared) {
        return entry.answer;
      }
      const taskId = `t-${next++}`;
      tasks.set(taskId, { answer: entry.answer, polls: 0 });
      return { resultType: 'task', ...task(taskId, 'working') };
    }
    case 'tasks/get': {
      const known = tasks.get(params.taskId);
      if (!known) {
        throw { code: -32602, message: `no task ${params.taskId}` };
      }
      known.polls += 1;
      if (known.polls === 1) {
        return { resultType: 'complete', ...task(params.taskId, 'working') };
      }
      const completed = { ...task(params.taskId, 'completed'), result: known.answer };
      if (known.polls === 2) {
        send({ method: 'notifications/tasks', params: completed });
      }
      return { resultType: 'complete', ...completed };
    }
    case 'tasks/result': {
      const known = tasks.get(params.taskId);
      if (!known) {
        throw { code: -32602, message: `no task ${params.taskId}` };
      }
      return known.answer;
    }
    default:
      throw { code: -32601, message: `method not found: ${method}` };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    continue;
  }
  if (message.id === undefined || message.method === undefined) {
    continue; // notifications and responses
  }
  try {
    send({ id: message.id, result: answer(message.method, message.params ?? {}) });
  } catch (error) {
    send({ id: message.id, error });
  }
}
