"""``completion/complete`` end to end: a ``Server`` with completers and our ``Client``, both eras.

Requirement IDs are the CP-* lines of ``/work/shared/spec/CHAPTER-FEATURES.md``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import pytest
from _completion_harness import ERAS, connected, prompt_ref, run, template_ref

from backchannel import Server
from backchannel.server.completion import Complete, complete_from
from backchannel.types.completion import Completion, PromptReference, ResourceTemplateReference
from backchannel.types.errors import RequestError

LANGUAGES = ["python", "pytorch", "pyside", "go", "rust", "perl", "php"]


def frameworks(value: str, arguments: dict[str, str]) -> list[str]:
    # Module level: with ``from __future__ import annotations`` the Annotated metadata is
    # evaluated at registration, in the function's globals.
    by_language = {"python": ["flask", "flash-attn", "django"], "go": ["gin", "fiber"]}
    return [f for f in by_language.get(arguments.get("language", ""), []) if f.startswith(value)]


def _review_server() -> Server:
    server = Server("review")

    @server.prompt()
    def code_review(
        language: Annotated[str, Complete(LANGUAGES)],
        framework: Annotated[str, Complete(frameworks)] = "",
        notes: str = "",
    ) -> str:
        return f"{language} {framework} {notes}"

    return server


async def _expect_error(client: Any, params: dict[str, Any]) -> RequestError:
    with pytest.raises(RequestError) as caught:
        await client.request("completion/complete", params)
    return caught.value


@pytest.mark.parametrize("era", ERAS)
def test_static_list_prefix(era: str) -> None:
    """CP-03, CP-08: a static list answers its prefix matches in list order, with total and hasMore."""

    async def body() -> None:
        async with connected(_review_server(), era) as client:
            got = await client.complete(PromptReference(name="code_review"), ("language", "py"))
            assert got == Completion(values=["python", "pytorch", "pyside"], total=3, has_more=False)
            got = await client.complete(prompt_ref("code_review"), {"name": "language", "value": "p"})
            assert got.values == ["python", "pytorch", "pyside", "perl", "php"]
            assert (await client.complete(prompt_ref("code_review"), ("language", "zz"))).values == []
            everything = await client.complete(prompt_ref("code_review"), ("language", ""))
            assert everything.values == LANGUAGES and everything.total == len(LANGUAGES)

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_wire_shape(era: str) -> None:
    """CP-03: the raw result: ``completion{values,total,hasMore}``; stateless era adds resultType."""

    async def body() -> None:
        async with connected(_review_server(), era) as client:
            params = {"ref": prompt_ref("code_review"), "argument": {"name": "language", "value": "go"}}
            result = await client.request("completion/complete", params)
            assert result["completion"] == {"values": ["go"], "total": 1, "hasMore": False}
            if era == "stateless":
                assert result["resultType"] == "complete"

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_cap_at_100_with_exact_total(era: str) -> None:
    """CP-03: at most 100 values; ``total`` counts every match and ``hasMore`` says there are more."""
    words = [f"x{i:03d}" for i in range(250)] + ["y1", "y2"]
    server = Server("cap")
    server.add_prompt(lambda word: word, name="pick", completers={"word": words})

    async def body() -> None:
        async with connected(server, era) as client:
            got = await client.complete(prompt_ref("pick"), ("word", "x"))
            assert got.values == words[:100] and got.total == 250 and got.has_more is True
            got = await client.complete(prompt_ref("pick"), ("word", "x1"))
            assert got.values == words[100:200] and got.total == 100 and got.has_more is False
            got = await client.complete(prompt_ref("pick"), ("word", "x2"))
            assert got.values == words[200:250] and got.total == 50 and got.has_more is False

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_completer_returning_1000_items(era: str) -> None:
    """CP-03: a completer that returns 1,000 values: 100 sent, total 1000, hasMore true."""
    server = Server("many")
    server.add_prompt(lambda q: q, name="many", completers={"q": lambda value: [f"{value}{i}" for i in range(1000)]})

    async def body() -> None:
        async with connected(server, era) as client:
            got = await client.complete(prompt_ref("many"), ("q", "v"))
            assert got.values == [f"v{i}" for i in range(100)]
            assert got.total == 1000 and got.has_more is True

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_endless_generator_is_consumed_only_to_the_cap(era: str) -> None:
    """CP-03: an endless generator is advanced at most 101 times and closed; no total, hasMore true."""
    advanced = 0
    closed = []

    def endless(value: str) -> Iterator[str]:
        nonlocal advanced
        try:
            i = 0
            while True:
                advanced += 1
                yield f"{value}{i}"
                i += 1
        finally:
            closed.append(True)

    server = Server("endless")
    server.add_prompt(lambda q: q, name="endless", completers={"q": endless})

    async def body() -> None:
        async with connected(server, era) as client:
            result = await client.request(
                "completion/complete", {"ref": prompt_ref("endless"), "argument": {"name": "q", "value": "n"}}
            )
            completion = result["completion"]
            assert completion["values"] == [f"n{i}" for i in range(100)]
            assert completion["hasMore"] is True and "total" not in completion
            assert advanced <= 101
            assert closed == [True]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_short_generator_gives_total(era: str) -> None:
    """CP-03: a generator that ends within the cap: total is its count, hasMore false."""
    server = Server("short")
    server.add_prompt(lambda q: q, name="short", completers={"q": lambda value: (f"{value}{i}" for i in range(7))})

    async def body() -> None:
        async with connected(server, era) as client:
            got = await client.complete(prompt_ref("short"), ("q", "s"))
            assert got == Completion(values=[f"s{i}" for i in range(7)], total=7, has_more=False)

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_async_completers(era: str) -> None:
    """An ``async def`` completer and an async generator (consumed to the cap, then closed)."""
    server = Server("async")
    pulled = 0

    async def colours(value: str, arguments: dict[str, str]) -> list[str]:
        await asyncio.sleep(0)
        return [c for c in ("red", "green", "grey", "blue") if c.startswith(value)]

    async def numbers(value: str) -> AsyncIterator[str]:
        nonlocal pulled
        for i in range(10_000):
            pulled += 1
            await asyncio.sleep(0)
            yield str(i)

    server.add_prompt(lambda colour, number: colour, name="paint", completers={"colour": colours, "number": numbers})

    async def body() -> None:
        async with connected(server, era) as client:
            got = await client.complete(prompt_ref("paint"), ("colour", "gr"))
            assert got == Completion(values=["green", "grey"], total=2, has_more=False)
            got = await client.complete(prompt_ref("paint"), ("number", ""))
            assert got.values == [str(i) for i in range(100)] and got.has_more is True and got.total is None
            assert pulled <= 101

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_context_aware_completion(era: str) -> None:
    """CP-02: the completer receives ``context.arguments`` (``{}`` when the client sends none)."""

    async def body() -> None:
        async with connected(_review_server(), era) as client:
            ref = prompt_ref("code_review")
            got = await client.complete(ref, ("framework", "fla"), context={"language": "python"})
            assert got.values == ["flask", "flash-attn"]
            got = await client.complete(ref, ("framework", "g"), context={"language": "go"})
            assert got.values == ["gin"]
            assert (await client.complete(ref, ("framework", "fla"))).values == []

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_template_variable_completion(era: str) -> None:
    """``ref/resource`` names the template string; annotation and ``completers=`` both work."""
    server = Server("files")
    seen: list[dict[str, str]] = []

    def names(value: str, arguments: dict[str, str]) -> list[str]:
        seen.append(arguments)
        return [n for n in ("readme.md", "report.pdf", "setup.py") if n.startswith(value)]

    @server.resource("file:///{folder}/{name}", completers={"name": names})
    def read(folder: Annotated[str, Complete(["docs", "data", "src"])], name: str) -> str:
        return f"{folder}/{name}"

    async def body() -> None:
        async with connected(server, era) as client:
            ref = ResourceTemplateReference(uri="file:///{folder}/{name}")
            assert (await client.complete(ref, ("folder", "d"))).values == ["docs", "data"]
            got = await client.complete(template_ref("file:///{folder}/{name}"), ("name", "re"), {"folder": "docs"})
            assert got == Completion(values=["readme.md", "report.pdf"], total=2, has_more=False)
            assert seen == [{"folder": "docs"}]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_unknown_prompt_template_argument(era: str) -> None:
    """CP-05, CP-06: unknown prompt, template or argument → -32602 naming it."""
    server = _review_server()

    @server.resource("test://items/{id}")
    def item(id: Annotated[str, Complete(["1", "2"])]) -> str:
        return id

    @server.resource("test://static")
    def static() -> str:
        return "static"

    async def body() -> None:
        async with connected(server, era) as client:
            argument = {"name": "language", "value": "p"}
            error = await _expect_error(client, {"ref": prompt_ref("nope"), "argument": argument})
            assert error.code == -32602 and "nope" in error.message
            error = await _expect_error(client, {"ref": template_ref("test://other/{id}"), "argument": argument})
            assert error.code == -32602 and "test://other/{id}" in error.message
            error = await _expect_error(
                client, {"ref": prompt_ref("code_review"), "argument": {"name": "flavour", "value": ""}}
            )
            assert error.code == -32602 and "flavour" in error.message
            error = await _expect_error(
                client, {"ref": template_ref("test://items/{id}"), "argument": {"name": "idx", "value": ""}}
            )
            assert error.code == -32602 and "idx" in error.message
            error = await _expect_error(
                client, {"ref": template_ref("test://static"), "argument": {"name": "id", "value": ""}}
            )
            assert error.code == -32602

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_invalid_params(era: str) -> None:
    """CP-11, CP-15: malformed requests are refused with -32602."""
    bad: list[dict[str, Any]] = [
        {"argument": {"name": "language", "value": "p"}},
        {"ref": {"type": "ref/tool", "name": "code_review"}, "argument": {"name": "language", "value": "p"}},
        {"ref": {"type": "ref/prompt"}, "argument": {"name": "language", "value": "p"}},
        {"ref": {"type": "ref/resource", "uri": 3}, "argument": {"name": "language", "value": "p"}},
        {"ref": prompt_ref("code_review")},
        {"ref": prompt_ref("code_review"), "argument": {"name": "language"}},
        {"ref": prompt_ref("code_review"), "argument": {"name": "language", "value": 5}},
        {"ref": prompt_ref("code_review"), "argument": {"name": "language", "value": "p"}, "context": []},
        {
            "ref": prompt_ref("code_review"),
            "argument": {"name": "language", "value": "p"},
            "context": {"arguments": {"x": 1}},
        },
    ]

    async def body() -> None:
        async with connected(_review_server(), era) as client:
            for params in bad:
                assert (await _expect_error(client, params)).code == -32602, params

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_argument_without_completer_is_empty(era: str) -> None:
    """A real argument that has no completer gets an empty answer, not an error."""

    async def body() -> None:
        async with connected(_review_server(), era) as client:
            got = await client.complete(prompt_ref("code_review"), ("notes", "x"))
            assert got == Completion(values=[], total=0, has_more=False)

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_capability_only_with_a_completer(era: str) -> None:
    """CP-01, CP-04: ``completions`` declared (initialize / server/discover) only when some completer
    exists; without one, ``completion/complete`` is -32601."""
    plain = Server("plain")
    plain.add_prompt(lambda topic: topic, name="plain")

    async def body() -> None:
        async with connected(plain, era) as client:
            assert "completions" not in client.server_capabilities
            assert "completions" not in (await client.request("server/discover" if era == "stateless" else "ping")).get(
                "capabilities", {}
            )
            error = await _expect_error(
                client, {"ref": prompt_ref("plain"), "argument": {"name": "topic", "value": ""}}
            )
            assert error.code == -32601
        async with connected(_review_server(), era) as client:
            assert client.server_capabilities.get("completions") == {}
            if era == "stateless":
                discovered = await client.request("server/discover")
                assert discovered["capabilities"]["completions"] == {}
                assert client.discover_result is not None

    run(body)


def test_capability_follows_registration() -> None:
    """CP-01: templates count too, and removing the last completer withdraws the capability."""
    server = Server("dynamic")
    assert "completions" not in server.capabilities()
    server.add_resource("test://{id}", lambda id: id, completers={"id": ["1", "2"]})
    assert server.capabilities()["completions"] == {}
    server.remove_resource("test://{id}")
    assert "completions" not in server.capabilities()


@pytest.mark.parametrize("era", ERAS)
def test_failing_completers_are_internal_errors(era: str) -> None:
    """CP-07: a completer that raises, or returns non-strings, is -32603."""
    server = Server("broken")

    def boom(value: str) -> list[str]:
        raise RuntimeError("database down")

    server.add_prompt(
        lambda a, b, c: a, name="broken", completers={"a": boom, "b": lambda v: [1, 2], "c": lambda v: "x"}
    )

    async def body() -> None:
        async with connected(server, era) as client:
            for name in ("a", "b", "c"):
                error = await _expect_error(
                    client, {"ref": prompt_ref("broken"), "argument": {"name": name, "value": ""}}
                )
                assert error.code == -32603, name
                assert "database" not in error.message  # CP-18: no internals leak

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_completer_returning_a_completion(era: str) -> None:
    """A completer may return ``Completion`` itself; the runtime still caps and keeps hasMore true."""
    server = Server("own")
    answers = {
        "few": Completion(values=["a", "b"], total=40, has_more=True),
        "many": Completion(values=[str(i) for i in range(150)]),
    }
    server.add_prompt(lambda which: which, name="own", completers={"which": lambda value: answers[value]})

    async def body() -> None:
        async with connected(server, era) as client:
            assert await client.complete(prompt_ref("own"), ("which", "few")) == answers["few"]
            got = await client.complete(prompt_ref("own"), ("which", "many"))
            assert len(got.values) == 100 and got.has_more is True and got.total is None

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_case_insensitive_static_list(era: str) -> None:
    """``Complete(values, case_sensitive=False)`` matches casefolded, returns the values as written."""
    server = Server("cities")

    @server.prompt()
    def visit(city: Annotated[str, Complete(["Paris", "park", "PARTY", "Rome"], case_sensitive=False)]) -> str:
        return city

    async def body() -> None:
        async with connected(server, era) as client:
            got = await client.complete(prompt_ref("visit"), ("city", "pAr"))
            assert got == Completion(values=["Paris", "park", "PARTY"], total=3, has_more=False)

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_registration_completers_win_over_annotations(era: str) -> None:
    """``completers=`` at registration replaces a ``Complete`` annotation; a ``PrefixIndex`` is accepted."""
    server = Server("override")

    def pick(word: Annotated[str, Complete(["annotated"])]) -> str:
        return word

    server.add_prompt(pick, completers={"word": complete_from(["registered", "regex"])})

    async def body() -> None:
        async with connected(server, era) as client:
            assert (await client.complete(prompt_ref("pick"), ("word", ""))).values == ["registered", "regex"]

    run(body)


def test_registration_errors() -> None:
    """Mistakes surface at registration, not on the first keystroke."""
    server = Server("errors")
    with pytest.raises(ValueError, match="colour"):
        server.add_prompt(lambda color: color, name="p1", completers={"colour": ["red"]})
    with pytest.raises(ValueError, match="variables"):
        server.add_resource("test://fixed", lambda: "x", completers={"id": ["1"]})
    with pytest.raises(ValueError, match="nope"):
        server.add_resource("test://{id}", lambda id: id, completers={"nope": ["1"]})
    with pytest.raises(TypeError, match="one string"):
        server.add_prompt(lambda a: a, name="p2", completers={"a": "python"})
    with pytest.raises(TypeError, match="typed value"):
        server.add_prompt(lambda a: a, name="p3", completers={"a": lambda: ["x"]})
    with pytest.raises(TypeError, match="strings"):
        server.add_prompt(lambda a: a, name="p4", completers={"a": ["ok", 3]})
    with pytest.raises(TypeError, match="not a completer"):
        server.add_prompt(lambda a: a, name="p5", completers={"a": 42})  # type: ignore[dict-item]
    assert not server.registry.prompts and not server.registry.templates and "completions" not in server.capabilities()
