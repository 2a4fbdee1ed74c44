"""One skill as a server publishes it: its files in memory, their URIs, digests and entry.

``PublishedSkill.from_folder(path)`` reads a skill's folder (``folder.py``) and checks its
``SKILL.md``; ``PublishedSkill.from_code(name, description, body, files=...)`` makes one from
strings and bytes, writing its ``SKILL.md``. Either way every check happens here, before anything
is served, and a failure is a ``SkillError`` whose one line names the path and the problem.

URIs are ``skill://[<prefix>/]<name>/<file path>``, each segment percent-encoded where it must be.
A skill made with ``body=`` a function is *dynamic*: its ``SKILL.md`` is written afresh at each read,
so its entry publishes ``"resources": "dynamic"`` instead of digests (SEP-2640 §Resources).
"""

from __future__ import annotations

__all__ = ["BodyMaker", "PublishedSkill", "SkillFile", "check_prefix"]

import hashlib
import inspect
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from ..types.skills import DYNAMIC, MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILL_FILE, SKILL_SCHEME
from .folder import SkillError, read_skill_folder
from .frontmatter import FrontMatterError, check_front_matter, parse_front_matter, render_skill_md, split_skill_md

#: What makes a dynamic skill's ``SKILL.md`` body at each read (plain or async).
BodyMaker = Callable[[], str | Awaitable[str]]

_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")
_BINARY_FAMILIES = ("image/", "audio/", "video/", "font/")
_BINARY_TYPES = frozenset(
    ("application/octet-stream", "application/zip", "application/gzip", "application/pdf", "application/wasm")
)
_TEXT_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
}


@dataclass(frozen=True, slots=True)
class SkillFile:
    """A file of a skill: its path inside the skill, URI, bytes, MIME type, digest, and its text when it is
    served as text (valid UTF-8 of a textual type; else as a base64 blob)."""

    path: str
    uri: str
    data: bytes
    mime_type: str
    text: str | None
    digest: str

    @classmethod
    def make(cls, path: str, uri: str, data: bytes, mime_type: str | None = None) -> SkillFile:
        """A file of a skill from its bytes: how it is served (MIME type, text or not) and its digest."""
        mime, text = _served_as(path, data, mime_type)
        return cls(path, uri, data, mime, text, "sha256:" + hashlib.sha256(data).hexdigest())

    def content(self) -> str | bytes:
        """What ``resources/read`` returns: the text, or the bytes."""
        return self.text if self.text is not None else self.data


