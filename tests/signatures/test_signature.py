"""Signatures → input/output schemas, argument validation, structured output."""

# mypy: disable-error-code="empty-body"

from __future__ import annotations

import functools
from collections.abc import Awaitable
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from _shapes import Order, Person, Point
from backchannel.signatures.signature import (
    InvalidArguments,
    OutputMismatch,
    derive_arguments_for_prompt,
    derive_output,
    derive_parameters,
)
from backchannel.types.errors import InvalidParams


class Context:
    pass


class Node(BaseModel):
    children: list[Node] = []


def add(a: int, b: Annotated[int, "second"] = 2) -> int:
    return a + b


# -- input schema ------------------------------------------------------------------------------------


def test_add_schema_is_exact() -> None:
    params = derive_parameters(add)
    assert params.input_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer", "description": "second", "default": 2},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    assert params.context_parameter is None


def test_no_parameters() -> None:
    def ping() -> None: ...

    assert derive_parameters(ping).input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
    assert derive_parameters(ping).validate(None) == {}


def test_field_description_literal_optional_and_missing_annotation() -> None:
    def f(  # type: ignore[no-untyped-def]
        mode: Literal["fast", "slow"],
        limit: Optional[int],  # noqa: UP045 - the spelling under test
        tag: Annotated[str, Field(description="a tag", max_length=5)] = "t",
        anything=None,
    ) -> None: ...

    schema = derive_parameters(f).input_schema
    assert schema["properties"] == {
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "tag": {"type": "string", "description": "a tag", "maxLength": 5, "default": "t"},
        "anything": {"default": None},
    }
    assert schema["required"] == ["mode", "limit"]


def test_docstring_args_are_a_fallback() -> None:
    def f(a: int, b: Annotated[int, "from annotation"], c: int = Field(3, description="from field")) -> None:
        """Do things.

        Args:
            a: the first number,
                continued on the next line
            b (int): ignored, the annotation wins
            c: ignored too

        Returns:
            nothing
        """

    properties = derive_parameters(f).input_schema["properties"]
    assert properties["a"]["description"] == "the first number, continued on the next line"
    assert properties["b"]["description"] == "from annotation"
    assert properties["c"] == {"type": "integer", "description": "from field", "default": 3}
    assert derive_parameters(f).validate({"a": 1, "b": 2}) == {"a": 1, "b": 2, "c": 3}


def test_user_types_become_defs() -> None:
    def f(point: Point, person: Person, order: Order) -> None: ...

    schema = derive_parameters(f).input_schema
    assert schema["properties"] == {
        "point": {"$ref": "#/$defs/Point"},
        "person": {"$ref": "#/$defs/Person"},
        "order": {"$ref": "#/$defs/Order"},
    }
    assert schema["$defs"]["Point"] == {
        "type": "object",
        "title": "Point",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }
    assert schema["$defs"]["Person"]["required"] == ["name", "age"]
    assert schema["$defs"]["Order"]["properties"]["quantity"] == {"type": "integer", "default": 1}


def test_context_parameter_and_skip_names_are_left_out() -> None:
    def f(ctx: Context, a: int, request: object = None) -> None: ...

    params = derive_parameters(f, context_type=Context, skip_names=frozenset({"request"}))
    assert params.context_parameter == "ctx"
    assert list(params.input_schema["properties"]) == ["a"]
    assert params.validate({"a": 1}) == {"a": 1}


def test_optional_context_is_recognised() -> None:
    def f(a: int, ctx: Context | None = None) -> None: ...

    assert derive_parameters(f, context_type=Context).context_parameter == "ctx"


def test_awkward_parameter_names() -> None:
    def f(_private: int, json: str, model_config: int = 0) -> None: ...

    params = derive_parameters(f)
    assert list(params.input_schema["properties"]) == ["_private", "json", "model_config"]
    assert params.validate({"_private": 1, "json": "j"}) == {"_private": 1, "json": "j", "model_config": 0}


def test_unresolvable_hints_are_a_type_error() -> None:
    def f(a: NotDefinedAnywhere) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match=r"tool 'f'.*cannot resolve type hints"):
        derive_parameters(f)


