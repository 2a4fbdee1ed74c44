"""Every message that counts something agrees with its number: "1 character", "2 characters"
(issue #18, item 7: the terminal said "at least 1 characters").

Counted messages are built in three places: the form checker (``forms.schema``: answers and
schemas), the terminal's field hints (``ui.fields``), and a tool's argument problems (pydantic's
wording, passed through by ``signatures.argument_problems``). Each is checked at 1 and at 2 (and 0
where a bound can be 0), for every noun it counts.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import pytest
from pydantic import Field

from backchannel.forms import FormSchemaError, check_requested_schema, validate_content
from backchannel.signatures.signature import InvalidArguments, derive_parameters
from backchannel.ui.fields import field_from_schema

CHOICES = {"type": "string", "enum": ["a", "b", "c"]}
# A number, then a plural noun, where the number is 1: the mistake this file is about.
WRONG = re.compile(r"(?<![\d.])1 (characters|choices|options|items|names|values)\b")


def answer_problems(prop: dict[str, Any], value: Any) -> list[str]:
    return validate_content({"type": "object", "properties": {"x": prop}}, {"x": value})


def schema_problem(prop: dict[str, Any]) -> str:
    with pytest.raises(FormSchemaError) as caught:
        check_requested_schema({"type": "object", "properties": {"x": prop}})
    return caught.value.problem


def hint(prop: dict[str, Any]) -> str:
    return field_from_schema("x", prop, True).hint()


@pytest.mark.parametrize(
    ("prop", "value", "expected"),
    [
        ({"type": "string", "minLength": 1}, "", "x: must be at least 1 character"),
        ({"type": "string", "minLength": 2}, "a", "x: must be at least 2 characters"),
        ({"type": "string", "maxLength": 1}, "ab", "x: must be at most 1 character"),
        ({"type": "string", "maxLength": 2}, "abc", "x: must be at most 2 characters"),
        ({"type": "string", "maxLength": 0}, "a", "x: must be at most 0 characters"),
        ({"type": "array", "items": CHOICES, "minItems": 1}, [], "x: choose at least 1 option"),
        ({"type": "array", "items": CHOICES, "minItems": 2}, ["a"], "x: choose at least 2 options"),
        ({"type": "array", "items": CHOICES, "maxItems": 1}, ["a", "b"], "x: choose at most 1 option"),
        ({"type": "array", "items": CHOICES, "maxItems": 2}, ["a", "b", "c"], "x: choose at most 2 options"),
    ],
)
def test_answer_problems(prop: dict[str, Any], value: Any, expected: str) -> None:
    assert answer_problems(prop, value) == [expected]


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        (
            {"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": 2},
            "'minItems' is 2 but there is only 1 choice",
        ),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 3},
            "'minItems' is 3 but there are only 2 choices",
        ),
        ({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}, "'enumNames' has 1 name for 2 values"),
        ({"type": "string", "enum": ["a"], "enumNames": ["A", "B"]}, "'enumNames' has 2 names for 1 value"),
        (
            {"type": "string", "minLength": 2, "default": "a"},
            "the default 'a' is not valid: must be at least 2 characters",
        ),
        (
            {"type": "string", "maxLength": 1, "default": "ab"},
            "the default 'ab' is not valid: must be at most 1 character",
        ),
    ],
)
def test_schema_problems(prop: dict[str, Any], expected: str) -> None:
    assert schema_problem(prop) == expected


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        ({"type": "string", "minLength": 1}, "text, at least 1 character"),
        ({"type": "string", "minLength": 2}, "text, at least 2 characters"),
        ({"type": "string", "maxLength": 1}, "text, at most 1 character"),
        ({"type": "string", "maxLength": 2}, "text, at most 2 characters"),
        ({"type": "string", "minLength": 1, "maxLength": 1}, "text, exactly 1 character"),
        ({"type": "string", "minLength": 3, "maxLength": 3}, "text, exactly 3 characters"),
        ({"type": "string", "minLength": 0, "maxLength": 1}, "text, 0 to 1 character"),
        ({"type": "string", "minLength": 1, "maxLength": 2}, "text, 1 to 2 characters"),
        ({"type": "array", "items": CHOICES, "minItems": 1}, "choose any, separated by commas, at least 1 choice"),
        ({"type": "array", "items": CHOICES, "minItems": 2}, "choose any, separated by commas, at least 2 choices"),
        ({"type": "array", "items": CHOICES, "maxItems": 1}, "choose any, separated by commas, at most 1 choice"),
        ({"type": "array", "items": CHOICES, "maxItems": 3}, "choose any, separated by commas, at most 3 choices"),
    ],
)
def test_terminal_hints(prop: dict[str, Any], expected: str) -> None:
    assert hint(prop) == expected


def test_tool_argument_problems() -> None:
    def tool(
        one: Annotated[str, Field(min_length=1)] = "x",
        two: Annotated[str, Field(max_length=1)] = "x",
        many: Annotated[list[int], Field(min_length=1)] = [1],  # noqa: B006 - never mutated
        few: Annotated[list[int], Field(max_length=1)] = [1],  # noqa: B006 - never mutated
    ) -> None: ...

    with pytest.raises(InvalidArguments) as caught:
        derive_parameters(tool).validate({"one": "", "two": "ab", "many": [], "few": [1, 2]})
    messages = [problem["message"] for problem in caught.value.data["errors"]]
    assert messages[0].startswith("String should have at least 1 character,")
    assert messages[1].startswith("String should have at most 1 character,")
    assert messages[2].startswith("List should have at least 1 item ")
    assert messages[3].startswith("List should have at most 1 item ")
    assert not [message for message in messages if WRONG.search(message)]


def test_no_message_says_one_with_a_plural() -> None:
    """Every bound from 0 to 3 on every counted keyword, in all three places: none says "1 ...s"."""
    said: list[str] = []
    for n in range(4):
        text = {"type": "string", "minLength": n, "maxLength": n}
        multi = {"type": "array", "items": CHOICES, "minItems": n, "maxItems": n}
        said += [hint(text), hint(multi), hint({**text, "minLength": 0}), hint({**multi, "minItems": 0})]
        said += answer_problems(text, "ab" * 3) + answer_problems(text, "") + answer_problems(multi, [])
        said += answer_problems(multi, ["a", "b", "c", "a"])
        few = {"type": "array", "items": {"type": "string", "enum": list("abc")[: n or 1]}, "minItems": 4}
        said.append(schema_problem(few))
    for names, values in ((1, 2), (2, 1), (1, 3), (3, 1)):
        said.append(schema_problem({"type": "string", "enum": list("abc")[:values], "enumNames": ["N"] * names}))
    assert len(said) > 30 and not [text for text in said if WRONG.search(text)]
