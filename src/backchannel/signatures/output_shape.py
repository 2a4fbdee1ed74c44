"""A tool's return annotation → its ``outputSchema``, and each returned value → ``structuredContent``.

Decided once, at registration, like the arguments (``signature.py``): no annotation, ``None``,
``Any``, ``str``, ``bytes`` and content types give **no** schema (the value is sent as content
only); object-like types (dataclass, TypedDict, pydantic model, ``dict[str, X]``) are the schema
as is; anything else (``int``, ``list[str]``, unions...) is wrapped as ``{"result": value}``
because MCP requires an object at the top level. A type pydantic cannot describe (a plain
class) can only be content, so it gets no schema either.
"""

from __future__ import annotations

__all__ = ["OutputMismatch", "OutputShape", "derive_output"]

import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .annotations import (
    first_line,
    inline_root_ref,
    mentions,
    name_of,
    non_json_defaults_ignored,
    schema_generator,
    strip_annotated,
    type_hints,
    unwrap_awaitable,
)
from .argument_problems import path_text, problems_of
from .unsupported_types import SignatureError, where_defined

if TYPE_CHECKING:
    from pydantic import TypeAdapter

_NO_SCHEMA_RETURNS: tuple[Any, ...] = (None, type(None), Any, str, bytes, typing.NoReturn, typing.Never)


class OutputMismatch(ValueError):
    """A tool returned something its own return annotation does not allow.

    A bug in the tool, not in the client: the runtime should report it as an
    internal error rather than send structured content that breaks the schema.
    """


@dataclass(frozen=True, slots=True)
class OutputShape:
    """The result side of a tool: its ``outputSchema`` and how to fill it."""

    output_schema: dict[str, Any] | None
    wrapped: bool
    _adapter: TypeAdapter[Any] | None = field(default=None, repr=False, compare=False)
    _label: str = field(default="tool", repr=False, compare=False)

    def structure(self, value: Any) -> Any:
        """The ``structuredContent`` for ``value``, or None when there is no schema.

        The value is validated against the declared type first (lax, so a dict
        for a dataclass is fine) so that what we send always matches the schema
        we published; a mismatch raises ``OutputMismatch``.
        """
        if self._adapter is None:
            return None
        try:
            data = self._adapter.dump_python(self._adapter.validate_python(value), mode="json")
        except Exception as exc:
            if (mismatch := self._mismatch(exc)) is None:
                raise
            raise mismatch from None
        return {"result": data} if self.wrapped else data

    def _mismatch(self, exc: Exception) -> OutputMismatch | None:
        # Imported here, not per call: an adapter exists, so pydantic is loaded and this is a lookup.
        from pydantic import ValidationError
        from pydantic_core import PydanticSerializationError

        if isinstance(exc, ValidationError):
            message = "; ".join(f"{path_text(path)}: {text}" if path else text for path, text, _ in problems_of(exc))
            return OutputMismatch(
                f"{self._label} returned a value that does not match its return annotation: {message}"
            )
        if isinstance(exc, PydanticSerializationError):
            return OutputMismatch(f"{self._label} returned a value that cannot be serialized: {exc}")
        return None


def derive_output(
    fn: Callable[..., Any],
    *,
    what: str = "tool",
    name: str | None = None,
    content_types: tuple[type, ...] = (),
) -> OutputShape:
    """Decide the ``outputSchema`` of ``fn`` from its return annotation.

    ``content_types`` are the runtime's content block classes: returning them
    (or lists/unions of them) means "content", which has no output schema.
    """
    label = f"{what} {(name or name_of(fn))!r}"
    where = where_defined(what, name, fn)
    annotation = unwrap_awaitable(type_hints(fn, where).get("return", None))
    bare = strip_annotated(annotation)
    if any(bare is special for special in _NO_SCHEMA_RETURNS) or mentions(bare, content_types):
        return OutputShape(None, False, None, label)
    from pydantic import TypeAdapter
    from pydantic.errors import PydanticInvalidForJsonSchema, PydanticSchemaGenerationError, PydanticUserError

    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        with non_json_defaults_ignored():
            schema = adapter.json_schema(mode="serialization", schema_generator=schema_generator())
    except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema):
        return OutputShape(None, False, None, label)  # an arbitrary object: it can only be content
    except PydanticUserError as exc:  # a mistake in the annotation (e.g. typing.TypedDict on 3.11)
        raise SignatureError(f"{where}: return annotation: {first_line(exc)}") from None
    schema = inline_root_ref(schema)
    if schema.get("type") == "object":
        return OutputShape(schema, False, adapter, label)
    definitions = schema.pop("$defs", None)  # hoisted: "#/$defs/..." refs resolve from the root
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    wrapped |= {"$defs": definitions} if definitions else {}
    return OutputShape(wrapped, True, adapter, label)
