"""The wire-level form: ``requestedSchema`` checked, answers validated, defaults filled.

Pure stdlib, no I/O: a server checks its schema before sending, a client checks
what it received, fills defaults (SEP-1034) and validates the user's answer
before replying (EL-61), and the server validates the answer again (EL-62).

A form is ``{"type": "object", "properties": {...}, "required"?: [...]}`` with
optional ``$schema``, ``title`` and ``description``, and each property is one of
the shapes of ``PrimitiveSchemaDefinition`` (2025-11-25):

====================  ===========================================================
text                  ``type: string`` + minLength, maxLength, pattern, format
number                ``type: number | integer`` + minimum, maximum
yes/no                ``type: boolean``
single-select         ``type: string`` + ``enum`` | ``oneOf: [{const, title}]``
                      | legacy ``enum`` + ``enumNames`` (accepted, never generated)
multi-select          ``type: array`` + ``items: {type: string, enum}`` |
                      ``items: {anyOf: [{const, title}]}``, + minItems, maxItems
====================  ===========================================================

Every shape takes ``title``, ``description`` and ``default``. Anything else is
refused by name, so that a typo (``minlength``) or a feature the client would
ignore (``$ref``, ``additionalProperties``) fails loudly on our side.

Decisions where JSON Schema and Python differ:

* ``integer`` accepts ``3.0``: JSON Schema counts any number with a zero
  fraction as an integer, and a JSON decoder may hand us ``3.0``. ``True`` is
  never a number.
* ``pattern`` is a search, not anchored (JSON Schema); write ``^...$`` to
  anchor. It runs with Python ``re``, which agrees with ECMA-262 on ordinary
  patterns.
* ``null`` is not an answer to any field: leave an optional field out instead.
* Multi-select answers must not repeat a choice.
* Titled multi-select items use ``anyOf`` (the schema); ``oneOf`` there, as
  written in SEP-1330's prose, is accepted too.
"""

from __future__ import annotations

__all__ = ["apply_defaults", "check_requested_schema", "choices", "is_multi_select", "validate_content"]

import copy
import functools
import math
import re
from typing import Any

from ..types.wording import counted
from .errors import FormSchemaError
from .formats import FORMATS, format_problem

_COMMON = frozenset({"type", "title", "description", "default"})
_KEYS = {
    "text": _COMMON | {"minLength", "maxLength", "pattern", "format"},
    "number": _COMMON | {"minimum", "maximum"},
    "yes/no": _COMMON,
    "single-select": _COMMON | {"enum"},
    "titled single-select": _COMMON | {"oneOf"},
    "legacy single-select": _COMMON | {"enum", "enumNames"},
    "multi-select": _COMMON | {"items", "minItems", "maxItems"},
}
_TOP_KEYS = frozenset({"$schema", "type", "title", "description", "properties", "required"})


# -- checking the schema ---------------------------------------------------------------------------


def check_requested_schema(schema: Any) -> None:
    """Raise ``FormSchemaError`` unless ``schema`` is a valid flat form schema.

    The error names the field and the problem (``"age: 'minimum' must be a
    number"``). Defaults are checked against their own field, so a schema that
    passes can be pre-filled (EL-14) without producing an invalid answer.
    """
    if not isinstance(schema, dict):
        raise FormSchemaError(None, f"a form schema must be a JSON object, not {_type_name(schema)}")
    for key in schema:
        if key not in _TOP_KEYS:
            raise FormSchemaError(None, f"{key!r} is not allowed at the top of a form schema")
    if schema.get("type") != "object":
        raise FormSchemaError(None, 'a form schema must have "type": "object"')
    for key in ("$schema", "title", "description"):
        if key in schema and not isinstance(schema[key], str):
            raise FormSchemaError(None, f"{key!r} must be a string")
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        raise FormSchemaError(None, 'a form schema needs "properties", an object of fields')
    for name, prop in properties.items():
        if not isinstance(name, str) or not name:
            raise FormSchemaError(None, f"field names must be non-empty strings, not {name!r}")
        _check_property(name, prop)
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(item, str) for item in required):
        raise FormSchemaError(None, '"required" must be a list of field names')
    for index, item in enumerate(required):
        if item not in properties:
            raise FormSchemaError(item, 'is listed in "required" but is not a field of the form')
        if item in required[:index]:
            raise FormSchemaError(item, 'is listed in "required" twice')


