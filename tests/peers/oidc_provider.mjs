// A real, independent OAuth 2.1 / OpenID authorization server for the auth tests: the certified
// npm package oidc-provider (9.13.3), configured for what an MCP resource server meets:
//
//   node22 tests/peers/oidc_provider.mjs '<config JSON>'
//
// config: {
//   "port": 0,                                  // 0: any free port on 127.0.0.1
//   "resources": [{"match": "<regex>", "scope": "mcp mcp:admin", "format": "jwt" | "opaque", "ttl": 600}],
//   "scopes": ["mcp", ...],                     // scope values clients may register with
//   "clients": [{client_id, client_secret, grant_types, response_types, redirect_uris, ...}],
//   "account": "alice",                         // who logs in when the interaction runs
//   "rotateRefreshToken": true,                 // optional: every refresh spends its refresh token (default:
//                                               // oidc-provider's own rule, which rotates a public client's)
//   "tokenDelayMs": 0,                          // optional: the token endpoint answers this much later (a busy
//                                               // server: concurrent grants overlap)
//   "control": false                            // true: the test endpoints below
// }
//
// A resource indicator (RFC 8707) is served by the first entry whose regex matches it (any other
// is refused with invalid_target), so one server serves every test's resource server, whatever
// port it listens on. Features on: dynamic client registration (open, RFC 7591), PKCE S256 (required for public
// clients), resource indicators (RFC 8707: a token's aud is the resource asked for, its scopes
// those the resource defines), JWT access tokens (RFC 9068, ES256) or opaque ones per resource,
// introspection (RFC 7662), revocation, client credentials, DPoP (RFC 9449), refresh tokens.
//
// Logging in is automatic (no page): the interaction logs in `config.account` (or the request's
// login_hint) and grants every scope the client asked for. So a client's "browser" only has to
// follow redirects (keeping cookies) from the authorization URL to its redirect URI.
//
// With "control": GET /control/jwks-fetches answers {"fetches": N}, how often the JWKS was asked
// for; POST /control/hold-jwks makes JWKS requests wait (a slow network) until POST
// /control/release-jwks answers them all; POST /control/rotate replaces the signing keys with new
// ones (new kids, the old keys withdrawn) and answers {"kids": [...]}: the provider is made anew
// with them (clients are static configuration, and the tests' grants live no longer than one request).
// GET /control/grants answers what the token and registration endpoints did: {"grants": {grant_type: N},
// "errors": {error: N}, "registrations": N, "presented": [refresh tokens presented, in order],
// "issued": [refresh tokens issued, in order]} (a refresh token presented twice is one spent twice).
//
// Prints ONE JSON line on stdout once listening: {"issuer": "http://127.0.0.1:PORT", "port": PORT}.
// Stops on SIGTERM or when stdin closes.

import { generateKeyPairSync } from "node:crypto";
import http from "node:http";
import { Provider, errors } from "oidc-provider";

const config = JSON.parse(process.argv[2] ?? "{}");
const resources = (config.resources ?? []).map((entry) => ({ ...entry, pattern: new RegExp(entry.match) }));

const server = http.createServer();
await new Promise((resolve) => server.listen(config.port ?? 0, "127.0.0.1", resolve));
const port = server.address().port;
const issuer = `http://127.0.0.1:${port}`;

function signingKey(alg, kid) {
  const { privateKey } =
    alg === "ES256"
      ? generateKeyPairSync("ec", { namedCurve: "P-256" })
      : generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { ...privateKey.export({ format: "jwk" }), alg, kid, use: "sig" };
}

