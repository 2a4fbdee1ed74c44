// The official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) logging in to a protected
// MCP server through its authorization server, with the SDK's own OAuth client (discovery from the
// 401, dynamic registration, PKCE, resource indicator, step-up on 403 insufficient_scope):
//
//   node22 tests/auth_server/ts_oauth_client.mjs URL '["whoami", "purge"]'
//
// Calls each tool in order. The "browser" follows the authorization server's redirects (keeping
// its cookies) to our redirect URI; the test's authorization server logs in without a page.
// Prints ONE JSON object: {"results": {tool: text}, "authorizations": [{"scope", "resource"}]}.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, toolsText] = process.argv.slice(2);
const tools = JSON.parse(toolsText ?? '["whoami"]');
const REDIRECT = "http://127.0.0.1:1/callback";
const authorizations = [];

async function browse(start) {
  const cookies = new Map();
  let next = start;
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(next, {
      redirect: "manual",
      headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair.indexOf("=");
      cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1));
    }
    const location = response.headers.get("location");
    if (!location) throw new Error(`the authorization server answered ${response.status}: ${await response.text()}`);
    next = new URL(location, next).href;
    if (next.startsWith(REDIRECT)) {
      const code = new URL(next).searchParams.get("code");
      if (!code) throw new Error(`no code in ${next}`);
      return code;
    }
  }
  throw new Error("too many redirects");
}

class Provider {
  constructor() {
    this.code = undefined;
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: "ts-sdk auth test",
      redirect_uris: [REDIRECT],
      // No refresh_token grant: on a 403 step-up this SDK first tries a refresh, which cannot add
      // scopes (RFC 6749 §6), and then gives up; without a refresh token it authorizes again.
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      application_type: "native",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  async redirectToAuthorization(authorizationUrl) {
    authorizations.push({
      scope: authorizationUrl.searchParams.get("scope"),
      resource: authorizationUrl.searchParams.get("resource"),
    });
    this.code = await browse(authorizationUrl.href);
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const provider = new Provider();
const client = new Client({ name: "ts-auth-test", version: "1.0.0" });
let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });

async function finishing(error) {
  if (!(error instanceof UnauthorizedError) || provider.code === undefined) throw error;
  const code = provider.code;
  provider.code = undefined;
  await transport.finishAuth(code);
}

try {
  await client.connect(transport);
} catch (error) {
  await finishing(error);
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
}
const results = {};
for (const name of tools) {
  let result;
  try {
    result = await client.callTool({ name, arguments: {} });
  } catch (error) {
    await finishing(error);
    result = await client.callTool({ name, arguments: {} });
  }
  results[name] = result.content[0].text;
}
await client.close();
process.stdout.write(JSON.stringify({ results, authorizations }) + "\n");
process.exit(0);
