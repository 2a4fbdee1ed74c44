// Call one progress-reporting tool many times with the official TypeScript SDK client
// (@modelcontextprotocol/sdk 1.32.2) and count the calls whose last progress arrived.
//
//   node tests/progress/ts_progress_client.mjs '<plan JSON>' -- CMD [ARG...]
//   node tests/progress/ts_progress_client.mjs '<plan JSON>' --url URL    (Streamable HTTP)
//   node tests/progress/ts_progress_client.mjs '<plan JSON>' --sse URL    (the 2024-11-05 HTTP+SSE, v1 only)
//
// The plan is {"name": TOOL, "arguments": {...}, "calls": N, "total": T, "sdk": "v1" | "v2"}: the
// tool reports progress up to T and then answers; "sdk" picks the SDK (v1: 1.32.2, the default;
// v2: @modelcontextprotocol/client 2.4.0). The SDK hands a notification to a microtask but a response
// to its handler at once, and forgets the call's progress handler with the response: progress
// read in the same chunk as its answer is dropped ("Received a progress notification for an
// unknown token"). Prints ONE JSON object:
//
//   {"calls": N, "complete": how many calls saw progress T before their answer,
//    "last": [the last progress each call saw], "dropped": how many progress notifications
//    the SDK reported as unknown, "errors": [the first few call errors]}
//
// Exit status 0 once that object is printed, 2 when connecting failed.

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const url = (argv[1] === "--url" || argv[1] === "--sse") && argv.length === 3 ? argv[2] : null;
if (url === null && (split !== 1 || argv.length < 3)) {
  process.stderr.write("usage: ts_progress_client.mjs '<plan JSON>' (-- CMD [ARG...] | --url URL | --sse URL)\n");
  process.exit(64);
}
const plan = JSON.parse(argv[0]);
const [command, ...args] = argv.slice(split + 1);
const v2 = plan.sdk === "v2";
const { Client, StreamableHTTPClientTransport } = v2
  ? await import("@modelcontextprotocol/client")
  : {
      ...(await import("@modelcontextprotocol/sdk/client/index.js")),
      ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
    };
const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
const { StdioClientTransport } = v2
  ? await import("@modelcontextprotocol/client/stdio")
  : await import("@modelcontextprotocol/sdk/client/stdio.js");

const client = new Client({ name: "ts-progress-peer", version: "1.0.0" }, { capabilities: {} });
let dropped = 0;
client.onerror = (error) => {
  if (String(error?.message ?? error).includes("unknown token")) dropped += 1;
};
const transport =
  url === null
    ? new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" })
    : argv[1] === "--sse"
      ? new SSEClientTransport(new URL(url))
      : new StreamableHTTPClientTransport(new URL(url));
try {
  await client.connect(transport);
} catch (error) {
  process.stdout.write(JSON.stringify({ connectError: String(error) }) + "\n");
  process.exit(2);
}
const out = { calls: plan.calls, complete: 0, last: [], dropped: 0, errors: [] };
for (let i = 0; i < plan.calls; i++) {
  let last = null;
  try {
    const options = {
      onprogress: (progress) => {
        last = progress.progress;
      },
    };
    const params = { name: plan.name, arguments: plan.arguments ?? {} };
    await (v2 ? client.callTool(params, options) : client.callTool(params, undefined, options));
  } catch (error) {
    if (out.errors.length < 5) out.errors.push(String(error.message ?? error));
  }
  out.last.push(last);
  if (last === plan.total) out.complete += 1;
}
out.dropped = dropped;
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
