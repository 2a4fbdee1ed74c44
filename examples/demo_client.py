"""Connect to the demo server over stdio and use everything it offers.

python examples/demo_client.py            # spawns `backchannel run examples/demo_server.py`
python examples/demo_client.py --handshake   # force the handshake era (initialize); --legacy also works
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from backchannel import Client
from backchannel.protocol.events import ProgressReceived

HERE = Path(__file__).parent


async def main(era: str) -> None:
    command = [sys.executable, "-m", "backchannel", "run", str(HERE / "demo_server.py")]
    async with Client.stdio(command[0], command[1:], era=era) as client:
        print(f"connected to {client.server_info.get('name')} ({client.era} era, {client.protocol_version})")
        for tool in await client.list_tools():
            print(f"  tool {tool.name}: {tool.description}")

        result = await client.call_tool("add", {"a": 2, "b": 40})
        print("add(2, 40) ->", result.structured_content)

        result = await client.call_tool("weather", {"city": "Lisbon"})
        print("weather(Lisbon) ->", result.structured_content)

        result = await client.call_tool("weather", {"city": " "})
        print("weather(' ') -> error:", result.is_error, result.content[0].text)

        def show(progress: ProgressReceived) -> None:
            print(f"  progress {progress.progress}/{progress.total}: {progress.message}")

        result = await client.call_tool("slow_count", {"to": 5}, on_progress=show)
        print("slow_count(5) ->", result.content[0].text)

        prompt = await client.get_prompt("code_review", {"code": "print(1)"})
        print("prompt code_review ->", prompt.messages[0].content.text.splitlines()[0])

        for resource in await client.list_resources():
            contents = (await client.read_resource(resource.uri)).contents[0]
            print(f"resource {resource.uri} -> {contents.text!r}")
        for template in await client.list_resource_templates():
            print(f"template {template.uri_template}")
        contents = (await client.read_resource("demo://cities/Porto")).contents[0]
        print("resource demo://cities/Porto ->", contents.text)


if __name__ == "__main__":
    asyncio.run(main("handshake" if {"--handshake", "--legacy"} & set(sys.argv) else "auto"))
