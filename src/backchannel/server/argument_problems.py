"""What was wrong with a call's arguments, said so a model can fix its next call.

pydantic's ``ValidationError`` becomes ``Problem`` triples (where, what is wrong, the error
type), worded the JSON way: "expected an integer, got \"3x\"", paths like ``items[2].name``.
``ParameterSet`` joins them into the ``InvalidArguments`` a tool call is refused with.
"""

from __future__ import annotations

__all__ = ["MAX_PROBLEMS", "Problem", "path_text", "problems_of", "short_json"]

import json
import re
from typing import Any

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
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
