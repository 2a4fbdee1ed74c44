// The official TypeScript client (@modelcontextprotocol/client 2.4.0) given a Server Card's URL:
// it has no Server Card support of its own (neither has @modelcontextprotocol/sdk 1.32.2), so
// the card is read with fetch, as discovery.md describes (Accept: application/mcp-server-card+json),
// and the client connects to the Streamable HTTP endpoint the card names. Prints one JSON
// object: {"card": ..., "contentType": ..., "serverVersion": ..., "tools": [...]}.
//
//   node tests/cards/ts_card_client.mjs CARD_URL
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const response = await fetch(process.argv[2], { headers: { accept: "application/mcp-server-card+json" } });
const card = await response.json();
const remote = card.remotes.find((candidate) => candidate.type === "streamable-http");
const client = new Client({ name: "ts-card-client", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(remote.url)));
const { tools } = await client.listTools();
console.log(
  JSON.stringify({
    card,
    contentType: response.headers.get("content-type"),
    serverVersion: client.getServerVersion(),
    tools: tools.map((tool) => tool.name),
  }),
);
await client.close();
