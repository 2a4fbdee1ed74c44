// Drive a stdio MCP server with the official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2).
//
//   node tests/peers/ts_client.mjs '<plan JSON>' -- CMD [ARG...]
//
// The plan is {"answers": [ElicitResult, ...], "calls": [{"name": N, "arguments": {...}}, ...],
// "applyDefaults": bool}. The client declares elicitation (form mode; with "applyDefaults" the
// SDK fills omitted fields from the schema's defaults), answers each elicitation/create with the
// next answer (cancel once they run out), calls each tool in order and prints ONE JSON object:
//
//   {"protocolVersion": ..., "serverInfo": {...}, "tools": [names],
//    "elicitations": [params of each elicitation/create], "results": [CallToolResult | {"error": ...}]}
//
// Exit status 0 once that object is printed, 2 when connecting failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
if (split !== 1 || argv.length < 3) {
  process.stderr.write("usage: ts_client.mjs '<plan JSON>' -- CMD [ARG...]\n");
  process.exit(64);
}
const plan = JSON.parse(argv[0]);
const [command, ...args] = argv.slice(split + 1);
const answers = [...(plan.answers ?? [])];
const elicitations = [];

const form = plan.applyDefaults ? { applyDefaults: true } : {};
const client = new Client({ name: "ts-peer", version: "1.0.0" }, { capabilities: { elicitation: { form } } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  return answers.length > 0 ? answers.shift() : { action: "cancel" };
});

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const out = { elicitations, protocolVersion: null };
// The client hands the negotiated version to transports that want it (HTTP); catch it here.
transport.setProtocolVersion = (version) => {
  out.protocolVersion = version;
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
for (const call of plan.calls ?? []) {
  try {
    out.results.push(await client.callTool({ name: call.name, arguments: call.arguments ?? {} }));
  } catch (error) {
    out.results.push({ error: { code: error.code ?? null, message: String(error.message ?? error) } });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
