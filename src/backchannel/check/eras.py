"""Eras and versions: which eras and revisions the server speaks, and how it says so.

The survey (``Run.survey``) already asked ``server/discover`` and ``initialize``; these
checks read what came back, then ask each handshake revision in turn, an unknown version in
either era, and (over HTTP) the status codes that go with a refused version.
"""

from __future__ import annotations

__all__ = ["CHECKS"]

from typing import Any

from ..types.versions import HANDSHAKE_VERSIONS, LATEST_STATELESS, STATELESS_VERSIONS, Era
from .raw_http import headers_for
from .run import Run, checks, result_of, said
from .shapes import obj
from .target import CheckedHttp
from .wire import Wire, error_code

#: Versions no revision has: one far in the past, for the refusals.
_UNKNOWN_HANDSHAKE = "1999-01-01"
_UNKNOWN_STATELESS = "1900-01-01"


def _first_answer(wire: Wire, method: str) -> dict[str, Any] | None:
    ids = [m.get("id") for m in _sent(wire) if m.get("method") == method]
    for message in wire.messages:
        if "method" not in message and message.get("id") in ids:
            return message
    return None


def _sent(wire: Wire) -> list[dict[str, Any]]:
    import json

    sent = []
    for line in wire.lines:
        if line.direction == "sent":
            try:
                value = json.loads(line.text)
            except ValueError:
                continue
            if isinstance(value, dict):
                sent.append(value)
    return sent


def _speaks(run: Run, check: str, era: Era, why: str | None = None) -> bool:
    """Whether the server speaks ``era`` (and it is checked); if not, ``check`` is n/a for ``why``
    (that it does not speak the era), unless the era was left out of the run."""
    if era in run.eras_spoken():
        return True
    if era in run.options.eras:
        run.not_applicable(check, why or f"the server does not speak the {era} era", era=era)
    return False


@checks("eras.discover")
async def discover(run: Run) -> None:
    probe = run.probes.get("stateless")
    if probe is None:
        return
    answer = _first_answer(probe, "server/discover")
    result = result_of(answer)
    if "stateless" not in run.eras:
        if "handshake" in run.eras:
            run.not_applicable(
                "eras.discover", f"speaks only the handshake era: server/discover got {said(answer)}", era="stateless"
            )
        else:
            run.add(
                "eras.discover",
                "fail",
                f"server/discover got {said(answer)}, and initialize no result either",
                revision=LATEST_STATELESS,
                wire=probe,
            )
        return
    assert result is not None
    problems = []
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or not versions or not all(isinstance(v, str) for v in versions):
        problems.append("supportedVersions is not a non-empty list of strings")
    elif LATEST_STATELESS not in versions:
        problems.append(f"supportedVersions {versions} leaves out {LATEST_STATELESS}, which it just answered")
    meta = obj(result.get("_meta"))
    info = meta.get("io.modelcontextprotocol/serverInfo")
    if not isinstance(info, dict) or not isinstance(info.get("name"), str):
        problems.append("no serverInfo (with a name) in _meta")
    if problems:
        run.add("eras.discover", "fail", "; ".join(problems), era="stateless", wire=probe)
    else:
        run.add("eras.discover", "pass", f"supportedVersions {versions}", era="stateless")


@checks("eras.initialize")
async def initialize(run: Run) -> None:
    probe = run.probes.get("handshake")
    if probe is None:
        return
    answer = _first_answer(probe, "initialize")
    if "handshake" not in run.eras:
        if "stateless" in run.eras:
            run.not_applicable("eras.initialize", f"speaks only the stateless era: initialize got {said(answer)}")
        else:
            run.add("eras.initialize", "fail", f"initialize got {said(answer)}", wire=probe)
        return
    result = result_of(answer) or {}
    problems = []
    if result.get("protocolVersion") not in HANDSHAKE_VERSIONS:
        problems.append(f"protocolVersion {result.get('protocolVersion')!r} is no handshake-era revision")
    if not isinstance(result.get("capabilities"), dict):
        problems.append("no capabilities object")
    info = obj(result.get("serverInfo"))
    if not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        problems.append("serverInfo lacks a name or a version")
    if problems:
        run.add("eras.initialize", "fail", "; ".join(problems), era="handshake", wire=probe)
    else:
        run.add(
            "eras.initialize",
            "pass",
            f"protocolVersion {result['protocolVersion']}, serverInfo {info.get('name')} {info.get('version')}",
            era="handshake",
        )


