"""The two ways a form goes wrong.

::

    ValueError
    ├── FormSchemaError   the form itself is not a valid flat elicitation schema (our side, at registration)
    └── FormContentError  the user's answer does not fit the form (their side, after an accept)

Neither carries a JSON-RPC code: a ``FormSchemaError`` is a programming error to
fix before the server runs, and a ``FormContentError`` is for the caller to turn
into a re-ask or a tool error, whichever its flow wants.
"""

from __future__ import annotations

__all__ = ["FormContentError", "FormSchemaError"]


class FormSchemaError(ValueError):
    """A form schema (or the Python type it came from) cannot be sent as ``requestedSchema``.

    ``field`` names where the problem is (``"age"``, ``"Order.shipping"``), or is
    None for the schema as a whole; ``problem`` says what is wrong. Fix the form:
    nothing the user does can make it valid.
    """

    def __init__(self, field: str | None, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)


class FormContentError(ValueError):
    """An accepted answer does not satisfy its form.

    ``problems`` lists each one in words meant for the person who filled the form
    (``"age: must be at most 120"``). Show them and ask again, or fail the call.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("the form answer is not valid: " + "; ".join(self.problems))
