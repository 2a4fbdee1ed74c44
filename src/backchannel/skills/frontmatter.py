"""A ``SKILL.md``'s front matter: read as the YAML 1.2 core schema reads it, checked, written.

``split_skill_md(text)`` cuts the leading ``---`` block from the body; ``parse_front_matter``
reads it into JSON values (what a ``skills/list`` entry carries verbatim); ``check_front_matter``
holds it to the Agent Skills rules the extension relies on (``name`` and ``description``);
``render_skill_md`` writes a ``SKILL.md`` for a skill made in code, and reads it back to be sure.

YAML is read by PyYAML (``pip install 'backchannel[skills]'``), loaded on first use, with the
YAML 1.2 core schema's plain scalars rather than PyYAML's YAML 1.1 ones: ``yes``, ``on`` and
``2024-01-01`` stay strings, ``0o17`` is an octal number, as other YAML 1.2 readers (hosts, the
TypeScript SDK) read them, so an entry's front matter and a host's reading of the file agree.
What has no JSON form is refused: aliases, keys that are not strings, ``.nan``, ``!!binary``;
so is a key given twice.
"""

from __future__ import annotations

__all__ = [
    "MAX_DESCRIPTION",
    "MAX_FRONT_MATTER_BYTES",
    "NAME_RULE",
    "FrontMatterError",
    "check_front_matter",
    "name_problem",
    "parse_front_matter",
    "render_skill_md",
    "split_skill_md",
]

import json
import math
import re
from collections.abc import Mapping
from typing import Any

#: The Agent Skills naming rule: 1 to 64 lowercase letters, digits and hyphens, no hyphen at
#: either end and none doubled.
NAME_RULE = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
#: The Agent Skills bound on ``description``.
MAX_DESCRIPTION = 1024
#: Front matter longer than this is refused unread (a host reading a server's file has a bound too).
MAX_FRONT_MATTER_BYTES = 64 * 1024

_OPENING = re.compile(r"---[ \t]*\r?\n")
_CLOSING = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.M)
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 ._,;()/'-]*")


class FrontMatterError(ValueError):
    """A ``SKILL.md`` whose front matter is missing, unreadable or breaks the Agent Skills rules; the
    message says what, in one line."""


def split_skill_md(text: str) -> tuple[str, str]:
    """``(front matter YAML, body)`` of a ``SKILL.md``; ``FrontMatterError`` when it does not begin with a
    ``---`` line or the block has no closing ``---`` line. A byte-order mark before it is allowed."""
    text = text.removeprefix("\ufeff")
    opening = _OPENING.match(text)
    if opening is None:
        raise FrontMatterError("does not begin with YAML front matter (a --- line)")
    closing = _CLOSING.search(text, opening.end())
    if closing is None:
        raise FrontMatterError("its front matter has no closing --- line")
    return text[opening.end() : closing.start()], text[closing.end() :]


def parse_front_matter(yaml_text: str) -> dict[str, Any]:
    """The front matter as JSON values (a mapping with string keys); ``FrontMatterError`` for YAML that does
    not parse or holds what JSON cannot."""
    if len(yaml_text.encode("utf-8", "surrogatepass")) > MAX_FRONT_MATTER_BYTES:
        raise FrontMatterError(f"its front matter is longer than {MAX_FRONT_MATTER_BYTES} bytes")
    yaml = _yaml()
    try:
        value = yaml.load(yaml_text, Loader=_loader())
    except FrontMatterError:
        raise
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"its front matter is not valid YAML: {_one_line(exc)}") from None
    except RecursionError:
        raise FrontMatterError("its front matter nests too deeply") from None
    if not isinstance(value, dict):
        raise FrontMatterError("its front matter is not a mapping of fields (name: ..., description: ...)")
    _check_json(value, "front matter")
    return value


def name_problem(name: object) -> str | None:
    """Why ``name`` breaks the Agent Skills naming rule, or None when it is a good skill name."""
    if not isinstance(name, str) or not name:
        return "has no name (a non-empty string)"
    if NAME_RULE.fullmatch(name) is None:
        return (
            f"names the skill {name!r}: a name is 1-64 lowercase letters, digits and hyphens, "
            "with no hyphen at either end and none doubled"
        )
    return None


