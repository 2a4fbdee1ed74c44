"""One field of a form: its JSON Schema property and the conversion of its answer back.

``member_property`` reads one member of a dataclass, TypedDict or pydantic model (its
annotation and metadata: ``Annotated`` strings, ``Field``, ``Titles``, ``Format``, bounds)
and says which primitive property it becomes, or raises ``FormSchemaError`` naming the field.
``FormSpec.from_type`` (``forms/types.py``) calls it for each member; the rules are in that
module's docstring.
"""

from __future__ import annotations

__all__ = ["Convert", "first_line", "member_property"]

import datetime
import enum
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args, get_origin

import typing_extensions

from .errors import FormSchemaError
from .formats import parse_date, parse_datetime
from .loaded import loaded
from .markers import Format, Titles
from .members import NO_DEFAULT, Member
from .schema import check_requested_schema
from .type_names import type_name

Convert = Callable[[Any], Any]
_CONTAINERS: dict[Any, Callable[[list[Any]], Any]] = {list: list, set: set, frozenset: frozenset, tuple: tuple}


# -- one field -------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Notes:
    """What the metadata of one field says, before it is known which apply."""

    title: str | None = None
    description: str | None = None
    titles: Titles | None = None
    format: str | None = None
    bounds: dict[str, Any] = field(default_factory=dict)  # ge, gt, le, lt, min_length, max_length, pattern

    def take(self, path: str, items: tuple[Any, ...] | list[Any]) -> None:
        for item in items:
            if isinstance(item, str):
                self.description = self.description or item
            elif isinstance(item, loaded("pydantic.fields", "FieldInfo")):
                self.title = item.title or self.title
                self.description = item.description or self.description
                self.take(path, item.metadata)
            elif isinstance(item, Titles):
                self.titles = item
            elif isinstance(item, Format):
                self.format = item.name
            elif isinstance(item, loaded("annotated_types", "MultipleOf")):
                raise FormSchemaError(path, "multiple_of cannot be expressed in a form")
            elif isinstance(item, loaded("annotated_types", "GroupedMetadata")):
                self.take(path, list(item))
            else:
                for key in ("ge", "gt", "le", "lt", "min_length", "max_length", "pattern"):
                    if getattr(item, key, None) is not None:
                        self.bounds[key] = getattr(item, key)


def member_property(path: str, member: Member) -> tuple[dict[str, Any], Convert, bool]:
    annotation, metadata = _unwrap(member.annotation, member.metadata)
    optional = False
    if get_origin(annotation) in (typing.Union, types.UnionType):
        others = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(others) != 1:
            raise FormSchemaError(path, f"a union ({type_name(annotation)}) cannot be one form field; only X | None")
        optional = True
        annotation, metadata = _unwrap(others[0], metadata)
    notes = _Notes()
    notes.take(path, metadata)
    prop, convert, to_wire = _base_property(path, annotation, notes)
    described: dict[str, Any] = {"type": prop.pop("type")}
    described |= {"title": notes.title} if notes.title else {}
    described |= {"description": notes.description} if notes.description else {}
    described |= prop
    if member.default is not NO_DEFAULT and member.default is not None:
        described["default"] = to_wire(member.default)
    try:
        check_requested_schema({"type": "object", "properties": {member.wire: described}})
    except FormSchemaError as exc:
        raise FormSchemaError(path, exc.problem) from None
    return described, convert, optional


def _unwrap(annotation: Any, metadata: tuple[Any, ...] | list[Any]) -> tuple[Any, list[Any]]:
    collected = list(metadata)
    while get_origin(annotation) is Annotated:
        collected = [*annotation.__metadata__, *collected]
        annotation = get_args(annotation)[0]
    return annotation, collected


def _base_property(path: str, annotation: Any, notes: _Notes) -> tuple[dict[str, Any], Convert, Convert]:
    """(schema without title/description, wire → Python, Python default → wire)."""
    text = _text_format(path, annotation, notes)
    if text is None and notes.format is not None:
        raise FormSchemaError(
            path, f"Format({notes.format!r}) applies only to text fields, not {type_name(annotation)}"
        )
    choices = _choice_values(path, annotation)
    if choices is not None:
        _refuse(path, notes, "a choice field", "ge", "gt", "le", "lt", "min_length", "max_length", "pattern")
        values, convert = choices
        return _choice_schema(path, values, notes.titles, multi=False), convert, _enum_value
    if notes.titles is not None and get_origin(annotation) not in _CONTAINERS:
        raise FormSchemaError(path, "Titles applies only to Literal or Enum choices")
    if annotation is bool:
        _refuse(path, notes, "a yes/no field", "ge", "gt", "le", "lt", "min_length", "max_length", "pattern")
        return {"type": "boolean"}, _same, _same
    if annotation in (int, float):
        return _number_property(path, annotation, notes)
    if text is not None:
        fmt, convert, to_wire = text
        _refuse(path, notes, "a text field", "ge", "gt", "le", "lt")
        prop: dict[str, Any] = {"type": "string"}
        if fmt:
            prop["format"] = fmt
        for key, name in (("min_length", "minLength"), ("max_length", "maxLength"), ("pattern", "pattern")):
            if key in notes.bounds:
                prop[name] = notes.bounds[key]
        return prop, convert, to_wire
    if get_origin(annotation) in _CONTAINERS:
        return _multi_property(path, annotation, notes)
    raise FormSchemaError(path, _why_not(annotation))


