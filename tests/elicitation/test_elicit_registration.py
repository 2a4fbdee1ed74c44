"""Forms checked where they are declared: ``Server.add_tool(..., elicits=[...])``, and each
form built once (per type, per distinct dict schema) rather than on every call."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from _elicit_wire import run, session
from pydantic import BaseModel

from backchannel import Context, Server
from backchannel.forms import FormSchemaError
from backchannel.forms.specs import form_spec


@dataclasses.dataclass
class Address:
    street: str
    city: str


@dataclasses.dataclass
class Order:
    item: str
    shipping: Address


class Survey(BaseModel):
    score: int
    comments: dict[str, str]


@dataclasses.dataclass
class Issue:
    title: str
    urgent: bool = False


NESTED_DICT = {"type": "object", "properties": {"where": {"type": "object", "properties": {}}}}


@pytest.mark.parametrize(
    ("form", "field"),
    [(Order, "Order.shipping"), (Survey, "Survey.comments"), (NESTED_DICT, "where")],
    ids=["dataclass", "pydantic", "dict"],
)
def test_a_nested_form_is_refused_at_registration_naming_the_field(form: Any, field: str) -> None:
    server = Server("s")
    with pytest.raises(FormSchemaError) as caught:

        @server.tool(elicits=[Issue, form])
        async def file_issue(ctx: Context) -> str:
            return "never registered"

    assert caught.value.field == field
    assert str(caught.value).startswith(f"{field}: ")
    assert "elicits= of tool 'file_issue'" in "".join(caught.value.__notes__)
    assert server.tool_definition("file_issue") is None


def test_a_type_that_is_no_form_is_refused() -> None:
    with pytest.raises(FormSchemaError):
        Server("s").add_tool(lambda: "x", name="t", elicits=[int])


def test_declared_forms_are_built_once_and_reused_by_calls() -> None:
    server = Server("s")
    schema = {"type": "object", "properties": {"title": {"type": "string"}}}

    @server.tool(elicits=[Issue, schema])
    async def file_issue(ctx: Context) -> str:
        typed = await ctx.elicit("Issue?", Issue)
        plain = await ctx.elicit("Title?", dict(schema))  # an equal dict hits the same entry
        return f"{typed.data} {plain.data}"

    assert form_spec(Issue) is form_spec(Issue)
    assert form_spec(schema) is form_spec({"properties": {"title": {"type": "string"}}, "type": "object"})
    assert form_spec(schema) is not form_spec({"type": "object", "properties": {"name": {"type": "string"}}})

    async def body() -> None:
        answers = iter([{"title": "Crash", "urgent": True}, {"title": "Crash"}])

        def handler(params: dict[str, Any]) -> dict[str, Any]:
            return {"action": "accept", "content": next(answers)}

        async with session(server, "handshake", elicitation=handler) as (client, _):
            result = await client.call_tool("file_issue", {})
            assert result.content[0].text == "Issue(title='Crash', urgent=True) {'title': 'Crash'}"  # type: ignore[union-attr]

    run(body)


def test_cached_form_is_not_changed_by_the_callers_dict() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"note": {"type": "string"}}}
    spec = form_spec(schema)
    schema["properties"]["note"]["type"] = "integer"
    assert spec.requested_schema["properties"]["note"] == {"type": "string"}
