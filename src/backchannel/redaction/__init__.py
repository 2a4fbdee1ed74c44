"""Keep secrets and personal data out of log messages: ``Redactor`` in ``redaction.py``.

``secret_patterns.py`` is data (which keys are sensitive, which shapes of text are secrets);
``key_values.py`` is the second pass over text (the value after a sensitive key), loaded on
first need. It knows nothing of the server that uses it.
"""
