"""The fields of a form class, read the same way for dataclasses, TypedDicts and pydantic models.

Each class kind keeps names, types, defaults and requiredness in its own place;
this module turns them into one list of ``Member`` plus a function that builds
an instance from converted values, so the mapping to JSON Schema in
:mod:`.types` is written once.
"""

from __future__ import annotations

__all__ = ["NO_DEFAULT", "Member", "read_members"]

import dataclasses
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

import typing_extensions

from .errors import FormContentError, FormSchemaError
from .loaded import loaded
from .typeddict_compat import modernize

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

_REQUIREDNESS = (typing.Required, typing.NotRequired, typing_extensions.Required, typing_extensions.NotRequired)


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()

Build = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class Member:
    """One field: ``attr`` is the constructor keyword, ``wire`` the property name in the schema."""

    attr: str
    wire: str
    annotation: Any
    metadata: tuple[Any, ...]
    default: Any  # NO_DEFAULT when the field has none
    type_required: bool  # False for a TypedDict key marked NotRequired (or total=False)


def read_members(cls: type) -> tuple[list[Member], Build]:
    """The members of a dataclass, TypedDict or pydantic model, and its builder.

    Raises ``FormSchemaError`` for any other class, and for hints that do not resolve.
    """
    if not isinstance(cls, type) or get_args(cls):
        raise FormSchemaError(
            None, f"a form is a dataclass, TypedDict, pydantic model or JSON Schema dict, not {cls!r}"
        )
    if issubclass(cls, loaded("pydantic.main", "BaseModel")):
        return _model_members(cls), _model_builder(cls)
    if typing_extensions.is_typeddict(cls):
        return _typeddict_members(cls), dict
    if dataclasses.is_dataclass(cls):
        return _dataclass_members(cls), _dataclass_builder(cls)
    raise FormSchemaError(
        None,
        f"a form is a dataclass, TypedDict, pydantic model or JSON Schema dict, not {getattr(cls, '__name__', cls)!r}",
    )


def _hints(cls: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # NameError for unresolved forward references, and others
        raise FormSchemaError(cls.__name__, f"cannot resolve type hints: {exc}") from exc


def _refuse_annotated_default(cls: type, name: str, annotation: Any) -> None:
    if get_origin(annotation) is not Annotated:
        return
    for item in annotation.__metadata__:
        if isinstance(item, loaded("pydantic.fields", "FieldInfo")) and not item.is_required():
            raise FormSchemaError(
                f"{cls.__name__}.{name}",
                "a default inside Annotated[..., Field(...)] is not used; give the field a default",
            )


def _dataclass_members(cls: type) -> list[Member]:
    hints = _hints(cls)
    members = []
    for item in dataclasses.fields(cls):
        if not item.init:
            continue
        annotation = modernize(hints.get(item.name, Any))
        _refuse_annotated_default(cls, item.name, annotation)
        metadata: tuple[Any, ...] = ()
        default: Any = NO_DEFAULT
        if isinstance(item.default, loaded("pydantic.fields", "FieldInfo")):  # ``x: int = Field(3, ge=0)``
            metadata = (item.default,)
            if not item.default.is_required():
                default = item.default.get_default(call_default_factory=True, validated_data={})
        elif item.default is not dataclasses.MISSING:
            default = item.default
        elif item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        members.append(Member(item.name, item.name, annotation, metadata, default, True))
    return members


def _typeddict_members(cls: type) -> list[Member]:
    modern = modernize(cls)
    required_keys: frozenset[str] = modern.__required_keys__
    members = []
    for key, hint in _hints(modern).items():
        required = key in required_keys
        # An explicit marker wins: string annotations hide it from __required_keys__ before 3.12.
        while get_origin(hint) in _REQUIREDNESS:
            required = get_origin(hint) in (typing.Required, typing_extensions.Required)
            hint = get_args(hint)[0]
        _refuse_annotated_default(cls, key, hint)
        members.append(Member(key, key, hint, (), NO_DEFAULT, required))
    return members


def _model_members(cls: type[BaseModel]) -> list[Member]:
    from pydantic_core import PydanticUndefined

    members = []
    for name, info in cls.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        wire = alias or name
        default: Any = NO_DEFAULT
        if not info.is_required():
            try:
                default = info.get_default(call_default_factory=True, validated_data={})
            except Exception:  # a factory that needs the other fields: no default to show
                default = NO_DEFAULT
            if default is PydanticUndefined:
                default = NO_DEFAULT
        # The model validates by alias, so the wire name is also the key it is built from.
        members.append(Member(wire, wire, modernize(info.annotation), (info,), default, True))
    return members


def _dataclass_builder(cls: type) -> Build:
    def build(values: dict[str, Any]) -> Any:
        try:
            return cls(**values)
        except ValueError as exc:  # a check in __post_init__, or pydantic's ValidationError (a pydantic dataclass)
            if isinstance(exc, loaded("pydantic_core", "ValidationError")):
                raise FormContentError(_problems(exc)) from None
            raise FormContentError([str(exc)]) from None

    return build


def _model_builder(cls: type[BaseModel]) -> Build:
    from pydantic import ValidationError

    def build(values: dict[str, Any]) -> Any:
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise FormContentError(_problems(exc)) from None

    return build


def _problems(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"])
        problems.append(f"{where}: {error['msg']}" if where else error["msg"])
    return problems