@dataclass(slots=True)
class PublishedSkill:
    """A skill this server serves: ``uri`` (its ``SKILL.md``'s), ``front_matter`` (as JSON), ``files`` by path
    (``SKILL.md`` first; for a dynamic skill, the other files only) and, for a dynamic one, ``body``."""

    name: str
    uri: str
    front_matter: dict[str, Any]
    files: dict[str, SkillFile]
    body: BodyMaker | None = None
    #: Where it came from (a folder, or ``"code"``), for messages.
    origin: str = "code"
    _entry: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def root(self) -> str:
        """The URI of the skill's directory (``uri`` without ``/SKILL.md``)."""
        return self.uri.removesuffix("/" + SKILL_FILE)

    @property
    def description(self) -> str:
        """The skill's ``description`` from its front matter."""
        return str(self.front_matter["description"])

    @property
    def dynamic(self) -> bool:
        """Whether its ``SKILL.md`` is written at each read (no digests published)."""
        return self.body is not None

    def entry(self) -> dict[str, Any]:
        """Its ``skills/list`` and ``skills/get`` entry (made once: the files do not change)."""
        if self._entry is None:
            resources: Any = DYNAMIC
            if not self.dynamic:
                resources = [{"uri": f.uri, "digest": f.digest, "size": len(f.data)} for f in self.files.values()]
            self._entry = {"uri": self.uri, "frontmatter": self.front_matter, "resources": resources}
        return self._entry

    async def skill_md(self) -> str:
        """The text of its ``SKILL.md`` now (a dynamic skill's written afresh)."""
        if self.body is None:
            text = self.files[SKILL_FILE].text
            assert text is not None  # checked when it was made
            return text
        body = self.body()
        if inspect.isawaitable(body):
            body = await body
        if not isinstance(body, str):
            raise TypeError(f"skill {self.name!r}: its body function returned {type(body).__name__}, not str")
        return render_skill_md(self.front_matter, body)

    # ---------------------------------------------------------------- making one

    @classmethod
    def from_folder(cls, folder: str | os.PathLike[str], *, prefix: str = "") -> PublishedSkill:
        """The skill in ``folder`` (named by its ``SKILL.md``, which must give the folder's own name)."""
        check_prefix(prefix)
        path = os.fspath(folder).rstrip(os.sep) or os.sep
        raw = read_skill_folder(path)
        where = os.path.join(path, SKILL_FILE)
        try:
            text = raw[SKILL_FILE].decode("utf-8")
        except UnicodeDecodeError:
            raise SkillError(f"{where}: not UTF-8 text") from None
        try:
            front = parse_front_matter(split_skill_md(text)[0])
            check_front_matter(front)
        except FrontMatterError as exc:
            raise SkillError(f"{where}: {exc}") from None
        name = front["name"]
        folder_name = os.path.basename(os.path.abspath(path))
        if name != folder_name:
            raise SkillError(
                f"{where}: names the skill {name!r} but its folder is {folder_name!r}; "
                "a skill's name is its folder's (Agent Skills)"
            )
        base = _base(prefix, name)
        files = {relative: SkillFile.make(relative, base + _quoted(relative), data) for relative, data in raw.items()}
        return cls(name, base + SKILL_FILE, front, _as_markdown(files), origin=path)

    @classmethod
    def from_code(
        cls,
        name: str,
        description: str,
        body: str | BodyMaker,
        *,
        files: Mapping[str, str | bytes] | None = None,
        front_matter: Mapping[str, Any] | None = None,
        prefix: str = "",
    ) -> PublishedSkill:
        """A skill made in code: ``SKILL.md`` is ``front_matter`` (with ``name`` and ``description``) and
        ``body``; a function as ``body`` makes it dynamic. ``files`` are its other files by path
        (``references/GUIDE.md``), text or bytes."""
        check_prefix(prefix)
        front = {"name": name, "description": description, **(front_matter or {})}
        if front["name"] != name or front["description"] != description:
            raise SkillError(f"skill {name!r}: give name and description as arguments, not in front_matter")
        try:
            check_front_matter(front)
            text = render_skill_md(front, body if isinstance(body, str) else "")
        except FrontMatterError as exc:
            raise SkillError(f"skill {name!r}: {exc}") from None
        base = _base(prefix, name)
        made: dict[str, SkillFile] = {}
        if isinstance(body, str):
            made[SKILL_FILE] = SkillFile.make(SKILL_FILE, base + SKILL_FILE, text.encode(), "text/markdown")
        total = len(text.encode())
        for path, content in (files or {}).items():
            _check_path(name, path)
            data = content.encode() if isinstance(content, str) else bytes(content)
            total += len(data)
            made[path] = SkillFile.make(path, base + _quoted(path), data)
        if len(made) + (not isinstance(body, str)) > MAX_SKILL_FILES:
            raise SkillError(f"skill {name!r}: more than {MAX_SKILL_FILES} files; a host need not load a bigger skill")
        if total > MAX_SKILL_BYTES:
            raise SkillError(f"skill {name!r}: more than {MAX_SKILL_BYTES} bytes; a host need not load a bigger skill")
        maker = None if isinstance(body, str) else body
        return cls(name, base + SKILL_FILE, front, made, body=maker)


def check_prefix(prefix: str) -> None:
    """``SkillError`` unless ``prefix`` is empty or ``/``-separated segments of letters, digits and ``._~-``."""
    if prefix and not all(_SEGMENT.fullmatch(segment) for segment in prefix.split("/")):
        raise SkillError(
            f"skill prefix {prefix!r}: segments of letters, digits and ._~- separated by /, "
            "with no / at either end (the first is the URI's authority)"
        )


# ------------------------------------------------------------------------------ internals


def _base(prefix: str, name: str) -> str:
    return f"{SKILL_SCHEME}{prefix}/{name}/" if prefix else f"{SKILL_SCHEME}{name}/"


def _quoted(path: str) -> str:
    return "/".join(quote(segment, safe="-._~!$&'()*+,;=:@") for segment in path.split("/"))


def _check_path(name: str, path: str) -> None:
    segments = path.split("/")
    if (
        not path
        or path == SKILL_FILE
        or "\\" in path
        or any(segment in ("", ".", "..") or segment.startswith(".") for segment in segments)
    ):
        raise SkillError(
            f"skill {name!r}: file {path!r}: a relative path inside the skill, /-separated, no . or .. or "
            f"hidden segments, and not {SKILL_FILE} (the body is that)"
        )


def _as_markdown(files: dict[str, SkillFile]) -> dict[str, SkillFile]:
    """``SKILL.md`` served as ``text/markdown`` text (the extension says SHOULD), whatever its bytes guessed."""
    skill_md = files[SKILL_FILE]
    files[SKILL_FILE] = SkillFile(
        skill_md.path, skill_md.uri, skill_md.data, "text/markdown", skill_md.data.decode(), skill_md.digest
    )
    return files


def _served_as(path: str, data: bytes, mime_type: str | None) -> tuple[str, str | None]:
    """The MIME type a file is served with, and its text when served as text."""
    if mime_type is None:
        suffix = os.path.splitext(path)[1].lower()
        mime_type = _TEXT_TYPES.get(suffix)
        if mime_type is None:
            import mimetypes

            mime_type = mimetypes.guess_type(path, strict=False)[0]
    binary = mime_type is not None and (mime_type.startswith(_BINARY_FAMILIES) or mime_type in _BINARY_TYPES)
    text = None
    if not binary and b"\x00" not in data:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    if mime_type is None:
        mime_type = "text/plain" if text is not None else "application/octet-stream"
    return mime_type, text
