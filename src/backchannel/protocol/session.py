"""The sans-IO MCP session: JSON values in, events out, messages to send.

Feed every decoded message to ``receive_message`` and act on the events it
returns; call the ``send_*`` commands to speak; then drain ``outgoing()`` and
write what it holds. The session never reads a clock or touches a socket, so a
test drives it with plain dicts.

One session serves both protocol eras. A handshake-era peer opens with
``initialize``; a stateless-era request carries its version and capabilities in
``params._meta`` and is served on its own, whatever the session's state. (In code
the eras are the values of ``Era``, ``"handshake"`` and ``"stateless"``.)

Every state move, legal or not, is read from the tables in ``states.py``; the
shape of each message from ``shapes.py``; the ``initialize`` exchange from
``handshake.py``. The class is put together from its records (``session_base.py``),
its receiving half (``receiving.py``) and its sending half (``sending.py``).

The session does not know which response or stream a message travels on: a transport
that routes by request (HTTP) gets that from the runtime, which knows which of the
peer's requests each of its commands concerns.
"""

from __future__ import annotations

__all__ = ["Role", "Session", "SessionConfig"]

from .receiving import Receiving
from .sending import Sending
from .session_base import SessionConfig
from .states import Role


class Session(Receiving, Sending):
    """One end of an MCP connection, client or server, with no I/O.

    Build it with a ``SessionConfig``; feed ``receive_message``, speak with the ``send_*``
    commands, and write what ``outgoing()`` returns after each call.
    """
