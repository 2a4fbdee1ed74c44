"""Moved to ``backchannel.composition.middleware``, which says what a middleware is; these names
still import from here."""

from __future__ import annotations

__all__ = ["Call", "CallNext", "Middleware", "chain", "sent_through"]

from ..composition.middleware import Call, CallNext, Middleware, chain, sent_through
