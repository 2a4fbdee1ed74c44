"""Skills: the ``io.modelcontextprotocol/skills`` extension (SEP-2640), its shapes and its numbers.

A skill is a directory of files, at least a ``SKILL.md`` whose YAML front matter names it and
says what it is for (the Agent Skills format). Each file is a resource, read with
``resources/read`` at ``skill://<skill-path>/<file-path>``; the extension adds three requests:
``skills/list`` (every skill's entry, paginated), ``skills/get`` (one entry, by the URI of its
``SKILL.md``) and ``resources/directory/read`` (the direct children of a directory resource,
when the server declares ``directoryRead``). An entry is a manifest: the front matter as JSON and
every file with the SHA-256 digest and size of its bytes, which a client checks what it reads
against. The methods are listed in :mod:`backchannel.types.methods` (``EXTENSION_METHODS``).
"""

from __future__ import annotations

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "DYNAMIC",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "SKILLS_EXTENSION",
    "SKILL_FILE",
    "SKILL_META_PREFIX",
    "SKILL_SCHEME",
    "GetSkillRequestParams",
    "GetSkillResult",
    "ListSkillsResult",
    "ReadResourceDirectoryRequestParams",
    "ReadResourceDirectoryResult",
    "Skill",
    "SkillResource",
]

from typing import Any, Literal

from .base import CacheableResult, Cursor, Model, PaginatedRequestParams, PaginatedResult, RequestParams
from .content import Resource

#: The extension's identifier: a key of ``capabilities.extensions``.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: The file every skill has at its root.
SKILL_FILE = "SKILL.md"
#: The scheme servers SHOULD use for skill files.
SKILL_SCHEME = "skill://"
#: The MIME type of a directory resource (``resources/directory/read`` answers for those only).
DIRECTORY_MIME_TYPE = "inode/directory"
#: ``resources`` of an entry whose content is generated, so that no digests can be published.
DYNAMIC = "dynamic"
#: The extension's per-skill limits: every host must accept a skill within both.
MAX_SKILL_FILES = 512
MAX_SKILL_BYTES = 16 * 1024 * 1024
#: The ``_meta`` key prefix the extension reserves on skill resources.
SKILL_META_PREFIX = "io.modelcontextprotocol.skills/"


class SkillResource(Model, kw_only=True):
    """One file of a skill: its URI, ``sha256:<64 lowercase hex>`` of its bytes, and their count."""

    uri: str
    digest: str
    size: int


class Skill(Model, kw_only=True):
    """A skill's entry, the same in ``skills/list`` and ``skills/get``.

    ``uri`` is its ``SKILL.md``'s; ``frontmatter`` that file's YAML front matter as JSON, every field
    the author wrote (``name`` and ``description`` always); ``resources`` every file of the skill,
    ``SKILL.md`` included, or ``"dynamic"`` for a generated skill that publishes no digests.
    """

    uri: str
    frontmatter: dict[str, Any]
    resources: list[SkillResource] | Literal["dynamic"]

    @property
    def name(self) -> str:
        """The skill's name (the last segment of its path, which equals ``frontmatter["name"]``)."""
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        """What the skill is for, as its front matter says."""
        return str(self.frontmatter.get("description", ""))

    @property
    def root(self) -> str:
        """The URI of the skill's directory: ``uri`` without ``/SKILL.md``."""
        return self.uri.removesuffix("/" + SKILL_FILE)


class ListSkillsResult(PaginatedResult, kw_only=True):
    """One page of ``skills/list``; ``next_cursor`` asks for the next. ``ttlMs``/``cacheScope`` from 2026-07-28."""

    skills: list[Skill]


class GetSkillRequestParams(RequestParams, kw_only=True):
    """``skills/get``: the URI of the skill's ``SKILL.md``."""

    uri: str


class GetSkillResult(CacheableResult, kw_only=True):
    """``skills/get``: one entry, no cursor. ``ttlMs``/``cacheScope`` from 2026-07-28."""

    skill: Skill


class ReadResourceDirectoryRequestParams(PaginatedRequestParams, kw_only=True):
    """``resources/directory/read``: the URI of a directory resource (no trailing slash)."""

    uri: str
    cursor: Cursor | None = None


class ReadResourceDirectoryResult(PaginatedResult, kw_only=True):
    """The direct children of a directory: files with their resource metadata, subdirectories with
    ``mimeType: "inode/directory"``."""

    resources: list[Resource]