def _number_property(path: str, annotation: Any, notes: _Notes) -> tuple[dict[str, Any], Convert, Convert]:
    _refuse(path, notes, "a number field", "min_length", "max_length", "pattern")
    integer = annotation is int
    prop: dict[str, Any] = {"type": "integer" if integer else "number"}
    for strict, key, step in (("gt", "minimum", 1), ("lt", "maximum", -1)):
        if strict in notes.bounds:
            if not integer:
                raise FormSchemaError(path, f"{strict} cannot be expressed in a form for a float; use {strict[0]}e")
            prop[key] = math.floor(notes.bounds[strict]) + 1 if step > 0 else math.ceil(notes.bounds[strict]) - 1
    for loose, key in (("ge", "minimum"), ("le", "maximum")):
        if loose in notes.bounds:
            prop[key] = notes.bounds[loose]
    return prop, (_to_int if integer else float), _same


def _text_format(path: str, annotation: Any, notes: _Notes) -> tuple[str | None, Convert, Convert] | None:
    known: tuple[str | None, Convert, Convert] | None = None
    if annotation is str:
        known = (None, _same, _same)
    elif annotation is loaded("pydantic.networks", "EmailStr"):
        known = ("email", _same, _same)
    elif isinstance(annotation, type) and issubclass(annotation, loaded("pydantic.networks", "AnyUrl")):
        known = ("uri", _url(annotation), str)
    elif annotation is datetime.datetime:
        known = ("date-time", parse_datetime, _isoformat)
    elif annotation is datetime.date:
        known = ("date", parse_date, _isoformat)
    if known is None:
        return None
    if notes.format is not None:
        if known[0] is None:
            return (notes.format, _same, _same)
        if notes.format != known[0]:
            raise FormSchemaError(path, f"Format({notes.format!r}) does not fit a {type_name(annotation)} field")
    return known


def _multi_property(path: str, annotation: Any, notes: _Notes) -> tuple[dict[str, Any], Convert, Convert]:
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
        raise FormSchemaError(path, "a tuple field must be tuple[X, ...] of choices")
    item, item_metadata = _unwrap(args[0] if args else Any, ())
    item_notes = _Notes()
    item_notes.take(path, item_metadata)
    choices = _choice_values(path, item)
    if choices is None:
        raise FormSchemaError(
            path, f"a list field must be a multi-select of Literal or str-Enum choices, not {type_name(annotation)}"
        )
    _refuse(path, notes, "a multi-select", "ge", "gt", "le", "lt", "pattern")
    values, item_convert = choices
    prop = _choice_schema(path, values, notes.titles or item_notes.titles, multi=True)
    for key, name in (("min_length", "minItems"), ("max_length", "maxItems")):
        if key in notes.bounds:
            prop[name] = notes.bounds[key]
    container = _CONTAINERS[origin]

    def convert(value: list[Any]) -> Any:
        return container([item_convert(each) for each in value])

    def to_wire(value: Any) -> Any:
        if not isinstance(value, set | frozenset):
            return [_enum_value(each) for each in value]
        chosen = {_enum_value(each) for each in value}  # no order of its own: use the choices' order
        return [choice for choice in values if choice in chosen] + sorted(chosen - set(values), key=str)

    return prop, convert, to_wire


def _choice_values(path: str, annotation: Any) -> tuple[list[str], Convert] | None:
    if get_origin(annotation) is Literal:
        values = list(get_args(annotation))
        if not all(isinstance(value, str) for value in values):
            raise FormSchemaError(path, f"choices must be strings, not {type_name(annotation)}")
        return values, _same
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = [member.value for member in annotation]
        if not values or not all(isinstance(value, str) for value in values):
            raise FormSchemaError(path, f"the Enum {annotation.__name__} must have string values to be choices")
        return values, annotation
    return None


def _choice_schema(path: str, values: list[str], titles: Titles | None, *, multi: bool) -> dict[str, Any]:
    if titles is None:
        options: dict[str, Any] = {"type": "string", "enum": values}
    else:
        labels = dict(titles.labels)
        unknown = [key for key in labels if key not in values]
        if unknown:
            raise FormSchemaError(path, f"Titles names {', '.join(map(repr, unknown))}, which is not a choice")
        listed = [{"const": value, "title": labels.get(value, value)} for value in values]
        options = {"anyOf": listed} if multi else {"type": "string", "oneOf": listed}
    return {"type": "array", "items": options} if multi else options


def _refuse(path: str, notes: _Notes, what: str, *keys: str) -> None:
    for key in keys:
        if key in notes.bounds:
            raise FormSchemaError(path, f"{key} does not apply to {what}")


def _why_not(annotation: Any) -> str:
    origin = get_origin(annotation) or annotation
    nested = (
        (isinstance(origin, type) and issubclass(origin, (loaded("pydantic.main", "BaseModel"), dict)))
        or typing_extensions.is_typeddict(origin)
        or (isinstance(origin, type) and hasattr(origin, "__dataclass_fields__"))
    )
    if nested:
        return f"nested objects ({type_name(annotation)}) are not allowed in a form; use flat fields"
    return (
        f"{type_name(annotation)} cannot be a form field; use str, int, float, bool, date, datetime, "
        "a Literal or str-Enum choice, or a list of those choices"
    )


# -- small conversions -----------------------------------------------------------------------------


def _same(value: Any) -> Any:
    return value


def _to_int(value: Any) -> int:
    return int(value)  # 3.0 is an integer in JSON Schema


def _url(cls: type) -> Convert:
    def convert(value: str) -> Any:
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"not a valid URL for {cls.__name__}") from None

    return convert


def _enum_value(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def _isoformat(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime.date) else value


def first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