def test_varargs_are_refused() -> None:
    def star(*items: int) -> None: ...

    def kw(**options: int) -> None: ...

    with pytest.raises(TypeError, match=r"tool 'star'.*\*items"):
        derive_parameters(star)
    for what in ("prompt", "resource"):  # only a tool has somewhere to put arguments it does not name
        with pytest.raises(TypeError, match=rf"{what} 'kw'.*\*\*options"):
            derive_parameters(kw, what=what)


def test_undescribable_parameter_type_is_a_type_error() -> None:
    def f(lock: functools.partial[int]) -> None: ...

    with pytest.raises(TypeError, match="parameter 'lock'"):
        derive_parameters(f, name="locker")


def test_partial_and_callable_objects() -> None:
    class Adder:
        def __call__(self, a: int, b: int) -> int:
            return a + b

    assert derive_parameters(Adder()).input_schema["required"] == ["a", "b"]
    assert derive_parameters(functools.partial(add, b=5)).validate({"a": 1}) == {"a": 1, "b": 5}


# -- validation --------------------------------------------------------------------------------------


def test_validate_converts_and_fills_defaults() -> None:
    params = derive_parameters(add)
    assert params.validate({"a": 1}) == {"a": 1, "b": 2}
    assert params.validate({"a": "3", "b": 4}) == {"a": 3, "b": 4}


def test_unknown_arguments_are_refused_as_the_schema_says() -> None:
    params = derive_parameters(add)
    assert params.input_schema["additionalProperties"] is False
    with pytest.raises(InvalidArguments) as caught:
        params.validate({"a": 1, "unknown": True, "b_": 2})
    assert (
        caught.value.message
        == "Invalid arguments for tool 'add': unknown: unexpected argument; b_: unexpected argument"
    )
    assert [error["path"] for error in caught.value.data["errors"]] == [["unknown"], ["b_"]]


def test_synthetic_field_names_are_not_arguments() -> None:
    # The model's fields are named p0, p1...: only the parameter names reach them.
    with pytest.raises(InvalidArguments, match="p0: unexpected argument"):
        derive_parameters(add).validate({"a": 1, "p0": 5})


def test_prompts_and_resources_ignore_unknown_arguments() -> None:
    for what in ("prompt", "resource"):
        params = derive_parameters(add, what=what)
        assert "additionalProperties" not in params.input_schema
        assert params.validate({"a": "1", "unknown": True}) == {"a": 1, "b": 2}


def test_context_and_skipped_parameters_are_not_arguments() -> None:
    def f(ctx: Context, a: int, request: object = None) -> None: ...

    params = derive_parameters(f, context_type=Context, skip_names=frozenset({"request"}))
    for name in ("ctx", "request"):
        with pytest.raises(InvalidArguments, match=f"{name}: unexpected argument"):
            params.validate({"a": 1, name: "smuggled"})


def test_kwargs_take_the_unknown_arguments() -> None:
    def anything(a: int, ctx: Context, **rest: Any) -> None: ...

    def counts(a: int, **rest: int) -> None: ...

    def points(start: Point, **more: Point) -> None: ...

    params = derive_parameters(anything, context_type=Context)
    assert params.input_schema["additionalProperties"] is True
    assert params.validate({"a": "1", "b": [1], "c": None}) == {"a": 1, "b": [1], "c": None}
    with pytest.raises(InvalidArguments, match="ctx: unexpected argument"):
        params.validate({"a": 1, "ctx": 2})  # the context is not the caller's to give
    typed = derive_parameters(counts)
    assert typed.input_schema["additionalProperties"] == {"type": "integer"}
    assert typed.validate({"a": 1, "b": "2"}) == {"a": 1, "b": 2}
    with pytest.raises(InvalidArguments) as caught:
        typed.validate({"a": "x", "b": "two"})
    assert caught.value.message == (
        'Invalid arguments for tool \'counts\': a: expected an integer, got "x"; b: expected an integer, got "two"'
    )
    shared = derive_parameters(points)
    assert shared.input_schema["additionalProperties"] == {"$ref": "#/$defs/Point"}
    assert list(shared.input_schema["$defs"]) == ["Point"]
    assert shared.validate({"start": {"x": 1}, "end": {"x": 2}}) == {"start": Point(1), "end": Point(2)}


class Strict(BaseModel, extra="forbid"):
    n: int


