"""One input field, from a JSON Schema property: its hint, how text becomes a value, what is wrong with it.

Shared by tool arguments (any JSON Schema in ``inputSchema``) and elicitation
forms (the flat ``requestedSchema``). A property that a form could hold (text,
number, yes/no, single or multi choice) is parsed from plain text and checked
with :func:`backchannel.forms.validate_content`; anything else (objects, lists
of numbers, unions) is typed as JSON.
"""

from __future__ import annotations

__all__ = ["OMIT", "Field", "field_from_schema", "fields_of"]

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from ..forms import choices, is_multi_select, validate_content
from ..forms.formats import FORMATS
from ..types.wording import counted

Kind = Literal["text", "integer", "number", "boolean", "select", "multi", "json"]

#: What a blank answer to an optional field parses to: leave the field out.
OMIT: Any = object()

_YES = ("y", "yes", "true", "t", "1", "on")
_NO = ("n", "no", "false", "f", "0", "off")
_FORMAT_HINTS = {
    "email": "e-mail address, e.g. name@example.com",
    "uri": "URI, e.g. https://example.com/page",
    "date": "date, YYYY-MM-DD",
    "date-time": "date and time, e.g. 2025-01-31T09:30:00Z",
    "time": "time, HH:MM:SS",
}


@dataclass(frozen=True)
class Field:
    name: str
    prop: dict[str, Any]
    required: bool
    kind: Kind

    @property
    def label(self) -> str:
        title = self.prop.get("title")
        return title if isinstance(title, str) and title else self.name

    @property
    def description(self) -> str | None:
        text = self.prop.get("description")
        return text if isinstance(text, str) and text else None

    @property
    def choices(self) -> list[tuple[str, str]]:
        """``(value, label)`` pairs of a choice field; ``[]`` for others."""
        if self.kind == "select":
            return _options(self.prop)
        if self.kind == "multi":
            return _options(self.prop["items"])
        return []

    @property
    def has_default(self) -> bool:
        return "default" in self.prop

    def hint(self) -> str:
        """What the field wants, in a few words: ``whole number, 1 to 10``."""
        prop, parts = self.prop, []
        if self.kind == "text":
            fmt = prop.get("format")
            parts.append(_FORMAT_HINTS.get(fmt, f"text ({fmt})") if isinstance(fmt, str) else "text")
            low, high = prop.get("minLength"), prop.get("maxLength")
            if low is not None and low == high:
                parts.append(f"exactly {counted(low, 'character')}")
            elif low is not None and high is not None:
                parts.append(f"{_plain(low)} to {counted(high, 'character')}")
            elif low is not None:
                parts.append(f"at least {counted(low, 'character')}")
            elif high is not None:
                parts.append(f"at most {counted(high, 'character')}")
            if "pattern" in prop:
                parts.append(f"matching {prop['pattern']}")
        elif self.kind in ("integer", "number"):
            parts.append("whole number" if self.kind == "integer" else "number")
            low, high = _bound(prop, "minimum", "exclusiveMinimum"), _bound(prop, "maximum", "exclusiveMaximum")
            if low and high:
                parts.append(f"{low[1]} to {high[1]}")
            elif low:
                parts.append(f"{'more than' if low[0] else 'at least'} {low[1]}")
            elif high:
                parts.append(f"{'less than' if high[0] else 'at most'} {high[1]}")
        elif self.kind == "boolean":
            parts.append("yes/no")
        elif self.kind == "select":
            parts.append("choose one: number, value or label")
        elif self.kind == "multi":
            parts.append("choose any, separated by commas")
            low, high = prop.get("minItems"), prop.get("maxItems")
            if low:
                parts.append(f"at least {counted(low, 'choice')}")
            if high is not None:
                parts.append(f"at most {counted(high, 'choice')}")
        else:
            kind = prop.get("type")
            parts.append(f"JSON{f' {kind}' if isinstance(kind, str) else ''}")
        if self.has_default:
            parts.append(f"default {self.to_text(self.prop['default'])}")
        return ", ".join(parts)

    def default_text(self) -> str:
        return self.to_text(self.prop["default"]) if self.has_default else ""

    def completions(self) -> list[str]:
        if self.kind == "boolean":
            return ["yes", "no"]
        if self.kind in ("select", "multi"):
            return [value for value, _ in self.choices]
        return []

    def to_text(self, value: Any) -> str:
        """A value written the way ``parse`` reads it back."""
        if self.kind == "boolean" and isinstance(value, bool):
            return "yes" if value else "no"
        if self.kind == "multi" and isinstance(value, list):
            return ", ".join(str(item) for item in value)
        if isinstance(value, str) and self.kind != "json":
            return value
        return json.dumps(value)

    def parse(self, text: str) -> Any:
        """The value for ``text``; ``OMIT`` for a blank answer; ``ValueError`` saying what is wrong."""
        if not text.strip():
            return OMIT
        if self.kind == "text":
            return text  # as typed: spaces inside or around text may matter
        text = text.strip()
        if self.kind == "boolean":
            lowered = text.lower()
            if lowered in _YES:
                return True
            if lowered in _NO:
                return False
            raise ValueError("answer yes or no")
        if self.kind in ("integer", "number"):
            return _number(text, integer=self.kind == "integer")
        if self.kind == "select":
            return self._choice(text)
        if self.kind == "multi":
            return [self._choice(item.strip()) for item in text.split(",") if item.strip()]
        try:
            return json.loads(text)
        except ValueError:
            if _allows_string(self.prop):
                return text
            raise ValueError("not valid JSON") from None

    def _choice(self, text: str) -> str:
        options = self.choices
        if text.isdigit() and 1 <= int(text) <= len(options) and text not in (value for value, _ in options):
            return options[int(text) - 1][0]
        for value, _ in options:
            if text == value:
                return value
        lowered = text.casefold()
        for value, label in options:
            if lowered in (value.casefold(), label.casefold()):
                return value
        listing = ", ".join(value if value == label else f"{value} ({label})" for value, label in options)
        raise ValueError(f"{text!r} is not one of {listing}")

    def problems(self, value: Any) -> list[str]:
        """What is wrong with ``value`` for this field (a missing required value included); ``[]`` if fine."""
        if value is OMIT:
            return ["is required"] if self.required else []
        if self.kind == "json":
            return _json_problems(self.prop, value)
        schema = {"type": "object", "properties": {self.name: self._checkable()}}
        prefix = f"{self.name}: "
        problems = [p.removeprefix(prefix) for p in validate_content(schema, {self.name: value})]
        if self.kind in ("integer", "number") and not problems:
            low, high = self.prop.get("exclusiveMinimum"), self.prop.get("exclusiveMaximum")
            if _is_number(low) and value <= low:
                problems.append(f"must be more than {low}")
            if _is_number(high) and value >= high:
                problems.append(f"must be less than {high}")
        return problems

    def _checkable(self) -> dict[str, Any]:
        """The property reduced to what the form checker knows (and can check without failing)."""
        prop = self.prop
        if self.kind in ("integer", "number"):
            keys: tuple[str, ...] = ("minimum", "maximum")
            checkable: dict[str, Any] = {"type": self.kind}
        elif self.kind == "text":
            keys = ("minLength", "maxLength")
            checkable = {"type": "string"}
            if prop.get("format") in FORMATS:
                checkable["format"] = prop["format"]
            if isinstance(prop.get("pattern"), str) and _compiles(prop["pattern"]):
                checkable["pattern"] = prop["pattern"]
        elif self.kind == "select":
            return {"type": "string", "enum": [value for value, _ in self.choices]}
        elif self.kind == "multi":
            keys = ("minItems", "maxItems")
            checkable = {"type": "array", "items": {"type": "string", "enum": [value for value, _ in self.choices]}}
        else:
            return {"type": "boolean"}
        checkable.update({key: prop[key] for key in keys if _is_number(prop.get(key))})
        return checkable


