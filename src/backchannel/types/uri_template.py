"""RFC 6570 URI templates: expansion (levels 1-4) and matching.

MCP resource templates are RFC 6570 templates, and a server needs both
directions: ``expand`` to advertise or build URIs, ``match`` to route a
``resources/read`` URI back to a template and its variables. The template is
parsed once and its matching regex compiled once, because matching runs for
every read against every template.

Matching is the inverse of expansion only where expansion is unambiguous, so
these rules apply:

* ``{x}`` matches one non-empty path segment (no ``/``, ``?`` or ``#``);
  ``{+x}`` may also span ``/``; ``{#x}`` takes the rest of the fragment.
* ``{/x*}``, ``{.x*}``, ``{x*}`` and repeated ``{?x*}`` keys give lists.
* ``{?a,b}`` and ``{&c}`` read the whole query string: keys in any order, all
  optional, unknown keys ignored (clients may add their own parameters).
* Matched values are percent-decoded. Prefixes (``{x:3}``) match like ``{x}``;
  exploded maps come back as ``"key=value"`` strings, since the names are lost.
"""

from __future__ import annotations

__all__ = ["UriTemplate"]

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_RESERVED = frozenset(":/?#[]@!$&'()*+,;=")
_HEX = frozenset("0123456789abcdefABCDEF")
_VARSPEC = re.compile(
    r"(?P<name>(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*)"
    r"(?:(?P<explode>\*)|:(?P<prefix>[1-9][0-9]{0,3}))?"
)


@dataclass(frozen=True, slots=True)
class _Operator:
    first: str
    sep: str
    named: bool
    ifemp: str
    reserved: bool  # allow reserved characters and pct-encoded triplets through unencoded


# RFC 6570 Appendix A, one row per operator.
_OPERATORS = {
    "": _Operator("", ",", False, "", False),
    "+": _Operator("", ",", False, "", True),
    ".": _Operator(".", ".", False, "", False),
    "/": _Operator("/", "/", False, "", False),
    ";": _Operator(";", ";", True, "", False),
    "?": _Operator("?", "&", True, "=", False),
    "&": _Operator("&", "&", True, "=", False),
    "#": _Operator("#", ",", False, "", True),
}
_FUTURE_OPERATORS = frozenset("=,!@|")


@dataclass(frozen=True, slots=True)
class _Var:
    name: str
    explode: bool
    prefix: int | None


@dataclass(frozen=True, slots=True)
class _Expression:
    operator: str
    variables: tuple[_Var, ...]


def _encode(text: str, reserved: bool) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if reserved and char == "%" and text[i + 1 : i + 2] in _HEX and text[i + 2 : i + 3] in _HEX:
            out.append(text[i : i + 3])
            i += 3
            continue
        if char in _UNRESERVED or (reserved and char in _RESERVED):
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
        i += 1
    return "".join(out)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _parse(template: str) -> list[str | _Expression]:
    parts: list[str | _Expression] = []
    literal_start = 0
    position = 0
    while position < len(template):
        char = template[position]
        if char == "}":
            raise ValueError(f"unmatched '}}' at position {position} in URI template {template!r}")
        if char != "{":
            position += 1
            continue
        end = template.find("}", position + 1)
        nested = template.find("{", position + 1)
        if end < 0 or 0 <= nested < end:
            raise ValueError(f"unclosed '{{' at position {position} in URI template {template!r}")
        if literal_start < position:
            parts.append(template[literal_start:position])
        parts.append(_parse_expression(template, position, template[position + 1 : end]))
        position = literal_start = end + 1
    if literal_start < len(template):
        parts.append(template[literal_start:])
    return parts


def _parse_expression(template: str, position: int, body: str) -> _Expression:
    operator = body[:1] if body[:1] in _OPERATORS or body[:1] in _FUTURE_OPERATORS else ""
    if operator in _FUTURE_OPERATORS:
        raise ValueError(f"reserved operator {operator!r} at position {position + 1} in URI template {template!r}")
    variables: list[_Var] = []
    offset = position + 1 + len(operator)
    for spec in body[len(operator) :].split(","):
        found = _VARSPEC.fullmatch(spec)
        if found is None:
            raise ValueError(f"invalid variable {spec!r} at position {offset} in URI template {template!r}")
        prefix = found["prefix"]
        variables.append(_Var(found["name"], bool(found["explode"]), int(prefix) if prefix else None))
        offset += len(spec) + 1
    return _Expression(operator, tuple(variables))


def _expand(expression: _Expression, values: Mapping[str, Any]) -> str:
    op = _OPERATORS[expression.operator]
    pieces: list[str] = []
    for var in expression.variables:
        value = values.get(var.name)
        if value is None or (isinstance(value, list | tuple | Mapping) and not value):
            continue  # undefined: contributes nothing, not even a separator
        pieces.append(_expand_variable(op, var, value))
    return op.first + op.sep.join(pieces) if pieces else ""


def _expand_variable(op: _Operator, var: _Var, value: Any) -> str:
    def encode(item: Any) -> str:
        return _encode(_scalar(item), op.reserved)

    composite = isinstance(value, list | tuple | Mapping)
    if composite and var.prefix is not None:
        raise ValueError(f"prefix modifier on {var.name!r} cannot apply to a list or mapping value")
    if isinstance(value, Mapping):
        pairs = [(encode(key), encode(item)) for key, item in value.items()]
        if var.explode:
            return op.sep.join(f"{k}{op.ifemp}" if op.named and not v else f"{k}={v}" for k, v in pairs)
        flat = ",".join(f"{k},{v}" for k, v in pairs)
    elif composite:
        items = [encode(item) for item in value]
        if var.explode and op.named:
            return op.sep.join(f"{var.name}={item}" if item else f"{var.name}{op.ifemp}" for item in items)
        flat = (op.sep if var.explode else ",").join(items)
        if var.explode:
            return flat
    else:
        text = _scalar(value)
        flat = encode(text if var.prefix is None else text[: var.prefix])
        if op.named and not flat:
            return f"{var.name}{op.ifemp}"
    return f"{var.name}={flat}" if op.named else flat


