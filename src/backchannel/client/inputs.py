"""What the client answers when the server asks: elicitation, roots, sampling.

The same answers serve both eras: a handshake-era server sends these as
requests; a stateless-era server returns them as ``inputRequests`` and the
client retries with ``inputResponses``. The capabilities a client declares
follow from the handlers it was given, so nothing is declared that it cannot do.
"""

from __future__ import annotations

__all__ = ["ElicitationHandler", "InputHandlers", "RootsProvider", "SamplingHandler"]

import inspect
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeAlias

import msgspec

from ..forms.schema import apply_defaults, validate_content
from ..types.errors import InvalidParams, MethodNotFound

Answer: TypeAlias = dict[str, Any] | msgspec.Struct
#: Receives the ``elicitation/create`` params; returns ``{"action": ..., "content"?: ...}``.
ElicitationHandler = Callable[[dict[str, Any]], Awaitable[Answer] | Answer]
#: Receives the ``sampling/createMessage`` params; returns a ``CreateMessageResult``.
SamplingHandler = Callable[[dict[str, Any]], Awaitable[Answer] | Answer]
#: Roots as paths, ``file://`` URIs or ``{"uri", "name"?}`` dicts, or a callable returning them.
RootsProvider = Sequence[Any] | Callable[[], Sequence[Any] | Awaitable[Sequence[Any]]]


class InputHandlers:
    def __init__(
        self,
        *,
        elicitation: ElicitationHandler | None = None,
        url_elicitation: ElicitationHandler | None = None,
        roots: RootsProvider | None = None,
        sampling: SamplingHandler | None = None,
    ) -> None:
        self.elicitation = elicitation
        self.url_elicitation = url_elicitation
        self.roots = roots
        self.sampling = sampling

    def capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {}
        modes: dict[str, Any] = {}
        if self.elicitation is not None:
            modes["form"] = {}
        if self.url_elicitation is not None:
            modes["url"] = {}
        if modes:
            capabilities["elicitation"] = modes
        if self.roots is not None:
            capabilities["roots"] = {"listChanged": True}
        if self.sampling is not None:
            capabilities["sampling"] = {}
        return capabilities

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer to one server question; ``MethodNotFound`` or ``InvalidParams`` when we cannot."""
        if method == "elicitation/create":
            return await self._elicit(params)
        if method == "roots/list" and self.roots is not None:
            return {"roots": await self._roots()}
        if method == "sampling/createMessage" and self.sampling is not None:
            return _as_dict(await _maybe(self.sampling(params)))
        raise MethodNotFound(f"this client does not handle {method}")

    async def _elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        mode = params.get("mode", "form")
        handler = self.elicitation if mode == "form" else self.url_elicitation if mode == "url" else None
        if handler is None:
            raise InvalidParams(f"this client did not declare elicitation mode {mode!r}")
        answer = _as_dict(await _maybe(handler(params)))
        action = answer.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise InvalidParams(f"the elicitation handler answered with action {action!r}")
        if mode == "form" and action == "accept":
            schema = params.get("requestedSchema", {})
            content = apply_defaults(schema, answer.get("content") or {})
            problems = validate_content(schema, content)
            if problems:
                # Invalid data never leaves the client: the handler must ask its person again.
                raise InvalidParams("the accepted content does not fit the form: " + "; ".join(problems))
            answer = {**answer, "content": content}
        return answer

    async def _roots(self) -> list[dict[str, Any]]:
        provided = self.roots
        if callable(provided):
            provided = await _maybe(provided())
        assert provided is not None
        return [_root(item) for item in provided]


def _root(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        return item
    if isinstance(item, str) and item.startswith("file://"):
        return {"uri": item}
    path = Path(item).expanduser().resolve()
    return {"uri": path.as_uri(), "name": path.name or str(path)}


def _as_dict(answer: Answer) -> dict[str, Any]:
    if isinstance(answer, msgspec.Struct):
        converted = msgspec.to_builtins(answer)
        assert isinstance(converted, dict)
        return converted
    return answer


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
