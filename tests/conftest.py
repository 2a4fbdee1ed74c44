"""Suite-wide collection rules."""

from __future__ import annotations

__all__ = ["collect_ignore"]

#: The conformance fixture server: its tools are named ``test_*`` because the official
#: scenarios call them by those names; pytest must not take them for tests.
collect_ignore = ["conformance/everything_server.py"]
