"""``has`` walks a two-part path without splitting it: the edges of that walk, which must read
exactly as a walk part by part does (a value of None is absent, a flag must be true)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from backchannel.protocol.capabilities import has

CASES: list[tuple[dict[str, Any], str, bool]] = [
    ({"elicitation": {"form": None}}, "elicitation.form", False),  # declared form key, no value: not legacy
    ({"elicitation": {"form": False}}, "elicitation.form", False),
    ({"elicitation": {"url": None}}, "elicitation.form", False),  # a url key, whatever its value
    ({"elicitation": {"url": {}}}, "elicitation.url.x", False),
    ({"elicitation": {}}, "elicitation.form.x", False),  # the legacy reading is for the form itself only
    ({"elicitation": {"form": {"x": {}}}}, "elicitation.form.x", True),
    ({"a": {"b": {"c": True}}}, "a.b.c", True),
    ({"a": {"b": {"c": False}}}, "a.b.c", False),
    ({"a": {"b": None}}, "a.b.c", False),
    ({"a": {"b": 1}}, "a.b.c", False),
    ({"a": {"b": {"c": 0}}}, "a.b.c", True),  # present and not a flag
    ({"sampling": {"tools": 0}}, "sampling.tools", True),
    ({"sampling": None}, "sampling.tools", False),
    ({"sampling": []}, "sampling.tools", False),
    ({"roots": {"listChanged": None}}, "roots.listChanged", False),
]


@pytest.mark.parametrize(("caps", "path", "expected"), CASES)
def test_has_edges(caps: dict[str, Any], path: str, expected: bool) -> None:
    assert has(caps, path) is expected
    assert has(MappingProxyType(caps), path) is expected
