"""Parameters of plain JSON types are described and checked without pydantic, exactly as pydantic would.

Each function below is derived twice: the ordinary way (which takes the plain path when it can)
and with the plain path turned off (pydantic's model and schema, as before the plain path
existed). The schemas must be equal, and every call must get the same keyword arguments (same
values, same types) or the same refusal, word for word.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from backchannel.server import Context
from backchannel.server.completion import Complete
from backchannel.signatures import signature
from backchannel.signatures.signature import ParameterSet, derive_parameters
from backchannel.types.errors import InvalidParams


def scalars(text: str, count: int, ratio: float, flag: bool) -> str:
    return text


def defaults(
    text: str = "hi",
    count: int = 3,
    ratio: float = 0.5,
    flag: bool = False,
    maybe: str = None,  # type: ignore[assignment]  # noqa: RUF013  # pydantic publishes and returns it as is
    odd: int = True,
    whole: float = 2,
) -> str:
    return text


def described(word: Annotated[str, "the word to use"], n: int = 1) -> str:
    """Say a word.

    Args:
        n: how many times
    """
    return word * n


def completed(word: Annotated[str, Complete(["alpha", "beta"])], ctx: Context) -> str:
    return word


def nothing() -> str:
    return ""


PLAIN = [scalars, defaults, described, completed, nothing]


def optional(count: int | None = None) -> str:
    return ""


def bounded(count: Annotated[int, Field(gt=0)]) -> str:
    return ""


def field_default(count: int = Field(3, description="how many")) -> str:
    return ""


def listed(items: list[str]) -> str:
    return ""


def rest(text: str, **more: int) -> str:
    return ""


def sentinel(text: str = object()) -> str:  # type: ignore[assignment]  # not JSON: pydantic leaves it out
    return ""


NOT_PLAIN = [optional, bounded, field_default, listed, rest, sentinel]

ARGUMENTS: list[Any] = [
    None,
    {},
    {"text": "a", "count": 1, "ratio": 1.5, "flag": True},
    {"text": "a", "count": 1, "ratio": 2, "flag": False},  # an int for a float: pydantic gives 2.0
    {"text": "a", "count": 1, "ratio": 2**60, "flag": False},
    {"text": "a", "count": "3", "ratio": "1.5", "flag": "true"},  # converted by pydantic
    {"text": "a", "count": True, "ratio": 1.0, "flag": 1},
    {"text": "a", "count": 3.0, "ratio": 1.0, "flag": True},
    {"text": "a", "count": 3.5, "ratio": 1.0, "flag": True},
    {"text": 5, "count": None, "ratio": [], "flag": "maybe"},
    {"text": "a"},
    {"text": "a", "count": 1, "ratio": 1.0, "flag": True, "extra": 1},
    {"word": "alpha", "n": 2},
    {"word": "alpha", "n": "2"},
    {"word": 3},
    {"word": "alpha", "ctx": "mine"},
    {"maybe": None, "odd": 4, "whole": 1.25},
    {"unknown": 1},
]


def _pydantic_twin(fn: Any, what: str, monkeypatch: pytest.MonkeyPatch) -> ParameterSet:
    """``fn`` derived with the plain path off: what the code did before it."""
    with monkeypatch.context() as patch:
        patch.setattr(signature, "plain_field", lambda *args: None)
        return signature._derive_parameters(fn, Context, frozenset(), what, None, f"{what} {fn.__name__!r}")


def _outcome(parameters: ParameterSet, arguments: Any) -> Any:
    try:
        kwargs = parameters.validate(arguments)
    except InvalidParams as exc:
        return type(exc).__name__, str(exc), exc.data
    return {name: (value, type(value)) for name, value in kwargs.items()}


@pytest.mark.parametrize("what", ["tool", "prompt"])
@pytest.mark.parametrize("fn", PLAIN, ids=lambda fn: fn.__name__)
def test_plain_signatures_match_pydantic(fn: Any, what: str, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = derive_parameters(fn, context_type=Context, what=what)
    twin = _pydantic_twin(fn, what, monkeypatch)
    assert plain._plain is not None, "the plain path was not taken"
    assert twin._plain is None or fn is nothing  # no parameter: nothing for the switch to turn off
    assert plain.input_schema == twin.input_schema
    assert list(plain.input_schema["properties"]) == list(twin.input_schema["properties"])
    for arguments in ARGUMENTS:
        assert _outcome(plain, arguments) == _outcome(twin, arguments), arguments


@pytest.mark.parametrize("fn", NOT_PLAIN, ids=lambda fn: fn.__name__)
def test_other_signatures_keep_pydantic(fn: Any) -> None:
    # A bound, a Field, a union, a container, **kwargs, a default that is not JSON: pydantic's.
    assert derive_parameters(fn, context_type=Context)._plain is None


def test_plain_schemas_as_published() -> None:
    schema = derive_parameters(described).input_schema
    assert schema == {
        "type": "object",
        "properties": {
            "word": {"description": "the word to use", "type": "string"},
            "n": {"default": 1, "description": "how many times", "type": "integer"},
        },
        "required": ["word"],
        "additionalProperties": False,
    }
