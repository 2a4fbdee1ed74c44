"""The Streamable HTTP host: the ASGI app, its handshake-era sessions and its stateless-era entry.

It sits above the runtime (it drives ``Connection``s) and below the server (it is handed one,
shaped as ``served.HostedServer``). ``transports/http/`` keeps what knows only bytes and streams.
"""
