"""Streamable HTTP: the ASGI server app and the httpx2 client transport."""
