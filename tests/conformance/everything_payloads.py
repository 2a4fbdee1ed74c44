"""What the conformance fixture (``everything_server.py``) sends and asks for: the media, the
schemas and the elicitation forms whose exact shapes the harness's scenarios check."""

from __future__ import annotations

__all__ = [
    "ENUMS_FORM",
    "JSON_SCHEMA_2020_12",
    "NO_ARGUMENTS",
    "PNG",
    "WAV",
    "X_MCP_HEADER_SCHEMA",
    "ColorForm",
    "ConfirmForm",
    "ContactForm",
    "DefaultsForm",
    "NameForm",
    "PromptContextForm",
    "outcome",
    "resource_block",
    "sampled_text",
]

import io
import json
import struct
import wave
import zlib
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict

from backchannel.server.elicitation import Elicited
from backchannel.types.sampling import CreateMessageResult

# --------------------------------------------------------------------------- media


def _png_1x1_red() -> bytes:
    """A valid 1x1 RGB PNG holding one red pixel."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # width, height, depth 8, truecolour
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte 0, then R G B
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _wav_silence(milliseconds: int = 50, rate: int = 8000) -> bytes:
    """A valid mono 16-bit PCM WAV of silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * (rate * milliseconds // 1000))
    return buffer.getvalue()


PNG = _png_1x1_red()
WAV = _wav_silence()

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

X_MCP_HEADER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {
            "type": "string",
            "description": "Mirrored into the Mcp-Param-Region header (SEP-2243)",
            "x-mcp-header": "Region",
        },
        "query": {"type": "string", "description": "Not mirrored into a header"},
    },
    "required": ["region"],
}

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


# ---------------------------------------------------------------------- elicitation forms


class ContactForm(TypedDict):
    """``test_elicitation``: both fields required."""

    username: Annotated[str, "User's response"]
    email: Annotated[str, "User's email address"]


@dataclass
class DefaultsForm:
    """``test_elicitation_sep1034_defaults``: a default on every primitive type (SEP-1034)."""

    name: Annotated[str, "User name"] = "John Doe"
    age: Annotated[int, "User age"] = 30
    score: Annotated[float, "User score"] = 95.5
    status: Annotated[Literal["active", "inactive", "pending"], "User status"] = "active"
    verified: Annotated[bool, "Verification status"] = True


# The deprecated enumNames variant has no Python spelling (Titles sends oneOf), so this one is a dict.
ENUMS_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


class NameForm(TypedDict):
    name: str


class ConfirmForm(TypedDict):
    ok: bool


class ColorForm(TypedDict):
    color: str


class PromptContextForm(TypedDict):
    context: str


def outcome(answer: Elicited[Any]) -> str:
    data = answer.data
    content = json.dumps(data if isinstance(data, dict) else vars(data) if data is not None else None)
    return f"action={answer.action}, content={content}"


def sampled_text(result: CreateMessageResult) -> str:
    blocks = result.content if isinstance(result.content, list) else [result.content]
    return "".join(getattr(block, "text", "") for block in blocks)


def resource_block(uri: str, mime_type: str, text: str) -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime_type, "text": text}}
