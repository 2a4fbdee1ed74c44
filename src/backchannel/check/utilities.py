"""The second layer's utilities: completion, progress, cancellation, logging.

Progress and cancellation are read off the wire in order: a progress notification after
the answer, an answer after the cancellation, progress that goes on after it (the work did
not stop) are each named with the messages that show them. Logging is checked on the tool
that logs, at a level that filters and at one that does not, and every log message any
check saw is searched for secrets once all the checks ran (``run_wide``).
"""

from __future__ import annotations

__all__ = ["CHECKS", "SECRET_PATTERNS", "run_wide"]

import itertools
import re
from typing import Any

from ..types.logging import LOGGING_LEVELS
from ..types.versions import Era
from .plan import ToolUse
from .run import Run, checks, result_of, said
from .shapes import obj, seq
from .wire import Wire, error_code

#: What a secret looks like in a log line: a bearer token, ``password=...``, a key.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)),
    ("a password", re.compile(r"\b(pass(word|wd)?|pwd)\s*[=:]\s*[^\s,;\"'}]{3,}", re.IGNORECASE)),
    (
        "a secret or key",
        re.compile(
            r"\b(secret|api[_-]?key|access[_-]?token|client[_-]?secret|private[_-]?key)"
            r"\s*[=:]\s*[^\s,;\"'}]{6,}",
            re.IGNORECASE,
        ),
    ),
    ("a JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("an AWS key", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    (
        "a provider token",
        re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_-]{20,}|xox[abpr]-[A-Za-z0-9-]{10,})"),
    ),
)
_LEVEL_RANK: dict[str, int] = {level: rank for rank, level in enumerate(LOGGING_LEVELS)}
#: Progress already on its way when the cancellation left may arrive this long after it.
_IN_FLIGHT_GRACE = 1.0
#: More log messages than this in one second is no rate limit.
_FLOOD = 200


def _use(run: Run, era: Era, *roles: str) -> ToolUse | None:
    plan = run.eras[era].plan
    for role in roles:
        use = plan.use(role)
        if use is not None:
            return use
    return None


def _missing(run: Run, era: Era, role: str) -> str:
    return run.eras[era].plan.missing.get(role, f"no tool for {role}")


# -- completion ------------------------------------------------------------------------------------


def _references(info: Any) -> list[tuple[dict[str, Any], str]]:
    """(ref, argument name) for each prompt argument and template variable, a few of each."""
    found: list[tuple[dict[str, Any], str]] = []
    for prompt in info.prompts[:8]:
        for argument in prompt.get("arguments") or []:
            if isinstance(argument, dict) and isinstance(argument.get("name"), str):
                found.append(({"type": "ref/prompt", "name": prompt.get("name")}, argument["name"]))
    for template in info.templates[:8]:
        uri = template.get("uriTemplate")
        if isinstance(uri, str):
            for group in re.findall(r"\{([^}]*)\}", uri):
                for name in group.lstrip("+#./;?&").split(","):
                    name = name.rstrip("*").split(":")[0]
                    if name:
                        found.append(({"type": "ref/resource", "uri": uri}, name))
    return found[:12]


@checks("completion.declared")
async def completion(run: Run) -> None:
    for era in run.eras_spoken():
        info = run.eras[era]
        declared = "completions" in info.capabilities
        references = _references(info)
        async with run.session(era) as wire:
            if not declared:
                ref = references[0][0] if references else {"type": "ref/prompt", "name": "backchannel-check"}
                argument = references[0][1] if references else "value"
                answer = await wire.ask(
                    "completion/complete", {"ref": ref, "argument": {"name": argument, "value": ""}}
                )
                if result_of(answer) is not None:
                    run.add(
                        "completion.declared",
                        "fail",
                        "completion/complete answered with a result, but completions is not declared",
                        era=era,
                        wire=wire,
                    )
                else:
                    run.add(
                        "completion.declared", "pass", f"not declared; completion/complete got {said(answer)}", era=era
                    )
                for check in ("completion.cap", "completion.total", "completion.errors"):
                    run.not_applicable(check, "the server does not declare completions", era=era)
                continue
            answers = []
            for ref, argument in references:
                answer = await wire.ask(
                    "completion/complete", {"ref": ref, "argument": {"name": argument, "value": ""}}
                )
                answers.append((ref, argument, answer))
            unknown = await wire.ask(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "backchannel-check-no-such-prompt"},
                    "argument": {"name": "value", "value": ""},
                },
            )
        _completion_verdicts(run, era, wire, answers, unknown)


