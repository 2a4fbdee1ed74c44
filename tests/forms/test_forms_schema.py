"""The wire-level form schema: what ``check_requested_schema`` accepts and refuses,
``choices``/``is_multi_select`` for every SEP-1330 enum shape, and ``apply_defaults`` (SEP-1034)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from backchannel.forms import (
    FormSchemaError,
    apply_defaults,
    check_requested_schema,
    choices,
    is_multi_select,
)

# The five enum shapes, as written in docs/client/elicitation.mdx (2025-11-25) and SEP-1330.
UNTITLED_SINGLE = {
    "type": "string",
    "title": "Color Selection",
    "description": "Choose your favorite color",
    "enum": ["Red", "Green", "Blue"],
    "default": "Red",
}
TITLED_SINGLE = {
    "type": "string",
    "title": "Color Selection",
    "description": "Choose your favorite color",
    "oneOf": [
        {"const": "#FF0000", "title": "Red"},
        {"const": "#00FF00", "title": "Green"},
        {"const": "#0000FF", "title": "Blue"},
    ],
    "default": "#FF0000",
}
LEGACY = {
    "type": "string",
    "title": "Color Selection",
    "enum": ["#FF0000", "#00FF00", "#0000FF"],
    "enumNames": ["Red", "Green", "Blue"],
    "default": "#00FF00",
}
UNTITLED_MULTI = {
    "type": "array",
    "title": "Color Selection",
    "description": "Choose your favorite colors",
    "minItems": 1,
    "maxItems": 2,
    "items": {"type": "string", "enum": ["Red", "Green", "Blue"]},
    "default": ["Red", "Green"],
}
TITLED_MULTI = {
    "type": "array",
    "title": "Color Selection",
    "description": "Choose your favorite colors",
    "minItems": 1,
    "maxItems": 2,
    "items": {
        "anyOf": [
            {"const": "#FF0000", "title": "Red"},
            {"const": "#00FF00", "title": "Green"},
            {"const": "#0000FF", "title": "Blue"},
        ]
    },
    "default": ["#FF0000", "#00FF00"],
}
STRING = {
    "type": "string",
    "title": "Display Name",
    "description": "Description text",
    "minLength": 3,
    "maxLength": 50,
    "pattern": "^[A-Za-z]+$",
    "default": "Octocat",
}
EMAIL = {"type": "string", "format": "email", "default": "user@example.com"}
NUMBER = {"type": "number", "title": "Display Name", "minimum": 0, "maximum": 100, "default": 50}
INTEGER = {"type": "integer", "minimum": 1, "default": 3}
BOOLEAN = {"type": "boolean", "title": "Display Name", "description": "Description text", "default": False}

ALL_SHAPES = {
    "untitled_single": UNTITLED_SINGLE,
    "titled_single": TITLED_SINGLE,
    "legacy": LEGACY,
    "untitled_multi": UNTITLED_MULTI,
    "titled_multi": TITLED_MULTI,
    "string": STRING,
    "email": EMAIL,
    "number": NUMBER,
    "integer": INTEGER,
    "boolean": BOOLEAN,
}


def form(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


# -- accepted --------------------------------------------------------------------------------------


def test_every_primitive_shape_of_the_spec_is_accepted() -> None:
    """EL-13: each PrimitiveSchemaDefinition of 2025-11-25, with a default on every type (SEP-1034)."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "Everything",
        "description": "One field of each kind",
        "properties": copy.deepcopy(ALL_SHAPES),
        "required": ["string", "number"],
    }
    check_requested_schema(schema)


def test_the_spec_examples_are_accepted() -> None:
    """EL-13: the two requestedSchema examples of docs/client/elicitation.mdx."""
    check_requested_schema({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
    check_requested_schema(
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Your full name"},
                "email": {"type": "string", "format": "email", "description": "Your email address"},
                "age": {"type": "number", "minimum": 18, "description": "Your age"},
            },
            "required": ["name", "email"],
        }
    )


@pytest.mark.parametrize("fmt", ["email", "uri", "date", "date-time"])
def test_the_four_formats_are_accepted(fmt: str) -> None:
    check_requested_schema(form(x={"type": "string", "format": fmt}))


def test_an_empty_form_is_accepted() -> None:
    """A form with no fields is a plain accept/decline question; the spec does not forbid it."""
    check_requested_schema({"type": "object", "properties": {}})


def test_titled_multi_select_items_may_say_type_string_or_use_one_of() -> None:
    """schema.ts writes items.anyOf; SEP-1330's prose writes items.oneOf. Both are read."""
    options = [{"const": "a", "title": "A"}]
    check_requested_schema(form(x={"type": "array", "items": {"type": "string", "anyOf": options}}))
    check_requested_schema(form(x={"type": "array", "items": {"oneOf": options}}))