let generation = 1;
const makeProvider = () => new Provider(issuer, {
  clients: config.clients ?? [],
  jwks: { keys: [signingKey("ES256", `es256-${generation}`), signingKey("RS256", `rs256-${generation}`)] },
  cookies: { keys: ["backchannel-test-cookie-key"] },
  findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  // Resource scopes too: clients name them when they register (RFC 7591 "scope").
  scopes: ["openid", "offline_access", ...(config.scopes ?? [])],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    clientCredentials: { enabled: true },
    dPoP: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, indicator) => {
        const known = resources.find((entry) => entry.pattern.test(indicator));
        if (!known) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        return {
          scope: known.scope ?? "",
          accessTokenTTL: known.ttl ?? 600,
          accessTokenFormat: known.format ?? "jwt",
          ...(known.format === "opaque" ? {} : { jwt: { sign: { alg: "ES256" } } }),
        };
      },
    },
  },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed("refresh_token"),
  clientDefaults: { grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] },
  interactions: { url: async (ctx, interaction) => `/interaction/${interaction.uid}` },
  ...(config.rotateRefreshToken === undefined ? {} : { rotateRefreshToken: config.rotateRefreshToken }),
});

const counts = { grants: {}, errors: {}, registrations: 0, presented: [], issued: [] };
function counted(made) {
  made.on("grant.success", (ctx) => {
    const type = ctx.oidc.params.grant_type;
    counts.grants[type] = (counts.grants[type] ?? 0) + 1;
    if (type === "refresh_token") counts.presented.push(ctx.oidc.params.refresh_token);
    if (ctx.body?.refresh_token) counts.issued.push(ctx.body.refresh_token);
  });
  made.on("grant.error", (ctx, error) => {
    counts.errors[error.error] = (counts.errors[error.error] ?? 0) + 1;
    if (ctx.oidc?.params?.grant_type === "refresh_token") counts.presented.push(ctx.oidc.params.refresh_token);
  });
  made.on("registration_create.success", () => {
    counts.registrations += 1;
  });
  return made;
}
let provider = counted(makeProvider());

async function interact(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session, grantId } = details;
  let result;
  if (prompt.name === "login") {
    result = { login: { accountId: params.login_hint ?? config.account ?? "alice" } };
  } else {
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(" "));
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

let callback = provider.callback();
let jwksFetches = 0;
let heldJwks = null; // while held: the JWKS requests waiting for their answer

function control(req, res) {
  res.setHeader("content-type", "application/json");
  if (req.method === "GET" && req.url === "/control/jwks-fetches") {
    res.end(JSON.stringify({ fetches: jwksFetches }));
  } else if (req.method === "GET" && req.url === "/control/grants") {
    res.end(JSON.stringify(counts));
  } else if (req.method === "POST" && req.url === "/control/hold-jwks") {
    heldJwks ??= [];
    res.end("{}");
  } else if (req.method === "POST" && req.url === "/control/release-jwks") {
    const waiting = heldJwks ?? [];
    heldJwks = null;
    for (const answer of waiting) answer();
    res.end(JSON.stringify({ released: waiting.length }));
  } else if (req.method === "POST" && req.url === "/control/rotate") {
    generation += 1;
    provider = counted(makeProvider());
    callback = provider.callback();
    res.end(JSON.stringify({ kids: [`es256-${generation}`, `rs256-${generation}`] }));
  } else {
    res.statusCode = 404;
    res.end("{}");
  }
}

server.on("request", (req, res) => {
  if (config.control && req.url.startsWith("/control/")) {
    control(req, res);
    return;
  }
  if (req.url === "/jwks") {
    jwksFetches += 1;
    if (heldJwks) {
      heldJwks.push(() => callback(req, res));
      return;
    }
  }
  if (req.url.startsWith("/interaction/")) {
    interact(req, res).catch((error) => {
      res.statusCode = 500;
      res.end(String(error));
    });
    return;
  }
  if (req.method === "POST" && req.url === "/reg") {
    // A registration's "scope" would bound what the client may ask later, and a step-up asks for
    // more than the first challenge named (the Python SDK registers with that). Many authorization
    // servers let a client ask for any scope they know; this one is made to, by dropping the field
    // (oidc-provider reads an already-read body from req.body).
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const metadata = JSON.parse(Buffer.concat(chunks).toString() || "{}");
      delete metadata.scope;
      req.body = metadata;
      callback(req, res);
    });
    return;
  }
  if (config.tokenDelayMs && req.method === "POST" && req.url === "/token") {
    setTimeout(() => callback(req, res), config.tokenDelayMs);
    return;
  }
  callback(req, res);
});

process.stdout.write(JSON.stringify({ issuer, port }) + "\n");
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.resume();
