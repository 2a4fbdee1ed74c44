"""``pysdk_client.py`` (the official Python SDK client, mcp 2.3.0) with one more plan op, for the
fleet tests: everything else (usage, output, the other ops) is as that script documents.

* ``listen_and_call``: ``{"name": N, "arguments": {...}, "timeout"?: S}`` opens
  ``Client.listen(tools_list_changed=True)`` (``subscriptions/listen``, 2026-07-28 only), calls
  tool N once the server has acknowledged, then waits (default 10 s) for the first change event
  on the stream; returns ``{"honored": <the acknowledged filter>, "call": <the call's result>,
  "event": <the event's class name> | null}``. On a handshake-era connection the SDK refuses to
  listen, and the step's result is its error.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pysdk_client
from mcp.client.client import Client

_plain_step = pysdk_client.run_step


async def listen_and_call(client: Client, args: dict[str, Any]) -> dict[str, Any]:
    async with client.listen(tools_list_changed=True) as subscription:
        honored = pysdk_client.dump(subscription.honored)
        result = pysdk_client.dump(await client.call_tool(args["name"], args.get("arguments")))
        event: str | None = None
        with anyio.move_on_after(float(args.get("timeout", 10))):
            async for change in subscription:
                event = type(change).__name__
                break
    return {"honored": honored, "call": result, "event": event}


async def run_step(client: Client, step: dict[str, Any], elicitations: Any = None) -> Any:
    if step.get("op") == "listen_and_call":
        return await listen_and_call(client, step.get("args") or {})
    return await _plain_step(client, step, elicitations)


if __name__ == "__main__":
    pysdk_client.run_step = run_step  # amain looks it up in its module at each step
    sys.exit(pysdk_client.main())
