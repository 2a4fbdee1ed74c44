"""The chapter's ``code_review`` example, run as users run it: ``backchannel run examples/code_review.py``
on stdio, driven by our ``Client`` in both eras (CP-01, CP-02, CP-03)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from _completion_harness import ERAS, prompt_ref, run

from backchannel import Client
from backchannel.types.completion import Completion

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "code_review.py"


@pytest.mark.parametrize("era", ERAS)
def test_code_review_example(era: str) -> None:
    async def body() -> None:
        client = Client.stdio(sys.executable, ["-m", "backchannel", "run", str(EXAMPLE)], cwd=ROOT, era=era)
        async with client:
            assert client.server_capabilities.get("completions") == {}
            prompts = await client.list_prompts()
            assert [p.name for p in prompts] == ["code_review"]
            ref = prompt_ref("code_review")
            got = await client.complete(ref, ("language", "py"))
            assert got == Completion(values=["python", "pytorch", "pyside"], total=3, has_more=False)
            got = await client.complete(ref, ("framework", "fla"), context={"language": "python"})
            assert got == Completion(values=["flask"], total=1, has_more=False)
            got = await client.complete(ref, ("framework", "fla"), context={"language": "rust"})
            assert got.values == []
            prompt = await client.get_prompt("code_review", {"language": "python", "framework": "flask"})
            assert "python/flask" in str(prompt.messages[0].content)
        await asyncio.sleep(0)

    run(body, timeout=30)
