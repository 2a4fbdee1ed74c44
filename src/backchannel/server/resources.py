"""Resources and resource templates: data the client reads by URI."""

from __future__ import annotations

__all__ = ["RegisteredResource", "RegisteredTemplate", "to_contents"]

import base64
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..completion.completers import ArgumentCompleter
from ..signatures.signature import ParameterSet, derive_parameters
from ..types.content import BlobResourceContents, TextResourceContents
from ..types.uri_template import UriTemplate
from .definitions import wire_definition


@dataclass(slots=True)
class _Described:
    name: str
    fn: Callable[..., Any]
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    icons: list[dict[str, Any]] | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    definition: dict[str, Any] = field(default_factory=dict)

    def _describe(self, key: str, uri: str, extra: dict[str, Any]) -> dict[str, Any]:
        described = {key: uri, "name": self.name} | wire_definition(
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("icons", self.icons),
            ("annotations", self.annotations),
            ("_meta", self.meta),
        )
        return described | extra


@dataclass(slots=True)
class RegisteredResource(_Described):
    uri: str = ""
    size: int | None = None
    context_parameter: str | None = None

    def __post_init__(self) -> None:
        self.definition = self._describe("uri", self.uri, {"size": self.size} if self.size is not None else {})


@dataclass(slots=True)
class RegisteredTemplate(_Described):
    template: UriTemplate = field(default_factory=lambda: UriTemplate(""))
    parameters: ParameterSet | None = None
    #: Variable name -> its completer (``completion/complete``).
    completers: dict[str, ArgumentCompleter] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.definition = self._describe("uriTemplate", str(self.template), {})


def build_resource(
    uri: str,
    fn: Callable[..., Any],
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    size: int | None,
    icons: list[dict[str, Any]] | None,
    annotations: dict[str, Any] | None,
    meta: dict[str, Any] | None,
    context_type: type,
) -> RegisteredResource | RegisteredTemplate:
    """A static resource, or a template when ``uri`` has ``{variables}``."""
    template = UriTemplate(uri)
    common: dict[str, Any] = {
        "name": name or fn.__name__,
        "fn": fn,
        "title": title,
        "description": description or inspect.getdoc(fn),
        "mime_type": mime_type,
        "icons": icons,
        "annotations": annotations,
        "meta": meta,
    }
    parameters = derive_parameters(fn, context_type=context_type, what="resource", name=common["name"])
    declared = set(parameters.input_schema["properties"])
    if not template.variables:
        if parameters.input_schema.get("required"):
            raise TypeError(f"resource {uri!r}: a static resource's function cannot take required arguments")
        return RegisteredResource(**common, uri=uri, size=size, context_parameter=parameters.context_parameter)
    missing = set(parameters.input_schema.get("required", ())) - set(template.variables)
    unknown = set(template.variables) - declared
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"parameters not in the template: {', '.join(sorted(missing))}")
        if unknown:
            problems.append(f"template variables with no parameter: {', '.join(sorted(unknown))}")
        raise TypeError(f"resource template {uri!r} and {fn.__name__}(): " + "; ".join(problems))
    common["meta"] = parameters.with_argument_schema(meta)
    return RegisteredTemplate(**common, template=template, parameters=parameters)


def to_contents(uri: str, value: Any, mime_type: str | None) -> list[dict[str, Any]]:
    """A resource function's return value as ``ReadResourceResult.contents``.

    ``str`` is text, ``bytes`` a base64 blob; resource contents objects and
    lists of them pass through.
    """
    items = value if isinstance(value, list | tuple) else [value]
    return [_one(uri, item, mime_type) for item in items]


def _one(uri: str, item: Any, mime_type: str | None) -> dict[str, Any]:
    if isinstance(item, TextResourceContents | BlobResourceContents):
        return msgspec.to_builtins(item)  # type: ignore[no-any-return]
    if isinstance(item, dict) and ("text" in item or "blob" in item):
        return {"uri": uri, **item}
    contents: dict[str, Any] = {"uri": uri}
    if isinstance(item, bytes | bytearray | memoryview):
        contents["mimeType"] = mime_type or "application/octet-stream"
        contents["blob"] = base64.b64encode(bytes(item)).decode()
        return contents
    if mime_type:
        contents["mimeType"] = mime_type
    if isinstance(item, str):
        contents["text"] = item
    else:
        contents["text"] = msgspec.json.encode(item).decode()
        contents.setdefault("mimeType", "application/json")
    return contents
