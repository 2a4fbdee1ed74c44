"""``skills`` and ``skill <name | uri> [file]`` in the terminal client (SEP-2640).

``skills`` lists the server's skills: name (and URI), how many files and bytes (or "dynamic"),
what each is for. ``skill NAME`` shows one: its front matter, its ``SKILL.md`` read and checked
against the skill's entry (size, SHA-256, front matter), and its files; ``skill NAME FILE`` shows
one of those files, checked the same way. A file that fails the check is not shown: the person is
told why. Tab completes skill names from the last listing, and then their files.
"""

from __future__ import annotations

__all__ = ["SkillView", "skill_paths"]

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from rich.markup import escape
from rich.table import Table

from ..skills.frontmatter import split_skill_md
from ..types.errors import MCPError, RemoteProtocolError
from ..types.skills import SKILL_FILE, Skill
from ..types.wording import counted
from .commands import Command, CommandError
from .render import Renderer, structured

if TYPE_CHECKING:
    from ..client.client import Client

T = TypeVar("T")


class _Runner(Protocol):
    """The session's ``_run``: await a request, Ctrl-C cancelling it on the wire."""

    def __call__(self, work: Awaitable[T], /) -> Awaitable[T]: ...


def skill_paths(skill: Skill) -> list[str]:
    """The paths of ``skill``'s files inside it, as its entry lists them (none for a dynamic skill)."""
    if isinstance(skill.resources, str):
        return []
    root = skill.root + "/"
    return [resource.uri.removeprefix(root) for resource in skill.resources if resource.uri.startswith(root)]


class SkillView:
    """The two skills commands of one terminal session; ``known`` holds the last listing (for Tab)."""

    def __init__(
        self,
        renderer: Renderer,
        client: Callable[[], Client],
        run: _Runner,
        names: dict[str, list[str]],
    ) -> None:
        self.renderer = renderer
        self.console = renderer.console
        self._client = client
        self._run = run
        self._names = names
        #: The entries last listed (or shown), by name and by URI.
        self.known: dict[str, Skill] = {}

    async def command(self, command: Command) -> None:
        """``skills``, or ``skill <name | uri> [file]``."""
        if command.name == "skills":
            await self.list_all()
        else:
            await self.show(command.target, command.rest.strip())

    async def list_all(self) -> None:
        skills = await self._run(self._client().list_skills())
        self.remember(skills)
        if not skills:
            self.console.print("[dim]No skills.[/]")
            return
        table = Table(title=counted(len(skills), "skill"), title_justify="left")
        table.add_column("skill", style="bold cyan", no_wrap=True)
        table.add_column("files")
        table.add_column("description")
        for skill in skills:
            name = f"{escape(skill.name)}\n[dim]{escape(skill.uri)}[/]"
            table.add_row(name, _files(skill), escape(skill.description))
        self.console.print(table)

    def remember(self, skills: list[Skill]) -> None:
        """Keep ``skills`` for ``skill NAME`` and Tab."""
        self.known = {}
        for skill in skills:
            self.known.setdefault(skill.name, skill)
            self.known[skill.uri] = skill
        self._names["skills"] = list(dict.fromkeys(skill.name for skill in skills))

    async def show(self, target: str, path: str) -> None:
        client = self._client()
        known = self.known.get(target)
        if known is None:
            try:
                known = await self._run(client.get_skill(target))
            except ValueError as exc:  # no skill, or several, of that name
                raise CommandError(str(exc)) from None
            self.known.setdefault(known.name, known)
            self.known[known.uri] = known
        skill = known
        try:
            content = await self._run(client.read_skill_file(skill, path or SKILL_FILE))
        except RemoteProtocolError as exc:  # ``SkillVerificationError`` among them
            raise CommandError(f"not shown: {exc.message}") from None
        except MCPError:
            raise
        if path:
            self._file(content.uri, content.mime_type, content.data)
            return
        self.console.print(f"[bold cyan]{escape(skill.name)}[/] [dim]{escape(skill.uri)}[/]", soft_wrap=True)
        self.console.print(f"[italic]{escape(skill.description)}[/]")
        extra = {key: value for key, value in skill.frontmatter.items() if key not in ("name", "description")}
        if extra:
            self.console.print(structured(extra))
        if not content.verified:
            self.console.print("[yellow]A dynamic skill: its entry publishes no digests to check it against.[/]")
        self.renderer.text(split_skill_md(content.text)[1], "text/markdown")  # (checked: it has front matter)
        paths = [p for p in skill_paths(skill) if p != SKILL_FILE]
        if paths:
            self.console.print(f"[bold]{counted(len(paths), 'file')}[/] beside {SKILL_FILE} (skill {skill.name} FILE):")
            for found in paths:
                self.console.print(f"  {escape(found)}", soft_wrap=True)

    def _file(self, uri: str, mime_type: str | None, data: bytes) -> None:
        kind = f" [dim]({escape(mime_type)})[/]" if mime_type else ""
        self.console.print(f"[bold cyan]{escape(uri)}[/]{kind}", soft_wrap=True)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            import base64

            saved = self.renderer.save(base64.b64encode(data).decode(), mime_type, uri.rsplit("/", 1)[-1])
            self.console.print(f"  binary content saved to {escape(str(saved))}", soft_wrap=True)
            return
        self.renderer.text(text, mime_type)


def _files(skill: Skill) -> str:
    if isinstance(skill.resources, str):
        return "dynamic"
    size = sum(resource.size for resource in skill.resources)
    return f"{counted(len(skill.resources), 'file')}, {counted(size, 'byte')}"
