"""A server whose ``leak`` tool logs secrets in every kind of container, with ``ctx.log`` and
through ``ClientLogHandler`` (issue #12, item 5). Imported by the redaction tests for its data,
and run over stdio as ``python tests/redaction/_redaction_server.py`` for the wire test."""

from __future__ import annotations

import collections
import dataclasses
import logging
import types
from typing import Any, NamedTuple

import pydantic

from backchannel.server import Context, Server
from backchannel.server.log_handler import ClientLogHandler

#: Every one of these is a secret or personal datum that the payload carries somewhere.
SECRETS = (
    "hunter2",
    "dc-pass-41",
    "model-secret-42",
    "nt-key-43",
    "set-token-44",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
    "dXNlcjpwYXNz",
    "url-pass-45",
    "bytes-pass-46",
    "json-pass-47",
    "obj-token-48",
    "handler-pass-49",
    "handler-key-50",
    "named-pass-51",
    "trace-token-52",
    "ada@example.com",
    "MIIEowIBAAKCAQEA",
    "bare-key-53",
    "salt-54",
    "sig-55",
)
#: What must still be readable next to them.
KEPT = ("max_tokens", "4096", "tokens_used", "db.example.com", "ada-the-user", "shipping-77", "kb-56", "mk-57", "sk-59")
#: Bare ``key``, ``salt`` and ``signature`` are secrets; names with those letters in them are not (#26, item 13).
SIGNED = {
    "key": "bare-key-53",
    "salt": "salt-54",
    "signature": "sig-55",
    "keyboard": "kb-56",
    "monkey": "mk-57",
    "key_count": 58,
    "sort_key": "sk-59",
}


@dataclasses.dataclass
class Login:
    user: str
    password: str


class Keypair(NamedTuple):
    name: str
    api_key: str


class Settings(pydantic.BaseModel):
    region: str
    client_secret: str


class Session:
    """An object without structure of its own: sent as its ``str()``, redacted as text."""

    def __str__(self) -> str:
        return "Session(user=ada-the-user, token=obj-token-48)"


def payload() -> dict[Any, Any]:
    """One log message with a secret in each kind of container."""
    looped: list[Any] = ["loop"]
    looped.append(looped)
    return {
        "dataclass": [Login("ada-the-user", "dc-pass-41")],
        "model": Settings(region="eu", client_secret="model-secret-42"),
        "named": Keypair("main", "nt-key-43"),
        "set": {"token=set-token-44", "shipping-77"},
        "frozen": frozenset({"ghp_0123456789abcdefghijABCDEFGHIJ012345"}),
        "tuple": ("AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        "mapping": types.MappingProxyType({"anthropic": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345"}),
        "ordered": collections.OrderedDict(header="Authorization: Basic dXNlcjpwYXNz"),
        "url": "postgres://ada:url-pass-45@db.example.com/app",
        "bytes": b"password=bytes-pass-46",
        "json": '{"password": "json-pass-47", "max_tokens": 4096}',
        "object": Session(),
        ("contact", "ada@example.com"): "a tuple key",
        "pem": "-----BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END PRIVATE KEY-----",
        "usage": {"max_tokens": 4096, "tokens_used": 12},
        "signed": SIGNED,
        "cycle": looped,
    }


server = Server("redaction-fixture", log_level="debug")
app_log = logging.getLogger("redaction.app")
app_log.addHandler(ClientLogHandler())
app_log.setLevel(logging.DEBUG)
app_log.propagate = False


@server.tool()
async def leak(ctx: Context) -> str:
    """Log ``payload()`` under a logger named with an e-mail address, then the same by stdlib logging."""
    await ctx.info(payload(), logger="billing.ada@example.com")
    app_log.warning("login with password=handler-pass-49")
    app_log.error("api_key: handler-key-50")
    app_log.info("%(user)s signed in with %(password)s", {"user": "ada-the-user", "password": "named-pass-51"})
    try:
        raise RuntimeError("refused token=trace-token-52")
    except RuntimeError:
        app_log.exception("call failed")
    return "ok"


if __name__ == "__main__":
    server.run()
