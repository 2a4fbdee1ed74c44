"""``run_http(auth=...)`` in real worker processes sharing one real Redis: the metadata is served,
and a DPoP proof used at one worker is refused as a replay by the other (RFC 9449 §11.1)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
from _auth_harness import DpopKey, call, challenge_params

from _services import redis_server
from backchannel.testing import free_port, run, stop_process, wait_for_port

SERVER = Path(__file__).resolve().parent / "protected_server.py"


@contextlib.contextmanager
def workers(redis_url: str, token: str, key: DpopKey, n: int = 2) -> Iterator[list[str]]:
    ports = [free_port() for _ in range(n)]
    audiences = [f"http://127.0.0.1:{port}/mcp" for port in ports]
    given = json.dumps({"token": token, "jkt": key.jkt, "audiences": audiences})
    processes = [
        subprocess.Popen(
            [sys.executable, str(SERVER), str(port), redis_url, given],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for port in ports
    ]
    try:
        for port, process in zip(ports, processes, strict=True):
            wait_for_port(port, process)
        yield audiences
    finally:
        for process in processes:
            stop_process(process)


def test_a_proof_used_at_one_worker_process_is_a_replay_at_the_other() -> None:
    key = DpopKey()
    token = "fixed-dpop-bound-token"

    async def body(urls: list[str]) -> None:
        first, second = urls
        async with httpx2.AsyncClient(timeout=10) as http:
            metadata = (await http.get(first.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))).json()
            assert metadata["resource"] == first and metadata["dpop_bound_access_tokens_required"] is False
            proof = key.proof("POST", first, token=token)
            whoami = {"name": "whoami", "arguments": {}}
            used = await call(http, first, "tools/call", whoami, token=token, scheme="DPoP", proof=proof)
            assert used.status_code == 200, used.text
            # The same request, proof and all, to the other process (as a balancer would pass it on:
            # same Host, so the proof's htu names this request there too): a replay there as well.
            replayed = await http.post(second, content=used.request.content, headers=dict(used.request.headers))
            assert replayed.status_code == 401
            assert "replay" in challenge_params(replayed)["error_description"]

    with redis_server() as redis, workers(redis.url, token, key) as urls:
        run(body(urls), timeout=30)
