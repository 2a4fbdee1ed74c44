"""The high-level client API."""

from .client import Client

__all__ = ["Client"]
