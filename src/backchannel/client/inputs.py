"""What the client answers when the server asks: elicitation, roots, sampling.

The same answers serve both eras: a handshake-era server sends these as
requests; a stateless-era server returns them as ``inputRequests`` and the
client retries with ``inputResponses``. The capabilities a client declares
follow from the handlers it was given, so nothing is declared that it cannot do.
"""

from __future__ import annotations

__all__ = [
    "ElicitationHandler",
    "InputHandlers",
    "RootsConsent",
    "RootsProvider",
    "SamplingHandler",
    "SamplingResultError",
    "normalise_root",
]

import asyncio
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeAlias

import msgspec

from ..forms.errors import FormSchemaError
from ..forms.schema import apply_defaults, check_requested_schema, validate_content
from ..protocol.roots import path_from_file_uri
from ..protocol.sampling import SamplingProblem, check_request, check_result
from ..runtime.local_paths import normalise_path
from ..types.errors import InternalError, InvalidParams, MethodNotFound
from ..types.roots import Root, RootMarks, root_marks
from .url_flow import UrlElicitation, UrlElicitationHandler, UrlFlowTracker
from .url_flow import answer as answer_url

Answer: TypeAlias = dict[str, Any] | msgspec.Struct
#: Receives the ``elicitation/create`` params; returns ``{"action": ..., "content"?: ...}``.
ElicitationHandler = Callable[[dict[str, Any]], Awaitable[Answer] | Answer]
#: Receives the ``sampling/createMessage`` params; returns a ``CreateMessageResult``.
SamplingHandler = Callable[[dict[str, Any]], Awaitable[Answer] | Answer]
#: Roots as paths, ``file://`` URIs, ``Root`` structs or ``{"uri", "name"?, "_meta"?}`` dicts, or a callable
#: returning them. ``Root.marked(path, read_only=True, sensitive=True)`` marks one (``docs/protocol-conventions.md``).
RootsProvider = Sequence[Any] | Callable[[], Sequence[Any] | Awaitable[Sequence[Any]]]
#: Asked once, before roots are first shown to the server: True lets them go.
RootsConsent = Callable[[list[Root]], bool | Awaitable[bool]]

logger = logging.getLogger("backchannel.client")
_EMPTY_FORM: dict[str, Any] = {"type": "object", "properties": {}}


class SamplingResultError(InternalError):
    """The sampling handler returned something that is not a valid ``CreateMessageResult``.

    Raised locally; in the handshake era the server is answered with -32603."""


