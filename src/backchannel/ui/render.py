"""What the person sees: lists as tables, results pretty-printed, media saved to files.

Everything prints to a rich ``Console``, so a test captures it with
``Console(file=io.StringIO())`` or ``console.capture()``.

* text content is printed as text (pretty JSON when it is JSON);
* structured content is a table when it is flat (an object of plain values, or
  a list of such objects), JSON otherwise; a text block that only repeats it is
  not printed twice;
* images, audio and binary resources are saved to files and their path shown.
"""

from __future__ import annotations

__all__ = ["Renderer", "arguments_summary", "structured"]

import base64
import binascii
import itertools
import json
import mimetypes
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from rich.console import Console, RenderableType
from rich.json import JSON
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..types.content import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
)
from ..types.prompts import GetPromptResult, Prompt
from ..types.resources import ReadResourceResult, Resource, ResourceTemplate
from ..types.tools import CallToolResult, Tool
from ..types.wording import counted
from .fields import fields_of

if TYPE_CHECKING:
    from ..client.client import Client

_EXTENSIONS = {"image/jpeg": ".jpg", "audio/mpeg": ".mp3", "audio/wav": ".wav", "text/plain": ".txt"}


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def structured(value: Any) -> RenderableType:
    """A table for flat structured content, pretty JSON for anything else."""
    if isinstance(value, dict) and value and all(_scalar(item) for item in value.values()):
        table = Table(show_header=True, header_style="bold")
        table.add_column("field")
        table.add_column("value")
        for key, item in value.items():
            table.add_row(escape(str(key)), escape(_cell(item)))
        return table
    if (
        isinstance(value, list)
        and value
        and all(isinstance(row, dict) and all(_scalar(item) for item in row.values()) for row in value)
    ):
        columns: list[str] = []
        for row in value:
            columns.extend(key for key in row if key not in columns)
        table = Table(show_header=True, header_style="bold")
        for column in columns:
            table.add_column(escape(str(column)))
        for row in value:
            table.add_row(*(escape(_cell(row[column])) if column in row else "" for column in columns))
        return table
    return JSON(json.dumps(value))


