"""Streamable HTTP, the client side: the httpx2 transport (``client.py``) and the legacy HTTP+SSE client.

The server side is ``http_host/``.
"""