def _completion_verdicts(run: Run, era: Era, wire: Wire, answers: list[Any], unknown: dict[str, Any] | None) -> None:
    results = [(ref, arg, result_of(answer)) for ref, arg, answer in answers]
    refused = [(ref, arg, answer) for ref, arg, answer in answers if result_of(answer) is None]
    if any(error_code(answer) == -32601 for _, _, answer in refused):
        run.add(
            "completion.declared",
            "fail",
            "completions is declared, but completion/complete is -32601",
            era=era,
            wire=wire,
        )
    else:
        run.add(
            "completion.declared",
            "pass",
            f"declared; {len(answers) - len(refused)} of {len(answers)} arguments completed",
            era=era,
        )
    if not answers:
        run.not_applicable("completion.cap", "no prompt argument or template variable to complete", era=era)
        run.not_applicable("completion.total", "no prompt argument or template variable to complete", era=era)
    else:
        sizes, over, inconsistent = [], [], []
        for ref, argument, result in results:
            if result is None:
                continue
            body = obj(result.get("completion"))
            values = seq(body.get("values"))
            sizes.append(len(values))
            name = ref.get("name") or ref.get("uri")
            if len(values) > 100:
                over.append(f"{name}/{argument}: {len(values)} values")
            total, more = body.get("total"), body.get("hasMore")
            if total is not None and (not isinstance(total, int) or total < len(values)):
                inconsistent.append(f"{name}/{argument}: total {total!r} with {len(values)} values")
            if more is not None and not isinstance(more, bool):
                inconsistent.append(f"{name}/{argument}: hasMore {more!r} is not a boolean")
            if isinstance(total, int) and total > len(values) and more is False:
                inconsistent.append(f"{name}/{argument}: total {total} > {len(values)} values, yet hasMore false")
        if over:
            run.add("completion.cap", "fail", "; ".join(over), era=era, wire=wire)
        else:
            run.add(
                "completion.cap", "pass", f"{len(sizes)} answers, the largest {max(sizes, default=0)} values", era=era
            )
        if inconsistent:
            run.add("completion.total", "fail", "; ".join(inconsistent), era=era, wire=wire)
        else:
            run.add("completion.total", "pass", "total and hasMore agree with the values where given", era=era)
    code = error_code(unknown)
    if code == -32602:
        run.add("completion.errors", "pass", "an unknown prompt got -32602", era=era)
    else:
        run.add("completion.errors", "fail", f"an unknown prompt got {said(unknown)}, not -32602", era=era, wire=wire)


# -- progress ----------------------------------------------------------------------------------------


@checks("progress.monotonic")
async def progress(run: Run) -> None:
    for era in run.eras_spoken():
        use = _use(run, era, "progress", "slow")
        if use is None:
            for check in ("progress.token", "progress.monotonic", "progress.after-answer", "progress.unasked"):
                run.not_applicable(check, _missing(run, era, "progress"), era=era)
            continue
        token = f"check-progress-{era}"
        async with run.session(era) as wire:
            answer = await wire.ask(
                "tools/call",
                {"name": use.name, "arguments": use.arguments},
                progress=token,
                timeout=run.options.timeout + 20,
            )
            await wire.settle(1.0)
        _progress_verdicts(run, era, wire, use, token, answer)
        async with run.session(era) as quiet:
            await quiet.ask(
                "tools/call", {"name": use.name, "arguments": use.arguments}, timeout=run.options.timeout + 20
            )
            await quiet.settle(0.5)
        unasked = quiet.notifications("notifications/progress")
        if unasked:
            run.add(
                "progress.unasked",
                "fail",
                f"{len(unasked)} progress notification(s) for a call that sent no progressToken",
                era=era,
                wire=quiet,
            )
        else:
            run.add("progress.unasked", "pass", f"{use.name} sent no progress when none was asked", era=era)


