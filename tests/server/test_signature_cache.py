"""One handler registered under many names is derived once (``derive_parameters``'s cache).

Servers that wrap an API register thousands of tools on one function; the validator and the
schema depend on the function alone, so every name after the first reuses them, while each
tool keeps its own name in its error messages and its own copy of the schema
(``benchmarks/run.py --curves``, the tools curve; ``docs/performance.md``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _server_harness import ERAS, connected, run

from backchannel import Server


def lookup(query: str, limit: int = 10) -> str:
    """Look the query up."""
    return query[:limit]


def other(query: str, limit: int = 10) -> str:
    """The same signature, another function."""
    return query


def _server() -> Server:
    server = Server("many")
    for name in ("a", "b", "c"):
        server.add_tool(lookup, name=name, structured_output=False)
    server.add_tool(other, name="d", structured_output=False)
    return server


def test_one_function_under_many_names_shares_its_validator_not_its_schema() -> None:
    server = _server()
    tools = server.registry.tools
    first = tools["a"].parameters
    pristine = copy.deepcopy(first.input_schema)
    assert tools["b"].parameters._model is first._model  # derived once
    assert tools["d"].parameters._model is not first._model  # another function: its own
    for name in ("b", "c"):
        assert tools[name].parameters.input_schema == pristine
        assert tools[name].parameters.input_schema is not first.input_schema
    first.input_schema["properties"]["query"]["description"] = "changed on tool a only"
    server.add_tool(lookup, name="e", structured_output=False)
    assert tools["e"].parameters.input_schema == pristine
    assert tools["e"].parameters._model is first._model


@pytest.mark.parametrize("era", ERAS)
def test_each_name_answers_as_itself_on_the_wire(era: str) -> None:
    server = _server()
    assert server.registry.tools["c"].parameters._model is server.registry.tools["a"].parameters._model

    async def body() -> list[Any]:
        async with connected(server, era) as (client, _):
            listed = await client.list_tools()
            return [listed, await client.call_tool("c", {"query": "abc", "limit": 2}), await client.call_tool("b", {})]

    listed, answered, refused = run(body)
    schemas = {tool.name: tool.input_schema for tool in listed}
    assert schemas["a"] == schemas["b"] == schemas["c"] == schemas["d"]
    assert answered.is_error is not True and answered.content[0].text == "ab"
    assert refused.is_error is True
    assert refused.content[0].text == "Invalid arguments for tool 'b': query: required field missing"
