"""Python types → ``requestedSchema``, and an accepted answer → the user's type.

``FormSpec.from_type(Contact)`` runs once, where the form is declared (so a
tool that registers a bad form fails at registration, not when a user is
waiting), and ``spec.parse(content)`` runs on each accepted answer.

How fields map (``X | None`` or a default makes a field optional; defaults are
sent as ``default`` on every type, SEP-1034):

=========================================  ================================================
``str``                                    ``{"type": "string"}``
``int`` / ``float`` / ``bool``             ``integer`` / ``number`` / ``boolean``
``datetime.date`` / ``datetime.datetime``  ``string`` + ``format: date`` / ``date-time``
                                           (parsed back; a date-time needs a timezone)
``EmailStr`` / ``AnyUrl`` (and subclasses) ``string`` + ``format: email`` / ``uri``
``Annotated[str, Format("email")]``        ``string`` + ``format`` (the value stays ``str``)
``Literal["a", "b"]`` / str-valued Enum    single-select ``enum`` (Enum members come back)
``Annotated[..., Titles({...})]``          titled single-select ``oneOf`` (never ``enumNames``)
``list`` / ``set`` / ``frozenset`` /       multi-select ``items.enum``, or ``items.anyOf``
``tuple[X, ...]`` of those choices         with ``Titles``
=========================================  ================================================

Constraints come from ``Annotated[..., Field(...)]`` (or annotated-types):
``ge``/``le`` → minimum/maximum; ``gt``/``lt`` only on ``int`` (as ±1);
``min_length``/``max_length`` → minLength/maxLength on text and
minItems/maxItems on multi-selects; ``pattern``; ``title``; ``description``
(a plain string in ``Annotated`` is a description too). A constraint a form
cannot express (``multiple_of``, ``gt`` on a float) is refused rather than
dropped, because it would then go unchecked. Nested objects, ``dict``, unions,
and lists of anything but choices are refused, naming the field.
"""

from __future__ import annotations

__all__ = ["FormSpec"]

import copy
from dataclasses import dataclass, field
from typing import Any

from .errors import FormContentError
from .members import NO_DEFAULT, Build, read_members
from .properties import Convert, first_line, member_property
from .schema import apply_defaults, check_requested_schema, validate_content


@dataclass(frozen=True, slots=True)
class _Field:
    attr: str
    wire: str
    convert: Convert
    fill_none: bool  # an omitted ``X | None`` field with no default is passed as None


@dataclass(frozen=True, slots=True)
class FormSpec:
    """A form to send as ``requestedSchema`` and the way back to a Python value.

    Build it with ``FormSpec.from_type``; send ``requested_schema`` (do not
    mutate it); give each accepted ``content`` to ``parse``.
    """

    requested_schema: dict[str, Any]
    _fields: tuple[_Field, ...] | None = field(default=None, repr=False, compare=False)
    _build: Build | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_type(cls, schema: type | dict[str, Any]) -> FormSpec:
        """The form for a dataclass, TypedDict, pydantic model or a JSON Schema dict.

        A dict is checked as is (and copied). Raises ``FormSchemaError`` naming
        the field (``"Order.shipping: nested objects are not allowed ..."``) when
        the type cannot be a flat form.
        """
        if isinstance(schema, dict):
            checked = copy.deepcopy(schema)
            check_requested_schema(checked)
            return cls(checked)
        members, build = read_members(schema)
        owner = getattr(schema, "__name__", "form")
        properties: dict[str, Any] = {}
        required: list[str] = []
        fields: list[_Field] = []
        for member in members:
            path = f"{owner}.{member.attr}"
            prop, convert, optional = member_property(path, member)
            properties[member.wire] = prop
            if member.type_required and member.default is NO_DEFAULT and not optional:
                required.append(member.wire)
            fill_none = member.type_required and member.default is NO_DEFAULT and optional
            fields.append(_Field(member.attr, member.wire, convert, fill_none))
        requested: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            requested["required"] = required
        check_requested_schema(requested)
        return cls(requested, tuple(fields), build)

    def parse(self, content: Any) -> Any:
        """The user's answer as the declared type; ``FormContentError`` lists what is wrong.

        ``content`` is validated against ``requested_schema`` first (EL-62).
        Omitted fields take the type's own defaults; for a dict form, the
        schema's defaults are filled in (``apply_defaults``) and a dict returned.
        """
        problems = validate_content(self.requested_schema, content)
        if problems:
            raise FormContentError(problems)
        if self._fields is None or self._build is None:
            return apply_defaults(self.requested_schema, content)
        values: dict[str, Any] = {}
        for item in self._fields:
            if item.wire in content:
                try:
                    values[item.attr] = item.convert(content[item.wire])
                except ValueError as exc:
                    problems.append(f"{item.wire}: {first_line(exc)}")
            elif item.fill_none:
                values[item.attr] = None
        if problems:
            raise FormContentError(problems)
        return self._build(values)
