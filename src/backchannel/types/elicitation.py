"""Elicitation: ``elicitation/create`` and its result.

A server request in 2025-06-18 and 2025-11-25; an MRTR input request in 2026-07-28
(see :mod:`backchannel.types.mrtr`).

The params are ``ElicitRequestFormParams | ElicitRequestURLParams``. Form mode may omit
``mode``, so there is no tag to decode the union by: fields holding either use
:class:`ElicitRequestParams`, which has every field of both optional, and
:attr:`ElicitRequestParams.effective_mode` tells them apart. The two subclasses are for
building params and for decoding when the mode is known.

The property schemas of ``requestedSchema`` stay plain JSON (``dict[str, Any]``); a
separate component validates them. The struct forms (``StringSchema`` ...) are here for
code that wants them: ``msgspec.convert(prop, StringSchema)``.
"""

from __future__ import annotations

__all__ = [
    "URL_FLOW_META",
    "URL_FLOW_WORDS",
    "BooleanSchema",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "ElicitationCompleteNotificationParams",
    "ElicitationMode",
    "EnumOption",
    "LegacyTitledEnumSchema",
    "NumberSchema",
    "PrimitiveSchemaDefinition",
    "RequestedSchema",
    "StringSchema",
    "TitledEnumItems",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledEnumItems",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
    "UrlFlowWord",
    "url_flow_heard",
    "url_flow_offer",
    "url_flow_offers",
    "url_flow_said",
]

from collections.abc import Iterable
from typing import Any, Literal, TypeAlias, cast

import msgspec

from .base import Model, NotificationParams, RequestParams, Result
from .tasks import TaskMetadata

ElicitationMode: TypeAlias = Literal["form", "url"]

#: One property schema of ``requestedSchema`` (string, number, boolean or enum), as JSON.
PrimitiveSchemaDefinition: TypeAlias = dict[str, Any]


class RequestedSchema(Model, kw_only=True):
    """The restricted JSON Schema of a form: a flat object of primitive properties."""

    schema_: str | None = msgspec.field(default=None, name="$schema")
    type: Literal["object"]
    properties: dict[str, PrimitiveSchemaDefinition]
    required: list[str] | None = None


class ElicitRequestParams(RequestParams, kw_only=True):
    """``elicitation/create`` params of either mode (the decoded form of the union).

    ``_meta`` and ``task`` exist only in 2025-11-25 and earlier; ``elicitationId``
    only in 2025-11-25 (required there for URL mode, removed in 2026-07-28).
    """

    mode: ElicitationMode | None = None
    message: str
    requested_schema: RequestedSchema | None = None
    url: str | None = None
    elicitation_id: str | None = None
    task: TaskMetadata | None = None

    @property
    def effective_mode(self) -> ElicitationMode:
        """The mode, with an omitted ``mode`` meaning ``"form"``."""
        return self.mode or "form"


class ElicitRequestFormParams(ElicitRequestParams, kw_only=True):
    """``elicitation/create`` in form mode: ``message`` and the flat ``requested_schema`` of the form to fill."""

    mode: Literal["form"] | None = None
    requested_schema: RequestedSchema


class ElicitRequestURLParams(ElicitRequestParams, kw_only=True):
    """``elicitation/create`` in URL mode: send the person to ``url`` (2025-11-25 and later)."""

    mode: Literal["url"]
    url: str


class ElicitResult(Result, kw_only=True):
    """The client's answer. ``content`` only for an accepted form.

    In 2026-07-28 this is an MRTR input response and carries neither ``_meta`` nor
    ``resultType``.
    """

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str]] | None = None


class ElicitationCompleteNotificationParams(NotificationParams, kw_only=True):
    """``notifications/elicitation/complete`` (2025-11-25 only)."""

    elicitation_id: str


# Property schemas (SEP-1330 enums, SEP-1034 defaults).


class StringSchema(Model, kw_only=True):
    """A text field of a form, with optional length bounds and a ``format`` (email, uri, date, date-time)."""

    type: Literal["string"]
    title: str | None = None
    description: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = None


class NumberSchema(Model, kw_only=True):
    """A number or integer field of a form, with optional bounds."""

    type: Literal["number", "integer"]
    title: str | None = None
    description: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    default: int | float | None = None


class BooleanSchema(Model, kw_only=True):
    """A yes/no field of a form."""

    type: Literal["boolean"]
    title: str | None = None
    description: str | None = None
    default: bool | None = None


class EnumOption(Model, kw_only=True):
    """A titled enum value: ``{"const": ..., "title": ...}``."""

    const: str
    title: str


