"""Elicitation forms (form mode): flat ``requestedSchema`` from Python types, checked answers back.

A server declares a form as a dataclass, TypedDict or pydantic model (or a
JSON Schema dict) and gets a ``FormSpec``: ``spec.requested_schema`` goes into
``elicitation/create``, and ``spec.parse(content)`` turns an accepted answer
back into the declared type, or raises ``FormContentError`` listing what is
wrong, to show the user and ask again.

A client uses the wire-level functions on what it received:
``check_requested_schema`` before rendering, ``choices``/``is_multi_select``
to render choice fields, ``apply_defaults`` then ``validate_content`` before
sending an accept (SEP-1034, EL-14, EL-61).
"""

from __future__ import annotations

__all__ = [
    "FormContentError",
    "FormSchemaError",
    "FormSpec",
    "Format",
    "Titles",
    "apply_defaults",
    "check_requested_schema",
    "choices",
    "is_multi_select",
    "validate_content",
]

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .errors import FormContentError, FormSchemaError
    from .markers import Format, Titles
    from .schema import apply_defaults, check_requested_schema, choices, is_multi_select, validate_content
    from .types import FormSpec

#: Where each public name lives. Loaded on first use: the server's signature code imports
#: ``forms.typeddict_compat`` (which loads this package), and a server that never builds a
#: form should not pay at start for the form machinery (FormSpec alone pulls in pydantic's
#: e-mail and URL types, which load importlib.metadata: about 15 ms).
_WHERE = {
    "FormContentError": "errors",
    "FormSchemaError": "errors",
    "Format": "markers",
    "Titles": "markers",
    "apply_defaults": "schema",
    "check_requested_schema": "schema",
    "choices": "schema",
    "is_multi_select": "schema",
    "validate_content": "schema",
    "FormSpec": "types",
}


__getattr__ = lazy_names(__name__, _WHERE)
