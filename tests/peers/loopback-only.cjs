'use strict';
// Preload (`node --require tests/peers/loopback-only.cjs ...`) that keeps every TCP
// listener of the process on the loopback interface.
//
// Test peers such as @modelcontextprotocol/server-everything call `app.listen(PORT)`,
// which binds all interfaces and offers no host option. This patches
// net.Server.prototype.listen (http.Server inherits it) so that a TCP listen without a
// loopback host binds 127.0.0.1 instead. Unix-socket paths and inherited handles/fds
// are left alone.
//
// Once a patched server is listening it writes one line to stderr:
//   loopback-only: listening on 127.0.0.1:<port>
// so a test may start the peer with port 0 and read the real port from that line.

const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const originalListen = net.Server.prototype.listen;

function isLoopbackHost(host) {
  if (typeof host !== 'string') return false;
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function isPortLike(value) {
  if (typeof value === 'number') return true;
  return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value));
}

function announce(server) {
  server.once('listening', () => {
    const addr = server.address();
    if (addr && typeof addr === 'object') {
      process.stderr.write(`loopback-only: listening on ${addr.address}:${addr.port}\n`);
    }
  });
}

function rewriteArgs(args) {
  if (args.length === 0 || typeof args[0] === 'function') {
    // listen() / listen(cb): Node would pick a random port on all interfaces.
    return { args: [{ port: 0, host: LOOPBACK }, ...args], tcp: true };
  }
  const first = args[0];
  if (isPortLike(first)) {
    // listen(port[, host][, backlog][, cb])
    const rest = args.slice(1);
    if (rest.length > 0 && (typeof rest[0] === 'string' || rest[0] === undefined || rest[0] === null)) {
      if (isLoopbackHost(rest[0])) return { args, tcp: true };
      rest[0] = LOOPBACK;
      return { args: [first, ...rest], tcp: true };
    }
    return { args: [first, LOOPBACK, ...rest], tcp: true };
  }
  if (first !== null && typeof first === 'object') {
    // listen(options[, cb]) unless it is a handle / fd / unix path.
    const isHandle = '_handle' in first || 'fd' in first || typeof first.path === 'string';
    if (!isHandle && (first.port !== undefined || first.host !== undefined || Object.keys(first).length === 0)) {
      if (isLoopbackHost(first.host)) return { args, tcp: true };
      return { args: [{ ...first, host: LOOPBACK }, ...args.slice(1)], tcp: true };
    }
  }
  // Unix socket path (non-numeric string), handle, or something we do not understand.
  return { args, tcp: false };
}

net.Server.prototype.listen = function loopbackOnlyListen(...args) {
  const rewritten = rewriteArgs(args);
  if (rewritten.tcp) announce(this);
  return originalListen.apply(this, rewritten.args);
};