class UntitledSingleSelectEnumSchema(Model, kw_only=True):
    """A pick-one field of a form whose choices are their own labels (``enum``)."""

    type: Literal["string"]
    title: str | None = None
    description: str | None = None
    enum: list[str]
    default: str | None = None


class TitledSingleSelectEnumSchema(Model, kw_only=True):
    """A pick-one field of a form whose choices have titles (``oneOf`` of ``const`` and ``title``)."""

    type: Literal["string"]
    title: str | None = None
    description: str | None = None
    one_of: list[EnumOption]
    default: str | None = None


class UntitledEnumItems(Model, kw_only=True):
    """The choices of an untitled multi-select field (``items.enum``)."""

    type: Literal["string"]
    enum: list[str]


class TitledEnumItems(Model, kw_only=True):
    """The choices of a titled multi-select field (``items.anyOf`` of ``const`` and ``title``)."""

    any_of: list[EnumOption]


class UntitledMultiSelectEnumSchema(Model, kw_only=True):
    """A pick-several field of a form whose choices are their own labels, with optional bounds on how many."""

    type: Literal["array"]
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    items: UntitledEnumItems
    default: list[str] | None = None


class TitledMultiSelectEnumSchema(Model, kw_only=True):
    """A pick-several field of a form whose choices have titles, with optional bounds on how many."""

    type: Literal["array"]
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    items: TitledEnumItems
    default: list[str] | None = None


class LegacyTitledEnumSchema(Model, kw_only=True):
    """Deprecated: use ``TitledSingleSelectEnumSchema``."""

    type: Literal["string"]
    title: str | None = None
    description: str | None = None
    enum: list[str]
    enum_names: list[str] | None = None
    default: str | None = None


# backchannel's manual controls over a URL flow (a convention, docs/protocol-conventions.md). While a
# person is away in the browser they may say "done", "cancel" or "fresh-link". A server that
# listens says so in ``_meta`` (the ``elicitation/create`` params in the handshake era; the
# ``InputRequiredResult``, per question key, in the stateless era); a client carries the word
# in ``_meta`` (its ``ElicitResult``; in the stateless era its retry's params, naming the
# question). The schemas allow ``_meta`` in each of those places, so a peer that does not know
# the key ignores it.

#: The ``_meta`` key of the convention.
URL_FLOW_META = "dev.backchannel/url-flow"
UrlFlowWord: TypeAlias = Literal["done", "cancel", "fresh-link"]
#: The words a person may say about a URL flow while it runs, in the order a UI offers them.
URL_FLOW_WORDS: tuple[UrlFlowWord, ...] = ("done", "cancel", "fresh-link")


def url_flow_offers(meta: Any, question: str | None = None) -> tuple[UrlFlowWord, ...]:
    """The words a server says it takes, read from a ``_meta`` object: its ``controls`` list
    (handshake era), or with ``question`` the list kept under that question's key (stateless
    era). Empty when the server said nothing: it takes no words."""
    entry = meta.get(URL_FLOW_META) if isinstance(meta, dict) else None
    listed = entry.get("controls") if isinstance(entry, dict) else None
    if question is not None:
        listed = listed.get(question) if isinstance(listed, dict) else None
    if not isinstance(listed, list):
        return ()
    return tuple(word for word in URL_FLOW_WORDS if word in listed)


def url_flow_offer(words: Iterable[UrlFlowWord], question: str | None = None) -> dict[str, Any]:
    """The ``_meta`` entry by which a server offers ``words`` (for ``question``, stateless era)."""
    listed = [word for word in URL_FLOW_WORDS if word in set(words)]
    return {URL_FLOW_META: {"controls": listed if question is None else {question: listed}}}


def url_flow_said(word: UrlFlowWord, question: str | None = None) -> dict[str, Any]:
    """The ``_meta`` entry carrying the person's ``word`` (about ``question``, stateless era)."""
    said: dict[str, Any] = {"said": word}
    if question is not None:
        said["question"] = question
    return {URL_FLOW_META: said}


def url_flow_heard(meta: Any) -> tuple[UrlFlowWord | None, str | None]:
    """The word a ``_meta`` object carries, and the question it names; ``(None, None)`` for none."""
    entry = meta.get(URL_FLOW_META) if isinstance(meta, dict) else None
    if not isinstance(entry, dict) or entry.get("said") not in URL_FLOW_WORDS:
        return None, None
    question = entry.get("question")
    return cast(UrlFlowWord, entry["said"]), question if isinstance(question, str) else None
