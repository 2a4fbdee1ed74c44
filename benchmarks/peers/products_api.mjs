// The small local HTTP JSON API behind the I/O-bound workload's tools (benchmarks/io_bench.py).
//
//   PORT=8100 node benchmarks/peers/products_api.mjs        # http://127.0.0.1:8100
//
// A product catalogue made up at start (100,000 products, the same every run) and three routes:
//   GET  /products/search?category=C&min_price=A&max_price=B&limit=N
//        -> {"total_found": n, "products": [the N cheapest of category C in [A, B]]}
//   GET  /products/ID                  -> the product, or 404
//   POST /cart/calculate {"user_id", "items": [{"product_id", "quantity"}]}
//        -> {"order_id", "subtotal", "tax", "total"}
// node:http alone, one process, listening on 127.0.0.1 only. Each category's products are kept
// sorted by price, so a search is two binary searches and a slice: the API answers in tens of
// microseconds and stays out of the way of the MCP servers it serves.

import { createServer } from "node:http";

const CATEGORIES = ["Electronics", "Books", "Garden", "Toys", "Kitchen", "Sports", "Music", "Office"];
const COUNT = 100_000;

// xorshift32: the same catalogue on every start.
let seed = 20260211;
const next = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
};

const products = new Array(COUNT + 1);
const byCategory = new Map(CATEGORIES.map((c) => [c, []]));
for (let id = 1; id <= COUNT; id++) {
  const category = CATEGORIES[id % CATEGORIES.length];
  const product = {
    id,
    sku: `SKU-${String(id).padStart(6, "0")}`,
    name: `${category} item ${id}`,
    category,
    price: Math.round((1 + next() * 999) * 100) / 100,
    rating: Math.round((1 + next() * 4) * 10) / 10,
    stock: Math.floor(next() * 500),
  };
  products[id] = product;
  byCategory.get(category).push(product);
}
for (const list of byCategory.values()) list.sort((a, b) => a.price - b.price || a.id - b.id);
const encoded = products.map((p) => (p ? JSON.stringify(p) : ""));

// The first index of `list` whose price is >= price (list sorted by price).
function lowerBound(list, price) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid].price < price) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function search(query) {
  const list = byCategory.get(query.get("category") || "Electronics") || [];
  const min = Number(query.get("min_price") || 0);
  const max = Number(query.get("max_price") || Number.MAX_VALUE);
  const limit = Math.min(Math.max(Number(query.get("limit") || 10), 0), 100);
  const start = lowerBound(list, min);
  const end = lowerBound(list, Math.nextUp ? Math.nextUp(max) : max + 1e-9);
  const found = list.slice(start, Math.min(end, start + limit));
  return `{"total_found":${Math.max(end - start, 0)},"products":[${found.map((p) => encoded[p.id]).join(",")}]}`;
}

let orders = 0;

function calculate(body) {
  const items = Array.isArray(body.items) ? body.items : [];
  let subtotal = 0;
  for (const item of items) {
    const product = products[item.product_id];
    if (product) subtotal += product.price * (item.quantity || 1);
  }
  subtotal = Math.round(subtotal * 100) / 100;
  const tax = Math.round(subtotal * 0.08 * 100) / 100;
  orders += 1;
  return JSON.stringify({ order_id: `ORD-${body.user_id}-${orders}`, subtotal, tax, total: subtotal + tax });
}

function send(res, status, text) {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  const url = new URL(req.url, "http://127.0.0.1");
  if (req.method === "GET" && url.pathname === "/products/search") return send(res, 200, search(url.searchParams));
  if (req.method === "GET" && url.pathname.startsWith("/products/")) {
    const id = Number(url.pathname.slice("/products/".length));
    return Number.isInteger(id) && encoded[id] ? send(res, 200, encoded[id]) : send(res, 404, '{"error":"not found"}');
  }
  if (req.method === "POST" && url.pathname === "/cart/calculate") {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      try {
        send(res, 200, calculate(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
      } catch {
        send(res, 400, '{"error":"bad json"}');
      }
    });
    return;
  }
  send(res, 404, '{"error":"not found"}');
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT || 8100), "127.0.0.1", () =>
  process.stderr.write(`products API listening on 127.0.0.1:${server.address().port}\n`),
);
