"""examples/issue_tracker.py end to end over stdio, both eras: accept, decline (not asked again), cancel."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel import Client

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "issue_tracker.py"


def _call(
    era: str, answers: list[dict[str, Any]], calls: int, summaries: tuple[str, ...] = ()
) -> tuple[list[str], list[dict[str, Any]]]:
    asked: list[dict[str, Any]] = []

    def person(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return answers[len(asked) - 1]

    async def body() -> list[str]:
        async with Client.stdio(sys.executable, [str(EXAMPLE)], era=era, elicitation=person) as client:  # type: ignore[arg-type]
            texts = []
            for index in range(calls):
                summary = summaries[index] if summaries else "Login button is grey"
                result = await client.call_tool("create_issue", {"summary": summary})
                texts.append(result.content[0].text)  # type: ignore[union-attr]
            return texts

    return asyncio.run(asyncio.wait_for(body(), 60)), asked


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_accept_files_the_issue_with_defaults_and_labels(era: str) -> None:
    content = {"project_key": "WEB", "issue_type": "bug", "labels": ["frontend"]}
    (text,), asked = _call(era, [{"action": "accept", "content": content}], 1)
    assert text == "Filed WEB-1 (bug): Login button is grey — priority medium; labels frontend"
    schema = asked[0]["requestedSchema"]
    assert schema["required"] == ["project_key", "issue_type"]
    assert schema["properties"]["project_key"]["oneOf"][0] == {"const": "WEB", "title": "Website"}
    assert schema["properties"]["priority"]["default"] == "medium"


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_decline_is_respected_and_not_asked_again_in_the_session(era: str) -> None:
    """After "First" was declined, the form for "Second" (same tool, same schema, another
    message) is not shown: the decline was about the form, not about one item."""
    texts, asked = _call(era, [{"action": "decline"}], 2, ("First", "Second"))
    assert [params["message"] for params in asked] == ["Where should “First” be filed?"]
    assert all(text.startswith("Understood: nothing was filed") for text in texts)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_cancel_files_nothing(era: str) -> None:
    (text,), _ = _call(era, [{"action": "cancel"}], 1)
    assert text.startswith("Cancelled: nothing was filed")
