'use strict';
// Preload for the conformance harness, loaded BEFORE tests/peers/loopback-only.cjs:
//
//   node --require tests/conformance/sync-loopback-listen.cjs \
//        --require tests/peers/loopback-only.cjs  .../conformance/dist/index.js ...
//
// loopback-only.cjs turns `server.listen(0)` into `server.listen(0, '127.0.0.1')`. With a
// host, Node resolves it asynchronously before binding, so `server.address()` is null right
// after listen() returns. Several harness scenarios read `this.httpServer.address().port`
// synchronously after `app.listen(0)` (auth/*, elicitation-sep1034-client-defaults,
// json-schema-ref-no-deref, sep-2322-client-request-state) and crash or use port 0.
//
// This preload makes a TCP listen on exactly 127.0.0.1 synchronous again: it binds a TCP
// handle to 127.0.0.1:<port> first and passes the bound handle to Node's own listen(), which
// then knows its address at once. Every other form of listen() is left to Node.

const net = require('node:net');

let TCP;
let constants;
try {
  ({ TCP, constants } = process.binding('tcp_wrap'));
} catch {
  TCP = undefined;
}

const nodeListen = net.Server.prototype.listen;

function isPort(value) {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value < 65536;
  if (typeof value === 'string' && value.trim() !== '') return isPort(Number(value));
  return false;
}

// { port, backlog, callback } for listen(port, '127.0.0.1'[, backlog][, cb]) and
// listen({ port, host: '127.0.0.1', backlog? }[, cb]); otherwise null.
function loopbackPlan(args) {
  const callback = typeof args[args.length - 1] === 'function' ? args[args.length - 1] : undefined;
  const rest = callback ? args.slice(0, -1) : args;
  const first = rest[0];
  if (isPort(first) && rest[1] === '127.0.0.1') {
    return { port: Number(first), backlog: typeof rest[2] === 'number' ? rest[2] : undefined, callback };
  }
  if (first !== null && typeof first === 'object' && rest.length === 1 && first.host === '127.0.0.1') {
    const known = new Set(['port', 'host', 'backlog']);
    if (Object.keys(first).every((key) => known.has(key)) && (first.port === undefined || isPort(first.port))) {
      return { port: Number(first.port ?? 0), backlog: first.backlog, callback };
    }
  }
  return null;
}

net.Server.prototype.listen = function syncLoopbackListen(...args) {
  const plan = TCP === undefined ? null : loopbackPlan(args);
  if (plan !== null) {
    const handle = new TCP(constants.SERVER);
    if (handle.bind('127.0.0.1', plan.port) === 0) {
      const handleArgs = [handle];
      if (plan.backlog !== undefined) handleArgs.push(plan.backlog);
      if (plan.callback !== undefined) handleArgs.push(plan.callback);
      return nodeListen.apply(this, handleArgs);
    }
    handle.close(); // e.g. EADDRINUSE: let Node report it the usual way
  }
  return nodeListen.apply(this, args);
};