# -- refused ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "message"),
    [
        (
            {"type": "object", "properties": {"street": {"type": "string"}}},
            "address: nested objects are not allowed in a form; use flat fields",
        ),
        (
            {"type": "array", "items": {"type": "integer"}},
            'address: arrays are only allowed as multi-selects, with \'items\' of {"type": "string", "enum": [...]}',
        ),
        (
            {"type": "array", "items": {"type": "object", "properties": {}}},
            'address: arrays are only allowed as multi-selects, with \'items\' of {"type": "string", "enum": [...]}',
        ),
        ({"type": "array"}, "address: a multi-select needs 'items' listing its choices; other arrays are not allowed"),
        ({"$ref": "#/$defs/Address"}, "address: '$ref' is not allowed; write the field out in full"),
        (
            {"type": "string", "format": "hostname"},
            "address: unknown format 'hostname' (allowed: email, uri, date, date-time)",
        ),
        ({"type": "string", "minlength": 3}, "address: 'minlength' is not allowed on a text field"),
        ({"type": "integer", "minLength": 3}, "address: 'minLength' is not allowed on a number field"),
        (
            {"type": "string", "enum": ["a"], "format": "email"},
            "address: 'format' is not allowed on a single-select field",
        ),
        (
            {"type": ["string", "null"]},
            "address: 'type' must be string, number, integer, boolean or array, not ['string', 'null']",
        ),
        ({"description": "no type"}, "address: missing 'type' (string, number, integer, boolean or array)"),
        (
            {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "address: missing 'type' (string, number, integer, boolean or array)",
        ),
        ("string", "address: must be a JSON object describing the field, not text"),
        ({"type": "string", "minLength": -1}, "address: 'minLength' must be a whole number, 0 or more"),
        (
            {"type": "string", "minLength": 5, "maxLength": 2},
            "address: 'minLength' (5) is greater than 'maxLength' (2)",
        ),
        ({"type": "number", "minimum": "0"}, "address: 'minimum' must be a number"),
        ({"type": "number", "maximum": True}, "address: 'maximum' must be a number"),
        (
            {"type": "string", "pattern": "("},
            "address: 'pattern' is not a valid regular expression: missing ), unterminated subpattern at position 0",
        ),
        ({"type": "string", "title": 3}, "address: 'title' must be a string"),
        ({"type": "string", "enum": []}, "address: 'enum' must be a non-empty list of strings"),
        ({"type": "string", "enum": [1, 2]}, "address: 'enum' must be a non-empty list of strings"),
        ({"type": "string", "enum": ["a", "a"]}, "address: 'enum' lists a value twice"),
        (
            {"type": "string", "enum": ["a", "b"], "enumNames": ["A"]},
            "address: 'enumNames' has 1 name for 2 values",
        ),
        (
            {"type": "string", "oneOf": [{"const": "a"}]},
            'address: each choice in \'oneOf\' must be {"const": str, "title": str}',
        ),
        (
            {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}, "minItems": 2},
            "address: 'minItems' is 2 but there is only 1 choice",
        ),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a"], "minLength": 1}},
            "address: 'minLength' is not allowed in the 'items' of a multi-select",
        ),
    ],
)
def test_a_property_that_is_not_a_primitive_shape_is_refused_by_name(prop: Any, message: str) -> None:
    """EL-13: requestedSchema is limited to flat objects with primitive properties."""
    with pytest.raises(FormSchemaError) as caught:
        check_requested_schema(form(name={"type": "string"}, address=prop))
    assert str(caught.value) == message
    assert caught.value.field == "address"


