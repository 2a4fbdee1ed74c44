// Drive a stdio (or Streamable HTTP) MCP server with the official TypeScript SDK client
// (@modelcontextprotocol/sdk 1.32.2).
//
//   node tests/peers/ts_client.mjs '<plan JSON>' -- CMD [ARG...]
//   node tests/peers/ts_client.mjs '<plan JSON>' --url URL     (Streamable HTTP instead of stdio)
//
// The plan is {"answers": [ElicitResult, ...], "calls": [{"name": N, "arguments": {...}}, ...],
// "applyDefaults": bool}. The client declares elicitation (form mode; with "applyDefaults" the
// SDK fills omitted fields from the schema's defaults), answers each elicitation/create with the
// next answer (cancel once they run out), calls each tool in order and prints ONE JSON object:
//
//   {"protocolVersion": ..., "serverInfo": {...}, "tools": [names],
//    "elicitations": [params of each elicitation/create], "results": [CallToolResult | {"error": ...}]}
//
// With "url": true the client also declares URL mode (elicitation.url) and answers URL requests
// from the same queue (accept is consent only). "record": PATH appends one JSON line per event as
// it happens, for a test that acts while the client runs: {"kind": "elicitation", "params"},
// {"kind": "notification", "method", "params"} (notifications/elicitation/complete) and
// {"kind": "result", "step": i, "result"}. A call {"waitFor": PATH, "timeout": S} instead waits until
// that file exists (default 30 s) and yields {"waited": bool}. Errors carry "code", "message", "data"
// and "name" (the SDK's error class). The output also has "notifications" (the completions seen).
//
// Exit status 0 once that object is printed, 2 when connecting failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { appendFileSync, existsSync } from "node:fs";
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const url = argv[1] === "--url" && argv.length === 3 ? argv[2] : null;
if (url === null && (split !== 1 || argv.length < 3)) {
  process.stderr.write("usage: ts_client.mjs '<plan JSON>' (-- CMD [ARG...] | --url URL)\n");
  process.exit(64);
}
const plan = JSON.parse(argv[0]);
const [command, ...args] = argv.slice(split + 1);
const answers = [...(plan.answers ?? [])];
const elicitations = [];
const notifications = [];
const record = (entry) => {
  if (plan.record) appendFileSync(plan.record, JSON.stringify(entry) + "\n");
};

const form = plan.applyDefaults ? { applyDefaults: true } : {};
const elicitation = plan.url ? { form, url: {} } : { form };
const client = new Client({ name: "ts-peer", version: "1.0.0" }, { capabilities: { elicitation } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  record({ kind: "elicitation", params: request.params });
  return answers.length > 0 ? answers.shift() : { action: "cancel" };
});
client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (notification) => {
  const entry = { method: notification.method, params: notification.params };
  notifications.push(entry);
  record({ kind: "notification", ...entry });
});

const transport =
  url === null
    ? new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(url));
const out = { elicitations, notifications, protocolVersion: null };
// The client hands the negotiated version to transports that want it (HTTP); catch it here.
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
  out.protocolVersion = version;
  setVersion?.(version);
};
try {
  await client.connect(transport);
} catch (error) {
  out.connectError = String(error);
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(2);
}
out.serverInfo = client.getServerVersion() ?? null;
out.tools = (await client.listTools()).tools.map((tool) => tool.name);
out.results = [];
const waitFor = async (path, seconds) => {
  const deadline = Date.now() + seconds * 1000;
  while (!existsSync(path)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
};
for (const [step, call] of (plan.calls ?? []).entries()) {
  try {
    if (call.waitFor) {
      out.results.push({ waited: await waitFor(call.waitFor, call.timeout ?? 30) });
    } else {
      out.results.push(await client.callTool({ name: call.name, arguments: call.arguments ?? {} }));
    }
  } catch (error) {
    const failure = { code: error.code ?? null, message: String(error.message ?? error) };
    if (error.data !== undefined) failure.data = error.data;
    failure.name = error.constructor?.name ?? null;
    out.results.push({ error: failure });
  }
  record({ kind: "result", step, result: out.results[out.results.length - 1] });
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
