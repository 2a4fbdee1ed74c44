"""The page in the browser where ``backchannel connect`` shows the MCP Apps of the tools it calls.

A tool whose definition names a ``ui://`` app (``_meta.ui.resourceUri``) is shown when the
person calls it: ``AppHost.show`` reads the app (``resources/read``, once per URI and session),
and the page, opened in the browser the first time (``--no-browser``: its address is printed),
renders it in a frame. The page follows SEP-1865's web-host rules: it is served on
``127.0.0.1`` on a free port, under a token drawn for this run; each app sits in a sandbox proxy
(an iframe of another origin: a second free port) that loads the app's HTML, with its Content
Security Policy as the document's first element, in an inner sandboxed iframe and passes
messages both ways (``static/sandbox.js``).

The protocol itself is spoken here, not in the page: ``static/host.js`` relays each message the
app posts to ``POST /<token>/views/<id>``, and posts back what ``apps.ViewSession`` answers;
what the host has to tell an app later (the tool's result, the teardown) reaches the page as a
server-sent event. An app's own ``tools/call`` and ``resources/read`` go to the server through
the terminal's session (``AppConnection``: the ``Client``), once the host checked that the app
may call the tool. Ending the session asks every app to tear down (``ui/resource-teardown``),
waits a bounded time for their answers, and stops both listeners.
"""

from __future__ import annotations

__all__ = ["AppConnection", "AppHost", "ShownApp"]

import asyncio
import base64
import binascii
import contextlib
import itertools
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any, Protocol

from ..apps.app import APP_MIME_TYPE, app_uri_of
from ..apps.csp import allow_attribute, content_security_policy, with_policy
from ..apps.view import Forward, ViewSession
from ..framing.sse import encode_comment, encode_event
from ..http_host.asgi import (
    CLIENT_LEFT,
    Mailbox,
    NoItem,
    Receive,
    Scope,
    Send,
    encode_headers,
    header_map,
    read_body,
    send_bytes,
)
from ..types.errors import INTERNAL_ERROR, MCPError, RequestError

logger = logging.getLogger("backchannel.apps")

_MAX_BODY = 4 * 1024 * 1024  # bytes of one message an app posts (its tool call's arguments)
_KEEPALIVE = 15.0  # seconds between comments on a quiet event stream
_STATIC = {
    "host.js": "text/javascript; charset=utf-8",
    "host.css": "text/css; charset=utf-8",
    "sandbox.js": "text/javascript; charset=utf-8",
}
_PLAIN = {"cache-control": "no-store", "referrer-policy": "no-referrer", "x-content-type-options": "nosniff"}


class AppConnection(Protocol):
    """What the host needs of the session with the server: to send a request (a ``Client`` is one)."""

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send ``method`` to the server over the terminal client's session; its result."""
        ...


class ShownApp:
    """One app shown for one tool call: tell it how the call ended."""

    def __init__(self, host: AppHost, view: ViewSession) -> None:
        self.host = host
        self.view = view

    @property
    def view_id(self) -> str:
        """The id of the app's view on the host page."""
        return self.view.view_id

    def finished(self, result: Mapping[str, Any]) -> None:
        """The call's ``CallToolResult`` (as sent on the wire): shown by the app."""
        self.host.publish(self.view, self.view.finished(result), "error" if result.get("isError") else "done")

    def cancelled(self, reason: str) -> None:
        """The call ended without a result (the server's error, Ctrl-C)."""
        self.host.publish(self.view, self.view.cancelled(reason), "cancelled")


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