def _options(prop: Any) -> list[tuple[str, str]]:
    if not isinstance(prop, dict):
        return []
    for key in ("oneOf", "anyOf"):
        if _titled(prop.get(key)):
            return [(option["const"], str(option.get("title") or option["const"])) for option in prop[key]]
    if "enumNames" in prop:
        return choices(prop)
    return [(value, value) for value in prop.get("enum", ()) if isinstance(value, str)]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _plain(n: Any) -> str:
    return str(int(n)) if isinstance(n, float) and n.is_integer() else str(n)


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _bound(prop: dict[str, Any], inclusive: str, exclusive: str) -> tuple[bool, str] | None:
    for key, is_exclusive in ((exclusive, True), (inclusive, False)):
        value = prop.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return is_exclusive, str(int(value)) if float(value).is_integer() else str(value)
    return None


def _number(text: str, *, integer: bool) -> int | float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not {'a whole number' if integer else 'a number'}") from None
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    if integer:
        if not value.is_integer():
            raise ValueError(f"{text!r} is not a whole number")
        return int(value)
    plain = text.lstrip("+-").isdigit()
    return int(text) if plain else value


def _allows_string(prop: dict[str, Any]) -> bool:
    kind = prop.get("type")
    if kind is None:
        return not any(key in prop for key in ("anyOf", "oneOf", "enum", "const"))
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def _json_problems(prop: dict[str, Any], value: Any) -> list[str]:
    kind = prop.get("type")
    names = {
        "object": dict,
        "array": list,
        "string": str,
        "boolean": bool,
        "null": type(None),
        "integer": int,
        "number": int | float,
    }
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    if kinds and not any(
        isinstance(value, names[k]) and not (k in ("integer", "number") and isinstance(value, bool))
        for k in kinds
        if k in names
    ):
        return [f"must be {' or '.join(kinds)}"]
    return []


