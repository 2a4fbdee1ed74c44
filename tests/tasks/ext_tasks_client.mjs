// The official tasks client, @modelcontextprotocol/ext-tasks 0.2.2, against our server's
// 2026-07-28 tasks (the io.modelcontextprotocol/tasks extension), as its README shows:
// a @modelcontextprotocol/client 2.x Client pinned to 2026-07-28, and the session built from it
// with createTaskSessionFromClient. For a 2026-07-28 server the package asks the host for a raw
// request path (rawDispatch: the SDK's Client cannot carry the task shapes) and the request
// framing; rawDispatch here is one POST per request with the SEP-2243 headers.
//
//   node tests/tasks/ext_tasks_client.mjs URL
//
// Prints ONE JSON object, one entry per tool it calls through session.callTool(...).settle():
// "quick" (a task that completes), "tool_error" (one that completes with isError), "protocol_error"
// (one that fails with a JSON-RPC error); each {kind, status, text?, isError?, error?}, or
// {rejected: message} when the package refused what the server sent.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";

const url = process.argv[2];
const VERSION = "2026-07-28";
const clientInfo = { name: "ext-tasks-driver", version: "1.0.0" };
const NAMED = { "tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId" };
let nextId = 1;

async function rawDispatch(request, options = {}) {
  const message = { jsonrpc: "2.0", id: `raw-${nextId++}`, ...request };
  const headers = new Headers({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": message.method,
  });
  const field = NAMED[message.method];
  if (field && typeof message.params?.[field] === "string") headers.set("mcp-name", message.params[field]);
  // The package passes the task's routing headers (Mcp-Name) along: they replace ours, once.
  for (const [name, value] of Object.entries(options.context?.headers ?? {})) headers.set(name, value);
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message), signal: options.signal });
  const text = await response.text();
  let answer;
  if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const data = JSON.parse(line.slice(5));
      if (data.id === message.id) answer = data;
    }
  } else {
    answer = JSON.parse(text);
  }
  if (answer === undefined) throw new Error(`no answer to ${message.method} (HTTP ${response.status})`);
  return "error" in answer ? { kind: "error", error: answer.error } : { kind: "result", result: answer.result };
}

const client = new Client(clientInfo, { capabilities: {}, versionNegotiation: { mode: { pin: VERSION } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const session = createTaskSessionFromClient(client, {
  endpointId: "backchannel-tasks-test",
  rawDispatch,
  v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities: {} },
});

async function settle(name, args) {
  try {
    const execution = await session.callTool(name, args);
    const { outcome } = await execution.settle();
    const seen = { kind: execution.kind, status: outcome.status };
    if (outcome.status === "completed") {
      seen.text = outcome.result.content?.[0]?.text;
      seen.isError = outcome.result.isError ?? false;
      seen.resultType = outcome.result.resultType;
    } else if (outcome.status === "failed") {
      seen.error = outcome.error.message;
    }
    return seen;
  } catch (error) {
    return { rejected: String(error?.message ?? error), cause: String(error?.cause?.message ?? "") };
  }
}

const out = { era: client.getProtocolEra() };
out.quick = await settle("quick", { text: "done by ext-tasks" });
out.tool_error = await settle("tool_error", {});
out.protocol_error = await settle("protocol_error", {});
process.stdout.write(JSON.stringify(out) + "\n");
await session.close();
await client.close();
