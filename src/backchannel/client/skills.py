"""The skills a server publishes (SEP-2640), listed, fetched and read with their digests checked.

``Client.list_skills`` walks ``skills/list``; ``get_skill`` fetches one entry by the URI of its
``SKILL.md`` (or finds it by name in the listing); ``read_skill_directory`` lists a directory of a
skill (``resources/directory/read``); ``read_skill_file`` reads a file with ``resources/read`` and
checks it against the entry (``skills/verify.py``): listed, right size, right SHA-256, and for
``SKILL.md`` the same front matter. Content that fails is never returned.

In the stateless era a server declares the extension in ``server/discover``, and these refuse,
without sending anything, to ask a server that did not (``resources/directory/read`` needs its
``directoryRead``). The handshake era has no such declaration (2025-11-25 has no
``capabilities.extensions``), so there they ask, and a server without skills answers -32601.
Lists and entries are cached as the server's ``ttlMs`` says, like the other lists (``cache.py``).
"""

from __future__ import annotations

__all__ = ["SkillContent", "get_skill", "list_skills", "list_skills_page", "read_skill_directory", "read_skill_file"]

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Protocol

from ..types.capabilities import extension_settings
from ..types.content import Resource
from ..types.errors import LocalProtocolError, RemoteProtocolError
from ..types.skills import (
    SKILL_FILE,
    SKILLS_EXTENSION,
    GetSkillResult,
    ListSkillsResult,
    ReadResourceDirectoryResult,
    Skill,
)
from .era_detection import converted
from .pages import cursor_params, every_page


class _Asking(Protocol):
    """What these read of the ``Client``."""

    server_capabilities: dict[str, Any]

    @property
    def era(self) -> str | None: ...

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, cached: bool = True
    ) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class SkillContent:
    """A skill's file as read and verified: its URI, its bytes (exactly those the entry's digest covers) and
    MIME type; ``text`` decodes them as UTF-8."""

    uri: str
    data: bytes
    mime_type: str | None
    #: False only for a ``"dynamic"`` skill, whose entry publishes no digests to check against.
    verified: bool = True

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")


async def list_skills_page(client: _Asking, cursor: str | None = None) -> ListSkillsResult:
    """One page of ``skills/list``: pass the previous page's ``next_cursor`` for the next; ``list_skills``
    walks them all."""
    _check_declared(client, "skills/list")
    return converted(await client.request("skills/list", cursor_params(cursor)), ListSkillsResult, "skills/list")


async def list_skills(client: _Asking) -> list[Skill]:
    """Every skill's entry, following ``nextCursor`` through all pages. An empty or partial listing does not
    mean there are no other skills: ``get_skill`` takes any skill's URI."""
    return [skill async for page in every_page(lambda c: list_skills_page(client, c)) for skill in page.skills]


async def get_skill(client: _Asking, skill: str) -> Skill:
    """The entry of ``skill``: the URI of its ``SKILL.md`` (``skills/get``), or a name, found in the listing
    (``ValueError`` when no entry or several have it: names are labels, not identifiers; give the URI)."""
    if "://" not in skill:
        found = [entry for entry in await list_skills(client) if entry.name == skill]
        if len(found) != 1:
            where = f": {', '.join(entry.uri for entry in found)}" if found else ""
            raise ValueError(f"{len(found) or 'no'} skills are named {skill!r} in the listing{where}; give its URI")
        skill = found[0].uri
    _check_declared(client, "skills/get")
    result = converted(await client.request("skills/get", {"uri": skill}), GetSkillResult, "skills/get")
    if result.skill.uri != skill:
        raise RemoteProtocolError(f"skills/get: asked for {skill}, the server answered for {result.skill.uri}")
    return result.skill


async def read_skill_directory(client: _Asking, uri: str) -> list[Resource]:
    """The direct children of the directory at ``uri`` (a skill's root is its ``Skill.root``), every page:
    files with their resource metadata, subdirectories with ``mime_type`` ``inode/directory``."""
    _check_declared(client, "resources/directory/read", "directoryRead")

    async def page(cursor: str | None) -> ReadResourceDirectoryResult:
        params: dict[str, Any] = {"uri": uri, **(cursor_params(cursor) or {})}
        result = await client.request("resources/directory/read", params)
        return converted(result, ReadResourceDirectoryResult, "resources/directory/read")

    return [child async for result in every_page(page) for child in result.resources]


async def read_skill_file(client: _Asking, skill: Skill | str, path: str = SKILL_FILE) -> SkillContent:
    """A file of ``skill`` (its entry, as held since it was listed or fetched; or its URI or name, fetched
    now): ``path`` inside it (``references/GUIDE.md``), or a full URI; its ``SKILL.md`` by default.

    The file is read with ``resources/read`` and checked against the entry before it is returned:
    ``SkillVerificationError`` (with its ``reason``) when the entry is not loadable, the file is not
    listed in it, or its size, digest or (for ``SKILL.md``) front matter differ. After that error, fetch
    the entry again (``get_skill``): the skill may have changed."""
    from ..skills.verify import check_entry, verify_file

    entry = skill if isinstance(skill, Skill) else await get_skill(client, skill)
    check_entry(entry)
    uri = path if "://" in path else f"{entry.root}/{path.lstrip('/')}"
    if isinstance(entry.resources, list) and all(resource.uri != uri for resource in entry.resources):
        verify_file(entry, uri, b"")  # an unlisted file is refused before it is read: raises "unlisted"
    result = await client.request("resources/read", {"uri": uri}, cached=False)
    contents = [item for item in result.get("contents") or [] if isinstance(item, dict) and item.get("uri") == uri]
    if len(contents) != 1:
        raise RemoteProtocolError(f"resources/read {uri}: the server sent {len(contents)} contents for it, not one")
    data, mime_type = _bytes_of(contents[0], uri)
    verify_file(entry, uri, data)
    return SkillContent(uri, data, mime_type, verified=isinstance(entry.resources, list))


def _bytes_of(contents: dict[str, Any], uri: str) -> tuple[bytes, str | None]:
    mime_type = contents.get("mimeType") if isinstance(contents.get("mimeType"), str) else None
    if isinstance(contents.get("text"), str):
        return contents["text"].encode("utf-8"), mime_type
    if isinstance(contents.get("blob"), str):
        try:
            return base64.b64decode(contents["blob"], validate=True), mime_type
        except (binascii.Error, ValueError):
            raise RemoteProtocolError(f"resources/read {uri}: its blob is not base64") from None
    raise RemoteProtocolError(f"resources/read {uri}: the contents have neither text nor blob")


def _check_declared(client: _Asking, method: str, setting: str | None = None) -> None:
    """In the stateless era, refuse to ask a server that did not declare the extension (or ``setting``)."""
    if client.era != "stateless":
        return  # the handshake era has no declaration to read: the server answers -32601 if it has no skills
    settings = extension_settings(client.server_capabilities, SKILLS_EXTENSION)
    if settings is None:
        raise LocalProtocolError(f"the server does not declare the {SKILLS_EXTENSION} extension: no {method}")
    if setting is not None and settings.get(setting) is not True:
        raise LocalProtocolError(f"the server does not declare {setting} for {SKILLS_EXTENSION}: no {method}")
