"""One client process of ``test_shared_login.py``, as a desktop host would start several at once:

    python oauth_client_process.py URL

It prints ``ready``, waits for a line on stdin (so the test lets every process go at the same
moment), calls ``whoami`` at ``URL`` through ``OAuth(LoopbackBrowser(open_browser=False),
store=FileTokenStore())`` (the store at ``$XDG_CONFIG_HOME/backchannel/oauth.json``, shared by
every process of the test), prints the answer on stdout and exits 0. A login prints its link on
stderr (``To log in, open this link in a browser: ...``), which the test opens as the person's
browser would; a failure prints one line on stderr and exits 1."""

from __future__ import annotations

import asyncio
import sys

from backchannel import Client
from backchannel.client.oauth import FileTokenStore, LoopbackBrowser, OAuth


async def main(url: str) -> int:
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    auth = OAuth(LoopbackBrowser(open_browser=False, timeout=60), store=FileTokenStore(), client_name="shared login")
    try:
        async with Client.http(url, auth=auth) as client:
            result = await client.call_tool("whoami", {})
    except Exception as exc:  # the test reads the one line
        print(f"failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 1
    print(result.content[0].text, flush=True)  # type: ignore[union-attr]
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
