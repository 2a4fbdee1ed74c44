"""What was wrong with a call's arguments, said so a model can fix its next call.

pydantic's ``ValidationError`` becomes ``Problem`` triples (where, what is wrong, the error
type), worded the JSON way: "expected an integer, got \"3x\"", paths like ``items[2].name``.
``ParameterSet`` joins them into the ``InvalidArguments`` a tool call is refused with.

One check is ours: a ``set`` (or ``frozenset``) is published with ``uniqueItems: true``, but
pydantic quietly drops repeated items. ``repeated_items`` finds them in the arguments as sent,
by the published schema, so that they are refused as the schema says.
"""

from __future__ import annotations

__all__ = ["MAX_PROBLEMS", "Problem", "is_refusal", "path_text", "problems_of", "repeated_items", "short_json"]

import re
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from pydantic import ValidationError

# (location, what is wrong, pydantic's error type or ours)
Problem = tuple[tuple[int | str, ...], str, str]

# What a model should send instead, for the errors it makes most often; said the JSON way.
_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "list_type": "an array",
    "tuple_type": "an array",
    "set_type": "an array",
    "frozen_set_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
    "none_required": "null",
}
_BOUNDS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal", "multiple_of"})
_SHOULD = "Input should be "
MAX_PROBLEMS = 20
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_$@-]{1,60}")


def is_refusal(exc: Exception) -> TypeGuard[ValidationError]:
    """Whether ``exc`` is pydantic's ``ValidationError`` (imported here: only a refused or converted call asks)."""
    from pydantic import ValidationError

    return isinstance(exc, ValidationError)


def problems_of(exc: ValidationError) -> list[Problem]:
    found: list[Problem] = []
    for error in exc.errors(include_url=False):
        kind = error["type"]
        if kind in ("missing", "missing_argument", "missing_keyword_only_argument"):
            found.append((error["loc"], "required field missing", kind))
            continue
        if kind in ("extra_forbidden", "unexpected_keyword_argument"):
            found.append((error["loc"], "unexpected field", kind))
            continue
        message = error["msg"]
        if kind in _EXPECTED:
            message = f"expected {_EXPECTED[kind]}"
        elif message.startswith(_SHOULD):
            message = f"expected {'a value ' if kind in _BOUNDS else ''}{message.removeprefix(_SHOULD)}"
        if "input" in error:
            message += f", got {short_json(error['input'])}"
        found.append((error["loc"], message, kind))
    return found


def path_text(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_NAME.fullmatch(part):
            text += f".{part}" if text else part
        else:  # a name a reader could not tell apart from the punctuation around it (or an empty one)
            text += f"[{short_json(part)}]"
    return text


def short_json(value: Any, limit: int = 60) -> str:
    # Said as JSON: the caller sent JSON, and a model reads `null` better than `None`.
    import json  # (for a refusal only: not loaded at start)

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def repeated_items(schema: dict[str, Any], arguments: Any) -> list[Problem]:
    """A problem for each array in ``arguments`` that repeats an item where ``schema`` says ``uniqueItems``.

    Items are compared the JSON Schema way (``1`` and ``1.0`` are equal, ``true`` and ``1`` are
    not). Where a union leaves it open which branch a value takes, nothing is claimed.
    """
    found: list[Problem] = []
    _walk(schema, arguments, (), schema.get("$defs") or {}, found)
    return found


def _walk(node: Any, value: Any, loc: tuple[int | str, ...], defs: dict[str, Any], found: list[Problem]) -> None:
    node = _resolved(node, defs)
    if not isinstance(node, dict):
        return
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            fitting = [branch for branch in node[key] if _fits(branch, value, defs)]
            if len(fitting) == 1:
                _walk(fitting[0], value, loc, defs, found)
            return
    if isinstance(value, list):
        if node.get("uniqueItems") is True and (repeated := _repeat(value)) is not None:
            said = f"expected an array of unique items ({repeated} appears more than once), got {short_json(value)}"
            found.append((loc, said, "unique_items"))
        prefix = node.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        for index, item in enumerate(value):
            _walk(prefix[index] if index < len(prefix) else node.get("items"), item, (*loc, index), defs, found)
    elif isinstance(value, dict):
        properties = node.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        for key, item in value.items():
            _walk(properties.get(key, node.get("additionalProperties")), item, (*loc, key), defs, found)


def _resolved(node: Any, defs: dict[str, Any]) -> Any:
    for _ in range(8):  # a $ref to a $ref: bounded, a loop of them cannot hang a call
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
            return node
        node = defs.get(ref.removeprefix("#/$defs/"))
    return None


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"))


def _fits(node: Any, value: Any, defs: dict[str, Any]) -> bool:
    node = _resolved(node, defs)
    if not isinstance(node, dict) or "type" not in node:
        return True  # a nested union, a const...: it may fit
    allowed = node["type"] if isinstance(node["type"], list) else [node["type"]]
    kind = "null" if value is None else "object" if isinstance(value, dict) else None
    kind = kind or next((name for cls, name in _JSON_TYPES if isinstance(value, cls)), None)
    whole = kind == "number" and float(value).is_integer()
    return kind in allowed or (kind == "integer" and "number" in allowed) or (whole and "integer" in allowed)


def _repeat(items: list[Any]) -> str | None:
    seen: set[Any] = set()
    for item in items:
        key = _comparable(item)
        if key in seen:
            return short_json(item)
        seen.add(key)
    return None


def _comparable(value: Any) -> Any:
    # JSON Schema equality: 1 == 1.0, key order does not matter, true is not 1.
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int | float):
        return ("number", float(value) if abs(value) < 2**53 else value)
    if isinstance(value, list):
        return ("array", tuple(_comparable(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((key, _comparable(item)) for key, item in value.items()))
    return ("other", repr(value))
