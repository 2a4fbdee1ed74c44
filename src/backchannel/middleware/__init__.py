"""Ready-made middleware for ``Server.add_middleware`` (``composition/middleware.py`` says what one is).

Each is a class whose instances are middleware; configure it, then add it::

    from backchannel.middleware import Audit, ListCache, RateLimit, RequestLog, ToolFilter

    server.add_middleware(RequestLog())                 # one log line per request, with its time
    server.add_middleware(RateLimit(rate=10, burst=20))  # per principal (else session, address)
    server.add_middleware(Audit(record=store.append))   # the reverse channel: questions, answers
    server.add_middleware(ToolFilter(deny=["ev_admin_*"]))
    server.add_middleware(ListCache(max_age=30))        # list results, per caller

The first added is the outermost: add ``RequestLog`` first so that it logs what the others
refuse, and ``ListCache`` last so that it keeps what the others let through. Each reads only the
``Call`` it is given and the server the call's connection serves, so it works in both eras, for
the server's own tools and its mounts', over every transport. They are plain code, meant to be
read and copied: write your own the same way.
"""

from __future__ import annotations

__all__ = [
    "Audit",
    "AuditEvent",
    "ListCache",
    "RateLimit",
    "RequestLog",
    "ToolFilter",
    "caller_key",
    "item_name",
    "outcome_of",
]

from .audit import Audit, AuditEvent
from .calls import caller_key, item_name, outcome_of
from .list_cache import ListCache
from .rate_limit import RateLimit
from .request_log import RequestLog
from .tool_filter import ToolFilter
