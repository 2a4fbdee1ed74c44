"""A Python signature as MCP sees it: type hints -> JSON Schema, arguments checked, outputs shaped.

``signature.py`` is the entry (``derive_parameters``, ``derive_output``); ``annotations.py``
reads hints, ``plain_parameters.py`` serves all-``str``/``int``/``float``/``bool`` parameters
without pydantic, ``unsupported_types.py`` refuses a type with no JSON form in one line,
``argument_problems.py`` words a bad argument, ``output_shape.py`` decides ``outputSchema``,
``docstrings.py`` reads parameter descriptions. It knows nothing of the server that uses it.
"""
