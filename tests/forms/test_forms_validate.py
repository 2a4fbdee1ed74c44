"""``validate_content``: every problem an answer can have, in the words shown to the user (EL-61, EL-62)."""

from __future__ import annotations

from typing import Any

import pytest

from backchannel.forms import validate_content

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "code": {"type": "string", "pattern": "[0-9]{3}"},
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "when": {"type": "string", "format": "date-time"},
        "age": {"type": "integer", "minimum": 18, "maximum": 120},
        "score": {"type": "number", "minimum": 0.5, "maximum": 1.5},
        "ok": {"type": "boolean"},
        "color": {"type": "string", "enum": ["red", "green"]},
        "shade": {
            "type": "string",
            "oneOf": [{"const": "#000", "title": "Black"}, {"const": "#fff", "title": "White"}],
        },
        "legacy": {"type": "string", "enum": ["x", "y"], "enumNames": ["Ex", "Why"]},
        "labels": {
            "type": "array",
            "items": {"type": "string", "enum": ["bug", "feature", "docs"]},
            "minItems": 1,
            "maxItems": 2,
        },
        "tones": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}},
    },
    "required": ["name", "age"],
}


def test_a_valid_answer_has_no_problems() -> None:
    """EL-61 / EL-62: an answer that fits the schema passes."""
    content = {
        "name": "Ada",
        "code": "abc123def",
        "email": "ada@example.org",
        "site": "https://example.org/x?y=1",
        "born": "1815-12-10",
        "when": "2025-01-31T09:30:00.25+01:00",
        "age": 36,
        "score": 1.5,
        "ok": False,
        "color": "green",
        "shade": "#fff",
        "legacy": "y",
        "labels": ["bug", "docs"],
        "tones": [],
    }
    assert validate_content(SCHEMA, content) == []


def test_optional_fields_may_be_left_out() -> None:
    assert validate_content(SCHEMA, {"name": "Ada", "age": 36}) == []


@pytest.mark.parametrize(
    ("field", "value", "problems"),
    [
        ("name", "A", ["name: must be at least 2 characters"]),
        ("name", "Adelaide", ["name: must be at most 5 characters"]),
        ("name", 7, ["name: must be text, not 7"]),
        ("name", None, ["name: must be text, not null"]),
        ("code", "12", ["code: does not match the pattern [0-9]{3}"]),
        ("email", "ada@", ["email: not a valid e-mail address"]),
        ("email", "ada example@x.org", ["email: not a valid e-mail address"]),
        ("email", "ada@localhost", ["email: not a valid e-mail address"]),
        ("site", "example.org/x", ["site: not a valid URI (it needs a scheme, such as https:)"]),
        ("site", "https://exa mple.org", ["site: not a valid URI (it needs a scheme, such as https:)"]),
        ("born", "2025-02-30", ["born: not a valid date (expected YYYY-MM-DD)"]),
        ("born", "20250131", ["born: not a valid date (expected YYYY-MM-DD)"]),
        (
            "when",
            "2025-01-31T09:30:00",
            ["when: not a valid date-time (expected RFC 3339 with a timezone, such as 2025-01-31T09:30:00Z)"],
        ),
        (
            "when",
            "2025-01-31T25:30:00Z",
            ["when: not a valid date-time (expected RFC 3339 with a timezone, such as 2025-01-31T09:30:00Z)"],
        ),
        ("age", 17, ["age: must be at least 18"]),
        ("age", 121, ["age: must be at most 120"]),
        ("age", 36.5, ["age: must be a whole number, not 36.5"]),
        ("age", "36", ["age: must be a whole number, not '36'"]),
        ("age", True, ["age: must be a whole number, not True"]),
        ("score", 0.25, ["score: must be at least 0.5"]),
        ("score", float("nan"), ["score: must be a number, not nan"]),
        ("ok", "yes", ["ok: must be true or false, not 'yes'"]),
        ("ok", 1, ["ok: must be true or false, not 1"]),
        ("color", "blue", ["color: 'blue' is not one of red, green"]),
        ("shade", "Black", ["shade: 'Black' is not one of #000, #fff"]),
        ("legacy", "Ex", ["legacy: 'Ex' is not one of x, y"]),
        ("labels", ["x"], ["labels: 'x' is not one of bug, feature, docs"]),
        ("labels", [], ["labels: choose at least 1 option"]),
        ("labels", ["bug", "feature", "docs"], ["labels: choose at most 2 options"]),
        ("labels", ["bug", "bug"], ["labels: 'bug' is chosen more than once"]),
        ("labels", "bug", ["labels: must be a list of choices, not 'bug'"]),
        ("labels", [1], ["labels: 1 is not one of bug, feature, docs"]),
        ("tones", ["A"], ["tones: 'A' is not one of a, b"]),
    ],
)
def test_each_problem_names_the_field_in_plain_words(field: str, value: Any, problems: list[str]) -> None:
    """EL-61 / EL-62: each check, with the message a person reads."""
    assert validate_content(SCHEMA, {"name": "Ada", "age": 36, field: value}) == problems