@checks("eras.initialize-refusal")
async def initialize_refusal(run: Run) -> None:
    probe = run.probes.get("handshake")
    if probe is None or "stateless" not in run.eras:
        return
    if "handshake" in run.eras:
        run.not_applicable("eras.initialize-refusal", "the server answers initialize (it speaks the handshake era)")
        return
    answer = _first_answer(probe, "initialize")
    error = answer.get("error") if answer is not None else None
    if not isinstance(error, dict):
        run.add(
            "eras.initialize-refusal",
            "fail",
            f"initialize got {said(answer)}, not an error naming the versions",
            wire=probe,
            revision=LATEST_STATELESS,
        )
        return
    text = f"{error.get('message')} {error.get('data')}"
    named = [version for version in STATELESS_VERSIONS if version in text]
    if named:
        run.add("eras.initialize-refusal", "pass", f"the refusal names {', '.join(named)}", revision=LATEST_STATELESS)
    else:
        run.add(
            "eras.initialize-refusal",
            "fail",
            f"the refusal ({said(answer)}) names no version it speaks",
            wire=probe,
            revision=LATEST_STATELESS,
        )


async def _initialize_with(run: Run, version: str) -> tuple[dict[str, Any] | None, Wire]:
    wire = run.wire("handshake")
    try:
        await wire.start()
        answer = await wire.initialize(version, notify=False)
    except OSError as exc:
        wire.note(f"could not start the server: {exc}")
        answer = None
    finally:
        await wire.close()
    return answer, wire


@checks("eras.version-echo")
async def version_echo(run: Run) -> None:
    if not _speaks(run, "eras.version-echo", "handshake"):
        return
    answers: dict[str, Any] = {}
    wires: list[Wire] = []
    for version in HANDSHAKE_VERSIONS:
        answer, wire = await _initialize_with(run, version)
        wires.append(wire)
        result = result_of(answer)
        answers[version] = result.get("protocolVersion") if result is not None else said(answer)
    echoed = {version for version, agreed in answers.items() if agreed == version}
    for agreed in set(answers.values()) - set(answers):
        if isinstance(agreed, str) and agreed not in answers and _looks_like_version(agreed):
            answer, wire = await _initialize_with(run, agreed)
            wires.append(wire)
            result = result_of(answer)
            answers[agreed] = result.get("protocolVersion") if result is not None else said(answer)
            if answers[agreed] == agreed:
                echoed.add(agreed)
    listing = ", ".join(f"{asked} -> {agreed}" for asked, agreed in answers.items())
    wrong = [
        asked
        for asked, agreed in answers.items()
        if not (isinstance(agreed, str) and (agreed == asked or agreed in echoed))
    ]
    run.notes.append(f"handshake revisions (asked -> answered): {listing}")
    if wrong:
        evidence = next((w for w, (asked, _) in zip(wires, answers.items(), strict=False) if asked in wrong), wires[-1])
        run.add(
            "eras.version-echo",
            "fail",
            f"{', '.join(wrong)} not answered with a version it accepts: {listing}",
            era="handshake",
            wire=evidence,
        )
    else:
        run.add("eras.version-echo", "pass", f"speaks {', '.join(sorted(echoed))}; {listing}", era="handshake")


def _looks_like_version(text: str) -> bool:
    return len(text) == 10 and text[4] == "-" and text[7] == "-" and text.replace("-", "").isdigit()


@checks("eras.counter-offer")
async def counter_offer(run: Run) -> None:
    if not _speaks(run, "eras.counter-offer", "handshake"):
        return
    answer, wire = await _initialize_with(run, _UNKNOWN_HANDSHAKE)
    result = result_of(answer)
    agreed = result.get("protocolVersion") if result is not None else None
    newest = run.eras["handshake"].version
    if agreed is None:
        run.add(
            "eras.counter-offer",
            "fail",
            f"initialize with {_UNKNOWN_HANDSHAKE} got {said(answer)}, not a version it supports",
            era="handshake",
            wire=wire,
        )
    elif agreed not in HANDSHAKE_VERSIONS:
        run.add(
            "eras.counter-offer",
            "fail",
            f"countered with {agreed!r}, no handshake-era revision",
            era="handshake",
            wire=wire,
        )
    elif agreed != newest:
        run.add(
            "eras.counter-offer",
            "fail",
            f"countered with {agreed}, not the newest it speaks ({newest}; SHOULD)",
            era="handshake",
            wire=wire,
        )
    else:
        run.add("eras.counter-offer", "pass", f"{_UNKNOWN_HANDSHAKE} -> {agreed}", era="handshake")


