"""What a host allows an app: its Content Security Policy and its iframe's ``allow`` list.

SEP-1865 ("Content Security Policy Enforcement"): the host builds the policy from the origins
the resource's ``_meta.ui.csp`` declares and allows nothing else; with none declared it uses the
restrictive default (no network, inline scripts and styles, ``data:`` images and media). The
declared origins come from the server, so the host takes them as untrusted: a source that is not
a plain origin (one that would add a directive with ``;``, or a keyword such as ``'unsafe-eval'``)
is dropped, never copied into the policy. ``with_policy`` puts the policy into the document
itself, first thing, as a ``<meta http-equiv>`` that binds everything after it.
"""

from __future__ import annotations

__all__ = ["CSP_KEYS", "allow_attribute", "check_source", "content_security_policy", "with_policy"]

import re
from collections.abc import Mapping
from typing import Any

#: ``_meta.ui.csp`` keys, in the order the policy uses them.
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
#: Permission Policy features, by the wire names of ``_meta.ui.permissions``.
_FEATURES = {"camera": "camera", "microphone": "microphone", "geolocation": "geolocation"}
_FEATURES["clipboardWrite"] = "clipboard-write"
#: An origin as a CSP host-source: scheme, host (``*.`` allowed first), optional port and path.
_SOURCE = re.compile(
    r"(?:https?|wss?)://"
    r"(?:\*\.)?(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"(?::(?:[0-9]{1,5}|\*))?"
    r"(?:/[A-Za-z0-9._~%/-]*)?"
)
#: Where the policy goes: after a leading doctype (and comments), before anything that runs.
_PROLOGUE = re.compile(r"\A(?:\ufeff)?(?:\s|<!--.*?-->)*(?:<!doctype[^>]*>)?", re.IGNORECASE | re.DOTALL)


def check_source(source: object) -> str:
    """``source`` if it is an origin a policy may name (``https://api.example.com``,
    ``wss://*.example.com:8443``); else ``ValueError`` saying what is expected."""
    if not isinstance(source, str) or _SOURCE.fullmatch(source) is None:
        raise ValueError(
            f"{source!r} is not an origin for an app's CSP: use scheme://host[:port][/path] with "
            "http, https, ws or wss (a leading *. allowed in the host)"
        )
    return source


def _sources(csp: Mapping[str, Any], key: str, dropped: list[str]) -> list[str]:
    value = csp.get(key)
    kept: list[str] = []
    for source in value if isinstance(value, list) else []:
        try:
            kept.append(check_source(source))
        except ValueError:
            dropped.append(f"{key}: {source!r}")
    return kept


_NONE, _SELF = "'none'", "'self'"


def _listed(sources: list[str], otherwise: str) -> str:
    return " ".join(sources) or otherwise


def content_security_policy(csp: object) -> tuple[str, list[str]]:
    """The policy for an app whose ``_meta.ui.csp`` is ``csp`` (anything: it came from a server),
    and the declared sources it drops as invalid (to say so to the person, never to allow).

    Network access (``connect-src``) is only to the declared ``connectDomains`` (none: ``'none'``);
    scripts, styles, images, fonts and media come from the document itself (inline), ``data:``
    for images, fonts and media, and the ``resourceDomains``; nested frames only from the
    ``frameDomains``; ``<base>`` only the ``baseUriDomains``; plugins never."""
    dropped: list[str] = []
    if csp is not None and not isinstance(csp, Mapping):
        dropped.append(f"csp: {csp!r}")
    given = csp if isinstance(csp, Mapping) else {}
    connect, resource, frame, base = (_sources(given, key, dropped) for key in CSP_KEYS)
    extra = "".join(f" {source}" for source in resource)
    directives = [
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline'{extra}",
        f"style-src 'self' 'unsafe-inline'{extra}",
        f"img-src 'self' data:{extra}",
        f"font-src 'self' data:{extra}",
        f"media-src 'self' data:{extra}",
        f"connect-src {_listed(connect, _NONE)}",
        f"frame-src {_listed(frame, _NONE)}",
        "object-src 'none'",
        f"base-uri {_listed(base, _SELF)}",
    ]
    return "; ".join(directives), dropped


def allow_attribute(permissions: object) -> str:
    """The iframe ``allow`` attribute granting what ``_meta.ui.permissions`` asks for
    (``"camera; clipboard-write"``); unknown names are left out."""
    if not isinstance(permissions, Mapping):
        return ""
    return "; ".join(feature for name, feature in _FEATURES.items() if name in permissions)


def with_policy(document: str, policy: str) -> str:
    """``document`` with ``policy`` as its first element (after a leading doctype and comments),
    so that it binds every script, style and request of the document."""
    import html  # (a host's only: a server that publishes apps never loads it)

    meta = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy, quote=True)}">'
    prologue = _PROLOGUE.match(document)
    cut = prologue.end() if prologue is not None else 0
    return f"{document[:cut]}{meta}{document[cut:]}"
