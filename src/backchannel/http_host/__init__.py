"""The Streamable HTTP host: the ASGI app, its handshake-era sessions and its stateless-era entry.

It sits above the runtime (it drives ``Connection``s) and below the server (it is handed one,
shaped as ``served.HostedServer``). It is the whole server side of HTTP: ``app.py`` admits a
request, ``sessions.py`` and ``stateless.py`` serve it, ``streams.py`` and ``responses.py`` write
its answer; ``gate.py`` is the auth step; ``h1/`` is ``run_http``'s own HTTP/1.1 server, which
knows ASGI and no MCP. ``transports/http/`` keeps only the client.
"""
