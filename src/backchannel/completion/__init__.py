"""Argument completion's completers: what answers ``completion/complete`` for one prompt or
template argument, and how its answer is capped (``completers.py``: ``Complete``,
``ArgumentCompleter``, ``completers_for``), over ``PrefixIndex``, a static list indexed once
(``prefix_index.py``). It knows nothing of the server that serves the request (the lookup and the
rate limit are ``server/completion_request.py``); users import these names from
``backchannel.server.completion``.
"""
