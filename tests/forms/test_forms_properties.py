"""Hypothesis: generated flat forms are accepted, and answers generated to fit them validate.

Each property strategy draws a schema and the strategy of the values that fit
it, so the two can never drift apart. A drawn default is also a fitting value,
which checks SEP-1034 defaults on every type along the way.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.provisional import urls

from backchannel.forms import (
    FormSpec,
    apply_defaults,
    check_requested_schema,
    choices,
    is_multi_select,
    validate_content,
)

Field = tuple[dict[str, Any], st.SearchStrategy[Any]]

labels = st.text(min_size=1, max_size=12)
values = st.lists(st.text(max_size=8), min_size=1, max_size=6, unique=True)
zones = st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59).map(
    lambda minutes: datetime.timezone(datetime.timedelta(minutes=minutes))
)
uri_texts = urls() | st.tuples(
    st.from_regex(r"[A-Za-z][A-Za-z0-9+.\-]{0,8}", fullmatch=True),
    st.text(st.characters(blacklist_categories=["Zs", "Zl", "Zp", "Cc", "Cs"]), min_size=1, max_size=10).filter(
        lambda text: not any(char.isspace() for char in text)
    ),
).map(lambda parts: f"{parts[0]}:{parts[1]}")
FORMAT_VALUES: dict[str, st.SearchStrategy[str]] = {
    "email": st.emails(),
    "uri": uri_texts,
    "date": st.dates().map(datetime.date.isoformat),
    "date-time": st.datetimes(timezones=zones).map(datetime.datetime.isoformat)
    | st.datetimes().map(lambda moment: moment.isoformat(timespec="seconds") + "Z"),
}
PATTERNS = ["^[a-z]+$", "[0-9]{3}", "^abc", "x|y", "^$"]


@st.composite
def text_fields(draw: st.DrawFn) -> Field:
    flavour = draw(st.sampled_from(["plain", "lengths", "pattern", "format"]))
    if flavour == "lengths":
        low = draw(st.integers(0, 10))
        high = draw(st.integers(low, 20))
        return {"type": "string", "minLength": low, "maxLength": high}, st.text(min_size=low, max_size=high)
    if flavour == "pattern":
        pattern = draw(st.sampled_from(PATTERNS))
        return {"type": "string", "pattern": pattern}, st.from_regex(pattern)
    if flavour == "format":
        fmt = draw(st.sampled_from(sorted(FORMAT_VALUES)))
        return {"type": "string", "format": fmt}, FORMAT_VALUES[fmt]
    return {"type": "string"}, st.text()


@st.composite
def number_fields(draw: st.DrawFn) -> Field:
    integer = draw(st.booleans())
    bounds = st.integers(-1000, 1000) if integer else st.floats(-1e6, 1e6, allow_nan=False)
    low = draw(st.none() | bounds)
    high = draw(st.none() | bounds.filter(lambda high: low is None or high >= low))
    prop: dict[str, Any] = {"type": "integer" if integer else "number"}
    prop |= {"minimum": low} if low is not None else {}
    prop |= {"maximum": high} if high is not None else {}
    if integer:
        strategy: st.SearchStrategy[Any] = st.integers(low, high)
    else:  # a JSON number may arrive as a Python int too
        strategy = st.floats(low, high, allow_nan=False, allow_infinity=False)
        whole_low = None if low is None else math.ceil(low)
        whole_high = None if high is None else math.floor(high)
        if whole_low is None or whole_high is None or whole_low <= whole_high:
            strategy |= st.integers(whole_low, whole_high)
    return prop, strategy


@st.composite
def choice_fields(draw: st.DrawFn) -> Field:
    options = draw(values)
    shape = draw(st.sampled_from(["untitled", "titled", "legacy", "multi", "titled multi"]))
    titled = [{"const": value, "title": draw(labels)} for value in options]
    if shape == "untitled":
        return {"type": "string", "enum": options}, st.sampled_from(options)
    if shape == "titled":
        return {"type": "string", "oneOf": titled}, st.sampled_from(options)
    if shape == "legacy":
        names = [option["title"] for option in titled]
        return {"type": "string", "enum": options, "enumNames": names}, st.sampled_from(options)
    low = draw(st.integers(0, len(options)))
    high = draw(st.none() | st.integers(low, len(options) + 2))
    items = {"anyOf": titled} if shape == "titled multi" else {"type": "string", "enum": options}
    prop: dict[str, Any] = {"type": "array", "items": items}
    prop |= {"minItems": low} if low else {}
    prop |= {"maxItems": high} if high is not None else {}
    return prop, st.lists(st.sampled_from(options), min_size=low, max_size=high, unique=True)


@st.composite
def fields(draw: st.DrawFn) -> Field:
    prop, strategy = draw(
        st.one_of(text_fields(), number_fields(), choice_fields(), st.just(({"type": "boolean"}, st.booleans())))
    )
    if draw(st.booleans()):
        prop["title"] = draw(labels)
    if draw(st.booleans()):
        prop["description"] = draw(labels)
    if draw(st.booleans()):
        prop["default"] = draw(strategy)
    return prop, strategy


@st.composite
def forms(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A flat form and an answer that fits it."""
    drawn = draw(st.dictionaries(st.text(min_size=1, max_size=10), fields(), max_size=6))
    required = [name for name in drawn if draw(st.booleans())]
    schema: dict[str, Any] = {"type": "object", "properties": {name: prop for name, (prop, _) in drawn.items()}}
    if required:
        schema["required"] = required
    content = {name: draw(strategy) for name, (_, strategy) in drawn.items() if name in required or draw(st.booleans())}
    return schema, content


@settings(max_examples=300)
@given(forms())
def test_generated_forms_are_valid_and_fitting_answers_validate(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """EL-13 / EL-61 / EL-62, SEP-1034: a flat form passes the check; an answer that fits it has no problems,
    before and after its defaults are applied."""
    schema, content = case
    check_requested_schema(schema)
    assert validate_content(schema, content) == []
    assert validate_content(schema, apply_defaults(schema, content)) == []
    assert FormSpec.from_type(schema).parse(content) == apply_defaults(schema, content)


@given(forms(), st.text(min_size=1))
def test_an_unknown_field_is_always_reported(case: tuple[dict[str, Any], dict[str, Any]], name: str) -> None:
    schema, content = case
    if name in schema["properties"]:
        return
    assert validate_content(schema, {**content, name: 1}) == [
        f"{name}: not a field of this form (it has {', '.join(schema['properties']) or 'no fields'})"
    ]


@given(forms())
def test_a_missing_required_field_is_always_reported(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    schema, content = case
    for name in schema.get("required", []):
        assert validate_content(schema, {key: value for key, value in content.items() if key != name}) == [
            f"{name}: is required"
        ]


@given(choice_fields())
def test_choices_lists_every_allowed_value(field: Field) -> None:
    """SEP-1330: every enum shape yields (value, label) pairs, and each value is a valid answer."""
    prop, _ = field
    pairs = choices(prop)
    assert pairs
    schema = {"type": "object", "properties": {"x": prop}}
    for value, _label in pairs:
        answer = [value] if is_multi_select(prop) else value
        if not is_multi_select(prop) or prop.get("minItems", 0) <= 1 <= prop.get("maxItems", 1):
            assert validate_content(schema, {"x": answer}) == []
