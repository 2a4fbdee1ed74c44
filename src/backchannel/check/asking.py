"""The second layer, where the server asks: elicitation (forms and URLs), roots, sampling.

Each check calls the tool the plan found for it (``Plan``), on a fresh connection that
declares exactly the capabilities the check needs, answers the server's questions its own
way (accept with a filled form, decline, cancel, a form that breaks the schema), and reads
what the server asked and answered. A URL is never opened: URL questions are declined.
"""

from __future__ import annotations

__all__ = ["CHECKS", "form_content", "wrong_content"]

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ..types.versions import Era
from .plan import ToolUse, value_for
from .run import Run, checks, result_of, said
from .shapes import obj
from .wire import Wire, capabilities_for, error_code

_SECRET_FIELD = re.compile(
    r"pass(word|wd|phrase)|secret|api[_-]?key|token|credential|private[_-]?key|\bpin\b|cvv", re.IGNORECASE
)

#: How many questions a gate's tool asked that it may not (of the wire, and the call's answer).
_Asked = Callable[[Wire, Any], int]


def _call(wire: Wire, use: ToolUse, **options: Any) -> Any:
    return wire.ask("tools/call", {"name": use.name, "arguments": use.arguments}, **options)


def _forms(wire: Wire) -> list[dict[str, Any]]:
    return [q["params"] for q in wire.questions if q["method"] == "elicitation/create" and _mode(q["params"]) == "form"]


def _urls(wire: Wire) -> list[dict[str, Any]]:
    return [q["params"] for q in wire.questions if q["method"] == "elicitation/create" and _mode(q["params"]) == "url"]


def _mode(params: Any) -> str:
    mode = params.get("mode") if isinstance(params, dict) else None
    return "form" if mode in (None, "form") else str(mode)


def _is_error_result(answer: dict[str, Any] | None) -> bool:
    result = result_of(answer)
    return bool(result is not None and result.get("isError"))


def form_content(schema: Any) -> dict[str, Any]:
    """Content that fits a form's ``requestedSchema``: a value of each property's type."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    content: dict[str, Any] = {}
    for name, definition in (properties or {}).items():
        if isinstance(definition, dict) and definition.get("type") == "array":
            items = obj(definition.get("items"))
            choices = items.get("enum") or [
                option.get("const") for option in items.get("anyOf") or [] if isinstance(option, dict)
            ]
            content[name] = choices[:1] if choices else []
        else:
            content[name] = value_for(name, definition)
    return content


def wrong_content(schema: Any) -> dict[str, Any]:
    """Content that breaks a form's ``requestedSchema``: each property a value of another type."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    content: dict[str, Any] = {}
    for name, definition in (properties or {}).items():
        kind = definition.get("type") if isinstance(definition, dict) else None
        content[name] = {
            "string": 12345,
            "number": "not a number",
            "integer": "not a number",
            "boolean": "not a boolean",
            "array": "not a list",
        }.get(str(kind), {"nested": ["x"]})
    return content or {"unexpected": {"nested": ["x"]}}


def _eras_with(run: Run, check_id: str, role: str) -> list[tuple[Era, ToolUse]]:
    """The eras whose plan has a tool for ``role``; an n/a for each that has none."""
    found = []
    for era in run.eras_spoken():
        use = run.eras[era].plan.use(role)
        if use is None:
            run.not_applicable(check_id, run.eras[era].plan.missing.get(role, "no tool for it"), era=era)
        else:
            found.append((era, use))
    return found


async def _gate(
    run: Run, check: str, role: str, off: dict[str, bool], asked: _Asked, refused: str, passed: str
) -> None:
    """A gate: each era's tool for ``role``, called by a client that declares the capabilities
    ``off`` (``capabilities_for``'s switches) turned off, must ask none of the questions ``asked``
    counts (in the wire and the answer). ``refused`` and ``passed`` say how it went after the
    tool's name (``{count}``: how many it asked)."""
    for era, use in _eras_with(run, check, role):
        async with run.session(era, capabilities=capabilities_for(era, **off)) as wire:
            answer = await _call(wire, use)
            await wire.settle(0.3)
        count = asked(wire, answer)
        if count:
            run.add(check, "fail", f"{use.name} {refused.format(count=count)}", era=era, wire=wire)
        else:
            run.add(check, "pass", f"{use.name} {passed}; it got {said(answer)}", era=era)


def _questions(method: str) -> _Asked:
    """How many of the server's questions on a wire were ``method``."""
    return lambda wire, answer: sum(question["method"] == method for question in wire.questions)


# -- elicitation -----------------------------------------------------------------------------------


