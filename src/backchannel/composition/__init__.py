"""Composition: one endpoint made of several servers, and what it shows of them.

``mounts.py`` serves other servers under a prefix of this one (``Server.mount``) and
``mount_sealer.py`` seals a mounted server's ``requestState`` with its mounting server's keys;
``transforms.py`` reshapes what clients see (a tool renamed or reshaped, items switched off for
everyone or one session); ``middleware.py`` is the ``Call`` and the chain that wraps every message
a server receives and every question it sends (``Server.add_middleware``). It sits above the
runtime and below the server: what it needs of a server or its registry is declared as protocols in
``faces.py``, and the server's helpers it uses (paging, the caller's scopes, a failure as a tool
result) are handed to it. A server that composes nothing never loads this package: ``Server``
imports it at its first mount, transform, visibility rule or middleware.
"""