class AppHost:
    """The apps of one terminal session, and the page that shows them (see the module docstring).

    ``connection`` sends the apps' requests to the server; ``opener`` opens the page's URL in a
    browser (None: ``say`` prints it instead); ``say`` tells the person one line; ``host_info``
    is how the host names itself to apps. ``teardown_wait`` bounds the wait for apps to answer
    ``ui/resource-teardown`` at the end; at most ``max_views`` apps are kept (the oldest go)."""

    def __init__(
        self,
        connection: AppConnection,
        *,
        opener: Callable[[str], Any] | None,
        say: Callable[[str], None],
        host_info: Mapping[str, Any],
        teardown_wait: float = 3.0,
        max_views: int = 20,
    ) -> None:
        self.connection = connection
        self.opener = opener
        self.say = say
        self.host_info = dict(host_info)
        self.teardown_wait = teardown_wait
        self.max_views = max_views
        self.token = secrets.token_urlsafe(24)
        self.views: dict[str, ViewSession] = {}
        self._described: dict[str, dict[str, Any]] = {}
        self._apps: dict[str, dict[str, Any]] = {}  # ui:// URI -> its resources/read contents
        self._tools: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self._streams: set[Mailbox[bytes]] = set()
        self._listeners: list[Any] = []
        self._closed = asyncio.Event()
        #: The page's URL once it is served (``show`` starts it).
        self.url: str | None = None
        self._sandbox_url: str | None = None
        self._page_origin = ""

    # -- showing apps ----------------------------------------------------------------------------

    async def show(self, tool: Mapping[str, Any], arguments: Mapping[str, Any] | None) -> ShownApp | None:
        """Show the app of ``tool`` (its ``tools/list`` definition) for a call with ``arguments``;
        None when it has none, or when its app cannot be shown (said in one line)."""
        uri = app_uri_of(tool)
        if uri is None:
            return None
        self._tools[str(tool.get("name"))] = dict(tool)
        try:
            contents = await self._app(uri)
        except (MCPError, ValueError) as exc:
            self.say(f"The app {uri} cannot be shown: {exc}")
            return None
        first = self.url is None
        if first:
            await self._start()
        view = ViewSession(
            str(next(self._ids)), tool=tool, arguments=arguments, resource=contents, host_info=self.host_info
        )
        self.views[view.view_id] = view
        self._described[view.view_id] = self._describe(view, uri, contents)
        while len(self.views) > self.max_views:
            self._close(next(iter(self.views)))
        self._broadcast("view", self._described[view.view_id])
        assert self.url is not None
        if not first:
            self.say(f"The app {uri} is shown on the apps page: {self.url}")
        elif self.opener is not None:
            self.say(f"The app {uri} is shown in your browser: {self.url}")
            self.opener(self.url)
        else:
            self.say(f"The app {uri} is ready; open its page in a browser: {self.url}")
        return ShownApp(self, view)

    async def _app(self, uri: str) -> dict[str, Any]:
        known = self._apps.get(uri)
        if known is not None:
            return known
        result = await self.connection.request("resources/read", {"uri": uri})
        contents = result.get("contents")
        item = next((c for c in contents if isinstance(c, dict)), None) if isinstance(contents, list) else None
        if item is None:
            raise ValueError("resources/read gave no contents")
        if item.get("mimeType") != APP_MIME_TYPE:
            raise ValueError(f"its MIME type is {item.get('mimeType')!r}, not {APP_MIME_TYPE}")
        text = item.get("text")
        if not isinstance(text, str):
            try:
                text = base64.b64decode(item.get("blob") or "", validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, TypeError) as exc:
                raise ValueError("its document is neither text nor a base64 UTF-8 blob") from exc
        contents_item = {**item, "text": text}
        self._apps[uri] = contents_item
        return contents_item

    def _describe(self, view: ViewSession, uri: str, contents: Mapping[str, Any]) -> dict[str, Any]:
        """What the page needs to render ``view``: its document with the policy in it, and the rest."""
        ui = view.resource_ui
        policy, dropped = content_security_policy(ui.get("csp"))
        if dropped:
            self.say(f"The app {uri} declared CSP sources that are not origins; left out: {', '.join(dropped)}")
        logger.info("app %s (view %s) runs under: %s", uri, view.view_id, policy)
        permissions = ui.get("permissions")
        csp = {key: value for key, value in (ui.get("csp") or {}).items() if isinstance(value, list)}
        return {
            "id": view.view_id,
            "title": str(view.tool.get("title") or view.tool.get("name") or uri),
            "uri": uri,
            "html": with_policy(str(contents["text"]), policy),
            "csp": csp if isinstance(ui.get("csp"), dict) else {},
            "permissions": permissions if isinstance(permissions, dict) else {},
            "allow": allow_attribute(permissions),
            "prefersBorder": ui.get("prefersBorder") is not False,
            "status": "running",
        }

    def publish(self, view: ViewSession, push: dict[str, Any], status: str | None = None) -> None:
        """Send ``push`` to every initialized frame of ``view`` (and show its new ``status``)."""
        if view.view_id not in self.views:
            return
        self._broadcast("push", {"view": view.view_id, "push": push})
        if status is not None:
            self._described[view.view_id]["status"] = status
            self._broadcast("status", {"view": view.view_id, "status": status})

    def _close(self, view_id: str) -> None:
        if self.views.pop(view_id, None) is not None:
            self._described.pop(view_id, None)
            self._broadcast("close", {"view": view_id})
            if not self.views:
                self._closed.set()

    # -- the app's messages ----------------------------------------------------------------------

    async def _relay(self, view: ViewSession, posted: Any) -> dict[str, Any]:
        """What the page posts back to the frame for one message its app posted."""
        message = posted.get("message") if isinstance(posted, dict) else None
        context = posted.get("context") if isinstance(posted, dict) else None
        step = view.receive(message, context if isinstance(context, dict) else None)
        if step.forward is not None:
            step.send.append(await self._forward(view, step.forward))
        for push in step.pushes:
            self.publish(view, push)
        for line in step.said:
            self.say(f"[{view.tool.get('name')}] {line}")
        for action in step.page:
            if "close" in action:
                self._close(view.view_id)
        return {"send": step.send, "replay": step.replay, "page": step.page, "said": step.said}

    async def _forward(self, view: ViewSession, forward: Forward) -> dict[str, Any]:
        if forward.tool is not None:
            refusal = view.refusal(forward, await self._tool(forward.tool))
            if refusal is not None:
                self.say(f"[{view.tool.get('name')}] refused: {refusal['error']['message']}")
                return refusal
        try:
            result = await self.connection.request(forward.method, forward.params)
        except RequestError as exc:
            return view.answered(forward, code=exc.code, message=exc.message, data=exc.data)
        except MCPError as exc:
            return view.answered(forward, code=INTERNAL_ERROR, message=str(exc))
        return view.answered(forward, {k: v for k, v in result.items() if k != "resultType"})

    async def _tool(self, name: str) -> dict[str, Any] | None:
        """Tool ``name``'s definition, listing the server's tools again when it is not known."""
        if name not in self._tools:
            cursor: str | None = None
            for _ in range(100):  # pages: a bound against a server that never ends its list
                page = await self.connection.request("tools/list", {"cursor": cursor} if cursor else None)
                for tool in page.get("tools") or []:
                    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                        self._tools[tool["name"]] = tool
                cursor = page.get("nextCursor")
                if not isinstance(cursor, str):
                    break
        return self._tools.get(name)

    # -- the page's HTTP side --------------------------------------------------------------------

    async def _start(self) -> None:
        from ..http_host.h1.loopback import LoopbackListener  # (loaded with the first app)

        page, sandbox = LoopbackListener(self._page), LoopbackListener(self._sandbox)
        self._listeners = [page, sandbox]
        page_base, sandbox_base = await page.start(), await sandbox.start()
        self._page_origin = page_base
        self.url = f"{page_base}/{self.token}/"
        self._sandbox_url = f"{sandbox_base}/{self.token}/sandbox"

    def _broadcast(self, event: str, data: Mapping[str, Any]) -> None:
        frame = encode_event(json.dumps(data, separators=(",", ":")), event=event)
        for stream in self._streams:
            stream.put(frame)

    async def _page(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path, method = scope.get("path", ""), scope.get("method")
        prefix = f"/{self.token}/"
        if not path.startswith(prefix):
            await send_bytes(send, 404, b"not found", {"content-type": "text/plain", **_PLAIN})
            return
        rest = path[len(prefix) :]
        if method == "GET" and rest == "":
            await send_bytes(send, 200, _static("host.html"), {**self._page_headers(), **_PLAIN})
        elif method == "GET" and rest in _STATIC and rest != "sandbox.js":
            await send_bytes(send, 200, _static(rest), {"content-type": _STATIC[rest], **_PLAIN})
        elif method == "GET" and rest == "events":
            await self._events(receive, send)
        elif method == "POST" and rest.startswith("views/"):
            await self._post(rest.removeprefix("views/"), scope, receive, send)
        else:
            await send_bytes(send, 404, b"not found", {"content-type": "text/plain", **_PLAIN})

    def _page_headers(self) -> dict[str, str]:
        sandbox_origin = (self._sandbox_url or "").split(f"/{self.token}/", 1)[0]
        policy = (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            f"connect-src 'self'; frame-src {sandbox_origin}; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'"
        )
        return {"content-type": "text/html; charset=utf-8", "content-security-policy": policy}

    async def _events(self, receive: Receive, send: Send) -> None:
        stream: Mailbox[bytes] = Mailbox()
        self._streams.add(stream)
        hello = {"sandbox": self._sandbox_url, "views": list(self._described.values())}
        headers = {"content-type": "text/event-stream", **_PLAIN}
        await send({"type": "http.response.start", "status": 200, "headers": encode_headers(headers)})
        hello_event = encode_event(json.dumps(hello, separators=(",", ":")), event="hello")
        watcher = asyncio.ensure_future(_disconnected(receive, stream))
        try:
            await send({"type": "http.response.body", "body": hello_event, "more_body": True})
            while True:
                item = await stream.get(_KEEPALIVE)
                if item is CLIENT_LEFT:
                    return
                if isinstance(item, NoItem):  # TIMED_OUT: a quiet stream says it is alive
                    await send({"type": "http.response.body", "body": encode_comment(), "more_body": True})
                    continue
                last = item is _BYE
                await send({"type": "http.response.body", "body": item, "more_body": not last})
                if last:
                    return
        finally:
            self._streams.discard(stream)
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _post(self, view_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        headers = header_map(scope)
        json_headers = {"content-type": "application/json", **_PLAIN}
        if headers.get("origin") != self._page_origin:  # only the page itself may speak for an app
            await send_bytes(send, 403, b'{"error":"only the apps page may post here"}', json_headers)
            return
        view = self.views.get(view_id)
        body = await read_body(receive, _MAX_BODY)
        if view is None or body is None:
            status, why = (404, "no such app") if view is None else (413, "message too large")
            await send_bytes(send, status, json.dumps({"error": why}).encode(), json_headers)
            return
        try:
            posted = json.loads(body)
        except ValueError:
            posted = None
        reply = await self._relay(view, posted) if isinstance(posted, dict) else _unreadable()
        await send_bytes(send, 200, json.dumps(reply, separators=(",", ":")).encode(), json_headers)

    async def _sandbox(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path = scope.get("path", "")
        if scope.get("method") == "GET" and path == f"/{self.token}/sandbox":
            page = _static("sandbox.html").replace(b"HOST_ORIGIN", self._page_origin.encode())
            # No Content-Security-Policy here: the app's frame would inherit it; its own is in its document.
            await send_bytes(send, 200, page, {"content-type": "text/html; charset=utf-8", **_PLAIN})
        elif scope.get("method") == "GET" and path == f"/{self.token}/sandbox.js":
            await send_bytes(send, 200, _static("sandbox.js"), {"content-type": _STATIC["sandbox.js"], **_PLAIN})
        else:
            await send_bytes(send, 404, b"not found", {"content-type": "text/plain", **_PLAIN})

    # -- the end ---------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Ask every app to tear down, wait (bounded) for their answers, and stop serving the page."""
        if not self._listeners:
            return
        waiting = [view for view in self.views.values() if view.initialize_seen]
        for view in list(self.views.values()):
            self.publish(view, view.teardown("the session ended"))
        if waiting and self._streams:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.teardown_wait):
                    await self._closed.wait()
        for view_id in list(self.views):
            self._close(view_id)
        for stream in self._streams:
            stream.put(_BYE)
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            await listener.stop()


_BYE = encode_event("{}", event="bye")


def _unreadable() -> dict[str, Any]:
    error = {"code": -32700, "message": "the message is not JSON"}
    return {"send": [{"jsonrpc": "2.0", "id": None, "error": error}], "replay": [], "page": [], "said": []}


async def _disconnected(receive: Receive, stream: Mailbox[bytes]) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    stream.put(CLIENT_LEFT)