@checks("elicitation.gate")
async def elicitation_gate(run: Run) -> None:
    refused = "asked {count} form(s) of a client that declared no elicitation"
    off = {"elicitation": False, "url": False}
    await _gate(run, "elicitation.gate", "elicits", off, _questions("elicitation/create"), refused, "asked nothing")


@checks("elicitation.accept")
async def elicitation_actions(run: Run) -> None:
    for era, use in _eras_with(run, "elicitation.accept", "elicits"):
        seen: list[dict[str, Any]] = []
        for action in ("accept", "decline", "cancel"):
            answer, wire = await _answered(run, era, use, action)
            seen.extend(_forms(wire))
            check = f"elicitation.{action}"
            forms = _forms(wire)
            if not forms:
                run.add(check, "n/a", f"{use.name} asked no form (it got {said(answer)})", era=era)
            elif answer is None or (error_code(answer) is None and result_of(answer) is None):
                run.add(check, "fail", f"after {action}, the call got {said(answer)}", era=era, wire=wire)
            elif action == "accept" and (error_code(answer) is not None or _is_error_result(answer)):
                run.add(
                    check,
                    "fail",
                    f"an accepted, valid form ended the call with {said(answer)}"
                    f"{' (isError)' if _is_error_result(answer) else ''}",
                    era=era,
                    wire=wire,
                )
            elif action != "accept" and _asked_again(forms):
                run.add(check, "fail", f"after {action}, {use.name} asked the same form again", era=era, wire=wire)
            elif error_code(answer) == -32603:
                run.add(check, "fail", f"after {action}, the call failed with -32603", era=era, wire=wire)
            else:
                run.add(check, "pass", f"after {action}: {_ending(answer)}", era=era)
        _shape(run, era, seen)
        await _validation(run, era, use)


def _asked_again(forms: list[dict[str, Any]]) -> bool:
    messages = [form.get("message") for form in forms]
    return len(messages) != len(set(map(str, messages)))


def _ending(answer: dict[str, Any] | None) -> str:
    if result_of(answer) is not None:
        return "a result" + (" (isError)" if _is_error_result(answer) else "")
    return said(answer)


async def _answered(
    run: Run, era: Era, use: ToolUse, action: str, content: Any = None
) -> tuple[dict[str, Any] | None, Wire]:
    """Call ``use`` answering every form with ``action`` (accept: ``content``, or a filled form)."""

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        if _mode(params) == "url":
            return {"action": "decline"}  # never opened
        if action != "accept":
            return {"action": action}
        filled = content if content is not None else form_content(params.get("requestedSchema"))
        return {"action": "accept", "content": filled}

    async with run.session(era) as wire:
        wire.answers["elicitation/create"] = answer
        result = await _call(wire, use)
        await wire.settle(0.2)
    return result, wire