# -- from a schema ---------------------------------------------------------------------------------


def field_from_schema(name: str, prop: Any, required: bool) -> Field:
    """The field for one property of an object schema (a tool's ``inputSchema`` or a form)."""
    if not isinstance(prop, dict):
        return Field(name, {}, required, "json")
    prop = _without_null(prop)
    kind = prop.get("type")
    if kind == "string" or (kind is None and _string_enum(prop)):
        if _string_enum(prop) or _titled(prop.get("oneOf")):
            return Field(name, {**prop, "type": "string"}, required, "select")
        if not any(key in prop for key in ("anyOf", "oneOf", "allOf", "const")):
            return Field(name, prop, required, "text")
    if kind in ("integer", "number"):
        return Field(name, prop, required, kind)
    if kind == "boolean":
        return Field(name, prop, required, "boolean")
    if is_multi_select(prop) and isinstance(prop.get("items"), dict):
        items = _without_null(prop["items"])
        if _string_enum(items) or any(_titled(items.get(key)) for key in ("anyOf", "oneOf")):
            return Field(name, {**prop, "items": items}, required, "multi")
    return Field(name, prop, required, "json")


def fields_of(schema: Any) -> list[Field]:
    """The fields of an object schema, in order; ``[]`` when it has no ``properties``."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return []
    required = schema.get("required")
    names = set(required) if isinstance(required, list) else set()
    return [field_from_schema(name, prop, name in names) for name, prop in schema["properties"].items()]


def _without_null(prop: dict[str, Any]) -> dict[str, Any]:
    """``Optional[X]`` as JSON Schema writes it (``anyOf: [X, {type: null}]`` or ``type: [x, "null"]``) → X."""
    for key in ("anyOf", "oneOf"):
        options = prop.get(key)
        if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
            (inner,) = [option for option in options if option != {"type": "null"}]
            if isinstance(inner, dict):
                outer = {k: v for k, v in prop.items() if k != key}
                return {**inner, **outer}
    kind = prop.get("type")
    if isinstance(kind, list) and "null" in kind and len(kind) == 2:
        (inner_kind,) = [k for k in kind if k != "null"]
        return {**prop, "type": inner_kind}
    return prop


def _string_enum(prop: dict[str, Any]) -> bool:
    values = prop.get("enum")
    return isinstance(values, list) and bool(values) and all(isinstance(value, str) for value in values)


def _titled(options: Any) -> bool:
    return (
        isinstance(options, list)
        and bool(options)
        and all(isinstance(option, dict) and isinstance(option.get("const"), str) for option in options)
    )