@pytest.mark.parametrize(
    ("prop", "message"),
    [
        ({"type": "string", "default": 3}, "x: the default 3 is not valid: must be text, not 3"),
        (
            {"type": "string", "minLength": 4, "default": "abc"},
            "x: the default 'abc' is not valid: must be at least 4 characters",
        ),
        (
            {"type": "string", "format": "email", "default": "nope"},
            "x: the default 'nope' is not valid: not a valid e-mail address",
        ),
        ({"type": "integer", "default": 2.5}, "x: the default 2.5 is not valid: must be a whole number, not 2.5"),
        ({"type": "number", "maximum": 10, "default": 11}, "x: the default 11 is not valid: must be at most 10"),
        (
            {"type": "boolean", "default": "false"},
            "x: the default 'false' is not valid: must be true or false, not 'false'",
        ),
        ({"type": "string", "enum": ["a"], "default": "b"}, "x: the default 'b' is not valid: 'b' is not one of a"),
        (
            # SEP-1330's own legacy example has this mistake: its default is a name, not a value.
            {"type": "string", "enum": ["#FF0000"], "enumNames": ["Red"], "default": "Red"},
            "x: the default 'Red' is not valid: 'Red' is not one of #FF0000",
        ),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": "a"},
            "x: the default 'a' is not valid: must be a list of choices, not 'a'",
        ),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 1, "default": ["a", "b"]},
            "x: the default ['a', 'b'] is not valid: choose at most 1 option",
        ),
    ],
)
def test_a_default_must_be_valid_for_its_own_field(prop: dict[str, Any], message: str) -> None:
    """SEP-1034: "Default values must match the schema type"; an enum default is one of its values."""
    with pytest.raises(FormSchemaError) as caught:
        check_requested_schema(form(x=prop))
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ([], "a form schema must be a JSON object, not a list"),
        ({"properties": {}}, 'a form schema must have "type": "object"'),
        ({"type": "array", "properties": {}}, 'a form schema must have "type": "object"'),
        ({"type": "object"}, 'a form schema needs "properties", an object of fields'),
        (
            {"type": "object", "properties": {}, "additionalProperties": False},
            "'additionalProperties' is not allowed at the top of a form schema",
        ),
        ({"type": "object", "properties": {}, "$defs": {}}, "'$defs' is not allowed at the top of a form schema"),
        ({"type": "object", "properties": {}, "title": 1}, "'title' must be a string"),
        ({"type": "object", "properties": {"": {"type": "string"}}}, "field names must be non-empty strings, not ''"),
        ({"type": "object", "properties": {}, "required": "name"}, '"required" must be a list of field names'),
        (
            {"type": "object", "properties": {}, "required": ["name"]},
            'name: is listed in "required" but is not a field of the form',
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]},
            'a: is listed in "required" twice',
        ),
    ],
)
def test_the_form_itself_must_be_a_flat_object(schema: Any, message: str) -> None:
    """EL-13: requestedSchema is {"type": "object", "properties": {...}, "required"?: [...]}."""
    with pytest.raises(FormSchemaError) as caught:
        check_requested_schema(schema)
    assert str(caught.value) == message


def test_form_schema_error_is_a_value_error() -> None:
    assert issubclass(FormSchemaError, ValueError)


# -- reading choices -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "expected", "multi"),
    [
        (UNTITLED_SINGLE, [("Red", "Red"), ("Green", "Green"), ("Blue", "Blue")], False),
        (TITLED_SINGLE, [("#FF0000", "Red"), ("#00FF00", "Green"), ("#0000FF", "Blue")], False),
        (LEGACY, [("#FF0000", "Red"), ("#00FF00", "Green"), ("#0000FF", "Blue")], False),
        (UNTITLED_MULTI, [("Red", "Red"), ("Green", "Green"), ("Blue", "Blue")], True),
        (TITLED_MULTI, [("#FF0000", "Red"), ("#00FF00", "Green"), ("#0000FF", "Blue")], True),
        ({"type": "array", "items": {"oneOf": [{"const": "a", "title": "A"}]}}, [("a", "A")], True),
        (STRING, [], False),
        (NUMBER, [], False),
        (BOOLEAN, [], False),
    ],
)
def test_choices_and_multi_select_for_every_enum_shape(
    prop: dict[str, Any], expected: list[tuple[str, str]], multi: bool
) -> None:
    """SEP-1330: untitled/titled, single/multi, plus legacy enumNames; a UI sends the value, shows the label."""
    assert choices(prop) == expected
    assert is_multi_select(prop) is multi


# -- defaults --------------------------------------------------------------------------------------


def test_apply_defaults_fills_every_omitted_field_that_has_one() -> None:
    """SEP-1034 / EL-14: a default on every primitive type pre-fills the answer."""
    schema = form(**copy.deepcopy(ALL_SHAPES), plain={"type": "string"})
    assert apply_defaults(schema, {}) == {
        "untitled_single": "Red",
        "titled_single": "#FF0000",
        "legacy": "#00FF00",
        "untitled_multi": ["Red", "Green"],
        "titled_multi": ["#FF0000", "#00FF00"],
        "string": "Octocat",
        "email": "user@example.com",
        "number": 50,
        "integer": 3,
        "boolean": False,
    }


def test_apply_defaults_keeps_what_the_user_gave_and_copies() -> None:
    """EL-14: defaults are a starting point; the user's values (even false or empty) win."""
    schema = form(**copy.deepcopy(ALL_SHAPES))
    content = {"boolean": True, "string": "", "untitled_multi": []}
    filled = apply_defaults(schema, content)
    assert filled["boolean"] is True
    assert filled["string"] == ""
    assert filled["untitled_multi"] == []
    assert content == {"boolean": True, "string": "", "untitled_multi": []}  # not changed in place
    filled["titled_multi"].append("#0000FF")
    assert schema["properties"]["titled_multi"]["default"] == ["#FF0000", "#00FF00"]  # not shared
