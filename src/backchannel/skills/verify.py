"""What a client checks a skill's files against: the entry it holds (SEP-2640 §Integrity and Verification).

A file of a skill whose entry lists its files is used only when it is listed, its byte count is the
entry's ``size`` and its SHA-256 the entry's ``digest``; a ``SKILL.md`` also only when its front
matter, read as YAML, equals the entry's ``frontmatter`` field by field. Anything else raises
``SkillVerificationError`` naming the file and the reason (``unlisted``, ``size``, ``digest``,
``frontmatter``), and the content must not be used. A ``"dynamic"`` entry publishes no digests:
nothing can be verified but the front matter of its ``SKILL.md``.
"""

from __future__ import annotations

__all__ = ["SkillVerificationError", "check_entry", "verify_file"]

import hashlib
import re
from collections.abc import Mapping
from typing import Any, Literal

from ..types.errors import RemoteProtocolError
from ..types.skills import MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILL_FILE, Skill
from .frontmatter import FrontMatterError, name_problem, parse_front_matter, split_skill_md

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")

Reason = Literal["unlisted", "size", "digest", "frontmatter", "entry"]


class SkillVerificationError(RemoteProtocolError):
    """A skill's file, or its entry, is not what the server's manifest says: not listed, wrong size, wrong
    digest, front matter that differs, or an entry a host must not load. Do not use the content."""

    def __init__(self, reason: Reason, uri: str, message: str) -> None:
        super().__init__(message, data={"reason": reason, "uri": uri})
        self.reason = reason
        self.uri = uri


def check_entry(skill: Skill) -> None:
    """``SkillVerificationError`` (``entry``) for an entry a host must not load: a URI whose last skill-path
    segment is not ``frontmatter.name``, a bad name, a manifest without the ``SKILL.md``, a bad digest or
    size, a file outside the skill, or more than the extension's limits."""
    problem = _entry_problem(skill)
    if problem is not None:
        raise SkillVerificationError("entry", skill.uri, f"skill entry {skill.uri}: {problem}")


def verify_file(skill: Skill, uri: str, data: bytes) -> None:
    """Check ``data``, read at ``uri``, against ``skill``'s entry; ``SkillVerificationError`` when it must not
    be used (the module docstring says when)."""
    if isinstance(skill.resources, list):
        listed = next((resource for resource in skill.resources if resource.uri == uri), None)
        if listed is None:
            raise SkillVerificationError("unlisted", uri, f"{uri} is not a file of the skill {skill.uri}")
        if len(data) != listed.size:
            raise SkillVerificationError(
                "size", uri, f"{uri}: {len(data)} bytes where the skill's entry says {listed.size}"
            )
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if digest != listed.digest:
            raise SkillVerificationError("digest", uri, f"{uri}: its SHA-256 is not the one the skill's entry gives")
    if uri == skill.uri:
        _verify_front_matter(skill, uri, data)


def _verify_front_matter(skill: Skill, uri: str, data: bytes) -> None:
    try:
        front = parse_front_matter(split_skill_md(data.decode("utf-8"))[0])
    except (UnicodeDecodeError, FrontMatterError) as exc:
        raise SkillVerificationError("frontmatter", uri, f"{uri}: {exc}") from None
    differences = _differences(front, skill.frontmatter)
    if differences:
        shown = "; ".join(differences[:3]) + (f" (+{len(differences) - 3} more)" if len(differences) > 3 else "")
        raise SkillVerificationError("frontmatter", uri, f"{uri}: its front matter differs from the entry's: {shown}")


def _differences(file: Mapping[str, Any], entry: Mapping[str, Any]) -> list[str]:
    return [
        f"{key}: file {file.get(key)!r}, entry {entry.get(key)!r}"
        for key in sorted(set(file) | set(entry))
        if not _same(file.get(key), entry.get(key))
    ]


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` as JSON numbers are, but ``True`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) and type(a) in (int, float, str, type(None)) and type(b) in (int, float, str, type(None))


def _entry_problem(skill: Skill) -> str | None:
    if not skill.uri.endswith("/" + SKILL_FILE) or "://" not in skill.uri:
        return f"its uri does not end in /{SKILL_FILE}"
    segments = [s for s in skill.uri.split("://", 1)[1].split("/") if s]
    problem = name_problem(skill.frontmatter.get("name"))
    if problem is not None:
        return f"its front matter {problem}"
    if len(segments) < 2 or segments[-2] != skill.frontmatter["name"]:
        return f"its last skill-path segment is not its name {skill.frontmatter['name']!r}"
    if not isinstance(skill.frontmatter.get("description"), str) or not skill.frontmatter["description"]:
        return "its front matter has no description"
    if isinstance(skill.resources, str):
        return None  # "dynamic": nothing to count
    root = skill.root + "/"
    uris = [resource.uri for resource in skill.resources]
    if skill.uri not in uris:
        return f"its resources do not list its {SKILL_FILE}"
    if len(set(uris)) != len(uris):
        return "its resources list a file twice"
    for resource in skill.resources:
        if resource.uri != skill.uri and not resource.uri.startswith(root):
            return f"{resource.uri} lies outside the skill"
        if not _DIGEST.fullmatch(resource.digest) or resource.size < 0:
            return f"{resource.uri} has no valid digest and size"
    if len(uris) > MAX_SKILL_FILES or sum(r.size for r in skill.resources) > MAX_SKILL_BYTES:
        return f"it exceeds the extension's limits ({MAX_SKILL_FILES} files, {MAX_SKILL_BYTES} bytes)"
    return None
