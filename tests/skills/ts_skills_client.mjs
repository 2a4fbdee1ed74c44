// The official TypeScript client's skills support (@modelcontextprotocol/client 2.4.0, its
// SkillsClient: SEP-2640) against our server, pinned to 2026-07-28 (the extension is declared in
// server/discover). It lists every skill, fetches one by URI, reads its SKILL.md and each listed
// file through read() (which checks size, SHA-256 and front matter against the entry) and lists
// the skill's root directory, for the skill with the most files.
//
//   node tests/skills/ts_skills_client.mjs URL
//
// Prints ONE JSON object: {supported, directoryRead, skills: [{uri, name, files}], ttlMs, cacheScope,
// got, reads: [{uri, verified, bytes}], directory: [{uri, mimeType}]} or {error: message}.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const url = process.argv[2];
const out = {};
try {
  const client = new Client(
    { name: "ts-skills-driver", version: "1.0.0" },
    { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const skills = new SkillsClient(client);
  out.supported = skills.supported;
  out.directoryRead = skills.directoryRead;
  const listing = await skills.list();
  out.ttlMs = listing.ttlMs;
  out.cacheScope = listing.cacheScope;
  out.skills = listing.skills.map((s) => ({
    uri: s.uri,
    name: s.frontmatter.name,
    files: Array.isArray(s.resources) ? s.resources.length : s.resources,
  }));
  const listed = listing.skills.filter((s) => Array.isArray(s.resources));
  const first = listed.reduce((a, b) => (b.resources.length > a.resources.length ? b : a));
  const got = await skills.get(first.uri);
  out.got = got.skill.uri;
  out.reads = [];
  for (const resource of first.resources) {
    const file = await skills.read(got.skill, resource.uri);
    out.reads.push({ uri: file.uri, verified: file.verified, bytes: file.bytes.length });
  }
  const root = first.uri.slice(0, -"/SKILL.md".length);
  const directory = await skills.readDirectory(root);
  out.directory = directory.resources.map((r) => ({ uri: r.uri, mimeType: r.mimeType }));
  await client.close();
} catch (error) {
  out.error = String(error?.message ?? error);
}
console.log(JSON.stringify(out));
