"""The official Python SDK client (mcp 2.3.0) drives our server's roots, sampling and completion
(issue #5), over stdio, in both eras.

``pysdk_client.py`` runs one plan per mode against ``backchannel_server.py --rsc``: it answers
``roots/list`` with the roots the plan set (``list_roots_callback``) and ``sampling/createMessage``
from the plan's queue (``sampling_callback``); legacy mode gets them as server requests,
2026-07-28 as ``InputRequiredResult`` input requests that the SDK's driver answers and retries.

What the SDK client does that is worth knowing (asserted below):

* it can send ``notifications/roots/list_changed`` in both modes. In 2026-07-28 it still sends it
  (with the per-request ``_meta`` envelope) and still declares ``roots.listChanged``, though
  that era removed both; our server takes it and ignores it (no session, so nothing is cached);
* in 2026-07-28 a sampling callback that returns ``ErrorData`` ends the call *in the client*
  (an ``MCPError`` from its input-required driver): the server is never told; in legacy mode
  the error goes back to our server as the answer to its request and comes back out as the
  tool call's error;
* ``types.Root.uri`` is a pydantic ``FileUrl``: the SDK cannot offer a root that is not a
  ``file://`` URI, and re-encodes what it is given (our percent-encoded URIs go through as is).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from peers.backchannel_server import RSC_FRAMEWORKS, RSC_LANGUAGES, RSC_PACKAGES
from peers.paths import PEERS_DIR, have_pysdk, pysdk_client_cmd

pytestmark = pytest.mark.interop

if not have_pysdk():
    pytest.skip("the official Python SDK (mcp==2.3.0) is not installed", allow_module_level=True)

OUR_SERVER = [sys.executable, str(PEERS_DIR / "backchannel_server.py"), "--rsc"]
MODES = ["legacy", "2026-07-28"]
TIMEOUT = 120
TEMPLATE = "rsc://packages/{package}"
SCAFFOLD = {"type": "ref/prompt", "name": "scaffold"}
PACKAGES = {"type": "ref/resource", "uri": TEMPLATE}
ANSWERS = [
    {
        "role": "assistant",
        "content": {"type": "text", "text": "forty-two"},
        "model": "plan-model",
        "stopReason": "endTurn",
    },
    {"role": "assistant", "content": {"type": "text", "text": "cut sh"}, "model": "small", "stopReason": "maxTokens"},
]


def complete(ref: dict[str, Any], name: str, value: str, context: dict[str, str] | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context is not None:
        args["context"] = context
    return args


#: ``complete`` steps of the plan: key -> args (the roots steps name real directories: see ``run``).
COMPLETIONS: dict[str, dict[str, Any]] = {
    "language_p": complete(SCAFFOLD, "language", "p"),
    "language_all": complete(SCAFFOLD, "language", ""),
    "framework_python_f": complete(SCAFFOLD, "framework", "f", {"language": "python"}),
    "framework_go": complete(SCAFFOLD, "framework", "", {"language": "go"}),
    "framework_no_context": complete(SCAFFOLD, "framework", ""),
    "framework_unknown_language": complete(SCAFFOLD, "framework", "", {"language": "cobol"}),
    "package_pkg": complete(PACKAGES, "package", "pkg-"),
    "package_pkg14": complete(PACKAGES, "package", "pkg-14"),
    "package_p": complete(PACKAGES, "package", "p"),
    "package_none": complete(PACKAGES, "package", "zzz"),
    "unknown_prompt": complete({"type": "ref/prompt", "name": "nope"}, "language", ""),
    "unknown_argument": complete(SCAFFOLD, "colour", ""),
    "unknown_template": complete({"type": "ref/resource", "uri": "rsc://nope/{x}"}, "x", ""),
}


def expected(values: list[str], prefix: str) -> dict[str, Any]:
    """What our server answers for a completer over ``values``: the first ≤100 matches in list
    order, the exact ``total`` and ``hasMore``."""
    matches = [value for value in values if value.startswith(prefix)]
    return {"values": matches[:100], "total": len(matches), "hasMore": len(matches) > 100}


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("rsc-roots").resolve()
    found = {"alpha": base / "alpha", "beta": base / "beta", "odd": base / "with space #%é"}
    for path in found.values():
        path.mkdir()
    found["link"] = base / "link-to-alpha"
    found["link"].symlink_to(found["alpha"], target_is_directory=True)
    return found


def root(path: Path, name: str) -> dict[str, str]:
    return {"uri": path.as_uri(), "name": name}


def root_uris(refresh: bool = False) -> tuple[str, dict[str, Any]]:
    return "call_tool", {"name": "root_uris", "arguments": {"refresh": refresh} if refresh else {}}


def sample(prompt: str, max_tokens: int) -> tuple[str, dict[str, Any]]:
    return "call_tool", {"name": "sample_text", "arguments": {"prompt": prompt, "max_tokens": max_tokens}}


@pytest.fixture(scope="module", params=MODES)
def run(request: pytest.FixtureRequest, dirs: dict[str, Path]) -> dict[str, Any]:
    mode: str = request.param
    first = [root(dirs["alpha"], "Alpha"), root(dirs["odd"], "Odd"), root(dirs["link"], "Link")]
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("set_first", "set_roots", {"roots": first}),
        ("roots_first", *root_uris()),
        ("set_beta", "set_roots", {"roots": [root(dirs["beta"], "Beta")]}),
        ("roots_unnotified", *root_uris()),
        ("notify", "roots_list_changed", {}),
        ("roots_notified", *root_uris()),
        ("set_alpha", "set_roots", {"roots": [root(dirs["alpha"], "Alpha")]}),
        ("roots_refreshed", *root_uris(refresh=True)),
        ("notifications", "call_tool", {"name": "notifications_seen", "arguments": {}}),
        ("queue", "answer_sampling", {"answers": ANSWERS}),
        ("sample_first", *sample("What is six times seven?", 17)),
        ("sample_second", *sample("Say something short", 2)),
        ("sample_empty", *sample("Nobody will answer", 5)),
        *(("complete_" + key, "complete", args) for key, args in COMPLETIONS.items()),
        ("scaffold", "get_prompt", {"name": "scaffold", "arguments": {"language": "go", "framework": "gin"}}),
    ]
    plan = json.dumps([{"op": op, "args": args} for _, op, args in steps])
    argv = pysdk_client_cmd(mode, OUR_SERVER, plan=plan)
    argv.insert(argv.index("--"), "--exclude-unset")
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert proc.returncode == 0, f"pysdk_client exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    out = json.loads(proc.stdout)
    assert "closeError" not in out, out["closeError"]
    results = dict(zip([key for key, _, _ in steps], out["results"], strict=True))
    return {"mode": mode, "out": out, "dirs": dirs, **results}


def ok(run: dict[str, Any], key: str) -> dict[str, Any]:
    value: dict[str, Any] = run[key]
    assert "error" not in value, f"{key}: {value['error']}"
    return value


def structured(run: dict[str, Any], key: str) -> dict[str, Any]:
    result = ok(run, key)
    assert not result.get("isError"), result
    content: dict[str, Any] = result["structuredContent"]
    return content


def legacy(run: dict[str, Any]) -> bool:
    return bool(run["mode"] == "legacy")


# -- roots ---------------------------------------------------------------------------------------------


def test_the_sdk_declares_roots_and_sampling(run: dict[str, Any]) -> None:
    out = run["out"]
    if legacy(run):
        assert out["protocolVersion"] == "2025-11-25"
        assert out["serverCapabilities"]["completions"] == {}
    else:
        assert out["protocolVersion"] == "2026-07-28"
    # Each roots/list our server sent (or put in an InputRequiredResult) reached the callback.
    assert out["rootsAnswered"]
    assert len(out["samplings"]) == 3


def test_roots_arrive_as_given_and_resolve_to_local_paths(run: dict[str, Any]) -> None:
    dirs = run["dirs"]
    got = structured(run, "roots_first")
    assert got["from_client"] is True
    assert got["names"] == ["Alpha", "Odd", "Link"]
    # The URIs as the SDK client sent them (percent-encoded by Path.as_uri; FileUrl left them so).
    assert got["uris"] == [dirs["alpha"].as_uri(), dirs["odd"].as_uri(), dirs["link"].as_uri()]
    assert "%20" in got["uris"][1] and "%23" in got["uris"][1] and "%25" in got["uris"][1]
    assert run["out"]["rootsAnswered"][0] == got["uris"]
    # The paths our server made of them: decoded, and the link resolved to its target.
    assert got["paths"] == [str(dirs["alpha"]), str(dirs["odd"]), str(dirs["alpha"])]


def test_roots_change_seen_after_invalidation_or_per_request(run: dict[str, Any]) -> None:
    beta = [run["dirs"]["beta"].as_uri()]
    alpha = [run["dirs"]["alpha"].as_uri()]
    assert ok(run, "notify") == {"sent": True}
    unnotified = structured(run, "roots_unnotified")["uris"]
    if legacy(run):
        # The SDK declared roots.listChanged, so our server cached the first answer for the
        # session: the change is not seen until the client says so ...
        assert unnotified == structured(run, "roots_first")["uris"]
    else:
        # ... while a 2026-07-28 server has no session and asks on every request.
        assert unnotified == beta
    # After notifications/roots/list_changed (legacy: the cache was dropped) the new roots show.
    assert structured(run, "roots_notified")["uris"] == beta
    # refresh=True asks again whatever the cache holds.
    assert structured(run, "roots_refreshed")["uris"] == alpha
    asked = run["out"]["rootsAnswered"]
    if legacy(run):
        assert len(asked) == 3  # first, after the notification, refresh; the unnotified call hit the cache
    else:
        assert len(asked) == 4  # every call asked
    assert asked[-1] == alpha


def test_the_sdk_sends_roots_list_changed_in_both_modes(run: dict[str, Any]) -> None:
    # Even in 2026-07-28, where the notification no longer exists; our server takes it quietly.
    methods = structured(run, "notifications")["methods"]
    assert methods == ["notifications/roots/list_changed"]


# -- sampling ------------------------------------------------------------------------------------------


def test_sampling_answers_round_trip(run: dict[str, Any]) -> None:
    assert ok(run, "queue") == {"queued": 2}
    assert structured(run, "sample_first") == {
        "text": "forty-two",
        "model": "plan-model",
        "stop_reason": "endTurn",
        "role": "assistant",
    }
    assert structured(run, "sample_second") == {
        "text": "cut sh",
        "model": "small",
        "stop_reason": "maxTokens",
        "role": "assistant",
    }


def test_sampling_requests_as_the_sdk_saw_them(run: dict[str, Any]) -> None:
    samplings = run["out"]["samplings"]
    assert [s["messages"] for s in samplings] == [
        [{"role": "user", "content": {"type": "text", "text": prompt}}]
        for prompt in ("What is six times seven?", "Say something short", "Nobody will answer")
    ]
    assert [s["maxTokens"] for s in samplings] == [17, 2, 5]
    assert all(s["systemPrompt"] == "Be brief." for s in samplings)


def test_a_refused_sampling_request(run: dict[str, Any]) -> None:
    error = run["sample_empty"]["error"]
    # Legacy: the client's JSON-RPC error answers our server's request, and our server's tool
    # call fails with it. 2026-07-28: the SDK's input-required driver raises it locally.
    assert error["code"] == -32603
    assert "no sampling answer queued" in error["message"]


# -- completion ----------------------------------------------------------------------------------------


def completion(run: dict[str, Any], key: str) -> dict[str, Any]:
    result = ok(run, "complete_" + key)
    if not legacy(run):
        assert result["resultType"] == "complete"
    answer: dict[str, Any] = result["completion"]
    return answer


def test_prompt_argument_completion(run: dict[str, Any]) -> None:
    assert completion(run, "language_p") == expected(RSC_LANGUAGES, "p")
    assert completion(run, "language_p")["values"] == ["python", "perl", "php"]
    assert completion(run, "language_all") == expected(RSC_LANGUAGES, "")


def test_prompt_argument_completion_with_context(run: dict[str, Any]) -> None:
    assert completion(run, "framework_python_f") == expected(RSC_FRAMEWORKS["python"], "f")
    assert completion(run, "framework_python_f")["values"] == ["flask", "fastapi", "falcon"]
    assert completion(run, "framework_go") == expected(RSC_FRAMEWORKS["go"], "")
    # No language chosen (no context sent), or one without frameworks: nothing to offer.
    empty = {"values": [], "total": 0, "hasMore": False}
    assert completion(run, "framework_no_context") == empty
    assert completion(run, "framework_unknown_language") == empty


def test_template_variable_completion(run: dict[str, Any]) -> None:
    capped = completion(run, "package_pkg")
    assert capped == expected(RSC_PACKAGES, "pkg-")
    assert len(capped["values"]) == 100 and capped["total"] == 150 and capped["hasMore"] is True
    assert completion(run, "package_pkg14") == expected(RSC_PACKAGES, "pkg-14")
    assert completion(run, "package_pkg14")["total"] == 10
    assert completion(run, "package_p") == expected(RSC_PACKAGES, "p")
    assert completion(run, "package_p")["total"] == 152
    assert completion(run, "package_none") == {"values": [], "total": 0, "hasMore": False}


def test_completion_errors(run: dict[str, Any]) -> None:
    for key in ("unknown_prompt", "unknown_argument", "unknown_template"):
        assert run["complete_" + key]["error"]["code"] == -32602, key


def test_the_completable_prompt_renders(run: dict[str, Any]) -> None:
    messages = ok(run, "scaffold")["messages"]
    assert messages == [{"role": "user", "content": {"type": "text", "text": "Scaffold a go project with gin."}}]
