"""The person's part of a login: a browser opens the authorization URL, the answer comes back.

``Redirect`` is what ``OAuth`` needs for the authorization code grant: a ``redirect_uri`` to
register and send, and ``authorize(url)``, which takes the person to ``url`` and returns the
query parameters that arrive at the redirect URI. ``LoopbackBrowser`` is the one for programs
on a person's machine (RFC 8252 §7.3): it listens on ``127.0.0.1`` for the one request that
comes back, opens the system browser (or prints the link, ``open_browser=False``), and answers
the browser with a short page saying the login went through.
"""

from __future__ import annotations

__all__ = ["LoopbackBrowser", "Redirect"]

import asyncio
import contextlib
import html
import socket
import sys
import webbrowser
from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable
from urllib.parse import parse_qsl, urlsplit

from .errors import AuthorizationFailed

_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>{title}</h1><p>{text}</p></body></html>"""


@runtime_checkable
class Redirect(Protocol):
    """Takes the person to an authorization URL and brings back what the server answered."""

    @property
    def redirect_uri(self) -> str:
        """The URI the authorization server sends the person back to; registered with the client, so it must stay
        the same."""

    async def authorize(self, url: str) -> Mapping[str, str]:
        """Send the person to ``url``; the query parameters of the request that then reached
        ``redirect_uri`` (``code``, ``state``, ``iss`` or ``error``...)."""
        ...


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class LoopbackBrowser:
    """The system browser, and a listener on ``127.0.0.1`` for the redirect back (RFC 8252).

    ``port`` 0 (the default) takes a free port the moment the redirect URI is first named and
    listens on it from then on, so no other process can take it before the redirect comes back;
    later logins use the same port when it is free, else another (any loopback port goes, RFC 8252
    §7.3). A fixed ``port`` is bound when the login starts. ``open_browser=False`` only shows the link;
    ``announce`` says things to the person (default: a line on stderr). ``timeout`` bounds the
    wait for the person, in seconds.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        path: str = "/callback",
        open_browser: bool = True,
        announce: Callable[[str], None] | None = None,
        timeout: float = 300.0,
    ) -> None:
        self.port = port
        self.path = path
        self.open_browser = open_browser
        self.announce = announce or _say
        self.timeout = timeout
        self._ours = port == 0  # the port is ours to choose
        self._listener: socket.socket | None = None

    @property
    def redirect_uri(self) -> str:
        """``http://127.0.0.1:PORT/PATH``. A port of our choosing is listened on from the moment this is read until
        ``authorize`` hands it to the login's server: a port probed and let go could be another's by then."""
        if self._ours and self._listener is None:
            self._listener = self._listen()
        return f"http://127.0.0.1:{self.port}{self.path}"

    def _listen(self) -> socket.socket:
        """A listening socket on the last port (a registration names it), else on a free one."""
        for port in (self.port, 0) if self.port else (0,):
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                if sys.platform != "win32":
                    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the last login's TIME_WAIT
                listener.bind(("127.0.0.1", port))
                listener.listen(8)
                listener.setblocking(False)
            except OSError as exc:
                listener.close()
                if port == 0:
                    raise AuthorizationFailed(f"cannot listen on 127.0.0.1 for the login's redirect: {exc}") from exc
                continue
            self.port = listener.getsockname()[1]
            return listener
        raise AssertionError("unreachable: port 0 either listens or raises")

    async def authorize(self, url: str) -> Mapping[str, str]:
        """Open ``url`` in the person's browser and wait on the loopback port for the redirect; its query parameters
        (``code``, ``state``, ``iss`` or ``error``)."""
        redirect_uri = self.redirect_uri
        listener, self._listener = self._listener, None
        arrived: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await self._answer(reader, writer, arrived)
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

        try:
            if listener is not None:
                server = await asyncio.start_server(serve, sock=listener)
            else:
                server = await asyncio.start_server(serve, "127.0.0.1", self.port)
        except OSError as exc:
            raise AuthorizationFailed(f"cannot listen for the login's redirect at {redirect_uri}: {exc}") from exc
        async with server:
            opened = False
            if self.open_browser:
                self.announce(f"Opening your browser to log in (if it does not open, visit: {url})")
                opened = await asyncio.to_thread(webbrowser.open, url)
            if not opened:
                self.announce(f"To log in, open this link in a browser: {url}")
            try:
                async with asyncio.timeout(self.timeout):
                    return await arrived
            except TimeoutError:
                raise AuthorizationFailed(f"no login came back within {self.timeout:g} seconds") from None

    async def _answer(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, arrived: asyncio.Future[dict[str, str]]
    ) -> None:
        try:
            async with asyncio.timeout(10):
                head = await reader.readuntil(b"\r\n\r\n")
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            return
        method, _, rest = head.decode("latin-1").partition(" ")
        target = rest.partition(" ")[0]
        parts = urlsplit(target)
        if method != "GET" or parts.path != self.path or arrived.done():
            writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            return
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        if "error" in params:
            title, text = "Login not completed", "The login did not go through; the program that asked says why."
        else:
            title, text = "Back to the program", "This part of the login is done: you can close this tab."
        page = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\n"
            + f"content-length: {len(page)}\r\nconnection: close\r\n\r\n".encode()
            + page
        )
        await writer.drain()
        arrived.set_result(params)