# Characters a matched value may contain (raw, before decoding), per operator.
_VALUE_CLASS = {"": r"[^/?#,]", "+": r"[^?#,]", "#": r"[^,]", ".": r"[^/?#.]", "/": r"[^/?#]"}
_LAST_CLASS = {"": r"[^/?#]", "+": r"[^?#]", "#": r".", ".": r"[^/?#.]", "/": r"[^/?#]"}


class UriTemplate:
    """A parsed RFC 6570 template that can expand values and match URIs."""

    __slots__ = ("_groups", "_parts", "_queries", "_regex", "template", "variables")

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts = _parse(template)
        names: dict[str, None] = {}
        for part in self._parts:
            if isinstance(part, _Expression):
                names.update(dict.fromkeys(var.name for var in part.variables))
        self.variables: tuple[str, ...] = tuple(names)
        self._groups: list[tuple[str, _Var, str]] = []  # (group, variable, operator)
        self._queries: list[tuple[str, str, tuple[_Var, ...]]] = []  # (group, separator, variables)
        self._regex = re.compile(self._pattern(), re.DOTALL)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __str__(self) -> str:
        return self.template

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UriTemplate) and other.template == self.template

    def __hash__(self) -> int:
        return hash(self.template)

    def expand(self, values: Mapping[str, Any]) -> str:
        """The URI for ``values``; missing or ``None`` variables are left out, per the RFC."""
        return "".join(_encode(part, True) if isinstance(part, str) else _expand(part, values) for part in self._parts)

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The variables of ``uri`` if it fits this template, else None.

        Variables that the URI leaves out (optional query keys, empty explodes)
        are absent from the result rather than set to empty strings.
        """
        found = self._regex.fullmatch(uri)
        if found is None:
            return None
        from urllib.parse import unquote  # (0.5 MiB with ipaddress: loaded by a first match, not at start)

        result: dict[str, str | list[str]] = {}
        for group, var, operator in self._groups:
            raw = found[group]
            if raw is None or (raw == "" and var.explode):
                continue
            value: str | list[str]
            if var.explode and operator in (".", "/"):
                value = [unquote(item) for item in raw[1:].split(operator)]
            elif var.explode:
                value = [unquote(item) for item in raw.split(",")]
            else:
                value = unquote(raw)
            if result.setdefault(var.name, value) != value:
                return None  # the same variable twice, with two different values
        for group, separator, variables in self._queries:
            if (raw := found[group]) is None:
                continue
            for name, value in _named_values(raw, separator, variables).items():
                if result.setdefault(name, value) != value:
                    return None
        return result

    def _pattern(self) -> str:
        pattern: list[str] = []
        query_vars: list[_Var] | None = None
        for part in self._parts:
            if isinstance(part, str):
                pattern.append(re.escape(_encode(part, True)))
            elif part.operator in ("?", "&"):
                # One group reads the whole query; later ?/& expressions add their names to it.
                if query_vars is None:
                    group = f"q{len(self._queries)}"
                    pattern.append(rf"(?:{re.escape(part.operator)}(?P<{group}>[^#]*))?")
                    query_vars = []
                    self._queries.append((group, "&", ()))
                query_vars.extend(part.variables)
                self._queries[-1] = (self._queries[-1][0], "&", tuple(query_vars))
            elif part.operator == ";":
                group = f"q{len(self._queries)}"
                pattern.append(rf"(?P<{group}>(?:;[^/?#;]*)*)")
                self._queries.append((group, ";", part.variables))
            else:
                pattern.append(self._expression_pattern(part))
        return "".join(pattern)

    def _expression_pattern(self, expression: _Expression) -> str:
        op = expression.operator
        pieces: list[str] = []
        for index, var in enumerate(expression.variables):
            group = f"g{len(self._groups)}"
            self._groups.append((group, var, op))
            last = index == len(expression.variables) - 1
            value = (_LAST_CLASS if last or var.explode else _VALUE_CLASS)[op]
            if op in (".", "/") and var.explode:
                pieces.append(rf"(?P<{group}>(?:{re.escape(op)}{value}*)*)")
            elif op in (".", "/"):
                pieces.append(rf"(?:{re.escape(op)}(?P<{group}>{value}*))?")
            elif index == 0:
                pieces.append(rf"(?P<{group}>{value}{'*' if op == '#' else '+'})")
            else:
                pieces.append(rf"(?:,(?P<{group}>{value}*))?")
        joined = "".join(pieces)
        return rf"(?:\#{joined})?" if op == "#" else joined


def _named_values(raw: str, separator: str, variables: tuple[_Var, ...]) -> dict[str, str | list[str]]:
    from urllib.parse import unquote

    wanted = {var.name: var for var in variables}
    found: dict[str, str | list[str]] = {}
    for item in raw.split(separator):
        if not item:
            continue
        key, _, value = item.partition("=")
        var = wanted.get(key) or wanted.get(unquote(key))
        if var is None:
            continue
        decoded = unquote(value)
        if var.explode:
            previous = found.setdefault(var.name, [])
            if isinstance(previous, list):
                previous.append(decoded)
        else:
            found.setdefault(var.name, decoded)
    return found