class InputHandlers:
    def __init__(
        self,
        *,
        elicitation: ElicitationHandler | None = None,
        url_elicitation: UrlElicitationHandler | None = None,
        roots: RootsProvider | None = None,
        sampling: SamplingHandler | None = None,
        roots_consent: RootsConsent | None = None,
        resolve_symlinks: bool = True,
        sampling_tools: bool = False,
    ) -> None:
        """``roots`` are normalised before they are exposed: ``file://`` only (anything
        else is a ``ValueError``), relative paths made absolute against the working
        directory, ``..`` removed, symlinks resolved unless ``resolve_symlinks`` is
        False. ``roots_consent`` is called once, with the normalised roots, before the
        server first sees them; if it refuses, every ``roots/list`` is answered with an
        empty list. ``sampling_tools`` declares ``sampling.tools``: the sampling
        handler may be offered tools."""
        self.elicitation = elicitation
        self.url_elicitation = url_elicitation
        #: Shown to the URL handler as who is asking (the client sets it once connected).
        self.server_name = "the server"
        #: Handshake-era URL flows this client accepted, and which the server reported complete.
        self.url_flows = UrlFlowTracker()
        self.resolve_symlinks = resolve_symlinks
        self.roots = self._checked(roots)
        self.roots_consent = roots_consent
        self.sampling = sampling
        self.sampling_tools = sampling_tools
        self._consent: bool | None = None
        self._consent_lock = asyncio.Lock()
        self._last_roots: list[Root] | None = None  # the set as last computed, to tell a change

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
            capabilities["sampling"] = {"tools": {}} if self.sampling_tools else {}
        return capabilities

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer to one server question; ``MethodNotFound`` or ``InvalidParams`` when we cannot."""
        if method == "elicitation/create":
            return await self._elicit(params)
        if method == "roots/list" and self.roots is not None:
            return {"roots": await self._exposed_roots()}
        if method == "sampling/createMessage" and self.sampling is not None:
            return await self._sample(params)
        raise MethodNotFound(f"this client does not handle {method}")

    async def _sample(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.sampling is not None
        try:
            check_request(params)
        except SamplingProblem as exc:
            raise InvalidParams(str(exc), data={"problems": exc.problems}) from None
        if params.get("tools") and not self.sampling_tools:
            raise InvalidParams("sampling/createMessage offers tools, but this client did not declare sampling.tools")
        answer = _as_dict(await _maybe(self.sampling(params)))
        try:
            check_result(answer, tools_offered=bool(params.get("tools")), what="the sampling handler's result")
        except SamplingProblem as exc:
            logger.error("%s; the server is told of an internal error", exc)
            raise SamplingResultError(str(exc), data={"problems": exc.problems}) from None
        return answer

    async def _elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        mode = params.get("mode", "form")
        if not isinstance(params.get("message"), str):
            raise InvalidParams("elicitation/create: params.message must be a string")
        if mode == "form":
            # Checked before the handler sees it: what reaches a person is a form that can be shown,
            # and the accepted content is then validated against a schema known to be sound.
            schema = params.get("requestedSchema")
            try:
                check_requested_schema(_EMPTY_FORM if schema is None else schema)
            except FormSchemaError as exc:
                raise InvalidParams(f"elicitation/create: params.requestedSchema is not a valid form: {exc}") from None
        if mode == "url" and self.url_elicitation is not None:
            request = UrlElicitation.from_params(params, self.server_name)
            if request.elicitation_id is not None:
                self.url_flows.expect(request.elicitation_id)  # its completion may be announced
            return await answer_url(self.url_elicitation, request, self.url_flows)  # held while the person has a say
        handler = self.elicitation if mode == "form" else None
        if handler is None:
            raise InvalidParams(f"this client did not declare elicitation mode {mode!r}")
        answer = _as_dict(await _maybe(handler(params)))
        action = answer.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise InvalidParams(f"the elicitation handler answered with action {action!r}")
        if mode == "form" and action == "accept":
            schema = params.get("requestedSchema") or _EMPTY_FORM
            content = apply_defaults(schema, answer.get("content") or {})
            problems = validate_content(schema, content)
            if problems:
                # Invalid data never leaves the client: the handler must ask its person again.
                raise InvalidParams("the accepted content does not fit the form: " + "; ".join(problems))
            answer = {**answer, "content": content}
        return answer

    def _checked(self, roots: RootsProvider | None) -> RootsProvider | None:
        """A list of roots normalised now, so a bad one fails where it was given."""
        if roots is None or callable(roots):
            return roots
        return [normalise_root(item, resolve_symlinks=self.resolve_symlinks) for item in roots]

    async def current_roots(self) -> list[Root] | None:
        """The roots as they stand, normalised (consent aside); None without a provider."""
        provided = self.roots
        if provided is None:
            return None
        if callable(provided):
            provided = await _maybe(provided())
        roots = [normalise_root(item, resolve_symlinks=self.resolve_symlinks) for item in provided or ()]
        self._last_roots = roots
        return roots

    async def _exposed_roots(self) -> list[dict[str, Any]]:
        roots = await self.current_roots() or []
        if self.roots_consent is not None:
            async with self._consent_lock:
                if self._consent is None:
                    self._consent = bool(await _maybe(self.roots_consent(list(roots))))
            if not self._consent:
                return []
        return [_root_dict(root) for root in roots]

    @property
    def roots_refused(self) -> bool:
        """True once the consent hook refused: the server sees no roots."""
        return self._consent is False

    async def set_roots(self, roots: RootsProvider | None) -> bool:
        """Replace the roots provider; True when the set of roots changed since it was last
        computed (so passing the same callable again tells whether what it returns changed)."""
        before = self._last_roots if self._last_roots is not None else await self.current_roots()
        self.roots = self._checked(roots)
        after = await self.current_roots()
        return _key(before) != _key(after)


def normalise_root(item: Any, *, resolve_symlinks: bool = True) -> Root:
    """One root as a ``Root`` with a normalised ``file://`` URI.

    ``item`` is a path (``str`` or ``os.PathLike``), a ``file://`` URI, a ``Root`` or a
    ``{"uri", "name"?}`` dict. Other URI schemes and remote ``file://`` hosts are a
    ``ValueError``; relative paths count from the working directory.
    """
    name: str | None = None
    meta: dict[str, Any] | None = None
    if isinstance(item, Root):
        target: Any = item.uri
        name, meta = item.name, item.meta
    elif isinstance(item, dict):
        target = item.get("uri")
        name, meta = item.get("name"), item.get("_meta")
        if not isinstance(target, str):
            raise ValueError(f"a root needs a uri string: {item!r}")
    else:
        target = item
    if isinstance(target, str) and ("://" in target or target[:5].lower() == "file:"):
        path = path_from_file_uri(target)
        if path is None:
            raise ValueError(f"roots must be local file:// URIs, not {target!r}")
    elif isinstance(target, str | os.PathLike):
        # On the text as given: Path("./~x") would drop the "./" and expand a user "x" (or raise).
        path = Path(os.path.expanduser(target))
    else:
        raise ValueError(f"a root is a path, a file:// URI, a Root or a dict, not {item!r}")
    resolved = normalise_path(path, resolve_symlinks=resolve_symlinks)
    return Root(uri=resolved.as_uri(), name=name or resolved.name or str(resolved), meta=meta)


def _root_dict(root: Root) -> dict[str, Any]:
    converted = msgspec.to_builtins(root)
    assert isinstance(converted, dict)
    return converted


def _key(roots: list[Root] | None) -> frozenset[tuple[str, str | None, RootMarks]] | None:
    # A root marked read-only or sensitive since is a change the server must hear about.
    return None if roots is None else frozenset((root.uri, root.name, root_marks(root.meta)) for root in roots)


def _as_dict(answer: Answer) -> dict[str, Any]:
    if isinstance(answer, msgspec.Struct):
        converted = msgspec.to_builtins(answer)
        assert isinstance(converted, dict)
        return converted
    return answer


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
