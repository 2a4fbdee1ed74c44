"""A declared form's ``FormSpec``, built once, and the check that a declared form can be sent.

A server names its forms where it asks (``ctx.elicit(..., schema=Issue)``) and where it registers
a tool (``elicits=[Issue]``); ``form_spec`` builds the ``FormSpec`` of each the first time and
hands back the same one after, per type and per distinct JSON Schema dict. ``check_forms`` builds
them at registration, so a form that cannot be a flat elicitation form fails where it is declared.
``FormSpec`` itself (and pydantic under it) loads when a first form is built, not with this module.
"""

from __future__ import annotations

__all__ = ["check_forms", "form_spec"]

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from .types import FormSpec

_DICT_FORMS_KEPT = 256
_dict_forms: dict[bytes, FormSpec] = {}


def form_spec(schema: Any) -> FormSpec:
    """The ``FormSpec`` of ``schema``, built once: per type, and per distinct dict schema
    (by its canonical JSON). Raises ``FormSchemaError`` naming the field for a form
    that cannot be sent."""
    # (``types`` is imported where a form is built: an import statement costs a microsecond
    # per ask even when the module is loaded, and the spec is almost always found built.)
    if isinstance(schema, dict):
        try:
            key = msgspec.json.encode(schema, order="sorted")
        except (TypeError, msgspec.EncodeError):
            return _build_form(schema)  # not JSON at all: let the checker say what is wrong
        spec = _dict_forms.get(key)
        if spec is None:
            spec = _build_form(schema)
            if len(_dict_forms) >= _DICT_FORMS_KEPT:
                del _dict_forms[next(iter(_dict_forms))]
            _dict_forms[key] = spec
        return spec
    try:
        hash(schema)
    except TypeError:
        return _build_form(schema)
    return _type_form(schema)


@functools.lru_cache(maxsize=256)
def _type_form(schema: Any) -> FormSpec:
    return _build_form(schema)


def _build_form(schema: Any) -> FormSpec:
    from .types import FormSpec

    return FormSpec.from_type(schema)


def check_forms(owner: str, forms: Iterable[Any]) -> None:
    """Build each form now (and keep it for the calls), so one that cannot be a flat
    elicitation form fails where it is declared: ``FormSchemaError`` naming the field,
    with a note naming ``owner`` (``"tool 'file_issue'"``)."""
    from .errors import FormSchemaError

    for form in forms:
        try:
            form_spec(form)
        except FormSchemaError as exc:
            exc.add_note(f"declared in elicits= of {owner}")
            raise