def _progress_verdicts(run: Run, era: Era, wire: Wire, use: ToolUse, token: str, answer: dict[str, Any] | None) -> None:
    ours = wire.progress_of(token)
    others = [
        m for m in wire.notifications("notifications/progress") if (m.get("params") or {}).get("progressToken") != token
    ]
    if others:
        run.add(
            "progress.token",
            "fail",
            f"{len(others)} progress notification(s) name a token no request gave",
            era=era,
            wire=wire,
        )
    else:
        run.add("progress.token", "pass", f"{len(ours)} notification(s), each naming {token!r}", era=era)
    if not ours:
        reason = f"{use.name} sent no progress (it may send none); it got {said(answer)}"
        run.not_applicable("progress.monotonic", reason, era=era)
        run.not_applicable("progress.after-answer", reason, era=era)
        return
    values = [params.get("progress") for _, params in ours]
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if not numbers or any(b <= a for a, b in itertools.pairwise(values)):  # type: ignore[operator]
        run.add("progress.monotonic", "fail", f"progress went {values}", era=era, wire=wire)
    else:
        run.add("progress.monotonic", "pass", f"progress went {values}", era=era)
    if answer is None:
        run.add("progress.after-answer", "fail", f"no answer to {use.name} within the time allowed", era=era, wire=wire)
        return
    answered_at = wire.index_of(answer)
    late = [params.get("progress") for index, params in ours if index > answered_at]
    if late:
        run.add("progress.after-answer", "fail", f"progress {late} came after the answer", era=era, wire=wire)
    else:
        run.add("progress.after-answer", "pass", "every progress notification came before the answer", era=era)


# -- cancellation ------------------------------------------------------------------------------------


@checks("cancel.no-answer")
async def cancellation(run: Run) -> None:
    for era in run.eras_spoken():
        use = _use(run, era, "slow", "progress")
        if use is None:
            run.not_applicable("cancel.no-answer", _missing(run, era, "slow"), era=era)
            run.not_applicable("cancel.stops", _missing(run, era, "slow"), era=era)
        else:
            await _cancel_call(run, era, use)
        await _cancel_unknown(run, era)
    if "handshake" in run.eras_spoken():
        await _cancel_initialize(run)


async def _cancel_call(run: Run, era: Era, use: ToolUse) -> None:
    token = f"check-cancel-{era}"
    blind = era == "stateless" and run.target.kind == "http"
    async with run.session(era) as wire:
        message = wire.request("tools/call", {"name": use.name, "arguments": use.arguments}, progress=token)
        wire.send(message)
        first = await wire.wait_for(
            lambda m: (
                m.get("method") == "notifications/progress" or ("method" not in m and m.get("id") == message["id"])
            ),
            timeout=2.0,
        )
        if first is not None and "method" not in first:
            run.not_applicable(
                "cancel.no-answer", f"{use.name} answered within 2 s, before it could be cancelled", era=era
            )
            run.not_applicable("cancel.stops", f"{use.name} answered before it could be cancelled", era=era)
            await _goes_on(run, era, wire)
            return
        cancelled_at = wire.now()
        seen_before = len(wire.progress_of(token))
        wire.cancel(message["id"])
        await wire.settle(4.0)
        late_answers = wire.answers_to(message["id"])
        late_progress = [
            params.get("progress")
            for index, params in wire.progress_of(token)[seen_before:]
            if wire.arrivals[index] > cancelled_at + _IN_FLIGHT_GRACE
        ]
        await _goes_on(run, era, wire)
    if blind:
        why = (
            "over Streamable HTTP the stateless era's cancellation closes the request's stream, which would "
            "carry both a late answer and progress: nothing is left to observe"
        )
        run.not_applicable("cancel.no-answer", why, era=era)
        run.not_applicable("cancel.stops", why, era=era)
        return
    if late_answers:
        run.add("cancel.no-answer", "fail", f"{use.name} was answered after its cancellation", era=era, wire=wire)
    else:
        run.add("cancel.no-answer", "pass", f"no answer to {use.name} in the 4 s after its cancellation", era=era)
    if seen_before == 0 and not late_progress:
        run.not_applicable("cancel.stops", f"{use.name} sent no progress to watch stop", era=era)
    elif late_progress:
        run.add(
            "cancel.stops",
            "fail",
            f"progress {late_progress} went on after the cancellation: the work did not stop",
            era=era,
            wire=wire,
        )
    else:
        run.add("cancel.stops", "pass", f"progress stopped with the cancellation ({seen_before} before it)", era=era)


