// Drive a Streamable HTTP MCP server with the official TypeScript SDK client
// (@modelcontextprotocol/sdk 1.32.2, handshake era only: it offers versions up to 2025-11-25),
// for the fleet tests:
//
//   node tests/peers/fleet_ts_client.mjs '<plan JSON>' URL
//
// The plan is {"elicitation": [ElicitResult, ...], "sampling": [CreateMessageResult, ...],
// "roots": [Root, ...], "steps": [STEP, ...]}. The client declares elicitation (form), sampling
// and roots (listChanged); it answers each elicitation/create and sampling/createMessage with the
// next queued answer (cancel, or an error -32603 for sampling, once they run out) and roots/list
// with the current roots. STEP is one of:
//
//   {"op": "call", "name": N, "arguments": {...}}         -> CallToolResult, with "progress":
//                                                            [[progress, total], ...] of its onprogress
//   {"op": "cancel", "name": N, "arguments": {...}, "afterProgress": K}
//                                                         -> aborts the call (AbortSignal: the SDK sends
//                                                            notifications/cancelled) after K progress
//                                                            notifications; {"aborted": bool, "progress"}
//   {"op": "setLevel", "level": L}                        -> logging/setLevel's result
//   {"op": "listTools"}                                   -> {"tools": [names]}, every page walked
//   {"op": "setRoots", "roots": [...]}                    -> {"roots": n}
//   {"op": "rootsChanged"}                                -> sends notifications/roots/list_changed
//   {"op": "callThenListChanged", "name": N, "arguments": {...}, "timeout": S}
//                                                         -> calls N, then waits (default 10 s) for a
//                                                            notifications/tools/list_changed (on the GET
//                                                            stream); {"result", "listChanged": bool}
//
// Prints ONE JSON object: {"protocolVersion", "serverInfo", "results": [one per step, or
// {"error": {"code", "message"}}], "elicitations": [params], "samplings": [params],
// "rootsAnswered": [[uri, ...], ...], "logs": [params of notifications/message],
// "listChanges": how many notifications/tools/list_changed arrived in all}.
// Exit status 0 once that object is printed, 2 when connecting failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [planText, url] = process.argv.slice(2);
if (!planText || !url) {
  process.stderr.write("usage: fleet_ts_client.mjs '<plan JSON>' URL\n");
  process.exit(64);
}
const plan = JSON.parse(planText);
const elicitationAnswers = [...(plan.elicitation ?? [])];
const samplingAnswers = [...(plan.sampling ?? [])];
let roots = [...(plan.roots ?? [])];
const out = { elicitations: [], samplings: [], rootsAnswered: [], logs: [], results: [], protocolVersion: null };
let listChanges = 0;
const listChangeWaiters = [];

const client = new Client(
  { name: "ts-fleet-peer", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  out.elicitations.push(request.params);
  return elicitationAnswers.length > 0 ? elicitationAnswers.shift() : { action: "cancel" };
});
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  out.samplings.push(request.params);
  if (samplingAnswers.length === 0) throw new Error("no sampling answer queued");
  return samplingAnswers.shift();
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  out.rootsAnswered.push(roots.map((root) => root.uri));
  return { roots };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
  out.logs.push(notification.params);
});
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
  listChanges += 1;
  for (const wake of listChangeWaiters.splice(0)) wake();
});

const transport = new StreamableHTTPClientTransport(new URL(url));
const setVersion = transport.setProtocolVersion.bind(transport);
transport.setProtocolVersion = (version) => {
  out.protocolVersion = version;
  setVersion(version);
};
try {
  await client.connect(transport);
} catch (error) {
  out.connectError = String(error);
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(2);
}
out.serverInfo = client.getServerVersion() ?? null;

const call = async (step, options = {}) =>
  client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, options);

const steps = {
  async call(step) {
    const progress = [];
    const result = await call(step, { onprogress: (p) => progress.push([p.progress, p.total ?? null]) });
    return { ...result, progress };
  },
  async cancel(step) {
    const progress = [];
    const abort = new AbortController();
    const onprogress = (p) => {
      progress.push([p.progress, p.total ?? null]);
      if (progress.length >= (step.afterProgress ?? 1)) abort.abort("enough");
    };
    try {
      const result = await call(step, { onprogress, signal: abort.signal });
      return { aborted: false, result, progress };
    } catch (error) {
      return { aborted: abort.signal.aborted, message: String(error.message ?? error), progress };
    }
  },
  async listTools() {
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
    } while (cursor);
    return { tools };
  },
  async setLevel(step) {
    return await client.setLoggingLevel(step.level);
  },
  async setRoots(step) {
    roots = [...step.roots];
    return { roots: roots.length };
  },
  async rootsChanged() {
    await client.sendRootsListChanged();
    return { sent: true };
  },
  async callThenListChanged(step) {
    const before = listChanges;
    const result = await call(step);
    if (listChanges === before) {
      const seconds = step.timeout ?? 10;
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, seconds * 1000);
        listChangeWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return { result, listChanged: listChanges > before };
  },
};

for (const step of plan.steps ?? []) {
  try {
    out.results.push(await steps[step.op](step));
  } catch (error) {
    out.results.push({ error: { code: error.code ?? null, message: String(error.message ?? error) } });
  }
}
out.listChanges = listChanges;
await transport.terminateSession().catch(() => {});
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