def arguments_summary(schema: Any) -> str:
    """``a*, b=1``: a tool's arguments, required ones starred, defaults shown."""
    parts = []
    for field in fields_of(schema):
        text = field.name + ("*" if field.required else "")
        if field.has_default:
            text += "=" + _cell(field.prop["default"])
        parts.append(text)
    return ", ".join(parts)


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def _safe(stem: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._") or "content"


class Renderer:
    """Renders lists and results to ``console``; media go to files under ``save_dir``."""

    def __init__(self, console: Console, save_dir: str | Path | None = None) -> None:
        self.console = console
        self._save_dir = Path(save_dir) if save_dir is not None else None
        self._numbers = itertools.count(1)
        #: Files written, newest last.
        self.saved: list[Path] = []

    @property
    def save_dir(self) -> Path:
        """Where media are saved: the folder given, or a new temporary one made on first use."""
        if self._save_dir is None:
            self._save_dir = Path(tempfile.mkdtemp(prefix="backchannel-"))
        return self._save_dir

    # -- lists -----------------------------------------------------------------------------------

    def help(self, commands: Iterable[tuple[str, str]]) -> None:
        """The ``help`` screen: each command's usage and what it does, then how arguments are typed."""
        table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
        for usage, text in commands:
            table.add_row(f"[bold]{escape(usage)}[/]", escape(text))
        self.console.print(table)
        self.console.print(
            "[dim]Arguments: a JSON object, or key=value words (quote values with spaces). "
            "Ctrl-C cancels a running request; in a form, Esc or Ctrl-C cancels the form.[/]"
        )

    def connection(self, client: Client) -> None:
        """The ``info`` screen: who the server is, the era and version, its capabilities and instructions."""
        table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
        info = client.server_info or {}
        table.add_row("server", escape(f"{info.get('name', '?')} {info.get('version', '')}".strip()))
        table.add_row("era", escape(f"{client.era} (protocol {client.protocol_version})"))
        table.add_row("capabilities", escape(", ".join(sorted(client.server_capabilities or {})) or "none"))
        if client.instructions:
            table.add_row("instructions", escape(client.instructions))
        self.console.print(table)

    def tools(self, tools: list[Tool]) -> None:
        """Print ``tools`` as a table: name, title and description."""
        rows = [
            (
                tool.name if not tool.title else f"{tool.name}\n[dim]{escape(tool.title)}[/]",
                arguments_summary(tool.input_schema),
                _first_line(tool.description),
            )
            for tool in tools
        ]
        self._named("tool", rows)

    def prompts(self, prompts: list[Prompt]) -> None:
        """Print ``prompts`` as a table with their arguments."""
        rows = [
            (
                escape(prompt.name),
                ", ".join(arg.name + ("*" if arg.required else "") for arg in prompt.arguments or []),
                _first_line(prompt.description),
            )
            for prompt in prompts
        ]
        self._named("prompt", rows)

    def _named(self, noun: str, rows: list[tuple[str, str, str]]) -> None:
        """A table of things called by name (tools, prompts): (name markup, arguments, description) rows."""
        table = self._titled(noun, len(rows))
        if table is None:
            return
        table.add_column(noun, style="bold cyan", no_wrap=True)
        table.add_column("arguments")
        table.add_column("description")
        for name, arguments, description in rows:
            table.add_row(name, escape(arguments), escape(description))
        self.console.print(table)

    def _titled(self, noun: str, count: int) -> Table | None:
        """An empty table titled with the count ("3 tools"); None, with "No tools." printed, for none."""
        if not count:
            self.console.print(f"[dim]No {noun}s.[/]")
            return None
        return Table(title=f"{count} {noun}{'s' if count != 1 else ''}", title_justify="left")

    def resources(self, resources: list[Resource]) -> None:
        """Print ``resources`` as a table by URI."""
        self._addressed("resource", "uri", [(item.uri, item) for item in resources])

    def templates(self, templates: list[ResourceTemplate]) -> None:
        """Print resource ``templates`` as a table by URI template."""
        self._addressed("resource template", "uri template", [(item.uri_template, item) for item in templates])

    def _addressed(self, noun: str, key: str, rows: list[tuple[str, Resource | ResourceTemplate]]) -> None:
        """A table of things reached by URI (resources) or URI template."""
        table = self._titled(noun, len(rows))
        if table is None:
            return
        table.add_column(key, style="bold cyan", no_wrap=True)
        table.add_column("name")
        table.add_column("type")
        table.add_column("description")
        for address, item in rows:
            table.add_row(
                escape(address),
                escape(item.title or item.name),
                escape(item.mime_type or ""),
                escape(_first_line(item.description)),
            )
        self.console.print(table)

    # -- results ---------------------------------------------------------------------------------

    def tool_result(self, name: str, result: CallToolResult) -> None:
        """Print the result of calling tool ``name``: its content blocks, its structured content, and whether it
        failed."""
        if result.is_error:
            self.console.print(f"[bold red]{escape(name)} failed:[/]")
        has_structured = result.structured_content is not msgspec.UNSET
        for block in result.content:
            if has_structured and isinstance(block, TextContent) and _same_json(block.text, result.structured_content):
                continue
            self.content(block, name, style="red" if result.is_error else None)
        if has_structured:
            self.console.print(structured(result.structured_content))
        if not result.content and not has_structured:
            self.console.print("[dim](no content)[/]")

    def prompt_result(self, name: str, result: GetPromptResult) -> None:
        """Print prompt ``name``'s description and messages."""
        if result.description:
            self.console.print(f"[italic]{escape(result.description)}[/]")
        for message in result.messages:
            self.console.print(f"[bold magenta]{escape(message.role)}:[/]")
            self.content(message.content, name)

    def resource_result(self, uri: str, result: ReadResourceResult) -> None:
        """Print what reading ``uri`` gave, each of its contents in turn."""
        if not result.contents:
            self.console.print("[dim](empty)[/]")
        for contents in result.contents:
            self.resource_contents(contents)

    def resource_contents(self, contents: ResourceContents) -> None:
        """Print one resource's contents: text as text, a blob saved to a file."""
        kind = f" [dim]({escape(contents.mime_type)})[/]" if contents.mime_type else ""
        self.console.print(f"[bold cyan]{escape(contents.uri)}[/]{kind}")
        if contents.blob is not None:
            path = self.save(contents.blob, contents.mime_type, contents.uri.rsplit("/", 1)[-1] or "resource")
            self.console.print(f"  binary content saved to {escape(str(path))}", soft_wrap=True)
        elif contents.text is not None:
            self.text(contents.text, contents.mime_type)

    def content(self, block: Any, stem: str, style: str | None = None) -> None:
        """Print one content block: text as text, images and audio saved to a file named after ``stem``, links and
        embedded resources by URI."""
        if isinstance(block, TextContent):
            self.text(block.text, None, style=style)
        elif isinstance(block, ImageContent | AudioContent):
            kind = "image" if isinstance(block, ImageContent) else "audio"
            path = self.save(block.data, block.mime_type, stem)
            size = path.stat().st_size
            label = escape(f"[{kind} {block.mime_type}, {counted(size, 'byte')}]")
            self.console.print(f"{label} saved to {escape(str(path))}", soft_wrap=True)
        elif isinstance(block, ResourceLink):
            kind = f" ({escape(block.mime_type)})" if block.mime_type else ""
            title = escape(f"[link] {block.title or block.name}")
            self.console.print(f"{title}: [underline]{escape(block.uri)}[/]{kind}", soft_wrap=True)
        elif isinstance(block, EmbeddedResource):
            self.resource_contents(block.resource)
        else:  # pragma: no cover - a content type this client does not know
            self.console.print(JSON(json.dumps(msgspec.to_builtins(block))))

    def text(self, text: str, mime_type: str | None, style: str | None = None) -> None:
        """Print ``text``: as Markdown or JSON when it is that, else plain in ``style``."""
        if mime_type == "text/markdown":
            self.console.print(Markdown(text))
            return
        stripped = text.strip()
        if stripped[:1] in ("{", "[") or mime_type == "application/json":
            try:
                json.loads(stripped)
            except ValueError:
                pass
            else:
                self.console.print(JSON(stripped))
                return
        self.console.print(Text(text, style=style or ""))

    def save(self, data: str, mime_type: str | None, stem: str) -> Path:
        """Decode base64 ``data`` into a new file named after ``stem``; its path."""
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raw = data.encode()
        extension = _EXTENSIONS.get(mime_type or "") or mimetypes.guess_extension(mime_type or "") or ".bin"
        directory = self.save_dir
        directory.mkdir(parents=True, exist_ok=True)
        while True:
            path = directory / f"{_safe(stem)}-{next(self._numbers)}{extension}"
            if not path.exists():
                break
        path.write_bytes(raw)
        self.saved.append(path)
        return path


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False
