// The official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) calling a tool over Streamable
// HTTP, with and without trace context that the caller puts in `_meta` itself.
//
//   node tests/telemetry/peers/ts_traced_client.mjs URL TRACEPARENT [TRACESTATE]
//
// The SDK has no OpenTelemetry code (its dist names neither `traceparent` nor `opentelemetry`), so a
// TypeScript application that wants its trace to continue in the server passes the W3C context in
// the request's `_meta`, which `callTool` sends as given. This calls `echo` twice: first with
// `_meta: {traceparent, tracestate}`, then with no `_meta`, and prints ONE JSON object:
//
//   {"serverInfo": {...}, "results": [CallToolResult, CallToolResult]}
//
// Exit status 0 once that object is printed, 2 when connecting failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, traceparent, tracestate] = process.argv.slice(2);
if (!url || !traceparent) {
  process.stderr.write("usage: ts_traced_client.mjs URL TRACEPARENT [TRACESTATE]\n");
  process.exit(64);
}
const client = new Client({ name: "ts-traced", version: "1.0.0" });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
} catch (error) {
  process.stderr.write(`connect failed: ${error}\n`);
  process.exit(2);
}
const meta = tracestate ? { traceparent, tracestate } : { traceparent };
const results = [
  await client.callTool({ name: "echo", arguments: { text: "traced" }, _meta: meta }),
  await client.callTool({ name: "echo", arguments: { text: "untraced" } }),
];
process.stdout.write(JSON.stringify({ serverInfo: client.getServerVersion(), results }) + "\n");
await client.close();
