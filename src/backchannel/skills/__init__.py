"""Skills (SEP-2640, ``io.modelcontextprotocol/skills``): what a server publishes and what a client checks.

A skill is a folder with a ``SKILL.md`` (YAML front matter: ``name``, ``description``) and any
files beside it. This package knows nothing of the server or the client that use it:

- ``folder.py`` reads a skill's folder from disk, safely (no links, bounded);
- ``frontmatter.py`` reads and writes a ``SKILL.md``'s front matter (YAML 1.2 core, JSON values);
- ``published.py`` is one published skill: files, URIs, digests, its entry;
- ``catalog.py`` is a server's skills and the answers to ``skills/list``, ``skills/get`` and
  ``resources/directory/read``; ``routes.py`` puts those in the server's route table;
- ``verify.py`` is what a client checks a file against before using it.

``Server.add_skill``, ``add_skills`` and ``@server.skill`` publish; ``Client.list_skills``,
``get_skill``, ``read_skill_directory`` and ``read_skill_file`` read (``docs/extensions.md``).
"""

from __future__ import annotations

__all__ = [
    "FrontMatterError",
    "PublishedSkill",
    "SkillCatalog",
    "SkillError",
    "SkillFile",
    "SkillVerificationError",
    "check_entry",
    "parse_front_matter",
    "split_skill_md",
    "verify_file",
]

from typing import TYPE_CHECKING

from .._lazy import lazy_names

#: Loaded on first use: a server imports the catalog and the routes only, not YAML or hashing.
_EXPORTS: dict[str, str] = {
    "FrontMatterError": "frontmatter",
    "PublishedSkill": "published",
    "SkillCatalog": "catalog",
    "SkillError": "folder",
    "SkillFile": "published",
    "SkillVerificationError": "verify",
    "check_entry": "verify",
    "parse_front_matter": "frontmatter",
    "split_skill_md": "frontmatter",
    "verify_file": "verify",
}

if TYPE_CHECKING:
    from .catalog import SkillCatalog
    from .folder import SkillError
    from .frontmatter import FrontMatterError, parse_front_matter, split_skill_md
    from .published import PublishedSkill, SkillFile
    from .verify import SkillVerificationError, check_entry, verify_file


__getattr__ = lazy_names(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return list(__all__)
