"""``Annotated`` markers that say what plain Python types cannot: choice labels and formats."""

from __future__ import annotations

__all__ = ["Format", "Titles"]

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from .errors import FormSchemaError
from .formats import FORMATS

FormatName = Literal["email", "uri", "date", "date-time"]


class Titles:
    """Labels for the choices of a ``Literal`` or ``Enum`` field, making it a titled select.

    ``Annotated[Literal["a", "b"], Titles({"a": "Alpha", "b": "Beta"})]`` becomes
    ``{"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}, ...]}``; on a
    ``list[...]`` it makes a titled multi-select. Keys may be the values or the
    ``Enum`` members themselves. A choice left out is labelled with its value;
    a key that is not a choice is an error when the form is built.
    """

    __slots__ = ("labels",)

    labels: tuple[tuple[str, str], ...]

    def __init__(self, labels: Mapping[str | enum.Enum, str]) -> None:
        pairs: list[tuple[str, str]] = []
        for key, label in labels.items():
            value = key.value if isinstance(key, enum.Enum) else key
            if not isinstance(value, str) or not isinstance(label, str):
                raise FormSchemaError(None, f"Titles maps string choices to string labels, not {key!r}: {label!r}")
            pairs.append((value, label))
        self.labels = tuple(pairs)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.labels)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Titles) and other.labels == self.labels

    def __hash__(self) -> int:
        return hash(self.labels)

    def __repr__(self) -> str:
        return f"Titles({dict(self.labels)!r})"


@dataclass(frozen=True, slots=True)
class Format:
    """The ``format`` of a text field: ``Annotated[str, Format("email")]``.

    Only the four formats a form may carry are accepted: ``email``, ``uri``,
    ``date``, ``date-time``. The value stays a ``str``; annotate with
    ``datetime.date`` / ``datetime.datetime`` instead to get those back.
    """

    name: FormatName

    def __post_init__(self) -> None:
        if self.name not in FORMATS:
            raise FormSchemaError(None, f"unknown format {self.name!r} (allowed: {', '.join(FORMATS)})")
