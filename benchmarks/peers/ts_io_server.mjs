// The I/O-bound workload's three tools (benchmarks/io_tools.py says what each does) on the official
// TypeScript SDK (@modelcontextprotocol/sdk), one Node process.
//
//   PORT=8123 IO_REDIS_URL=redis://127.0.0.1:6379/0 IO_API_URL=http://127.0.0.1:8100 node benchmarks/peers/ts_io_server.mjs
//
// Stateless, as the SDK's README shows for a server that keeps no session: each POST gets a new
// McpServer and StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }),
// on node:http. Redis: ioredis, one client for the process (benchmarks/peers/package.json pins it).
// The API: node:http with one keep-alive Agent, its sockets reused by every call. The SDK comes from
// tests/node_modules (BENCH_NODE_MODULES overrides that folder).

import { request as httpRequest, Agent, createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const nodeModules = process.env.BENCH_NODE_MODULES || join(here, "..", "..", "tests", "node_modules");
const load = (rel) => import(pathToFileURL(join(nodeModules, rel)).href);
const sdk = "@modelcontextprotocol/sdk/dist/esm";

const [{ McpServer }, { StreamableHTTPServerTransport }, zod, { default: Redis }] = await Promise.all([
  load(`${sdk}/server/mcp.js`),
  load(`${sdk}/server/streamableHttp.js`),
  load("zod/v4/index.js"),
  import(pathToFileURL(join(here, "node_modules", "ioredis", "built", "index.js")).href),
]);
const z = zod.z;

const api = new URL(process.env.IO_API_URL || "http://127.0.0.1:8100");
const redis = new Redis(process.env.IO_REDIS_URL || "redis://127.0.0.1:6379/0", { enableReadyCheck: false });
const agent = new Agent({ keepAlive: true, maxSockets: 128 });
const SERVER_TYPE = "typescript";

function callApi(method, path, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers = data === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(data) };
    const req = httpRequest({ host: api.hostname, port: api.port, method, path, agent, headers }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`API ${path}: HTTP ${res.statusCode}`));
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(data);
  });
}

const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });

function build() {
  const server = new McpServer({ name: "ts-io-bench", version: "1.0.0" });
  server.registerTool(
    "search_products",
    {
      description: "Search products by category and price range, merged with popularity data.",
      inputSchema: {
        category: z.string().default("Electronics"),
        min_price: z.number().default(50),
        max_price: z.number().default(500),
        limit: z.number().int().default(10),
      },
    },
    async ({ category, min_price, max_price, limit }) => {
      const query = new URLSearchParams({ category, min_price, max_price, limit });
      const [found, popular] = await Promise.all([
        callApi("GET", `/products/search?${query}`),
        redis.zrevrange("bench:popular", 0, 9),
      ]);
      const top = popular.map((member) => Number(member.split(":")[1]));
      const rank = new Map(top.map((id, i) => [id, i + 1]));
      const products = (found.products || []).map((p) => ({
        id: p.id, sku: p.sku, name: p.name, price: p.price, rating: p.rating, popularity_rank: rank.get(p.id) || 0,
      }));
      return text({ category, total_found: found.total_found || 0, products, top10_popular_ids: top, server_type: SERVER_TYPE });
    },
  );
  server.registerTool(
    "get_user_cart",
    {
      description: "Get a user's cart, the first item's product details and the five latest orders.",
      inputSchema: { user_id: z.string().default("user-00042") },
    },
    async ({ user_id }) => {
      const cart = await redis.hgetall(`bench:cart:${user_id}`);
      const items = JSON.parse(cart.items || "[]");
      const first = items.length ? items[0].product_id : 1;
      const [product, history] = await Promise.all([
        callApi("GET", `/products/${first}`),
        redis.lrange(`bench:history:${user_id}`, 0, 4),
      ]);
      return text({
        user_id,
        cart: { items, item_count: items.length, estimated_total: Number(cart.total || 0) },
        first_product: { id: product.id, name: product.name, price: product.price },
        recent_history: history.map((entry) => JSON.parse(entry)),
        server_type: SERVER_TYPE,
      });
    },
  );
  server.registerTool(
    "checkout",
    {
      description: "Check a cart out: the API prices it; Redis counts the user's rate, records the order, ranks the product.",
      inputSchema: {
        user_id: z.string().default("user-00042"),
        items: z
          .array(z.object({ product_id: z.number().int(), quantity: z.number().int() }))
          .default([{ product_id: 42, quantity: 2 }, { product_id: 1337, quantity: 1 }]),
      },
    },
    async ({ user_id, items }) => {
      const tail = user_id.split("-").pop();
      const number = /^\d+$/.test(tail) ? Number(tail) : 42;
      const now = Math.floor(Date.now() / 1000);
      const order = JSON.stringify({ order_id: `ORD-${user_id}-${now}`, items, ts: now });
      const productId = items.length ? items[0].product_id : 1;
      const [priced, recorded] = await Promise.all([
        callApi("POST", "/cart/calculate", { user_id, items }),
        redis
          .pipeline()
          .incr(`bench:ratelimit:user-${String(number % 100).padStart(5, "0")}`)
          .rpush(`bench:history:${user_id}`, order)
          .zincrby("bench:popular", 1, `product:${productId}`)
          .exec(),
      ]);
      return text({
        order_id: priced.order_id,
        user_id,
        total: priced.total || 0,
        items_count: items.length,
        rate_limit_count: recorded[0][1],
        status: "confirmed",
        server_type: SERVER_TYPE,
      });
    },
  );
  return server;
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

const httpServer = createServer(async (req, res) => {
  if (new URL(req.url, "http://127.0.0.1").pathname !== "/mcp") return reply(res, 404, "Not found");
  if (req.method !== "POST") return reply(res, 405, "Method not allowed");
  let body;
  try {
    body = JSON.parse((await readBody(req)).toString("utf8"));
  } catch {
    return reply(res, 400, "Parse error");
  }
  const server = build();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    transport.close();
    server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (err) {
    if (!res.headersSent) reply(res, 500, String(err));
  }
});
httpServer.keepAliveTimeout = 60_000;
httpServer.listen(Number(process.env.PORT || 8000), "127.0.0.1", () =>
  process.stderr.write(`listening on 127.0.0.1:${httpServer.address().port}\n`),
);
