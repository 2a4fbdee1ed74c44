"""What a handler returns, turned into MCP content blocks.

A tool, prompt or resource function returns what is natural in Python; these
functions decide, in one place, what that means on the wire:

- ``str`` becomes one text block;
- a content block (``TextContent``, ``ImageContent``, ...) or a dict with a
  ``"type"`` is passed through; ``Image``/``Audio`` read files or take bytes;
- a list or tuple is flattened, one block per item;
- ``None`` is no content;
- anything else is serialised to JSON text.
"""

from __future__ import annotations

__all__ = ["Audio", "Image", "to_content"]

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from pathlib import Path

_encode_json = msgspec.json.encode


@dataclass(frozen=True, slots=True)
class _Media:
    data: bytes
    mime_type: str
    kind: str = ""

    @classmethod
    def from_file(cls, path: str | Path, mime_type: str | None = None) -> Any:
        """Read ``path`` whole, its MIME type guessed from the name unless given: ``Image.from_file("chart.png")``."""
        import mimetypes  # its tables (and urllib.parse) only for a server that sends files: 3 ms of startup
        from pathlib import Path  # (0.6 MiB with urllib.parse and ipaddress)

        path = Path(path)
        guessed = mime_type or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return cls(path.read_bytes(), guessed)

    def to_block(self) -> dict[str, Any]:
        """The content block to send: base64 ``data`` with its ``mimeType``."""
        return {"type": self.kind, "data": base64.b64encode(self.data).decode(), "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True)
class Image(_Media):
    """Image bytes to return from a tool or prompt: ``Image(png_bytes, "image/png")``."""

    kind: str = "image"


@dataclass(frozen=True, slots=True)
class Audio(_Media):
    """Audio bytes to return from a tool or prompt: ``Audio(wav_bytes, "audio/wav")``."""

    kind: str = "audio"


def to_block(value: Any) -> dict[str, Any]:
    """One content block for one value."""
    if isinstance(value, str):
        return {"type": "text", "text": value}
    if isinstance(value, _Media):
        return value.to_block()
    if isinstance(value, msgspec.Struct):
        block = msgspec.to_builtins(value)
        if isinstance(block, dict) and "type" in block:
            return block
        return {"type": "text", "text": _encode_json(value).decode()}
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return value
    return {"type": "text", "text": _json_text(value)}


def to_content(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [to_block(item) for item in value]
    return [to_block(value)]


def _json_text(value: Any) -> str:
    try:
        return _encode_json(value).decode()
    except TypeError:
        # pydantic models and other types msgspec does not know.
        import pydantic_core

        return pydantic_core.to_json(value, fallback=str).decode()
