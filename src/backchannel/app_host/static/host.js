// The apps page of `backchannel connect` (SEP-1865, a web host). Each app sits in a sandbox
// proxy of another origin (sandbox.js), which loads the app's document in an inner frame.
// This page only relays: every message an app posts goes to backchannel (POST views/<id>),
// which speaks the Apps protocol and answers with what to post back and what to do here;
// what backchannel has to tell an app later arrives on the event stream (events).
"use strict";

(() => {
  const base = location.pathname.endsWith("/") ? location.pathname : location.pathname + "/";
  const frames = new Map(); // view id -> {view, section, iframe, initialized, last, buffer, said}
  let sandboxUrl = null;
  let sandboxOrigin = null;
  const state = document.getElementById("state");
  const list = document.getElementById("views");

  function setState(name, text) {
    state.dataset.state = name;
    state.textContent = text;
  }

  function post(frame, message) {
    if (frame.iframe.contentWindow) frame.iframe.contentWindow.postMessage(message, sandboxOrigin);
  }

  // Host-to-app notifications are numbered; a frame gets each once, in order, and none before
  // the app said it is initialized.
  function deliver(frame, push, now) {
    if (!now && !frame.initialized) {
      frame.buffer.push(push);
      return;
    }
    if (typeof push.n !== "number" || push.n <= frame.last) return;
    frame.last = push.n;
    post(frame, push.message);
  }

  function flush(frame) {
    const waiting = frame.buffer.sort((a, b) => a.n - b.n);
    frame.buffer = [];
    for (const push of waiting) deliver(frame, push, true);
  }

  function setStatus(frame, status) {
    frame.section.dataset.status = status;
    frame.section.querySelector(".status").textContent = status;
  }

  function show(view) {
    if (frames.has(view.id)) return;
    const section = document.createElement("section");
    section.className = "view" + (view.prefersBorder ? " bordered" : "");
    section.id = "view-" + view.id;
    section.dataset.view = view.id;
    section.dataset.uri = view.uri;
    const title = document.createElement("h2");
    const name = document.createElement("span");
    name.textContent = view.title;
    const status = document.createElement("span");
    status.className = "status";
    title.append(name, status);
    const iframe = document.createElement("iframe");
    iframe.title = view.title;
    iframe.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    if (view.allow) iframe.setAttribute("allow", view.allow);
    iframe.src = sandboxUrl + "?view=" + encodeURIComponent(view.id);
    const said = document.createElement("ul");
    said.className = "said";
    section.append(title, iframe, said);
    list.prepend(section);
    const frame = { view, section, iframe, initialized: false, last: 0, buffer: [], said };
    frames.set(view.id, frame);
    setStatus(frame, view.status);
  }

  function close(id) {
    const frame = frames.get(id);
    if (!frame) return;
    frames.delete(id);
    frame.section.classList.add("closed");
    frame.section.dataset.status = "closed";
    frame.section.querySelector(".status").textContent = "closed";
    frame.iframe.remove();
  }

  function act(frame, actions) {
    for (const action of actions || []) {
      if (action.resize && typeof action.resize.height === "number") {
        frame.iframe.style.height = Math.ceil(action.resize.height) + "px";
      }
      if (typeof action.open === "string" && /^https?:\/\//i.test(action.open)) {
        window.open(action.open, "_blank", "noopener,noreferrer");
      }
      if (action.close) close(frame.view.id);
    }
  }

  function context(frame) {
    const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    return {
      theme: dark ? "dark" : "light",
      width: frame.iframe.clientWidth,
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      touch: window.matchMedia ? window.matchMedia("(pointer: coarse)").matches : false,
      hover: window.matchMedia ? window.matchMedia("(hover: hover)").matches : true,
    };
  }

  async function relay(frame, message) {
    const id = message && typeof message === "object" && "id" in message ? message.id : null;
    const initializing = message && message.method === "ui/notifications/initialized";
    let body;
    try {
      body = JSON.stringify({ message: message === undefined ? null : message, context: context(frame) });
    } catch (error) {
      post(frame, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "the message is not JSON" } });
      return;
    }
    let reply;
    try {
      const response = await fetch(base + "views/" + encodeURIComponent(frame.view.id), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      if (!response.ok) throw new Error("HTTP " + response.status);
      reply = await response.json();
    } catch (error) {
      const request = message && typeof message === "object" && typeof message.method === "string" && id !== null;
      if (request && frames.has(frame.view.id)) {
        post(frame, { jsonrpc: "2.0", id, error: { code: -32603, message: "backchannel could not be reached" } });
      }
      return;
    }
    if (!frames.has(frame.view.id)) return;
    for (const answer of reply.send || []) post(frame, answer);
    for (const push of reply.replay || []) deliver(frame, push, true);
    if (initializing) {
      frame.initialized = true;
      flush(frame);
    }
    for (const line of reply.said || []) {
      const item = document.createElement("li");
      item.textContent = line;
      frame.said.append(item);
    }
    act(frame, reply.page);
  }

  window.addEventListener("message", (event) => {
    if (event.origin !== sandboxOrigin) return;
    let frame = null;
    for (const candidate of frames.values()) {
      if (candidate.iframe.contentWindow === event.source) frame = candidate;
    }
    if (!frame) return;
    const data = event.data;
    const method = data && typeof data === "object" ? data.method : undefined;
    if (method === "ui/notifications/sandbox-proxy-ready") {
      const view = frame.view;
      post(frame, {
        jsonrpc: "2.0",
        method: "ui/notifications/sandbox-resource-ready",
        params: { html: view.html, csp: view.csp, permissions: view.permissions },
      });
      return;
    }
    if (typeof method === "string" && method.startsWith("ui/notifications/sandbox-")) return;
    relay(frame, data);
  });

  const events = new EventSource(base + "events");
  events.addEventListener("hello", (event) => {
    const hello = JSON.parse(event.data);
    sandboxUrl = hello.sandbox;
    sandboxOrigin = new URL(sandboxUrl).origin;
    setState("connected", "Connected to backchannel.");
    for (const view of hello.views) show(view);
  });
  events.addEventListener("view", (event) => show(JSON.parse(event.data)));
  events.addEventListener("push", (event) => {
    const data = JSON.parse(event.data);
    const frame = frames.get(data.view);
    if (frame) deliver(frame, data.push, false);
  });
  events.addEventListener("status", (event) => {
    const data = JSON.parse(event.data);
    const frame = frames.get(data.view);
    if (frame) setStatus(frame, data.status);
  });
  events.addEventListener("close", (event) => close(JSON.parse(event.data).view));
  events.addEventListener("bye", () => {
    events.close();
    for (const id of [...frames.keys()]) close(id);
    setState("ended", "The session ended: backchannel connect has quit.");
  });
  events.onerror = () => {
    if (state.dataset.state !== "ended") setState("reconnecting", "Reconnecting to backchannel…");
  };
})();
