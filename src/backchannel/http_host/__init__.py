"""The Streamable HTTP host: the ASGI app, its handshake-era sessions and its stateless-era entry.

It sits above the runtime (it drives ``Connection``s) and below the server (it is handed one,
shaped as ``served.HostedServer``). It is the whole server side of HTTP: ``app.py`` admits a
request, ``sessions.py`` and ``stateless.py`` serve it, ``streams.py`` and ``responses.py`` write
its answer; ``gate.py`` is the auth step; ``h1/`` is ``run_http``'s own HTTP/1.1 server, which
knows ASGI and no MCP. ``transports/http/`` keeps only the client.

A POST, from the socket to its answer (each step names where to read on):

1. ``h1/connection.py``: ``Connection.data_received`` parses the head (the byte limits live
   there) and hands the request to the app; its body arrives through ``Request.receive``.
2. ``app.py``: ``HttpApp.__call__`` admits it (Host and Origin, ``gate.admit`` for a bearer
   token, the caps of ``limits.py`` and ``client_limits.py``), reads the body whole
   (``asgi.read_body``; a body that never arrived whole is never served) and checks it
   (``gate.posted_message``); then ``_post`` (the handshake era: a session id or
   ``initialize``) or ``_post_stateless`` (the request's ``_meta`` names its version).
3. The handshake era: ``session_posts.post_to_session`` feeds the message to the session's
   ``Connection`` (``sessions.HttpSession``), and ``session_responses.answer_request_post``
   writes the answer: JSON if it comes first, else a resumable SSE stream (``streams.py``).
   The stateless era: ``stateless.serve_stateless`` runs one ``Connection`` for the one
   request and writes its answer the same two ways.
4. An error on the way is one ``framing.http.Rejection``, written by
   ``responses.send_rejection`` (a JSON-RPC error body with its HTTP status).
"""
