"""A server with MCP Apps, for tests/apps: ``backchannel run tests/apps/apps_server.py [--http]``.

- ``clock`` shows the clock app (``ui://clock/app.html``): the app shows the call's result (the
  time, a tick count) and its Tick button calls ``tick``, a tool only apps may call
  (``visibility=["app"]``), whose answer it shows.
- ``probe`` shows the probe app (``ui://probe/app.html``), which posts malformed messages and
  forbidden calls to its host and writes each answer in its page, then proves it is still
  served: ``secret`` (the model's only) must never run, as ``secret_runs`` says.

The apps speak the Apps protocol by hand (JSON-RPC over ``postMessage``), as SEP-1865 allows.
"""

from __future__ import annotations

import datetime
import os

from backchannel import Server
from backchannel.apps import App, AppCsp

server = Server("apps-test", "1.2.3", title="Apps test server")
_ticks = {"count": 0, "secret": 0}

CLOCK_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Clock</title>
<style>
  body { font-family: sans-serif; margin: 0; padding: 12px; background: #fff; color: #111; }
  #count { font-size: 40px; font-weight: bold; }
  #bar { height: 36px; background: #1a7f4b; width: 10px; }
  button { font-size: 18px; padding: 6px 18px; }
</style>
</head>
<body>
<h1>Clock app</h1>
<p>Time: <span id="time">waiting</span></p>
<p>Ticks: <span id="count">none</span></p>
<div id="bar"></div>
<p><button id="tick">Tick</button></p>
<p id="status">starting</p>
<script>
(() => {
  let next = 1;
  const pending = new Map();
  const $ = (id) => document.getElementById(id);
  const send = (message) => window.parent.postMessage(message, "*");
  const request = (method, params) => {
    const id = next++;
    send({ jsonrpc: "2.0", id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  };
  const notify = (method, params) => send({ jsonrpc: "2.0", method, params });
  const show = (result) => {
    const data = (result && result.structuredContent) || {};
    if (data.time) $("time").textContent = data.time;
    if (typeof data.count === "number") {
      $("count").textContent = String(data.count);
      $("bar").style.width = 10 + 60 * data.count + "px";
    }
  };
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if ("id" in message && !("method" in message)) {
      const waiting = pending.get(message.id);
      if (waiting) {
        pending.delete(message.id);
        message.error ? waiting.reject(message.error) : waiting.resolve(message.result);
      }
      return;
    }
    if (message.method === "ui/notifications/tool-input") {
      document.body.dataset.input = JSON.stringify(message.params.arguments);
    } else if (message.method === "ui/notifications/tool-result") {
      show(message.params);
      document.body.dataset.result = "shown";
    } else if (message.method === "ui/resource-teardown") {
      document.body.dataset.teardown = message.params.reason;
      send({ jsonrpc: "2.0", id: message.id, result: {} });
    }
  });
  $("tick").addEventListener("click", async () => {
    $("status").textContent = "calling";
    try {
      show(await request("tools/call", { name: "tick", arguments: {} }));
      $("status").textContent = "ticked";
    } catch (error) {
      $("status").textContent = "error " + error.code + ": " + error.message;
    }
  });
  (async () => {
    const answer = await request("ui/initialize", {
      protocolVersion: "2026-01-26",
      appInfo: { name: "clock", version: "1.0.0" },
      appCapabilities: {},
    });
    document.body.dataset.host = answer.hostInfo.name;
    notify("ui/notifications/initialized", {});
    const size = document.documentElement.getBoundingClientRect();
    notify("ui/notifications/size-changed", { width: Math.ceil(size.width), height: Math.ceil(size.height) });
    $("status").textContent = "ready";
  })();
})();
</script>
</body>
</html>
"""

PROBE_HTML = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Probe</title>
<style>body { font-family: monospace; margin: 0; padding: 8px; background: #fffbe6; }</style></head>
<body>
<h1>Probe app</h1>
<ol id="answers"></ol>
<p id="alive">not yet</p>
<script>
(() => {
  const answers = document.getElementById("answers");
  const waiting = new Map();
  let nulls = 0;
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || typeof message !== "object" || !("id" in message) || "method" in message) return;
    const key = message.id === null ? "null-" + ++nulls : String(message.id);
    const item = document.createElement("li");
    item.dataset.id = key;
    item.dataset.code = message.error ? String(message.error.code) : "ok";
    item.textContent = key + ": " + (message.error ? message.error.code + " " + message.error.message : "ok");
    answers.append(item);
    const resolve = waiting.get(message.id);
    if (resolve) resolve(message);
  });
  const post = (message) => window.parent.postMessage(message, "*");
  const ask = (message) => new Promise((resolve) => { waiting.set(message.id, resolve); post(message); });
  const policy = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
  document.body.dataset.policy = policy ? policy.content : "none";
  document.addEventListener("securitypolicyviolation", (event) => {
    document.body.dataset.violated = event.effectiveDirective + " " + event.blockedURI;
  });
  fetch("http://127.0.0.1:9/undeclared").then(
    () => { document.body.dataset.fetch = "allowed"; },
    () => { document.body.dataset.fetch = "refused"; },
  );
  (async () => {
    post("not a JSON-RPC message");
    post({ jsonrpc: "1.0", id: "old", method: "ping" });
    post({ jsonrpc: "2.0", id: { bad: 1 }, method: "ping" });
    post({ jsonrpc: "2.0", id: 10n, method: "ping" });
    await ask({ jsonrpc: "2.0", id: "early", method: "tools/call", params: { name: "secret_runs" } });
    const hello = { protocolVersion: "2026-01-26", appInfo: { name: "probe", version: "1" }, appCapabilities: {} };
    await ask({ jsonrpc: "2.0", id: "init", method: "ui/initialize", params: hello });
    post({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    await ask({ jsonrpc: "2.0", id: "unknown", method: "no/such/method" });
    await ask({ jsonrpc: "2.0", id: "params", method: "tools/call", params: "not an object" });
    await ask({ jsonrpc: "2.0", id: "secret", method: "tools/call", params: { name: "secret", arguments: {} } });
    await ask({ jsonrpc: "2.0", id: "missing", method: "tools/call", params: { name: "no_such_tool" } });
    await ask({ jsonrpc: "2.0", id: "link", method: "ui/open-link", params: { url: "javascript:alert(1)" } });
    await ask({ jsonrpc: "2.0", id: "huge", method: "ping", params: { padding: "x".repeat(5 * 1024 * 1024) } });
    const runs = await ask({ jsonrpc: "2.0", id: "runs", method: "tools/call", params: { name: "secret_runs" } });
    document.getElementById("alive").textContent = "secret ran " + runs.result.structuredContent.count + " times";
  })();
})();
</script>
</body>
</html>
"""

clock_app = server.app(
    "ui://clock/app.html",
    CLOCK_HTML,
    title="Clock",
    description="The time, and a button that ticks on the server",
    prefers_border=True,
)
probe_app = App(uri="ui://probe/app.html", html=PROBE_HTML, csp=AppCsp(connect_domains=["https://api.example.com"]))


@server.tool(app=clock_app)
def clock() -> dict[str, object]:
    """The time on the server, shown by the clock app."""
    now = datetime.datetime.now(datetime.UTC).isoformat()
    return {"time": now, "count": _ticks["count"], "pid": os.getpid()}


@server.tool(visibility=["app"])
def tick() -> dict[str, int]:
    """One more tick (only the clock app calls this)."""
    _ticks["count"] += 1
    return {"count": _ticks["count"]}


@server.tool(app=probe_app)
def probe() -> str:
    """Shows the probe app, which tries its host with bad messages."""
    return "probing"


@server.tool(visibility=["model"])
def secret() -> str:
    """A tool no app may call."""
    _ticks["secret"] += 1
    return "the model's only"


@server.tool(visibility=["app"])
def secret_runs() -> dict[str, int]:
    """How many times ``secret`` ran."""
    return {"count": _ticks["secret"]}
