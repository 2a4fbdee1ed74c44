"""Roots that carry meaning (issue #18, chapter 18.9 Q3), both eras: a client marks a root
read-only or sensitive under ``_meta["dev.backchannel/root"]`` (``docs/protocol-conventions.md``);
``ctx.roots.contains(path, for_writing=True)`` is False inside a read-only root, and a
sensitive root's path never reaches a log or progress message on the wire.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from _rs_harness import ERAS, run, serving, text_of

from backchannel import Context, Server
from backchannel.client.inputs import InputHandlers
from backchannel.server.log_handler import ClientLogHandler
from backchannel.server.roots import SENSITIVE_ROOT
from backchannel.types.roots import ROOT_MARKS_KEY, Root, RootMarks, root_marks

HIDDEN = SENSITIVE_ROOT  # "[REDACTED:sensitive root]"


def marked_server(**options: Any) -> Server:
    """``can`` answers ``contains`` for reading and writing; ``peek`` mentions ``path`` in every
    way a tool may: log text, log data (a ``Path`` object, a URI, a nested list, a logger name),
    Python logging, and the messages of ``report_progress``, ``stages`` and ``progress_parts``."""
    server = Server("marks", **options)
    python_logger = logging.getLogger("tests.root_marks")
    python_logger.propagate = False
    python_logger.setLevel(logging.INFO)
    python_logger.handlers = [ClientLogHandler()]

    @server.tool()
    async def can(ctx: Context, paths: list[str]) -> str:
        roots = await ctx.list_roots()
        return json.dumps([[roots.contains(p), roots.contains(p, for_writing=True)] for p in paths])

    @server.tool()
    async def peek(ctx: Context, path: str) -> str:
        await ctx.list_roots()
        await ctx.info(f"reading {path}")
        await ctx.log("warning", {"file": Path(path), "uri": Path(path).as_uri(), "nested": [[path]]})
        await ctx.log("info", "logger name", logger=f"walker:{path}")
        python_logger.info("opened %s", path)
        await ctx.report_progress(1, 4, f"scanning {path}")
        parts = ctx.progress_parts(["walk"], total=4)
        await parts["walk"].advance(1, of=2, message=f"walked {path}")  # 2 of 4
        await ctx.stages(["a", "b"], total=4).report("b", 0.5, f"stage at {path}")  # 3 of 4
        return "ok"

    return server


def wire_texts(wire: Any) -> str:
    """Everything the server wrote in log and progress notifications, as one JSON text."""
    sent = wire.notifications_written("notifications/message") + wire.notifications_written("notifications/progress")
    return json.dumps([m["params"] for m in sent])


def make_tree(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / name for name in ("plain", "locked", "secret", "secret-not")}
    paths["inner"] = paths["locked"] / "scratch"
    for path in paths.values():
        path.mkdir(parents=True)
    return paths


# ------------------------------------------------------------------ the key


def test_the_key_is_a_valid_unreserved_meta_key() -> None:
    """2025-11-25 basic/index.mdx: a prefix of dot-separated labels and a slash, reverse DNS,
    not reserved (second label neither ``modelcontextprotocol`` nor ``mcp``); a name that
    begins and ends with an alphanumeric."""
    prefix, name = ROOT_MARKS_KEY.split("/")
    labels = prefix.split(".")
    assert all(re.fullmatch(r"[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?", label) for label in labels)
    assert labels[1] not in ("modelcontextprotocol", "mcp")
    assert re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name)


def test_marked_writes_the_marks_and_keeps_other_meta() -> None:
    root = Root.marked("file:///srv/a", "a", read_only=True, sensitive=True, meta={"com.example/x": 1})
    assert root.meta == {"com.example/x": 1, ROOT_MARKS_KEY: {"readOnly": True, "sensitive": True}}
    assert (root.read_only, root.sensitive) == (True, True)
    assert Root.marked("file:///srv/a").meta is None  # nothing marked: no key on the wire
    assert Root.marked("file:///srv/a", read_only=True).marks == RootMarks(read_only=True, sensitive=False)


@pytest.mark.parametrize(
    ("marker", "marks"),
    [
        (None, (False, False)),
        (False, (False, False)),
        ({}, (False, False)),
        ({"readOnly": False, "sensitive": None}, (False, False)),
        ({"readOnly": True}, (True, False)),
        ({"sensitive": True}, (False, True)),
        # A marker the server cannot read as meant is read on the safe side.
        ({"readOnly": "false", "sensitive": 0}, (True, True)),
        (True, (True, True)),
        ("sensitive", (True, True)),
    ],
)
def test_marks_are_read_on_the_safe_side(marker: Any, marks: tuple[bool, bool]) -> None:
    assert root_marks({ROOT_MARKS_KEY: marker}) == marks
    assert root_marks({"com.example/root": {"readOnly": True}}) == (False, False)  # only our key counts


def test_a_change_of_marks_is_a_change_of_roots(tmp_path: Path) -> None:
    """Marking a root read-only later is something the server must hear about
    (``set_roots`` says True, so the client sends ``notifications/roots/list_changed``)."""

    async def body() -> None:
        inputs = InputHandlers(roots=[tmp_path])
        await inputs.current_roots()
        assert await inputs.set_roots([Root.marked(str(tmp_path), read_only=True)]) is True
        assert await inputs.set_roots([Root.marked(str(tmp_path), read_only=True)]) is False

    run(body)


# ------------------------------------------------------------------ on the wire


@pytest.mark.parametrize("era", ERAS)
def test_marks_travel_in_root_meta(era: str, tmp_path: Path) -> None:
    """The marks ride in each root's ``_meta`` (the schema's ``Root._meta``, both revisions);
    an unmarked root carries no ``_meta`` at all."""
    paths = make_tree(tmp_path)
    roots = [paths["plain"], Root.marked(str(paths["locked"]), "locked", read_only=True, sensitive=True)]

    async def body() -> None:
        async with serving(marked_server(), era, roots=roots) as (client, wire):
            await client.call_tool("can", {"paths": []})
            if era == "handshake":
                [asked] = wire.requests_written("roots/list")
                answer = wire.responses_received(asked["id"])[0]["result"]
            else:
                retry = wire.tool_calls_received("can")[-1]
                [answer] = retry["params"]["inputResponses"].values()
            assert answer["roots"] == [
                {"uri": paths["plain"].as_uri(), "name": "plain"},
                {
                    "uri": paths["locked"].as_uri(),
                    "name": "locked",
                    "_meta": {ROOT_MARKS_KEY: {"readOnly": True, "sensitive": True}},
                },
            ]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_contains_for_writing_is_false_inside_a_read_only_root(era: str, tmp_path: Path) -> None:
    """Reading is allowed anywhere inside the roots; writing not inside a read-only one. The
    innermost root decides: a writable folder inside a read-only root is writable."""
    paths = make_tree(tmp_path)
    roots = [
        paths["plain"],
        Root.marked(str(paths["locked"]), read_only=True),
        paths["inner"],
    ]
    asked = [
        paths["plain"] / "a.txt",
        paths["locked"] / "a.txt",
        paths["locked"] / "scratch" / "b.txt",
        paths["locked"] / "scratch" / ".." / "c.txt",  # out of the writable folder again
        paths["locked"].as_uri() + "/d.txt",
        paths["secret"] / "e.txt",  # in no root
    ]

    async def body() -> None:
        async with serving(marked_server(), era, roots=roots) as (client, _):
            result = await client.call_tool("can", {"paths": [str(p) for p in asked]})
            assert json.loads(text_of(result)) == [
                [True, True],
                [True, False],
                [True, True],
                [True, False],
                [True, False],
                [False, False],
            ]

    run(body)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("redact_secrets", [True, False])
def test_a_sensitive_roots_path_never_reaches_logs_or_progress(era: str, redact_secrets: bool, tmp_path: Path) -> None:
    """Whatever way the tool spells the path (text, a ``Path``, a ``file://`` URI, a logger
    name, Python logging, each progress helper's message), the wire carries the placeholder
    and the rest of the path, also with the server's secret redaction switched off. A root
    that is not sensitive, and a sibling whose name only begins alike, show as they are."""
    paths = make_tree(tmp_path)
    roots = [paths["plain"], paths["secret-not"], Root.marked(str(paths["secret"]), sensitive=True)]
    options: dict[str, Any] = {} if redact_secrets else {"log_redactor": None}

    async def body() -> None:
        async with serving(marked_server(**options), era, roots=roots) as (client, wire):
            await client.set_logging_level("info")
            secret_file = paths["secret"] / "notes.txt"
            await client.call_tool("peek", {"path": str(secret_file)}, on_progress=lambda _: None)
            sent = wire_texts(wire)
            assert str(paths["secret"]) not in sent
            assert paths["secret"].as_uri() not in sent
            # The log text, the Path object, the URI, the nested list, the logger, Python
            # logging, and the three progress messages: each shows the placeholder.
            assert sent.count(f"{HIDDEN}/notes.txt") == 9
            for other in (paths["plain"] / "x", paths["secret-not"] / "y"):
                await client.call_tool("peek", {"path": str(other)}, on_progress=lambda _: None)
                assert str(other) in wire_texts(wire)

    run(body)


def test_the_connection_keeps_hiding_a_root_it_was_told_is_sensitive(tmp_path: Path) -> None:
    """Handshake era: after the client changes its roots (the sensitive one gone, or no longer
    marked), the session still hides the path it was once told is sensitive."""
    paths = make_tree(tmp_path)

    async def body() -> None:
        roots: list[Any] = [Root.marked(str(paths["secret"]), sensitive=True)]
        async with serving(marked_server(), "handshake", roots=roots) as (client, wire):
            await client.set_logging_level("info")
            await client.call_tool("peek", {"path": str(paths["plain"])})
            assert await client.set_roots([paths["plain"], paths["secret"]]) is True
            await client.call_tool("peek", {"path": str(paths["secret"] / "z")})
            assert len(wire.requests_written("roots/list")) == 2
            assert f"{HIDDEN}/z" in wire_texts(wire)
            assert str(paths["secret"]) not in wire_texts(wire)

    run(body)


def test_a_stateless_rerun_hides_the_path_before_it_asks_again(tmp_path: Path) -> None:
    """Stateless era: the handler runs again from the top after each question. In the run
    after the client answered ``roots/list``, a log line written before the handler asks for
    the roots again is hidden already: the question's key is sealed in ``requestState``, so
    the server reads the answer early. (The first run, before any answer, cannot know.)"""
    paths = make_tree(tmp_path)
    server = Server("reruns")

    @server.tool()
    async def walk(ctx: Context, path: str) -> str:
        await ctx.info(f"walking {path}")
        await ctx.list_roots()
        await ctx.elicit("Go on?", {"type": "object", "properties": {}})
        return "walked"

    async def body() -> None:
        roots = [Root.marked(str(paths["secret"]), sensitive=True)]
        accept = {"action": "accept", "content": {}}
        async with serving(server, "stateless", roots=roots, elicitation=lambda _: accept) as (client, wire):
            await client.set_logging_level("info")
            result = await client.call_tool("walk", {"path": str(paths["secret"] / "w")})
            assert text_of(result) == "walked"
            logs = [m["params"]["data"] for m in wire.notifications_written("notifications/message")]
            assert logs == [f"walking {paths['secret']}/w", f"walking {HIDDEN}/w", f"walking {HIDDEN}/w"]

    run(body)
