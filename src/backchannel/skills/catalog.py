"""The skills a server publishes, and the answers to the extension's three requests.

``SkillCatalog`` holds the ``PublishedSkill``s by URI, in the order they were added. Adding one
registers each of its files as a resource with the server (``ResourceHost``: the server's
registry), so ``resources/read`` and ``resources/list`` serve them like any other (``SKILL.md``
named and described by its front matter, as the extension asks), and declares the extension
with ``directoryRead``. It answers:

- ``skills/list``: ``page(cursor, page_size)``, through the server's own pagination;
- ``skills/get``: ``entry(uri)``, ``InvalidParams`` (-32602) for a URI that names no skill;
- ``resources/directory/read``: ``children(uri)``, every direct child of a directory of the
  skill namespace (a skill's root, any folder in it, a prefix above skills), subdirectories with
  ``mimeType: "inode/directory"``; ``InvalidParams`` for a file or anything else.

Everything is answered from memory: the files were read when the skill was added.
"""

from __future__ import annotations

__all__ = ["Paginate", "ResourceHost", "SkillCatalog"]

import inspect
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..types.errors import InvalidParams
from ..types.skills import DIRECTORY_MIME_TYPE, SKILL_FILE, SKILL_SCHEME, SKILLS_EXTENSION

if TYPE_CHECKING:  # (loaded by the first skill added: a server without skills never needs them)
    from .published import BodyMaker, PublishedSkill

#: What the server pages its lists with: ``(kind, items, cursor, page size) -> (page, next cursor)``.
Paginate = Callable[[str, Sequence[Any], Any, int | None], tuple[Sequence[Any], str | None]]
#: The extension's settings this server declares: it serves ``resources/directory/read``.
SETTINGS: dict[str, Any] = {"directoryRead": True}


class ResourceHost(Protocol):
    """What the catalog needs of the server's registry: to add and remove resources, and declare an extension."""

    def add_resource(
        self,
        uri: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
    ) -> Any: ...

    def remove_resource(self, uri: str) -> None: ...

    def declare_extension(self, identifier: str, settings: Mapping[str, Any] | None = None) -> None: ...


