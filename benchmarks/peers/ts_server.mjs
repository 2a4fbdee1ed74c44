// The bench contract (shared/bench/CONTRACT.md v1) on the official TypeScript SDK (@modelcontextprotocol/sdk).
//
//   node benchmarks/peers/ts_server.mjs stdio
//   PORT=8123 node benchmarks/peers/ts_server.mjs http        # http://127.0.0.1:8123/mcp
//
// Written the way the SDK's README shows: McpServer.registerTool / registerPrompt with zod
// shapes, completable() for the prompt argument, extra.sendNotification for progress,
// extra.signal for cancellation and extra.sendRequest for elicitation (so over HTTP the
// question travels on the POST's own SSE stream). HTTP: node:http, one McpServer plus one
// StreamableHTTPServerTransport per session, sessions kept in a Map, listening on 127.0.0.1.
// The packages come from tests/node_modules (pinned in tests/package.json); BENCH_NODE_MODULES
// overrides that folder.

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const nodeModules = process.env.BENCH_NODE_MODULES || join(here, "..", "..", "tests", "node_modules");
const load = (rel) => import(pathToFileURL(join(nodeModules, rel)).href);
const sdk = "@modelcontextprotocol/sdk/dist/esm";

const [{ McpServer }, { completable }, { StdioServerTransport }, { StreamableHTTPServerTransport }, types, zod] =
  await Promise.all([
    load(`${sdk}/server/mcp.js`),
    load(`${sdk}/server/completable.js`),
    load(`${sdk}/server/stdio.js`),
    load(`${sdk}/server/streamableHttp.js`),
    load(`${sdk}/types.js`),
    load("zod/v4/index.js"),
  ]);
const { ElicitResultSchema, isInitializeRequest } = types;
const z = zod.z;

const WORDS = Array.from({ length: 10000 }, (_, i) =>
  String(i)
    .padStart(4, "0")
    .split("")
    .map((d) => "abcdefghij"[Number(d)])
    .join(""),
);

// WORDS is sorted, so the matches of a prefix are one slice: the same bisect as the Python servers.
function lowerBound(key) {
  let lo = 0;
  let hi = WORDS.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (WORDS[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function matches(prefix) {
  return WORDS.slice(lowerBound(prefix), lowerBound(prefix + "\uffff"));
}

const text = (t) => ({ content: [{ type: "text", text: t }] });

function build() {
  const server = new McpServer({ name: "ts-bench", version: "1.0.0" }, { capabilities: { logging: {} } });

  server.registerTool("echo", { description: "Answer the text back.", inputSchema: { text: z.string() } }, ({ text: t }) =>
    text(t),
  );

  server.registerTool(
    "progress",
    { description: "Report progress 1..steps, then answer.", inputSchema: { steps: z.number().int() } },
    async ({ steps }, extra) => {
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined) {
        for (let i = 1; i <= steps; i++) {
          await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: i, total: steps } });
        }
      }
      return text("done");
    },
  );

  server.registerTool(
    "sleep",
    { description: "Wait ms milliseconds without blocking anything else.", inputSchema: { ms: z.number().int() } },
    ({ ms }, extra) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve(text("slept")), ms);
        extra.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(new Error("cancelled"));
        });
      }),
  );

  server.registerTool("ask", { description: "Ask the person for a name.", inputSchema: {} }, async (_args, extra) => {
    const answer = await extra.sendRequest(
      {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: "What is your name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        },
      },
      ElicitResultSchema,
    );
    return text(answer.action === "accept" ? `hello ${answer.content.name}` : answer.action);
  });

  server.registerPrompt(
    "greet",
    { description: "Greet with a word.", argsSchema: { word: completable(z.string(), (value) => matches(value)) } },
    ({ word }) => ({ messages: [{ role: "user", content: { type: "text", text: `Say ${word}.` } }] }),
  );
  return server;
}

async function serveStdio() {
  const server = build();
  const transport = new StdioServerTransport();
  process.stdin.on("end", () => process.exit(0));
  await server.connect(transport);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function reply(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function serveHttp(port) {
  const sessions = new Map();
  const httpServer = createServer(async (req, res) => {
    try {
      if (new URL(req.url, "http://127.0.0.1").pathname !== "/mcp") return reply(res, 404, "Not found");
      const sessionId = req.headers["mcp-session-id"];
      let body;
      if (req.method === "POST") {
        const raw = await readBody(req);
        try {
          body = JSON.parse(raw.toString("utf8"));
        } catch {
          return reply(res, 400, "Parse error");
        }
      }
      let transport = sessionId ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId || req.method !== "POST" || !isInitializeRequest(body)) {
          return reply(res, sessionId ? 404 : 400, sessionId ? "Session not found" : "No valid session ID");
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await build().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) reply(res, 500, String(err));
    }
  });
  httpServer.listen(port, "127.0.0.1", () => process.stderr.write(`listening on 127.0.0.1:${port}\n`));
}

const mode = process.argv[2] || "stdio";
if (mode === "stdio") await serveStdio();
else if (mode === "http") await serveHttp(Number(process.env.PORT || 8000));
else {
  process.stderr.write("usage: ts_server.mjs stdio|http\n");
  process.exit(2);
}
