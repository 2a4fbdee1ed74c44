// A web host built on the official host side of MCP Apps (@modelcontextprotocol/ext-apps 2.0.4's
// AppBridge) and the official TypeScript client (@modelcontextprotocol/client 2.4.0): it shows
// the clock app of tests/apps/apps_server.py, which it reaches over Streamable HTTP at /mcp.
// Bundled for the browser by test_our_app_in_ext_apps_host.py with esbuild.
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
const state = document.getElementById("state");
const frame = document.getElementById("app");
const say = (text) => {
  state.textContent = text;
  state.dataset.state = text;
};

async function main() {
  const info = { name: "ext-apps-test-host", version: "1.0.0" };
  const client = new Client(info, { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  const { tools } = await client.listTools();
  const tool = tools.find((candidate) => candidate.name === "clock");
  const uri = getToolUiResourceUri(tool);
  const { contents } = await client.readResource({ uri });
  const [resource] = contents;
  document.body.dataset.uri = uri;
  document.body.dataset.mime = resource.mimeType;

  const capabilities = { openLinks: {}, serverTools: {}, serverResources: {}, logging: {} };
  const bridge = new AppBridge(client, info, capabilities, { hostContext: { theme: "light", displayMode: "inline" } });
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = Math.ceil(height) + "px";
    document.body.dataset.resized = "yes";
  };
  bridge.oninitialized = async () => {
    say("initialized");
    await bridge.sendToolInput({ arguments: {} });
    const result = await client.callTool({ name: "clock", arguments: {} });
    document.body.dataset.time = result.structuredContent.time;
    await bridge.sendToolResult(result);
    say("result sent");
  };
  window.teardown = async () => {
    await bridge.teardownResource({ reason: "the test host is done" });
    say("torn down");
  };
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = resource.text;
  say("connected");
}

main().catch((error) => {
  console.error(error);
  say("error: " + error.message);
});