def test_nested_types_keep_their_own_rule_for_extra_keys() -> None:
    def f(point: Point, person: Person, strict: Strict) -> None: ...

    params = derive_parameters(f)
    assert "additionalProperties" not in params.input_schema["$defs"]["Point"]
    assert "additionalProperties" not in params.input_schema["$defs"]["Person"]
    assert params.input_schema["$defs"]["Strict"]["additionalProperties"] is False
    arguments = {"point": {"x": 1, "z": 9}, "person": {"name": "Ada", "age": 36, "z": 9}, "strict": {"n": 1}}
    assert params.validate(arguments)["point"] == Point(1)
    with pytest.raises(InvalidArguments, match=r"strict\.z: unexpected field"):
        params.validate(arguments | {"strict": {"n": 1, "z": 9}})


def test_invalid_argument_names_the_field() -> None:
    with pytest.raises(InvalidArguments) as caught:
        derive_parameters(add).validate({"a": "x"})
    assert caught.value.message == "Invalid arguments for tool 'add': a: expected an integer, got \"x\""
    assert isinstance(caught.value, InvalidParams) and caught.value.code == -32602  # a prompt's is -32602
    assert caught.value.data["errors"] == [
        {"path": ["a"], "message": 'expected an integer, got "x"', "type": "int_parsing"}
    ]


def test_missing_argument() -> None:
    with pytest.raises(InvalidArguments, match=r"Invalid arguments for tool 'add': a: required field missing$"):
        derive_parameters(add).validate({})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"mode": "c"}, "mode: expected 'a' or 'b', got \"c\""),
        ({"count": 0}, "count: expected a value greater than or equal to 1, got 0"),
        ({"count": 2.5}, "count: expected an integer, got 2.5"),
        ({"ratio": "half"}, 'ratio: expected a number, got "half"'),
        ({"flag": "maybe"}, 'flag: expected a boolean, got "maybe"'),
        ({"tags": "a,b"}, 'tags: expected an array, got "a,b"'),
        ({"tags": [1]}, "tags[0]: expected a string, got 1"),
        ({"point": "1,2"}, 'point: expected an object, got "1,2"'),
        ({"name": "x" * 100}, 'name: String should have at most 8 characters, got "' + "x" * 56 + "..."),
        ({"note": None}, "note: expected a string, got null"),
        ({"a b": 1}, '["a b"]: unexpected argument'),
        ({"": 1}, '[""]: unexpected argument'),
    ],
)
def test_each_message_says_what_was_expected(value: dict[str, Any], expected: str) -> None:
    def f(
        mode: Literal["a", "b"] = "a",
        count: Annotated[int, Field(ge=1)] = 1,
        ratio: float = 1.0,
        flag: bool = False,
        tags: list[str] | None = None,
        point: Point | None = None,
        name: Annotated[str, Field(max_length=8)] = "",
        note: str = "",
    ) -> None: ...

    with pytest.raises(InvalidArguments) as caught:
        derive_parameters(f).validate(value)
    assert caught.value.message == f"Invalid arguments for tool 'f': {expected}"


def test_many_problems_are_listed_up_to_a_bound() -> None:
    with pytest.raises(InvalidArguments) as caught:
        derive_parameters(add).validate({"a": 1} | {f"k{i}": i for i in range(500)})
    assert caught.value.message.endswith("k19: unexpected argument; and 480 more")
    assert len(caught.value.data["errors"]) == 20


def test_arguments_must_be_an_object() -> None:
    with pytest.raises(InvalidParams, match="expected an object, got list"):
        derive_parameters(add).validate([1, 2])  # type: ignore[arg-type]


def test_nested_errors_have_paths() -> None:
    def f(points: list[Point], mode: Literal["a", "b"]) -> None: ...

    with pytest.raises(InvalidParams) as caught:
        derive_parameters(f, name="plot").validate({"points": [{"x": 1}, {"x": "no"}], "mode": "c"})
    message = caught.value.message
    assert message.startswith("Invalid arguments for tool 'plot': ")
    assert 'points[1].x: expected an integer, got "no"' in message
    assert "mode: expected 'a' or 'b', got \"c\"" in message


def test_user_types_are_instantiated() -> None:
    def f(point: Point, person: Person, order: Order, maybe: int | None) -> None: ...

    kwargs = derive_parameters(f).validate(
        {"point": {"x": 1}, "person": {"name": "Ada", "age": 36}, "order": {"item": "tea"}, "maybe": None}
    )
    assert kwargs == {
        "point": Point(1, 0),
        "person": {"name": "Ada", "age": 36},
        "order": Order(item="tea", quantity=1),
        "maybe": None,
    }