def test_missing_required_and_unknown_fields_are_named() -> None:
    small = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name"],
    }
    assert validate_content(small, {"nickname": "x"}) == [
        "name: is required",
        "nickname: not a field of this form (it has name, age)",
    ]


def test_several_problems_are_all_reported_in_field_order() -> None:
    content = {"name": "A", "age": 300, "color": "blue"}
    assert validate_content(SCHEMA, content) == [
        "name: must be at least 2 characters",
        "age: must be at most 120",
        "color: 'blue' is not one of red, green",
    ]


def test_one_value_can_break_several_rules() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"type": "string", "maxLength": 2, "pattern": "^a", "format": "email"}},
    }
    assert validate_content(schema, {"x": "bcd"}) == [
        "x: must be at most 2 characters",
        "x: does not match the pattern ^a",
        "x: not a valid e-mail address",
    ]


def test_the_answer_must_be_an_object() -> None:
    assert validate_content(SCHEMA, ["Ada"]) == ["the answer must be an object of fields, not a list"]
    assert validate_content(SCHEMA, None) == ["the answer must be an object of fields, not null"]


def test_integer_accepts_a_whole_float_as_json_schema_does() -> None:
    """JSON Schema: an integer is any number with a zero fraction, so 36.0 is one."""
    assert validate_content(SCHEMA, {"name": "Ada", "age": 36.0}) == []


def test_pattern_is_a_search_not_a_full_match() -> None:
    """JSON Schema ``pattern`` is not anchored: "abc123def" matches "[0-9]{3}"."""
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": "[0-9]{3}"}}}
    assert validate_content(schema, {"x": "abc123def"}) == []
    anchored = {"type": "object", "properties": {"x": {"type": "string", "pattern": "^[0-9]{3}$"}}}
    assert validate_content(anchored, {"x": "abc123def"}) == ["x: does not match the pattern ^[0-9]{3}$"]


def test_lengths_count_characters_not_bytes() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "maxLength": 2}}}
    assert validate_content(schema, {"x": "日本"}) == []


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        (
            "email",
            ["a@b.co", "first.last+tag@sub.example.org", "名前@例え.jp"],
            ["", "@b.co", "a@@b.co", "a@b", "a@.co", "a@b..co"],
        ),
        (
            "uri",
            ["https://x.org", "mailto:a@b.co", "urn:isbn:0451450523", "file:///tmp/x"],
            ["", "//x.org", "x.org", "1http://x", "http://a b"],
        ),
        ("date", ["2024-02-29", "0001-01-01"], ["2023-02-29", "2024-1-5", "2024-01-01T00:00:00Z", "today"]),
        (
            "date-time",
            [
                "2025-01-31T09:30:00Z",
                "2025-01-31t09:30:00z",
                "2025-01-31T09:30:00.123456789-05:00",
                "2016-12-31T23:59:60Z",
            ],
            ["2025-01-31 09:30:00Z", "2025-01-31T09:30Z", "2025-01-31T09:30:00+0100", "2025-01-31T09:30:61Z"],
        ),
    ],
)
def test_formats(fmt: str, good: list[str], bad: list[str]) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "format": fmt}}}
    for text in good:
        assert validate_content(schema, {"x": text}) == [], text
    for text in bad:
        assert validate_content(schema, {"x": text}) != [], text
