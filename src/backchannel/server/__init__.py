"""The high-level server API."""

from .content import Audio, Image
from .context import Context
from .prompts import assistant, user
from .server import Server

__all__ = ["Audio", "Context", "Image", "Server", "assistant", "user"]
