"""Argument completion: ``completion/complete``."""

from __future__ import annotations

__all__ = [
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "CompletionReference",
    "PromptReference",
    "ResourceTemplateReference",
]

from typing import TypeAlias

from .base import Model, RequestParams, Result


class PromptReference(Model, kw_only=True, tag_field="type", tag="ref/prompt"):
    """What ``completion/complete`` completes for: an argument of prompt ``name``."""

    name: str
    title: str | None = None


class ResourceTemplateReference(Model, kw_only=True, tag_field="type", tag="ref/resource"):
    """A resource URI or URI template."""

    uri: str


#: What is being completed; tagged on ``type``.
CompletionReference: TypeAlias = PromptReference | ResourceTemplateReference


class CompletionArgument(Model, kw_only=True):
    """The argument being completed: its ``name`` and the ``value`` typed so far."""

    name: str
    value: str


class CompletionContext(Model, kw_only=True):
    """The other arguments' values already chosen, for a completer that depends on them."""

    #: Already-resolved arguments of the prompt or URI template.
    arguments: dict[str, str] | None = None


class CompleteRequestParams(RequestParams, kw_only=True):
    """``completion/complete``: complete ``argument`` of ``ref``, knowing ``context``."""

    ref: CompletionReference
    argument: CompletionArgument
    context: CompletionContext | None = None


class Completion(Model, kw_only=True):
    """The suggested ``values`` (at most 100), with ``total`` and ``has_more`` when there are more."""

    #: At most 100 values.
    values: list[str]
    total: int | None = None
    has_more: bool | None = None


class CompleteResult(Result, kw_only=True):
    """The answer to ``completion/complete``."""

    completion: Completion
