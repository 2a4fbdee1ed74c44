"""What every URL-flow page is made of: the HTML frame, the headers that keep the token out of
referrers and caches, and the per-flow cookie's name (``pages.py`` says why each is there)."""

from __future__ import annotations

__all__ = ["PAGE_HEADERS", "cookie_name", "cookies", "send_page"]

from collections.abc import Mapping

from ..asgi import Send, send_bytes
from .flows import UrlFlow

PAGE_HEADERS = {
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
}


async def send_page(send: Send, status: int, title: str, body: str, extra: Mapping[str, str] | None = None) -> None:
    """One page: ``title`` (escaped here) as its heading, ``body`` (HTML, escaped by the caller)."""
    import html  # (with its entity tables: loaded by a first page, not by every HTTP server's start)

    page = (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{font:16px system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}"
        "blockquote{border-left:4px solid #888;margin:1em 0;padding:.2em 1em;white-space:pre-wrap}"
        ".problem{color:#a00}</style></head>"
        f'<body><h1 id="title">{html.escape(title)}</h1>{body}</body></html>'
    )
    headers = {**PAGE_HEADERS, "content-type": "text/html; charset=utf-8", **(extra or {})}
    await send_bytes(send, status, page.encode(), headers)


def cookie_name(flow: UrlFlow) -> str:
    return "bcflow_" + flow.id.replace("-", "")


def cookies(headers: Mapping[str, str]) -> dict[str, str]:
    jar: dict[str, str] = {}
    for part in headers.get("cookie", "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep:
            jar.setdefault(name, value)
    return jar
