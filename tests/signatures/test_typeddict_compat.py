"""A plain ``typing.TypedDict`` works as a tool parameter and return type on every supported Python."""

from __future__ import annotations

from typing import NotRequired, TypedDict

import pytest

from backchannel.signatures.signature import derive_output, derive_parameters
from backchannel.types.errors import InvalidParams


class Point(TypedDict):
    """A point on the plane."""

    x: int
    y: int
    label: NotRequired[str]


class Shape(TypedDict, total=False):
    points: list[Point]
    name: str


def move(shape: Shape, by: Point) -> Point:
    return {"x": by["x"], "y": by["y"]}


def test_typing_typeddict_parameters_get_a_schema_with_requiredness() -> None:
    params = derive_parameters(move)
    schema = params.input_schema
    assert schema["required"] == ["shape", "by"]
    point = schema["$defs"]["Point"]
    assert point["required"] == ["x", "y"]
    assert set(point["properties"]) == {"x", "y", "label"}
    assert point["description"] == "A point on the plane."
    assert "required" not in schema["$defs"]["Shape"]


def test_typing_typeddict_arguments_are_validated_and_named() -> None:
    params = derive_parameters(move)
    kwargs = params.validate({"shape": {"points": [{"x": 1, "y": 2}]}, "by": {"x": 3, "y": 4}})
    assert kwargs["by"] == {"x": 3, "y": 4}
    with pytest.raises(InvalidParams, match=r"by\.y"):
        params.validate({"shape": {}, "by": {"x": 3}})


def test_typing_typeddict_return_becomes_output_schema() -> None:
    shape = derive_output(move)
    assert shape.output_schema is not None
    assert shape.wrapped is False
    assert shape.output_schema["required"] == ["x", "y"]
    assert shape.structure({"x": 1, "y": 2}) == {"x": 1, "y": 2}