async def _goes_on(run: Run, era: Era, wire: Wire) -> None:
    method = "ping" if era == "handshake" else "server/discover"
    answer = await wire.ask(method)
    if result_of(answer) is not None:
        run.add("cancel.goes-on", "pass", f"{method} answered after the cancellation", era=era)
    else:
        run.add("cancel.goes-on", "fail", f"after the cancellation, {method} got {said(answer)}", era=era, wire=wire)


async def _cancel_unknown(run: Run, era: Era) -> None:
    if era == "stateless" and run.target.kind == "http":
        run.not_applicable(
            "cancel.unknown",
            "over Streamable HTTP the stateless era cancels by closing a stream: "
            "there is no notification to send for an unknown request",
            era=era,
        )
        return
    async with run.session(era) as wire:
        wire.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "backchannel-check-never-sent", "reason": "check"},
            }
        )
        method = "ping" if era == "handshake" else "server/discover"
        answer = await wire.ask(method)
        stray = [
            m for m in wire.messages if "method" not in m and m.get("id") in (None, "backchannel-check-never-sent")
        ]
    if stray:
        run.add("cancel.unknown", "fail", "the cancellation of an unknown request was answered", era=era, wire=wire)
    elif result_of(answer) is None:
        run.add("cancel.unknown", "fail", f"after it, {method} got {said(answer)}", era=era, wire=wire)
    else:
        run.add("cancel.unknown", "pass", "ignored; the server went on answering", era=era)


async def _cancel_initialize(run: Run) -> None:
    wire = run.wire("handshake")
    try:
        await wire.start()
        message = wire.request(
            "initialize",
            {
                "protocolVersion": wire.version,
                "capabilities": {},
                "clientInfo": {"name": "backchannel-check", "version": "1"},
            },
        )
        wire.send(message)
        wire.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": message["id"], "reason": "check: initialize must not be cancelled"},
            }
        )
        answer = await wire.answer_to(message["id"])
    finally:
        await wire.close()
    if result_of(answer) is not None:
        run.add("cancel.initialize", "pass", "initialize was answered all the same", era="handshake")
    else:
        run.add(
            "cancel.initialize",
            "fail",
            f"initialize, followed by its cancellation, got {said(answer)}",
            era="handshake",
            wire=wire,
        )


# -- logging -----------------------------------------------------------------------------------------


@checks("logging.set-level")
async def logging(run: Run) -> None:
    for era in run.eras_spoken():
        info = run.eras[era]
        declared = "logging" in info.capabilities
        if not declared:
            for check in ("logging.set-level", "logging.bad-level", "logging.levels", "logging.rate"):
                if check != "logging.set-level" or era == "handshake":
                    run.not_applicable(check, "the server does not declare logging", era=era)
        else:
            if era == "handshake":
                await _set_level(run)
            await _bad_level(run, era)
            await _levels(run, era)
        if era == "stateless":
            await _unasked(run)


async def _set_level(run: Run) -> None:
    async with run.session("handshake") as wire:
        answer = await wire.ask("logging/setLevel", {"level": "warning"})
    if result_of(answer) is not None:
        run.add("logging.set-level", "pass", "logging/setLevel warning: a result", era="handshake")
    else:
        run.add("logging.set-level", "fail", f"logging/setLevel warning got {said(answer)}", era="handshake", wire=wire)


async def _bad_level(run: Run, era: Era) -> None:
    if era == "handshake":
        async with run.session(era) as wire:
            answer = await wire.ask("logging/setLevel", {"level": "verbose"})
        what = "logging/setLevel verbose"
    else:
        async with run.session(era, log_level="verbose") as wire:
            answer = await wire.ask("server/discover")
        what = "a request with logLevel verbose"
    if error_code(answer) == -32602:
        run.add("logging.bad-level", "pass", f"{what} got -32602", era=era)
    else:
        run.add("logging.bad-level", "fail", f"{what} got {said(answer)}, not -32602", era=era, wire=wire)


async def _logged(run: Run, era: Era, use: ToolUse, level: str) -> tuple[list[dict[str, Any]], Wire]:
    """The log messages a call of ``use`` brought with ``level`` asked for."""
    linger = 1.2
    async with run.session(era, log_level=level if era == "stateless" else None) as wire:
        if era == "handshake":
            await wire.ask("logging/setLevel", {"level": level})
        start = len(wire.messages)
        await wire.ask("tools/call", {"name": use.name, "arguments": use.arguments}, timeout=run.options.timeout + 20)
        await wire.settle(linger)
        if "toggle" in use.name.lower():  # a switch: turn it off again
            await wire.ask("tools/call", {"name": use.name, "arguments": use.arguments})
    logs = [m.get("params") or {} for m in wire.messages[start:] if m.get("method") == "notifications/message"]
    return logs, wire