class SkillCatalog:
    """The skills of one server (``server.skills``); ``Server.add_skill``, ``add_skills``, ``remove_skill``
    and ``@server.skill()`` are its methods."""

    def __init__(self, host: ResourceHost, paginate: Paginate) -> None:
        self._host = host
        self._paginate = paginate
        self._skills: dict[str, PublishedSkill] = {}
        #: Directory URI -> its children's definitions by URI; made again after each change.
        self._directories: dict[str, dict[str, dict[str, Any]]] | None = None
        #: File URI -> its resource definition (as ``resources/list`` gives it).
        self._definitions: dict[str, dict[str, Any]] = {}
        #: Whether the extension was declared (the first skill does it; it stays declared).
        self.declared = False

    def __len__(self) -> int:
        return len(self._skills)

    def __iter__(self) -> Iterator[PublishedSkill]:
        return iter(list(self._skills.values()))

    def __bool__(self) -> bool:
        return self.declared

    # ------------------------------------------------------------- publishing

    def add_skill(
        self,
        folder: str | os.PathLike[str] | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        body: str | BodyMaker | None = None,
        files: Mapping[str, str | bytes] | None = None,
        front_matter: Mapping[str, Any] | None = None,
        prefix: str = "",
    ) -> PublishedSkill:
        """Publish a skill (SEP-2640): the one in ``folder`` (its ``SKILL.md`` names it, and must give the
        folder's name), or one made here from ``name``, ``description`` and ``body`` (the markdown after
        the front matter; a function makes the skill dynamic: its ``SKILL.md`` is written at each read),
        with ``files`` beside it (``{"references/GUIDE.md": "...", "logo.png": b"..."}``) and more
        ``front_matter`` (``license``, ``metadata``...). ``prefix`` (``"acme/billing"``) goes before the
        name in its URIs: ``skill://acme/billing/<name>/SKILL.md``.

        Every file is read and checked now; a skill that cannot be served raises ``SkillError``, whose
        one line names the path and the problem (``backchannel run`` prints just that line). Its files
        become resources, and the server declares the extension (with ``directoryRead``)."""
        from .published import PublishedSkill

        if folder is not None:
            if name is not None or description is not None or body is not None or files or front_matter:
                raise TypeError("add_skill: give a folder, or name=, description= and body=, not both")
            return self.add(PublishedSkill.from_folder(folder, prefix=prefix))
        if name is None or description is None or body is None:
            raise TypeError("add_skill: give a folder, or name=, description= and body=")
        skill = PublishedSkill.from_code(name, description, body, files=files, front_matter=front_matter, prefix=prefix)
        return self.add(skill)

    def add_skills(self, folder: str | os.PathLike[str], /, *, prefix: str = "") -> list[PublishedSkill]:
        """Publish every skill in ``folder``: each folder in it (but those whose names begin with a dot) is
        one, and must have its ``SKILL.md``. All are read and checked before any is published; the first
        that fails raises ``SkillError`` (one line: the path and the problem)."""
        from .folder import SkillError
        from .published import PublishedSkill

        root = os.fspath(folder)
        if not os.path.isdir(root) or os.path.islink(root):
            raise SkillError(f"{root}: not a folder of skills")
        names = sorted(name for name in os.listdir(root) if not name.startswith("."))
        skills = []
        for name in names:
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isdir(path):
                raise SkillError(f"{path}: not a skill folder (each entry of a folder of skills is one)")
            skills.append(PublishedSkill.from_folder(path, prefix=prefix))
        if not skills:
            raise SkillError(f"{root}: holds no skill folders")
        return [self.add(skill) for skill in skills]

    def add_function(
        self,
        fn: Callable[[], Any],
        *,
        name: str | None = None,
        description: str | None = None,
        files: Mapping[str, str | bytes] | None = None,
        front_matter: Mapping[str, Any] | None = None,
        prefix: str = "",
        dynamic: bool = False,
    ) -> PublishedSkill:
        """Publish the skill ``fn`` makes (``@server.skill()``): named ``fn``'s name with ``_`` made ``-``
        unless ``name`` says, described by its docstring unless ``description`` does, with ``fn()``'s
        markdown as its body: called once now, or with ``dynamic`` at each read (then it may be async)."""
        from .folder import SkillError

        name = name if name is not None else fn.__name__.replace("_", "-")
        description = description if description is not None else inspect.getdoc(fn)
        if not description:
            raise SkillError(f"skill {name!r}: no description (give description=, or a docstring to {fn.__name__})")
        if dynamic:
            body: Any = fn
        else:
            body = fn()
            if inspect.isawaitable(body):
                close = getattr(body, "close", None)
                if callable(close):
                    close()
                raise SkillError(f"skill {name!r}: {fn.__name__} is async: only a dynamic=True skill's body is")
        return self.add_skill(
            name=name, description=description, body=body, files=files, front_matter=front_matter, prefix=prefix
        )

    def add(self, skill: PublishedSkill) -> PublishedSkill:
        """Publish ``skill``: its files become resources and the extension is declared. ``SkillError`` when
        its directory is, holds or lies inside another skill's, or one of its URIs is a resource already."""
        from .folder import SkillError

        for other in self._skills.values():
            if _within(skill.root, other.root) or _within(other.root, skill.root):
                raise SkillError(
                    f"{skill.origin}: {skill.root} overlaps the skill at {other.root} ({other.origin}); "
                    "publish nested skills under a prefix of their own"
                )
        registered: list[str] = []
        try:
            for file in self._served_files(skill):
                self._definitions[file[0]] = _definition(self._host.add_resource(file[0], file[1], **file[2]))
                registered.append(file[0])
        except ValueError as exc:
            for uri in registered:
                self._host.remove_resource(uri)
                self._definitions.pop(uri, None)
            raise SkillError(f"{skill.origin}: {exc}") from None
        self._skills[skill.uri] = skill
        self._directories = None
        if not self.declared:
            self._host.declare_extension(SKILLS_EXTENSION, SETTINGS)
            self.declared = True
        return skill

    def remove_skill(self, skill: str) -> None:
        """Withdraw the skill named ``skill`` (its name, or the URI of its ``SKILL.md``); ``KeyError`` if
        none is published so. Its resources go with it."""
        found = self._skills.get(skill) or next((s for s in self._skills.values() if s.name == skill), None)
        if found is None:
            raise KeyError(f"no skill {skill!r} is published")
        del self._skills[found.uri]
        self._directories = None
        for uri in [found.uri, *(f.uri for f in found.files.values() if f.uri != found.uri)]:
            if self._definitions.pop(uri, None) is not None:
                self._host.remove_resource(uri)

    # ------------------------------------------------------------- answering

    def page(self, cursor: Any, page_size: int | None) -> tuple[list[dict[str, Any]], str | None]:
        """A page of entries after ``cursor`` (``InvalidParams`` for a cursor not ours) and the next cursor."""
        page, next_cursor = self._paginate("skills", list(self._skills.values()), cursor, page_size)
        return [skill.entry() for skill in page], next_cursor

    def entry(self, uri: Any) -> dict[str, Any]:
        """The entry of the skill whose ``SKILL.md`` is at ``uri``; ``InvalidParams`` when none is."""
        if not isinstance(uri, str):
            raise InvalidParams("skills/get: params.uri must be a string (the URI of a skill's SKILL.md)")
        skill = self._skills.get(uri)
        if skill is None:
            raise InvalidParams(f"No skill is served at {_shown(uri)}", data={"uri": uri})
        return skill.entry()

    def children(self, uri: Any, cursor: Any, page_size: int | None) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the direct children of the directory at ``uri``; ``InvalidParams`` for anything that is
        not a directory resource here (a file, an unknown URI)."""
        if not isinstance(uri, str):
            raise InvalidParams("resources/directory/read: params.uri must be a string (a directory's URI)")
        children = self._index().get(uri)
        if children is None:
            what = "a file" if uri in self._definitions else "not served here"
            raise InvalidParams(f"{_shown(uri)} is not a directory resource ({what})", data={"uri": uri})
        kind = "directory " + uri.replace(":", "%3A")  # (a cursor of one directory is refused by another)
        return self._paginate(kind, list(children.values()), cursor, page_size)  # type: ignore[return-value]

    # ------------------------------------------------------------- internals

    def _served_files(self, skill: PublishedSkill) -> list[tuple[str, Callable[[], Any], dict[str, Any]]]:
        """``(uri, read function, metadata)`` for each file: ``SKILL.md`` named and described by its front
        matter, the rest by their file names."""
        served: list[tuple[str, Callable[[], Any], dict[str, Any]]] = []
        if skill.dynamic:

            async def skill_md() -> str:
                return await skill.skill_md()

            generated: dict[str, Any] = {"name": skill.name, "description": skill.description}
            served.append((skill.uri, skill_md, {**generated, "mime_type": "text/markdown"}))
        for file in skill.files.values():
            meta: dict[str, Any] = {"name": file.path.rsplit("/", 1)[-1], "mime_type": file.mime_type}
            meta["size"] = len(file.data)
            if file.path == SKILL_FILE:
                meta.update(name=skill.name, description=skill.description)
            served.append((file.uri, _returning(file.content()), meta))
        return served

    def _index(self) -> dict[str, dict[str, dict[str, Any]]]:
        if self._directories is None:
            directories: dict[str, dict[str, dict[str, Any]]] = {}
            for skill in self._skills.values():
                for uri in [skill.uri, *(f.uri for f in skill.files.values() if f.uri != skill.uri)]:
                    parent, _, _ = uri.rpartition("/")
                    directories.setdefault(parent, {})[uri] = self._definitions[uri]
                    while len(parent) > len(SKILL_SCHEME) + 1 and "/" in parent[len(SKILL_SCHEME) :]:
                        above, _, name = parent.rpartition("/")
                        folder = {"uri": parent, "name": name, "mimeType": DIRECTORY_MIME_TYPE}
                        directories.setdefault(above, {})[parent] = folder
                        parent = above
            self._directories = {uri: dict(sorted(children.items())) for uri, children in directories.items()}
        return self._directories


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer + "/")


def _returning(value: str | bytes) -> Callable[[], str | bytes]:
    def read() -> str | bytes:
        return value

    return read


def _definition(entry: Any) -> dict[str, Any]:
    definition = getattr(entry, "definition", None)
    return dict(definition) if isinstance(definition, dict) else {}


def _shown(uri: str) -> str:
    return uri if len(uri) <= 200 else f"{uri[:200]}... ({len(uri)} characters)"
