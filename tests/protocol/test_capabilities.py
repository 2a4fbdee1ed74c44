"""Capability checks are pure functions over the declared data (DESIGN: the sans-IO core)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from backchannel.protocol.capabilities import has, require
from backchannel.types.errors import MissingCapability

CASES: list[tuple[dict[str, Any] | None, str, bool]] = [
    # EL-07: an empty elicitation object declares form mode only.
    ({"elicitation": {}}, "elicitation", True),
    ({"elicitation": {}}, "elicitation.form", True),
    ({"elicitation": {}}, "elicitation.url", False),
    ({"elicitation": {"form": {}}}, "elicitation.form", True),
    ({"elicitation": {"form": {}}}, "elicitation.url", False),
    ({"elicitation": {"url": {}}}, "elicitation.url", True),
    ({"elicitation": {"url": {}}}, "elicitation.form", False),  # url only: no implied form
    ({"elicitation": {"form": {}, "url": {}}}, "elicitation.form", True),
    ({"elicitation": {"form": {}, "url": {}}}, "elicitation.url", True),
    ({}, "elicitation.form", False),
    ({"elicitation": None}, "elicitation", False),
    ({"elicitation": None}, "elicitation.form", False),
    ({"elicitation": True}, "elicitation.form", False),
    # Nested sampling.tools.
    ({"sampling": {}}, "sampling", True),
    ({"sampling": {}}, "sampling.tools", False),
    ({"sampling": {"tools": {}}}, "sampling.tools", True),
    ({"sampling": {"context": {}}}, "sampling.tools", False),
    ({"sampling": {"tools": {}}}, "sampling.tools.deeper", False),
    # RT-01: roots, with listChanged a flag that must be true.
    ({"roots": {}}, "roots", True),
    ({"roots": {}}, "roots.listChanged", False),
    ({"roots": {"listChanged": False}}, "roots", True),
    ({"roots": {"listChanged": False}}, "roots.listChanged", False),
    ({"roots": {"listChanged": True}}, "roots.listChanged", True),
    # Nothing declared.
    (None, "roots", False),
    ({}, "roots", False),
    ({"experimental": {"x": {}}}, "experimental.x", True),
    ({"extensions": {"io.example/ext": {}}}, "extensions", True),
]


@pytest.mark.parametrize(("caps", "path", "expected"), CASES)
def test_has(caps: dict[str, Any] | None, path: str, expected: bool) -> None:
    assert has(caps, path) is expected


@pytest.mark.parametrize(("caps", "path", "expected"), CASES)
def test_require_agrees_with_has(caps: dict[str, Any] | None, path: str, expected: bool) -> None:
    if expected:
        assert require(caps, path) is None
        return
    with pytest.raises(MissingCapability) as caught:
        require(caps, path)
    assert caught.value.capability == path
    assert caught.value.code == -32021


def test_missing_capability_wire_form_lc33() -> None:
    """LC-33 / 2026-07-28 §2: -32021 names the required capability as a nested object."""
    with pytest.raises(MissingCapability) as caught:
        require({"elicitation": {}}, "elicitation.url")
    assert caught.value.to_error() == {
        "code": -32021,
        "message": "Server requires the elicitation.url client capability for this request",
        "data": {"requiredCapabilities": {"elicitation": {"url": {}}}},
    }
    with pytest.raises(MissingCapability) as caught:
        require({}, "elicitation")
    assert caught.value.to_error()["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_checks_do_not_mutate_the_declaration() -> None:
    caps: dict[str, Any] = {"elicitation": {}, "sampling": {"tools": {}}}
    for path in ("elicitation.form", "elicitation.url", "sampling.tools", "roots"):
        has(caps, path)
    assert caps == {"elicitation": {}, "sampling": {"tools": {}}}


@pytest.mark.parametrize(("caps", "path", "expected"), CASES)
def test_has_reads_any_mapping_as_a_dict(caps: dict[str, Any] | None, path: str, expected: bool) -> None:
    """``has`` takes the dict fast path for decoded JSON; another ``Mapping`` (read-only views
    of the same data) must give the same answers."""
    assert has(_frozen(caps), path) is expected


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({key: _frozen(item) for key, item in value.items()})
    return value
