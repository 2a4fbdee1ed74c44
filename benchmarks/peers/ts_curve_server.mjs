// curve_server.py's twin on the official TypeScript SDK (@modelcontextprotocol/sdk), written as
// ts_server.mjs is: McpServer.registerTool / registerPrompt with zod shapes, completable() for
// pick.word (the same binary search; the SDK keeps the first 100 and counts the rest).
//
//   CURVE_TOOLS=1000 CURVE_WORDS=100000 node benchmarks/peers/ts_curve_server.mjs stdio
//   PORT=8123 node benchmarks/peers/ts_curve_server.mjs http
//
// blob(size) and the word list are curve_data.py's, built the same way here.

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
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
const { isInitializeRequest } = types;
const z = zod.z;

const LINE = 'She said "yes" and left; the rest is text: 0123456789 abcdefgh.\n';
const blob = (size) => LINE.repeat(Math.floor(size / LINE.length) + 1).slice(0, size);

function words(count) {
  const width = String(Math.max(count - 1, 0)).length;
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    out[i] = String(i)
      .padStart(width, "0")
      .replace(/[0-9]/g, (d) => "abcdefghij"[Number(d)]);
  }
  return out;
}

const VOCABULARY = words(Number(process.env.CURVE_WORDS || 0));

function lowerBound(key) {
  let lo = 0;
  let hi = VOCABULARY.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (VOCABULARY[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const text = (t) => ({ content: [{ type: "text", text: t }] });

function build() {
  const server = new McpServer({ name: "ts-curves", version: "1.0.0" }, { capabilities: { logging: {} } });
  server.registerTool("echo", { description: "Answer the text back.", inputSchema: { text: z.string() } }, ({ text: t }) =>
    text(t),
  );
  server.registerTool(
    "sleep",
    { description: "Wait ms milliseconds without blocking anything else.", inputSchema: { ms: z.number().int() } },
    ({ ms }) => new Promise((resolve) => setTimeout(() => resolve(text("slept")), ms)),
  );
  server.registerTool(
    "blob",
    { description: "Answer a text of size characters.", inputSchema: { size: z.number().int() } },
    ({ size }) => text(blob(size)),
  );
  server.registerPrompt("greet", { description: "Greet with a word.", argsSchema: { word: z.string() } }, ({ word }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Say ${word}.` } }],
  }));

  const count = Number(process.env.CURVE_TOOLS || 0);
  const started = performance.now();
  const cpu = process.cpuUsage();
  const lookup = ({ query, limit }) => text(query.slice(0, limit ?? 10));
  for (let i = 0; i < count; i++) {
    const name = `tool_${String(i).padStart(5, "0")}`;
    server.registerTool(
      name,
      {
        description: `Tool number ${i}: looks a query up.`,
        inputSchema: { query: z.string(), limit: z.number().int().optional() },
      },
      lookup,
    );
  }
  const registered = performance.now() - started;
  const used = process.cpuUsage(cpu);

  server.registerPrompt(
    "pick",
    {
      description: "Pick a word.",
      argsSchema: {
        word: completable(z.string(), (value) => VOCABULARY.slice(lowerBound(value), lowerBound(value + "\uffff"))),
      },
    },
    ({ word }) => ({ messages: [{ role: "user", content: { type: "text", text: `Picked ${word}.` } }] }),
  );
  const stats = JSON.stringify({
    register_ms: registered,
    register_cpu_ms: (used.user + used.system) / 1000,
    index_ms: 0,
  });
  server.registerTool("curve_stats", { description: "How long building this server took.", inputSchema: {} }, () =>
    text(stats),
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
        try {
          body = JSON.parse((await readBody(req)).toString("utf8"));
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
  process.stderr.write("usage: ts_curve_server.mjs stdio|http\n");
  process.exit(2);
}