def _shape(run: Run, era: Era, forms: list[dict[str, Any]]) -> None:
    if not forms:
        run.not_applicable("elicitation.shape", "no form was asked", era=era)
        run.not_applicable("elicitation.no-secrets", "no form was asked", era=era)
        return
    problems = []
    secrets = []
    for form in forms:
        if not isinstance(form.get("message"), str):
            problems.append("a form without a message")
        schema = form.get("requestedSchema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            problems.append("a form whose requestedSchema is not an object schema")
            continue
        for name, definition in (schema.get("properties") or {}).items():
            kind = definition.get("type") if isinstance(definition, dict) else None
            if kind not in ("string", "number", "integer", "boolean", "array"):
                problems.append(f"property {name!r} is of type {kind!r}, not a flat primitive")
            elif kind == "array" and not isinstance((definition.get("items") or {}), dict):
                problems.append(f"property {name!r} is a list without items")
            if _SECRET_FIELD.search(name) or (isinstance(definition, dict) and definition.get("format") == "password"):
                secrets.append(name)
    if problems:
        run.add("elicitation.shape", "fail", "; ".join(sorted(set(problems))), era=era, exchange=_form_lines(forms))
    else:
        run.add("elicitation.shape", "pass", f"{len(forms)} form(s), each a message and a flat schema", era=era)
    if secrets:
        run.add(
            "elicitation.no-secrets",
            "fail",
            f"a form asks for {', '.join(sorted(set(secrets)))}",
            era=era,
            exchange=_form_lines(forms),
        )
    else:
        run.add("elicitation.no-secrets", "pass", "no field looks like a password, token or key", era=era)


def _form_lines(forms: list[dict[str, Any]]) -> list[Any]:
    from .outcome import Line, shown

    return [Line("received", 0.0, shown({"method": "elicitation/create", "params": form})) for form in forms]


async def _validation(run: Run, era: Era, use: ToolUse) -> None:
    forms: list[dict[str, Any]] = []

    def wrong(params: dict[str, Any]) -> dict[str, Any]:
        if _mode(params) == "url":
            return {"action": "decline"}
        forms.append(params)
        if len(forms) > 3:
            return {"action": "cancel"}  # asked again and again: enough
        return {"action": "accept", "content": wrong_content(params.get("requestedSchema"))}

    async with run.session(era) as wire:
        wire.answers["elicitation/create"] = wrong
        answer = await _call(wire, use)
        await wire.settle(0.2)
    if not forms:
        run.add("elicitation.validation", "n/a", f"{use.name} asked no form", era=era)
    elif len(forms) > 1:
        run.add("elicitation.validation", "pass", "the form was asked again after an answer that broke it", era=era)
    elif error_code(answer) is not None or _is_error_result(answer):
        run.add("elicitation.validation", "pass", f"the answer that broke the schema got {_ending(answer)}", era=era)
    else:
        run.add(
            "elicitation.validation",
            "fail",
            f"an answer that breaks the schema ended the call with {said(answer)} as if it were valid",
            era=era,
            wire=wire,
        )


# -- URL mode --------------------------------------------------------------------------------------


@checks("url.gate")
async def url_gate(run: Run) -> None:
    def asked(wire: Wire, answer: Any) -> int:
        return len(_urls(wire)) + (error_code(answer) == -32042)

    refused = "asked a URL of a client that declared only forms"
    await _gate(run, "url.gate", "elicits_url", {"url": False}, asked, refused, "asked no URL")


@checks("url.shape")
async def url_shape(run: Run) -> None:
    for era, use in _eras_with(run, "url.shape", "elicits_url"):
        async with run.session(era) as wire:
            answer = await _call(wire, use)  # every URL declined: nothing is opened
            await wire.settle(0.2)
        asked = list(_urls(wire))
        error = answer.get("error") if answer is not None else None
        if error_code(answer) == -32042 and isinstance(error, dict):
            listed = (error.get("data") or {}).get("elicitations") if isinstance(error.get("data"), dict) else None
            asked.extend(item for item in listed or [] if isinstance(item, dict))
        if not asked:
            run.add("url.shape", "n/a", f"{use.name} asked no URL (it got {said(answer)})", era=era)
            continue
        problems = []
        for params in asked:
            if params.get("mode") != "url":
                problems.append(f"mode {params.get('mode')!r}, not 'url'")
            if not isinstance(params.get("message"), str):
                problems.append("no message")
            url = params.get("url")
            parts = urlsplit(url) if isinstance(url, str) else None
            if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
                problems.append(f"url {url!r} is not a valid http(s) URL")
            if era == "handshake" and not isinstance(params.get("elicitationId"), str):
                problems.append("no elicitationId (2025-11-25 requires one)")
        if problems:
            run.add("url.shape", "fail", "; ".join(sorted(set(problems))), era=era, wire=wire)
        else:
            run.add("url.shape", "pass", f"{len(asked)} URL request(s), well formed", era=era)


# -- roots and sampling ------------------------------------------------------------------------------


@checks("roots.gate")
async def roots_gate(run: Run) -> None:
    refused = "asked roots/list of a client that declared no roots"
    await _gate(
        run, "roots.gate", "roots", {"roots": False}, _questions("roots/list"), refused, "did not ask for roots"
    )


@checks("sampling.gate")
async def sampling_gate(run: Run) -> None:
    refused, passed = "asked for sampling of a client that declared none", "did not ask for sampling"
    await _gate(
        run, "sampling.gate", "samples", {"sampling": False}, _questions("sampling/createMessage"), refused, passed
    )


@checks("sampling.shape")
async def sampling_shape(run: Run) -> None:
    for era, use in _eras_with(run, "sampling.shape", "samples"):
        async with run.session(era) as wire:
            answer = await _call(wire, use)
            await wire.settle(0.2)
        asked = [q["params"] for q in wire.questions if q["method"] == "sampling/createMessage"]
        if not asked:
            run.add("sampling.shape", "n/a", f"{use.name} asked no sampling (it got {said(answer)})", era=era)
            continue
        problems = []
        for params in asked:
            messages = params.get("messages")
            if not isinstance(messages, list) or not messages:
                problems.append("no messages")
            elif not all(
                isinstance(m, dict) and m.get("role") in ("user", "assistant") and "content" in m for m in messages
            ):
                problems.append("a message without a role or content")
            tokens = params.get("maxTokens")
            if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0:
                problems.append(f"maxTokens {tokens!r} is not a positive integer")
        if problems:
            run.add("sampling.shape", "fail", "; ".join(sorted(set(problems))), era=era, wire=wire)
        else:
            run.add("sampling.shape", "pass", f"{len(asked)} request(s) with messages and maxTokens", era=era)


CHECKS = (elicitation_gate, elicitation_actions, url_gate, url_shape, roots_gate, sampling_gate, sampling_shape)
