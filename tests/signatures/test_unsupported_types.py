"""A parameter type MCP cannot carry is refused in one line that says what to write instead
(issue #18, item 6).

Before, registering ``def frob(x: Thing)`` raised pydantic's schema error, chained under some
forty lines of pydantic internals and ending in ``arbitrary_types_allowed``, advice a tool's
author cannot use: arguments arrive as JSON. Now it is an ``UnsupportedType`` (a
``TypeError``) naming the tool and where it is defined, the parameter, its type, the part of
the type that has no JSON form, and what to use instead; raised ``from None``, and printed by
``backchannel run`` as that one line with no traceback.
"""

# mypy: disable-error-code="empty-body"

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _subprocesses import checkout_env
from backchannel import Server
from backchannel.signatures.signature import SignatureError, UnsupportedType, derive_parameters


class Thing:
    """A plain class: no fields pydantic can read, so no JSON form."""


@dataclass
class Order:
    when: Thing


@dataclass
class Node:
    children: list[Node]
    label: Thing


def plain(x: Thing) -> None: ...


def listed(x: list[Thing]) -> None: ...


def optional(x: Thing | None = None) -> None: ...


def nested(order: Order) -> None: ...


def tree(root: Node) -> None: ...


def callback(then: Callable[[int], str]) -> None: ...


def stream(items: Iterator[int]) -> None: ...


def rest(**extra: Thing) -> None: ...


# (function, the words the one line must hold after "tool 'NAME' (FILE:LINE): ")
CASES = [
    (plain, "parameter 'x' has type Thing, which has no JSON form", "make Thing a dataclass, TypedDict or pydantic"),
    (listed, "parameter 'x' has type list[Thing], and Thing has no JSON form", "make Thing a dataclass"),
    (optional, "parameter 'x' has type Thing | None, and Thing has no JSON form", "make Thing a dataclass"),
    (nested, "parameter 'order' has type Order, and Order.when (Thing) has no JSON form", "make Thing a"),
    (tree, "parameter 'root' has type Node, and Node.label (Thing) has no JSON form", "make Thing a"),
    (callback, "parameter 'then' has type Callable[[int], str], which has no JSON form", "take the name of"),
    (stream, "parameter 'items' has type Iterator[int], which has no JSON form", "use list[...] instead"),
    (rest, "the values of **extra has type Thing, which has no JSON form", "make Thing a dataclass"),
]


@pytest.mark.parametrize(("fn", "what", "instead"), CASES, ids=[case[0].__name__ for case in CASES])
def test_one_line_naming_the_parameter_the_type_and_what_to_use(fn: Any, what: str, instead: str) -> None:
    with pytest.raises(UnsupportedType) as caught:
        derive_parameters(fn, name="frob")
    message = str(caught.value)
    line = fn.__code__.co_firstlineno
    assert message.startswith(f"tool 'frob' (test_unsupported_types.py:{line}): {what}, so MCP cannot carry it; ")
    assert instead in message
    assert "\n" not in message
    assert "arbitrary_types_allowed" not in message and "pydantic-core" not in message
    # from None: no pydantic exception printed above ours
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert isinstance(caught.value, TypeError)  # what registration has always raised


def test_the_error_carries_the_parameter_and_the_culprit() -> None:
    with pytest.raises(UnsupportedType) as caught:
        derive_parameters(nested)
    assert caught.value.parameter == "order"
    assert caught.value.annotation is Order and caught.value.culprit is Thing


@pytest.mark.parametrize("what", ["prompt", "resource"])
def test_prompts_and_resources_say_the_same(what: str) -> None:
    with pytest.raises(UnsupportedType, match=rf"^{what} 'frob' \(.*\): parameter 'x' has type Thing, which"):
        derive_parameters(plain, what=what, name="frob")


def test_other_signature_problems_are_signature_errors_too() -> None:
    def positional(a: int, /) -> None: ...

    def star(*items: int) -> None: ...

    for fn in (positional, star):
        with pytest.raises(SignatureError, match=rf"^tool '{fn.__name__}' \(test_unsupported_types.py:\d+\): "):
            derive_parameters(fn)


def test_registering_on_a_server_raises_it() -> None:
    server = Server("types")
    with pytest.raises(UnsupportedType, match="parameter 'x' has type Thing"):
        server.add_tool(plain)
    with pytest.raises(UnsupportedType, match="parameter 'x' has type Thing"):
        server.add_resource("res://things/{x}", plain)


def test_backchannel_run_prints_one_line_not_a_traceback(tmp_path: Path) -> None:
    source = tmp_path / "frob_server.py"
    source.write_text(
        textwrap.dedent(
            """\
            from backchannel import Server

            class Thing:
                pass

            server = Server("frob")

            @server.tool()
            def frob(x: Thing) -> str:
                return "ok"
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "run", str(source)],
        capture_output=True,
        text=True,
        timeout=30,
        env=checkout_env(),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()  # one line: no traceback above it
    assert line.endswith(
        "tool 'frob' (frob_server.py:8): parameter 'x' has type Thing, which has no JSON form, so MCP cannot "
        "carry it; make Thing a dataclass, TypedDict or pydantic model whose fields are JSON types (str, int, "
        "float, bool, None, list[...], dict[str, ...], Literal, Enum, datetime), or take the values it holds as "
        "separate parameters"
    )