def check_front_matter(front: Mapping[str, Any]) -> None:
    """``FrontMatterError`` unless ``front`` has a good ``name`` and a ``description`` of 1 to 1024 characters."""
    problem = name_problem(front.get("name"))
    if problem is not None:
        raise FrontMatterError(problem)
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        raise FrontMatterError("has no description (a non-empty string saying what the skill does and when to use it)")
    if len(description) > MAX_DESCRIPTION:
        raise FrontMatterError(f"has a description of {len(description)} characters; at most {MAX_DESCRIPTION}")


def render_skill_md(front: Mapping[str, Any], body: str) -> str:
    """A ``SKILL.md`` with ``front`` as its front matter and then ``body``. Values are written plain where
    that reads back the same, else as JSON (which YAML reads as it is); the result is read back and must give
    ``front`` again, so what an entry says and what the file holds cannot differ."""
    _check_json(dict(front), "front matter")
    lines = [f"{_key(key)}: {_scalar(value)}" for key, value in front.items()]
    if body and not body.startswith(("\n", "\r\n")):
        body = "\n" + body
    text = "---\n" + "".join(line + "\n" for line in lines) + "---\n" + body
    if parse_front_matter(split_skill_md(text)[0]) != dict(front):  # (a guard: never expected to fire)
        raise FrontMatterError("its front matter does not read back as given")
    return text


# ------------------------------------------------------------------------------ internals


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", key) else json.dumps(key, ensure_ascii=False)


def _scalar(value: Any) -> str:
    if isinstance(value, str) and _PLAIN.fullmatch(value) and not value.endswith(" "):
        try:
            if parse_front_matter(f"v: {value}\n") == {"v": value}:
                return value
        except FrontMatterError:
            pass
    return json.dumps(value, ensure_ascii=False)


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def _check_json(value: Any, where: str) -> None:
    if value is None or isinstance(value, bool | str | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FrontMatterError(f"its {where} holds {value!r}, which JSON cannot carry")
        return
    if isinstance(value, list):
        for item in value:
            _check_json(item, where)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise FrontMatterError(f"its {where} has a key that is not a string: {key!r}")
            _check_json(item, where)
        return
    raise FrontMatterError(f"its {where} holds a {type(value).__name__}, which JSON cannot carry")


def _yaml() -> Any:
    import importlib

    try:
        return importlib.import_module("yaml")  # (untyped: read through Any)
    except ImportError:  # pragma: no cover - the extra is installed wherever the tests run
        raise FrontMatterError("reading SKILL.md needs PyYAML: pip install 'backchannel[skills]'") from None


_LOADER: Any = None


def _loader() -> Any:
    """A PyYAML ``SafeLoader`` with the YAML 1.2 core schema's implicit types, no aliases, no key twice."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    yaml = _yaml()

    class CoreLoader(yaml.SafeLoader):  # type: ignore[misc,name-defined]
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise FrontMatterError(f"its front matter uses an alias (*{event.anchor}); write the value out")
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            keys = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, str) and key in keys:
                    raise FrontMatterError(f"its front matter gives {key!r} twice")
                if isinstance(key, str):
                    keys.add(key)
            return super().construct_mapping(node, deep=deep)

    CoreLoader.yaml_implicit_resolvers = {}
    resolvers = (
        ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
        ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
        ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
        (
            "tag:yaml.org,2002:float",
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
            "-+.0123456789",
        ),
    )
    for tag, pattern, first in resolvers:
        CoreLoader.add_implicit_resolver(tag, re.compile(pattern), list(first))
    CoreLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^$"), [""])

    def construct_int(loader: Any, node: Any) -> int:
        text = loader.construct_scalar(node)
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text, 10)

    def construct_float(loader: Any, node: Any) -> float:
        text = loader.construct_scalar(node).lower()
        return float(text.replace(".inf", "inf").replace(".nan", "nan"))

    CoreLoader.add_constructor("tag:yaml.org,2002:int", construct_int)
    CoreLoader.add_constructor("tag:yaml.org,2002:float", construct_float)
    _LOADER = CoreLoader
    return CoreLoader
