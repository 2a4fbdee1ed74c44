// The official TypeScript SDK's client (@modelcontextprotocol/sdk 1.32.2) using 2025-11-25 tasks
// against our server: its experimental tasks API, as its own examples do.
//
//   node tests/tasks/ts_tasks_client.mjs URL
//
// Prints ONE JSON object: "protocolVersion"; "stream": the message types callToolStream yielded
// for steps(rounds 2) and its result text (the questions answered by the elicitation handler, on
// the tasks/result stream the SDK opens); "asked": the questions' messages and their related-task
// _meta; "cancelled": the status getTask reads after cancelTask of a held task; "listed": whether
// listTasks named it; "failed": what the stream yielded for a task that failed with an error.
// (The SDK has no client for the 2026-07-28 extension: it speaks 2025-11-25 at most.)

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[2];
const asked = [];
const client = new Client({ name: "ts-tasks", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push({ message: request.params.message, related: request.params._meta?.["io.modelcontextprotocol/related-task"] });
  return { action: "accept", content: { answer: `ts answered ${request.params.message}` } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

async function drain(params) {
  const seen = [];
  let taskId = null;
  for await (const message of client.experimental.tasks.callToolStream(params, CallToolResultSchema, { task: { ttl: 60000 } })) {
    if (message.type === "taskCreated") taskId = message.task.taskId;
    if (message.type === "result") seen.push({ type: "result", text: message.result.content[0].text });
    else if (message.type === "error") seen.push({ type: "error", message: String(message.error?.message ?? message.error) });
    else seen.push({ type: message.type, status: message.task?.status });
  }
  return { taskId, seen };
}

const out = { protocolVersion: client.getServerVersion() && client.transport?.protocolVersion };
out.stream = await drain({ name: "steps", arguments: { rounds: 2 } });
out.asked = asked;

const held = await client.experimental.tasks.callToolStream({ name: "hold", arguments: {} }, CallToolResultSchema, { task: { ttl: 60000 } });
const first = await held.next();
const heldId = first.value.task.taskId;
await client.experimental.tasks.cancelTask(heldId);
out.cancelled = (await client.experimental.tasks.getTask(heldId)).status;
await held.return();
out.listed = (await client.experimental.tasks.listTasks()).tasks.some((task) => task.taskId === heldId);
out.failed = (await drain({ name: "protocol_error", arguments: {} })).seen;
process.stdout.write(JSON.stringify(out) + "\n");
await client.close();
