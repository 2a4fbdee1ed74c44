"""Streamable HTTP: the ASGI server app and the httpx client transport."""
