"""A skill's folder read from disk, once, into memory: its files by relative path.

``read_skill_folder(path)`` walks the folder and returns ``{relative path: bytes}``, ``SKILL.md``
among them. It refuses, naming the path, what it will not serve: a symbolic link (even one that
points inside: a link can be retargeted after the digests are taken), anything that is not a
regular file or a directory, a name that is not UTF-8, more than ``MAX_SKILL_FILES`` files or
``MAX_SKILL_BYTES`` bytes in all (the extension's limits, which every host accepts), and a folder
without ``SKILL.md``. Names beginning with a dot (``.git``, ``.DS_Store``) are not part of a skill
and are skipped. Each file is opened with ``O_NOFOLLOW`` and checked to be a regular file after
opening, so nothing swapped in during the walk is read either.
"""

from __future__ import annotations

__all__ = ["SkillError", "read_skill_folder"]

import os
import stat

from ..types.skills import MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILL_FILE


class SkillError(ValueError):
    """A skill that cannot be published: the message names the path and the problem, in one line."""


def read_skill_folder(
    folder: str | os.PathLike[str], *, max_files: int = MAX_SKILL_FILES, max_bytes: int = MAX_SKILL_BYTES
) -> dict[str, bytes]:
    """Every file of the skill at ``folder`` by its ``/``-separated path inside it (sorted), ``SKILL.md``
    first; ``SkillError`` for what the module docstring lists."""
    root = os.fspath(folder)
    try:
        top = os.lstat(root)
    except FileNotFoundError:
        raise SkillError(f"{root}: no such folder") from None
    except OSError as exc:
        raise SkillError(f"{root}: cannot be read ({exc.strerror})") from None
    if stat.S_ISLNK(top.st_mode):
        raise SkillError(f"{root}: a symbolic link; give the folder it points to")
    if not stat.S_ISDIR(top.st_mode):
        raise SkillError(f"{root}: not a folder (a skill is a folder with a {SKILL_FILE})")
    files: dict[str, bytes] = {}
    total = 0
    pending = [""]
    while pending:
        relative = pending.pop()
        where = os.path.join(root, relative) if relative else root
        try:
            entries = sorted(os.scandir(where), key=lambda entry: entry.name)
        except OSError as exc:
            raise SkillError(f"{where}: cannot be read ({exc.strerror})") from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = os.path.join(where, entry.name)
            try:
                entry.name.encode("utf-8")
            except UnicodeEncodeError:
                raise SkillError(f"{os.fsencode(path)!r}: a file name that is not UTF-8") from None
            inside = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_symlink():
                raise SkillError(f"{path}: a symbolic link; a skill is served from its own regular files only")
            if entry.is_dir(follow_symlinks=False):
                pending.append(inside)
                continue
            if not entry.is_file(follow_symlinks=False):
                raise SkillError(f"{path}: not a regular file")
            if len(files) + 1 > max_files:
                raise SkillError(f"{root}: more than {max_files} files; a host need not load a bigger skill")
            data = _read(path, max_bytes - total)
            if data is None:
                raise SkillError(f"{root}: more than {max_bytes} bytes of files; a host need not load a bigger skill")
            total += len(data)
            files[inside] = data
    if SKILL_FILE not in files:
        raise SkillError(f"{root}: no {SKILL_FILE} (every skill has one at its root)")
    return {SKILL_FILE: files.pop(SKILL_FILE), **dict(sorted(files.items()))}


def _read(path: str, budget: int) -> bytes | None:
    """The bytes of the regular file at ``path``, never through a link; None when there are more than
    ``budget`` (read no further than that)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise SkillError(f"{path}: cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise SkillError(f"{path}: not a regular file")
        if status.st_size > budget:
            return None
        data = file.read(budget + 1)
        return data if len(data) <= budget else None