async def _levels(run: Run, era: Era) -> None:
    use = _use(run, era, "logs")
    if use is None:
        run.not_applicable("logging.levels", _missing(run, era, "logs"), era=era)
        run.not_applicable("logging.rate", _missing(run, era, "logs"), era=era)
        return
    everything, loud = await _logged(run, era, use, "debug")
    if not everything:
        run.not_applicable("logging.levels", f"{use.name} sent no log message even at debug", era=era)
        run.not_applicable("logging.rate", f"{use.name} sent no log message", era=era)
        return
    filtered, wire = await _logged(run, era, use, "error")
    below = [p.get("level") for p in filtered if _LEVEL_RANK.get(str(p.get("level")), 99) < _LEVEL_RANK["error"]]
    if below:
        run.add(
            "logging.levels",
            "fail",
            f"with error asked for, messages at {sorted(set(map(str, below)))} came",
            era=era,
            wire=wire,
        )
    else:
        run.add(
            "logging.levels",
            "pass",
            f"{len(everything)} message(s) at debug; at error, {len(filtered)}, none below it",
            era=era,
        )
    per_second = _busiest_second(loud)
    if per_second > _FLOOD:
        run.add("logging.rate", "fail", f"{per_second} log messages within one second", era=era, wire=loud)
    else:
        run.add("logging.rate", "pass", f"at most {per_second} log message(s) in any second", era=era)


def _busiest_second(wire: Wire) -> int:
    times = [line.at for line in wire.lines if line.direction == "received" and '"notifications/message"' in line.text]
    busiest, start = 0, 0
    for end, at in enumerate(times):
        while at - times[start] > 1.0:
            start += 1
        busiest = max(busiest, end - start + 1)
    return busiest


async def _unasked(run: Run) -> None:
    use = _use(run, "stateless", "logs")
    if use is None:
        run.not_applicable("logging.unasked", _missing(run, "stateless", "logs"), era="stateless")
        return
    async with run.session("stateless") as wire:
        await wire.ask("tools/call", {"name": use.name, "arguments": use.arguments}, timeout=run.options.timeout + 20)
        await wire.settle(1.0)
    logs = wire.notifications("notifications/message")
    if logs:
        run.add(
            "logging.unasked",
            "fail",
            f"{len(logs)} log message(s) for a request without logLevel",
            era="stateless",
            wire=wire,
        )
    else:
        run.add("logging.unasked", "pass", f"{use.name} sent no log message without logLevel", era="stateless")


def run_wide(run: Run) -> None:
    """The checks of everything every connection saw: who may log, and what no log may hold."""
    from .outcome import Line, shown

    secrets = [value for name, value in run.target.headers.items() if name.lower() in ("authorization", "x-api-key")]
    for era in run.eras_spoken():
        logs = [params for seen, params, _ in run.logs if seen == era]
        declared = "logging" in run.eras[era].capabilities
        wires = [wire for seen, _, wire in run.logs if seen == era]
        if logs and not declared:
            run.add(
                "logging.declared",
                "fail",
                f"{len(logs)} log message(s) from a server that declares no logging",
                era=era,
                wire=wires[0],
            )
        elif logs:
            run.add("logging.declared", "pass", f"{len(logs)} log message(s), logging declared", era=era)
        else:
            run.not_applicable("logging.declared", "no log message was seen", era=era)
        found = []
        for params in logs:
            text = shown(params, 4000)
            for what, pattern in SECRET_PATTERNS:
                if pattern.search(text):
                    found.append((what, params))
            for value in secrets:
                if value and value in text:
                    found.append(("the credential given with --header", params))
        if found:
            lines = [Line("received", 0.0, shown({"method": "notifications/message", "params": p})) for _, p in found]
            kinds = sorted({what for what, _ in found})
            run.add("logging.secrets", "fail", f"log messages hold {', '.join(kinds)}", era=era, exchange=lines[:10])
        elif logs:
            run.add("logging.secrets", "pass", f"{len(logs)} log message(s), none holds a secret", era=era)
        else:
            run.not_applicable("logging.secrets", "no log message was seen", era=era)


CHECKS = (completion, progress, cancellation, logging)
