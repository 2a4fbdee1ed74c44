"""Tool arguments asked field by field from a tool's inputSchema, with hints and re-asking."""

from __future__ import annotations

from typing import Any

import pytest
from _ui_harness import captured_console, run, text

from backchannel.ui import Cancelled, Question, scripted
from backchannel.ui.fields import OMIT, field_from_schema, fields_of
from backchannel.ui.prompting import ask_arguments

ADD = {
    "type": "object",
    "properties": {
        "a": {"type": "integer"},
        "b": {"default": 1, "description": "the second number", "type": "integer"},
    },
    "required": ["a"],
}


def ask_all(schema: Any, answers: list[str | BaseException], given: dict[str, Any] | None = None) -> tuple:
    console = captured_console()
    asked: list[Question] = []
    result = run(ask_arguments(console, scripted(answers, asked), schema, given))
    return result, asked, text(console)


def test_each_field_is_asked_in_order_with_its_hint() -> None:
    arguments, asked, shown = ask_all(ADD, ["2", "40"])
    assert arguments == {"a": 2, "b": 40}
    assert [q.prompt for q in asked] == ["a*: ", "b: "]
    assert "a *  whole number" in shown
    assert "b  whole number, default 1" in shown
    assert "the second number" in shown


def test_an_optional_field_left_blank_is_left_out_for_the_server_default() -> None:
    arguments, asked, _ = ask_all(ADD, ["2", ""])
    assert arguments == {"a": 2}
    assert asked[1].default == ""  # tool defaults are shown, not prefilled


def test_invalid_input_is_explained_and_asked_again_at_once() -> None:
    arguments, asked, shown = ask_all(ADD, ["", "two", "2.5", "2", "x", "3"])
    assert arguments == {"a": 2, "b": 3}
    assert [q.prompt for q in asked] == ["a*: "] * 4 + ["b: "] * 2
    assert "! a: is required" in shown
    assert "! a: 'two' is not a whole number" in shown
    assert "! a: '2.5' is not a whole number" in shown
    assert "! b: 'x' is not a whole number" in shown


def test_arguments_given_on_the_command_line_leave_only_missing_required_fields() -> None:
    arguments, asked, _ = ask_all(ADD, [], given={"a": 5})
    assert arguments == {"a": 5} and asked == []
    arguments, asked, _ = ask_all(ADD, ["7"], given={"b": 5})
    assert arguments == {"a": 7, "b": 5} and [q.prompt for q in asked] == ["a*: "]


def test_ranges_lengths_and_patterns_are_checked() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
            "code": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[A-Z]+$"},
        },
    }
    arguments, _, shown = ask_all(schema, ["1", "-0.5", "0.25", "a", "abcd", "ab", "AB"])
    assert arguments == {"n": 0.25, "code": "AB"}
    assert "number, 0 to 1" in shown
    assert "2 to 3 characters, matching ^[A-Z]+$" in shown
    assert "! n: must be less than 1" in shown
    assert "! n: must be at least 0" in shown
    assert "! code: must be at least 2 characters" in shown
    assert "! code: must be at most 3 characters" in shown
    assert "! code: does not match the pattern ^[A-Z]+$" in shown


def test_enums_are_pickers_by_number_value_or_label() -> None:
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["C", "F"]},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}},
        },
    }
    arguments, asked, shown = ask_all(schema, ["K", "2", "large", "1, z"])
    assert arguments == {"unit": "F", "size": "l", "tags": ["x", "z"]}
    assert "1) C" in shown and "2) F" in shown
    assert "1) Small (s)" in shown and "2) Large (l)" in shown
    assert "! unit: 'K' is not one of C, F" in shown
    assert asked[0].completions == ["C", "F"]
    assert asked[3].separator == ","


def test_booleans_are_yes_or_no() -> None:
    schema = {"type": "object", "properties": {"go": {"type": "boolean"}}, "required": ["go"]}
    arguments, asked, shown = ask_all(schema, ["maybe", "Y"])
    assert arguments == {"go": True}
    assert "! go: answer yes or no" in shown
    assert list(asked[0].completions) == ["yes", "no"]


def test_optional_types_from_pydantic_are_their_inner_type() -> None:
    schema = {
        "type": "object",
        "properties": {
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "Limit"},
            "name": {"type": ["string", "null"]},
        },
    }
    arguments, _, _ = ask_all(schema, ["10", "Ada"])
    assert arguments == {"limit": 10, "name": "Ada"}


def test_objects_and_other_shapes_are_typed_as_json() -> None:
    schema = {
        "type": "object",
        "properties": {
            "point": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "numbers": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["point"],
    }
    arguments, _, shown = ask_all(schema, ["{x: 1}", "[1]", '{"x": 1}', "[1, 2]"])
    assert arguments == {"point": {"x": 1}, "numbers": [1, 2]}
    assert "JSON object" in shown
    assert "! point: not valid JSON" in shown
    assert "! point: must be object" in shown


def test_ctrl_c_or_ctrl_d_while_asking_is_a_cancel() -> None:
    for interrupt in (KeyboardInterrupt(), EOFError(), Cancelled()):
        with pytest.raises(Cancelled):
            ask_all(ADD, ["1", interrupt])


def test_format_hints() -> None:
    def hint(prop: dict[str, Any]) -> str:
        return field_from_schema("f", prop, False).hint()

    assert hint({"type": "string", "format": "email"}) == "e-mail address, e.g. name@example.com"
    assert hint({"type": "string", "format": "uri"}) == "URI, e.g. https://example.com/page"
    assert hint({"type": "string", "format": "date"}) == "date, YYYY-MM-DD"
    assert hint({"type": "string", "format": "date-time"}).startswith("date and time")
    assert hint({"type": "string", "format": "hostname"}) == "text (hostname)"
    assert hint({"type": "integer", "minimum": 1}) == "whole number, at least 1"
    assert hint({"type": "number", "exclusiveMaximum": 2.5}) == "number, less than 2.5"
    assert hint({"type": "array", "items": {"enum": ["a"], "type": "string"}, "minItems": 1}) == (
        "choose any, separated by commas, at least 1 choice"
    )


def test_unknown_formats_are_not_enforced_but_known_ones_are() -> None:
    lenient = field_from_schema("f", {"type": "string", "format": "hostname"}, True)
    assert lenient.problems(lenient.parse("anything")) == []
    strict = field_from_schema("f", {"type": "string", "format": "date"}, True)
    assert strict.problems("2025-02-30") == ["not a valid date (expected YYYY-MM-DD)"]


def test_fields_of_a_schema_without_properties_is_empty() -> None:
    assert fields_of({"type": "object"}) == []
    assert fields_of(None) == []
    assert field_from_schema("x", {"type": "string"}, False).parse("   ") is OMIT