@checks("eras.unsupported-version")
async def unsupported_version(run: Run) -> None:
    if not _speaks(run, "eras.unsupported-version", "stateless"):
        return
    async with run.session("stateless") as wire:
        params = wire.envelope(None, version=_UNKNOWN_STATELESS)
        answer = await wire.ask("server/discover", params, plain=True)
    error = answer.get("error") if answer is not None else None
    data = error.get("data") if isinstance(error, dict) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    if error_code(answer) != -32022:
        run.add(
            "eras.unsupported-version",
            "fail",
            f"version {_UNKNOWN_STATELESS} got {said(answer)}, not -32022",
            era="stateless",
            wire=wire,
        )
    elif not isinstance(supported, list) or not supported or not all(isinstance(v, str) for v in supported):
        run.add(
            "eras.unsupported-version",
            "fail",
            "-32022 without data.supported (a list of versions)",
            era="stateless",
            wire=wire,
        )
    elif not isinstance(data, dict) or data.get("requested") != _UNKNOWN_STATELESS:
        run.add(
            "eras.unsupported-version",
            "fail",
            f"-32022 without data.requested = {_UNKNOWN_STATELESS!r}",
            era="stateless",
            wire=wire,
        )
    else:
        run.add("eras.unsupported-version", "pass", f"-32022, supported {supported}", era="stateless")


@checks("eras.unsupported-version-http")
async def unsupported_version_http(run: Run) -> None:
    if run.target.kind != "http":
        return
    if not _speaks(run, "eras.unsupported-version-http", "stateless"):
        return
    wire = run.wire("stateless")
    message = wire.request("server/discover", wire.envelope(None, version=_UNKNOWN_STATELESS), plain=True)
    answer = await run.posted(wire, message, headers_for(message))
    await wire.close()
    if answer.status == 400 and answer.error_code() == -32022:
        run.add("eras.unsupported-version-http", "pass", "400 with -32022", era="stateless")
    else:
        run.add(
            "eras.unsupported-version-http",
            "fail",
            f"got {answer.said()}, not 400 with -32022",
            era="stateless",
            exchange=wire.lines,
        )


@checks("eras.version-header")
async def version_header(run: Run) -> None:
    if run.target.kind != "http":
        return
    if not _speaks(run, "eras.version-header", "handshake"):
        return
    async with run.session("handshake") as wire:
        transport = wire.transport
        assert isinstance(transport, CheckedHttp) and run.target.url is not None
        message = wire.request("ping")
        headers = headers_for(message, session_id=transport.session_id, version=_UNKNOWN_HANDSHAKE)
        answer = await run.posted(wire, message, headers, how=f"sent with MCP-Protocol-Version: {_UNKNOWN_HANDSHAKE}")
    if answer.status == 400:
        run.add("eras.version-header", "pass", f"MCP-Protocol-Version {_UNKNOWN_HANDSHAKE} got 400", era="handshake")
    else:
        run.add(
            "eras.version-header",
            "fail",
            f"MCP-Protocol-Version {_UNKNOWN_HANDSHAKE} got {answer.said()}",
            era="handshake",
            wire=wire,
        )


@checks("eras.result-type")
async def result_type(run: Run) -> None:
    probe = run.probes.get("stateless")
    if probe is None:
        return
    if "stateless" not in run.eras:
        run.not_applicable("eras.result-type", "the server does not speak the stateless era", era="stateless")
        return
    requests = {m.get("id"): m.get("method") for m in _sent(probe) if "id" in m}
    lacking = sorted(
        {
            str(requests.get(m.get("id")))
            for m in probe.messages
            if "method" not in m and isinstance(m.get("result"), dict) and "resultType" not in m["result"]
        }
    )
    answered = sorted({str(requests.get(m.get("id"))) for m in probe.messages if isinstance(m.get("result"), dict)})
    if lacking:
        run.add(
            "eras.result-type", "fail", f"results without resultType: {', '.join(lacking)}", era="stateless", wire=probe
        )
    else:
        run.add("eras.result-type", "pass", f"resultType in every result ({', '.join(answered)})", era="stateless")


@checks("eras.ping")
async def ping(run: Run) -> None:
    if not _speaks(run, "eras.ping", "handshake", "ping is the handshake era's (2026-07-28 has none)"):
        return
    async with run.session("handshake") as wire:
        started = wire.now()
        answer = await wire.ask("ping", timeout=min(run.options.timeout, 5.0))
        took = wire.now() - started
    result = result_of(answer)
    if result is None:
        run.add("eras.ping", "fail", f"ping got {said(answer)}", era="handshake", wire=wire)
    elif {key for key in result if key != "_meta"}:
        run.add("eras.ping", "fail", f"ping's result is not empty: {sorted(result)}", era="handshake", wire=wire)
    else:
        run.add("eras.ping", "pass", f"empty result in {took * 1000:.0f} ms", era="handshake")


CHECKS = (
    discover,
    initialize,
    initialize_refusal,
    version_echo,
    counter_offer,
    unsupported_version,
    unsupported_version_http,
    version_header,
    result_type,
    ping,
)