# -- prompts -----------------------------------------------------------------------------------------


def review(code: str, passes: int, language: Annotated[str, "the language"] = "python") -> str:
    """Review code.

    Args:
        code: the code to review
    """
    return code


def test_prompt_arguments() -> None:
    assert derive_arguments_for_prompt(review) == [
        {"name": "code", "description": "the code to review", "required": True},
        {"name": "passes", "required": True},
        {"name": "language", "description": "the language", "required": False},
    ]


def test_prompt_strings_are_converted() -> None:
    def f(n: int, tags: list[str], text: str) -> None: ...

    params = derive_parameters(f, what="prompt")
    assert params.validate({"n": "3", "tags": '["a", "b"]', "text": "42"}) == {
        "n": 3,
        "tags": ["a", "b"],
        "text": "42",
    }
    with pytest.raises(InvalidParams, match="Invalid arguments for prompt 'f': n: "):
        params.validate({"n": "three", "tags": "[]", "text": ""})


# -- output ------------------------------------------------------------------------------------------


def test_int_is_wrapped() -> None:
    shape = derive_output(add)
    assert shape.wrapped
    assert shape.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert shape.structure(3) == {"result": 3}


def test_list_of_str_is_wrapped() -> None:
    def f() -> list[str]: ...

    shape = derive_output(f)
    assert shape.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "string"}}},
        "required": ["result"],
    }
    assert shape.structure(["a"]) == {"result": ["a"]}


def test_wrapped_user_types_hoist_defs() -> None:
    async def f() -> list[Point]: ...

    shape = derive_output(f)
    assert shape.output_schema is not None
    assert shape.output_schema["properties"]["result"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Point"},
    }
    assert "Point" in shape.output_schema["$defs"]
    assert shape.structure([Point(1, 2)]) == {"result": [{"x": 1, "y": 2}]}


@pytest.mark.parametrize(
    ("annotation", "value", "expected"),
    [
        (Point, Point(1, 2), {"x": 1, "y": 2}),
        (Person, {"name": "Ada", "age": 36}, {"name": "Ada", "age": 36}),
        (Order, Order(item="tea"), {"item": "tea", "quantity": 1}),
        (dict[str, int], {"a": 1}, {"a": 1}),
    ],
)
def test_object_types_are_not_wrapped(annotation: Any, value: Any, expected: Any) -> None:
    def f() -> None: ...

    f.__annotations__["return"] = annotation
    shape = derive_output(f)
    assert not shape.wrapped
    assert shape.output_schema is not None
    assert shape.output_schema["type"] == "object"
    assert shape.structure(value) == expected


def test_dataclass_output_schema_is_exact() -> None:
    def f() -> Point: ...

    assert derive_output(f).output_schema == {
        "type": "object",
        "title": "Point",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }


def test_recursive_model_is_inlined_at_the_top() -> None:
    def f() -> Node: ...

    schema = derive_output(f).output_schema
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert "Node" in schema["$defs"]


def test_no_output_schema() -> None:
    def none() -> None: ...

    def text() -> str: ...

    def anything() -> Any: ...

    def raw() -> bytes: ...

    def unannotated():  # type: ignore[no-untyped-def]
        return 1

    for fn in (none, text, anything, raw, unannotated):
        shape = derive_output(fn)
        assert shape.output_schema is None
        assert shape.structure("x") is None


class TextContent(BaseModel):
    text: str


def test_content_types_have_no_schema() -> None:
    def one() -> TextContent: ...

    def many() -> list[TextContent]: ...

    assert derive_output(one, content_types=(TextContent,)).output_schema is None
    assert derive_output(many, content_types=(TextContent,)).output_schema is None
    assert derive_output(one).output_schema is not None


def test_awaitable_and_async_returns() -> None:
    async def coro() -> int:
        return 1

    def awaitable() -> Awaitable[Order]: ...

    assert derive_output(coro).wrapped
    shape = derive_output(awaitable)
    assert not shape.wrapped
    assert shape.output_schema is not None
    assert shape.output_schema["title"] == "Order"


def test_structure_rejects_a_wrong_value() -> None:
    with pytest.raises(OutputMismatch, match=r"tool 'add' returned .*expected an integer, got \"nope\""):
        derive_output(add).structure("nope")
