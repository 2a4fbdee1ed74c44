"""``run_http``'s own HTTP/1.1 server on ``httptools``: it speaks ASGI and knows nothing of MCP.

``connection.py`` is one connection and its requests' ``receive`` and ``send``,
``serving.py`` the listening socket, the lifespan and a graceful stop, ``workers.py`` the
processes of ``run_http(workers=N)`` accepting on one socket, ``loopback.py`` the
loopback-only side listener for URL-elicitation pages. The MCP host around it is the folder above.
"""
