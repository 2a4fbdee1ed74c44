// The I/O-bound workload's load: autocannon (npm, benchmarks/peers/package.json) driving TM Dev Lab
// v2's session pattern, as its public description gives it, against one MCP server.
//
//   node benchmarks/peers/io_load.mjs '{"url": "http://127.0.0.1:8123/mcp", "connections": 50,
//                                       "seconds": 10, "warmup": 3, "sessions": true}'
//
// Each of the `connections` users (one keep-alive connection each, one request at a time) runs, over
// and over: for each of search_products, get_user_cart, checkout and then tools/list, a session of its
// own: initialize, notifications/initialized, the request, and DELETE of the session (only when the
// server keeps sessions: `sessions`, as the published load sends DELETE only when it got a session id).
// No think time: autocannon has none, so this is the servers' capacity at 50 users.
//
// First `warmup` seconds of the same load, not counted; then `seconds` measured. Lines on stdout:
//   {"event": "start"}             the measured run begins (the caller starts its CPU meters)
//   {"event": "end", ...result}    it ended: counts, per-step latencies (ms), errors
// Every answer is checked: status, session id, and each tool's result (its text parsed, its fields).
// "counted" is the published benchmark's RPS numerator: initialize, tools/call and tools/list.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const autocannon = require("./node_modules/autocannon");

const options = JSON.parse(process.argv[2] || "{}");
const url = new URL(options.url);
const connections = options.connections ?? 50;
const users = options.users ?? 1000;
const version = options.version ?? "2025-11-25";
const BASE = { "content-type": "application/json", accept: "application/json, text/event-stream" };

const TOOLS = [
  ["search_products", () => ({ category: "Electronics", min_price: 50, max_price: 500, limit: 10 }),
    (d) => d.products.length === 10 && d.top10_popular_ids.length === 10 && d.total_found > 10],
  ["get_user_cart", (user) => ({ user_id: user }),
    (d) => d.cart.items.length >= 1 && d.recent_history.length === 5 && d.first_product.id > 0],
  ["checkout", (user) => ({ user_id: user, items: [{ product_id: 42, quantity: 2 }, { product_id: 1337, quantity: 1 }] }),
    (d) => d.status === "confirmed" && d.total > 0 && d.items_count === 2 && d.rate_limit_count >= 1],
];

let errors = 0;
const samples = [];
function wrong(step, why) {
  errors += 1;
  if (samples.length < 5) samples.push(`${step}: ${why}`.slice(0, 300));
}

function message(body) {
  const text = body.trim();
  if (text.startsWith("{")) return JSON.parse(text);
  for (const line of text.split("\n")) {
    if (line.startsWith("data:") && line.slice(5).trim().startsWith("{")) return JSON.parse(line.slice(5));
  }
  throw new Error(`no JSON-RPC message in ${text.slice(0, 120)}`);
}

function headersWith(context) {
  const headers = { ...BASE, "mcp-protocol-version": version };
  if (context.sid) headers["mcp-session-id"] = context.sid;
  return headers;
}

let nextUser = 0;

function session(kind, tool) {
  const steps = [
    {
      kind: "initialize",
      method: "POST",
      path: url.pathname,
      setupRequest(req, context) {
        context.user = `user-${String(nextUser++ % users).padStart(5, "0")}`;
        context.sid = undefined;
        req.headers = BASE;
        req.body = JSON.stringify({
          jsonrpc: "2.0", id: 1, method: "initialize",
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "io-load", version: "1.0" } },
        });
        return req;
      },
      onResponse(status, body, context, headers) {
        const sid = headers["mcp-session-id"] ?? headers["Mcp-Session-Id"];
        if (status !== 200) return wrong("initialize", `HTTP ${status} ${body}`);
        if (options.sessions && !sid) return wrong("initialize", "no Mcp-Session-Id");
        context.sid = sid;
        try {
          if (!message(body).result?.protocolVersion) wrong("initialize", body);
        } catch (err) {
          wrong("initialize", String(err));
        }
      },
    },
    {
      kind: "initialized",
      method: "POST",
      path: url.pathname,
      setupRequest(req, context) {
        req.headers = headersWith(context);
        req.body = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
        return req;
      },
      onResponse(status, body) {
        if (status !== 202 && status !== 200 && status !== 204) wrong("initialized", `HTTP ${status} ${body}`);
      },
    },
    {
      kind,
      method: "POST",
      path: url.pathname,
      setupRequest(req, context) {
        req.headers = headersWith(context);
        const call = tool
          ? { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: tool[0], arguments: tool[1](context.user) } }
          : { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
        req.body = JSON.stringify(call);
        return req;
      },
      onResponse(status, body) {
        if (status !== 200) return wrong(kind, `HTTP ${status} ${body}`);
        try {
          const result = message(body).result;
          if (tool) {
            if (result?.isError || !tool[2](JSON.parse(result.content[0].text))) wrong(kind, body);
          } else if (!result?.tools || result.tools.length !== 3) {
            wrong(kind, body);
          }
        } catch (err) {
          wrong(kind, `${err} in ${body}`);
        }
      },
    },
  ];
  if (options.sessions) {
    steps.push({
      kind: "delete",
      method: "DELETE",
      path: url.pathname,
      setupRequest(req, context) {
        req.headers = { "mcp-session-id": context.sid, "mcp-protocol-version": version };
        req.body = undefined;
        return req;
      },
      onResponse(status, body) {
        if (status !== 200 && status !== 204) wrong("delete", `HTTP ${status} ${body}`);
      },
    });
  }
  return steps;
}

const requests = [...TOOLS.map((tool) => session(tool[0], tool)), session("tools/list", null)].flat();
const COUNTED = new Set(["initialize", "search_products", "get_user_cart", "checkout", "tools/list"]);
const CALLS = new Set(["search_products", "get_user_cart", "checkout"]);

function run(seconds, latencies) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: url.href, connections, pipelining: 1, duration: seconds, timeout: 30, requests },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    if (latencies) {
      instance.on("response", (client, status, bytes, ms) => {
        const kind = client.requestIterator.currentRequest.kind;
        (latencies[kind] ??= []).push(ms);
      });
    }
  });
}

function percentile(sorted, p) {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(values) {
  const sorted = Float64Array.from(values).sort();
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    count: values.length,
    mean: values.length ? sum / values.length : null,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : null,
  };
}

if (options.warmup > 0) await run(options.warmup, null);
const warmupErrors = errors;
errors = 0;
const latencies = {};
process.stdout.write(`${JSON.stringify({ event: "start" })}\n`);
const started = process.hrtime.bigint();
const result = await run(options.seconds ?? 10, latencies);
const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
const steps = Object.fromEntries(Object.entries(latencies).map(([kind, values]) => [kind, summary(values)]));
const calls = Object.entries(latencies).filter(([kind]) => CALLS.has(kind)).flatMap(([, values]) => values);
const counted = Object.entries(latencies).filter(([kind]) => COUNTED.has(kind)).reduce((n, [, v]) => n + v.length, 0);
const http = Object.values(latencies).reduce((n, v) => n + v.length, 0);
process.stdout.write(
  `${JSON.stringify({
    event: "end",
    seconds: result.duration ?? elapsed,
    elapsed,
    counted,
    http,
    counted_per_s: counted / (result.duration ?? elapsed),
    http_per_s: http / (result.duration ?? elapsed),
    calls: summary(calls),
    steps,
    errors,
    warmup_errors: warmupErrors,
    samples,
    transport_errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    load_cpu_s: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
  })}\n`,
);
