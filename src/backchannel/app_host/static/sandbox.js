// The sandbox proxy of backchannel's apps page (SEP-1865, "Sandbox proxy"): served from an
// origin other than the page's, it loads the app's document (its Content Security Policy
// already in it) in an inner sandboxed frame once the page sends it, and passes every message
// between the page and the app, except the sandbox-* ones, which are between the page and here.
"use strict";

(() => {
  const hostOrigin = document.querySelector('meta[name="host-origin"]').content;
  const features = { camera: "camera", microphone: "microphone", geolocation: "geolocation", clipboardWrite: "clipboard-write" };
  let inner = null;

  function isSandboxMessage(data) {
    return data && typeof data === "object" && typeof data.method === "string"
      && data.method.startsWith("ui/notifications/sandbox-");
  }

  function load(params) {
    if (inner || !params || typeof params.html !== "string") return;
    inner = document.createElement("iframe");
    inner.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    const permissions = params.permissions && typeof params.permissions === "object" ? params.permissions : {};
    const allow = Object.keys(features).filter((name) => name in permissions).map((name) => features[name]);
    if (allow.length) inner.setAttribute("allow", allow.join("; "));
    inner.title = "MCP App";
    inner.srcdoc = params.html;
    document.body.append(inner);
  }

  window.addEventListener("message", (event) => {
    const data = event.data;
    if (event.source === window.parent && event.origin === hostOrigin) {
      if (isSandboxMessage(data)) {
        if (data.method === "ui/notifications/sandbox-resource-ready") load(data.params);
        return;
      }
      // The app's frame has this page's origin (srcdoc, allow-same-origin): a frame that navigated
      // elsewhere gets nothing more.
      if (inner && inner.contentWindow) inner.contentWindow.postMessage(data, window.location.origin);
      return;
    }
    if (inner && event.source === inner.contentWindow && event.origin === window.location.origin && !isSandboxMessage(data)) {
      window.parent.postMessage(data, hostOrigin);
    }
  });

  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, hostOrigin);
})();