def _kind(name: str, prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        raise FormSchemaError(name, "'$ref' is not allowed; write the field out in full")
    kind = prop.get("type")
    if kind == "object" or "properties" in prop:
        raise FormSchemaError(name, "nested objects are not allowed in a form; use flat fields")
    if kind == "array":
        return "multi-select"
    if kind == "string":
        if "oneOf" in prop:
            return "titled single-select"
        if "enum" in prop:
            return "legacy single-select" if "enumNames" in prop else "single-select"
        return "text"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "yes/no"
    if kind is None:
        raise FormSchemaError(name, "missing 'type' (string, number, integer, boolean or array)")
    raise FormSchemaError(name, f"'type' must be string, number, integer, boolean or array, not {kind!r}")


def _check_property(name: str, prop: Any) -> None:
    if not isinstance(prop, dict):
        raise FormSchemaError(name, f"must be a JSON object describing the field, not {_type_name(prop)}")
    kind = _kind(name, prop)
    for key in prop:
        if key not in _KEYS[kind]:
            raise FormSchemaError(name, f"{key!r} is not allowed on a {kind} field")
    for key in ("title", "description"):
        if key in prop and not isinstance(prop[key], str):
            raise FormSchemaError(name, f"{key!r} must be a string")
    if kind == "text":
        _check_bounds(name, prop, "minLength", "maxLength", whole=True)
        if "pattern" in prop:
            _check_pattern(name, prop["pattern"])
        if "format" in prop and prop["format"] not in FORMATS:
            raise FormSchemaError(name, f"unknown format {prop['format']!r} (allowed: {', '.join(FORMATS)})")
    elif kind == "number":
        _check_bounds(name, prop, "minimum", "maximum", whole=False)
    elif kind == "multi-select":
        _check_items(name, prop.get("items"))
        _check_bounds(name, prop, "minItems", "maxItems", whole=True)
        if prop.get("minItems", 0) > len(_options(prop)):
            have = len(_options(prop))
            there = f"there {'is' if have == 1 else 'are'} only {counted(have, 'choice')}"
            raise FormSchemaError(name, f"'minItems' is {_number(prop['minItems'])} but {there}")
    elif kind != "yes/no":
        _check_single_select(name, prop)
    if "default" in prop:
        problems = _value_problems(prop, prop["default"])
        if problems:
            raise FormSchemaError(name, f"the default {_short(prop['default'])} is not valid: {problems[0]}")


def _check_bounds(name: str, prop: dict[str, Any], low: str, high: str, *, whole: bool) -> None:
    for key in (low, high):
        if key not in prop:
            continue
        value = prop[key]
        if not _is_number(value) or not math.isfinite(value):
            raise FormSchemaError(name, f"{key!r} must be a number")
        if whole and (value < 0 or value != int(value)):
            raise FormSchemaError(name, f"{key!r} must be a whole number, 0 or more")
    if low in prop and high in prop and prop[low] > prop[high]:
        raise FormSchemaError(name, f"{low!r} ({prop[low]}) is greater than {high!r} ({prop[high]})")


def _check_pattern(name: str, pattern: Any) -> None:
    if not isinstance(pattern, str):
        raise FormSchemaError(name, "'pattern' must be a string")
    try:
        _compiled(pattern)
    except re.error as exc:
        raise FormSchemaError(name, f"'pattern' is not a valid regular expression: {exc}") from None


def _check_single_select(name: str, prop: dict[str, Any]) -> None:
    if "oneOf" in prop:
        _check_titled_options(name, "oneOf", prop["oneOf"])
        return
    _check_values(name, "enum", prop["enum"])
    if "enumNames" in prop:
        names = prop["enumNames"]
        if not isinstance(names, list) or not all(isinstance(item, str) for item in names):
            raise FormSchemaError(name, "'enumNames' must be a list of strings")
        if len(names) != len(prop["enum"]):
            have, values = counted(len(names), "name"), counted(len(prop["enum"]), "value")
            raise FormSchemaError(name, f"'enumNames' has {have} for {values}")


def _check_items(name: str, items: Any) -> None:
    if not isinstance(items, dict):
        raise FormSchemaError(name, "a multi-select needs 'items' listing its choices; other arrays are not allowed")
    titled = [key for key in ("anyOf", "oneOf") if key in items]
    if titled:
        for key in items:
            if key not in ("anyOf", "oneOf", "type"):
                raise FormSchemaError(name, f"{key!r} is not allowed in the 'items' of a multi-select")
        if len(titled) > 1 or items.get("type", "string") != "string":
            raise FormSchemaError(name, 'titled multi-select \'items\' must be {"anyOf": [{"const", "title"}, ...]}')
        _check_titled_options(name, f"items.{titled[0]}", items[titled[0]])
        return
    if items.get("type") != "string" or "enum" not in items:
        raise FormSchemaError(
            name, 'arrays are only allowed as multi-selects, with \'items\' of {"type": "string", "enum": [...]}'
        )
    for key in items:
        if key not in ("type", "enum"):
            raise FormSchemaError(name, f"{key!r} is not allowed in the 'items' of a multi-select")
    _check_values(name, "items.enum", items["enum"])


def _check_values(name: str, where: str, values: Any) -> None:
    if not isinstance(values, list) or not values or not all(isinstance(item, str) for item in values):
        raise FormSchemaError(name, f"{where!r} must be a non-empty list of strings")
    if len(set(values)) != len(values):
        raise FormSchemaError(name, f"{where!r} lists a value twice")


def _check_titled_options(name: str, where: str, options: Any) -> None:
    if not isinstance(options, list) or not options:
        raise FormSchemaError(name, f'{where!r} must be a non-empty list of {{"const", "title"}} choices')
    for option in options:
        if (
            not isinstance(option, dict)
            or set(option) != {"const", "title"}
            or not isinstance(option["const"], str)
            or not isinstance(option["title"], str)
        ):
            raise FormSchemaError(name, f'each choice in {where!r} must be {{"const": str, "title": str}}')
    _check_values(name, where, [option["const"] for option in options])


# -- reading the schema ----------------------------------------------------------------------------


def is_multi_select(property_schema: dict[str, Any]) -> bool:
    """True for a multi-select field (an array of choices): render checkboxes, send a list."""
    return property_schema.get("type") == "array"


def choices(property_schema: dict[str, Any]) -> list[tuple[str, str]]:
    """The ``(value, label)`` pairs of a choice field, in order; ``[]`` for other fields.

    Works for all five SEP-1330 shapes. Untitled values are their own labels.
    Send the value, show the label.
    """
    return _options(property_schema)


def _options(prop: dict[str, Any]) -> list[tuple[str, str]]:
    source = prop.get("items", {}) if is_multi_select(prop) else prop
    if not isinstance(source, dict):
        return []
    for key in ("oneOf", "anyOf"):
        if isinstance(source.get(key), list):
            return [(option["const"], option["title"]) for option in source[key]]
    values = source.get("enum")
    if not isinstance(values, list):
        return []
    names = source.get("enumNames")
    return list(zip(values, names, strict=True)) if isinstance(names, list) else [(value, value) for value in values]


def apply_defaults(schema: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``content`` with each omitted field that has a ``default`` filled in.

    What a client does before sending an accept (SEP-1034, EL-14); values the
    user gave are kept as they are. The defaults are copied, never shared.
    """
    filled = dict(content)
    for name, prop in schema.get("properties", {}).items():
        if name not in filled and isinstance(prop, dict) and "default" in prop:
            filled[name] = copy.deepcopy(prop["default"])
    return filled


# -- validating an answer --------------------------------------------------------------------------


def validate_content(schema: dict[str, Any], content: Any) -> list[str]:
    """Every problem with ``content`` as an answer to ``schema``; ``[]`` means valid.

    ``schema`` must have passed ``check_requested_schema``. Each problem starts
    with the field name (``"age: must be at most 120"``); show them to the user
    and ask again. Missing required fields, fields the form does not have, and
    each field's type, range, length, pattern, format and choices are checked.
    """
    if not isinstance(content, dict):
        return [f"the answer must be an object of fields, not {_type_name(content)}"]
    properties: dict[str, Any] = schema.get("properties", {})
    required = schema.get("required", ())  # a short list (``check_requested_schema``): no set needed
    problems: list[str] = []
    answered = 0  # (every answer a server gets comes here: valid content builds no strings)
    for name, prop in properties.items():
        if name in content:
            answered += 1
            if found := _value_problems(prop, content[name]):
                problems.extend(f"{name}: {problem}" for problem in found)
        elif name in required:
            problems.append(f"{name}: is required")
    if answered < len(content):  # some of its fields are not the form's
        known = ", ".join(properties) or "no fields"
        problems.extend(
            f"{name}: not a field of this form (it has {known})" for name in content if name not in properties
        )
    return problems


def _value_problems(prop: dict[str, Any], value: Any) -> list[str]:
    kind = prop.get("type")
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"must be true or false, not {_short(value)}"]
    if kind in ("number", "integer"):
        return _number_problems(prop, value)
    if kind == "array":
        return _multi_problems(prop, value)
    if not isinstance(value, str):
        return [f"must be text, not {_short(value)}"]
    options = _options(prop) if "enum" in prop or "oneOf" in prop or "anyOf" in prop else None
    if options:
        values = [option for option, _ in options]
        return [] if value in values else [f"{_short(value)} is not one of {', '.join(values)}"]
    return _text_problems(prop, value)


def _number_problems(prop: dict[str, Any], value: Any) -> list[str]:
    integer = prop["type"] == "integer"
    if not _is_number(value) or not math.isfinite(value):
        return [f"must be {'a whole number' if integer else 'a number'}, not {_short(value)}"]
    if integer and value != int(value):
        return [f"must be a whole number, not {_short(value)}"]
    problems = []
    if "minimum" in prop and value < prop["minimum"]:
        problems.append(f"must be at least {_number(prop['minimum'])}")
    if "maximum" in prop and value > prop["maximum"]:
        problems.append(f"must be at most {_number(prop['maximum'])}")
    return problems


def _text_problems(prop: dict[str, Any], value: str) -> list[str]:
    problems = []
    if "minLength" in prop and len(value) < prop["minLength"]:
        problems.append(f"must be at least {counted(prop['minLength'], 'character')}")
    if "maxLength" in prop and len(value) > prop["maxLength"]:
        problems.append(f"must be at most {counted(prop['maxLength'], 'character')}")
    if "pattern" in prop and _compiled(prop["pattern"]).search(value) is None:
        problems.append(f"does not match the pattern {prop['pattern']}")
    if "format" in prop and (problem := format_problem(prop["format"], value)):
        problems.append(problem)
    return problems


def _multi_problems(prop: dict[str, Any], value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"must be a list of choices, not {_short(value)}"]
    values = [option for option, _ in _options(prop)]
    problems = []
    seen: list[Any] = []
    for item in value:
        if item not in values or not isinstance(item, str):
            problems.append(f"{_short(item)} is not one of {', '.join(values)}")
        elif item in seen:
            problems.append(f"{_short(item)} is chosen more than once")
        seen.append(item)
    if "minItems" in prop and len(value) < prop["minItems"]:
        problems.append(f"choose at least {counted(prop['minItems'], 'option')}")
    if "maxItems" in prop and len(value) > prop["maxItems"]:
        problems.append(f"choose at most {counted(prop['maxItems'], 'option')}")
    return problems


# -- helpers ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(value: float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _type_name(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number" if _is_number(value) else type(value).__name__)


def _short(value: Any, limit: int = 40) -> str:
    text = "null" if value is None else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
