"""backchannel's version, in this one place: ``backchannel.__version__``, the wheel's metadata
(pyproject.toml reads it from here: ``[tool.hatch.version]``) and the client's default
``clientInfo`` all take it from this line."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
