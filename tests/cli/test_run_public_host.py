"""``backchannel run --http`` behind a public name (issue 27, item 9).

The server answers loopback ``Host`` names only (DNS-rebinding protection), so behind nginx with
``Host: mcp.example.com`` every request got 403 and only ``http_app(allowed_hosts=)`` helped;
``--allow-host NAME`` and ``--allow-origin ORIGIN`` now say it on the command line. Checked on the
wire, and through real nginx running docs/deploy.md's sample as written there (TLS with a
certificate of the test's own, ``--workers 2`` on one port), with a backchannel client.
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import ipaddress
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from _services import RedisServer
from _states import fleet_redis
from _subprocesses import ROOT, checkout_env
from backchannel import Client
from backchannel.testing import LOOPBACK, free_port, run, stop_process, wait_for_port
from backchannel.types.errors import RequestError

__all__ = ["fleet_redis"]  # (the fixture, used by name)

TIMEOUT = 30
SERVER = ROOT / "tests" / "fleet" / "cli_server.py"
PUBLIC = "mcp.example.com"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}},
}


@contextlib.contextmanager
def serving(*options: str, port: int | None = None) -> Iterator[int]:
    """``backchannel run cli_server.py --http`` with ``options``; its port, once it says it serves."""
    port = port or free_port()
    argv = [sys.executable, "-m", "backchannel", "run", str(SERVER), "--http", "--port", str(port), *options]
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=checkout_env(), start_new_session=True
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline().decode()  # said once listening (or the process ended)
        assert "serving fleet-cli" in line, line + process.stderr.read().decode()
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(TIMEOUT)


def post(port: int, headers: dict[str, str]) -> tuple[int, str]:
    """One POST of ``initialize``, with ``headers`` as given (``Host`` included): (status, body)."""
    connection = http.client.HTTPConnection(LOOPBACK, port, timeout=TIMEOUT)
    try:
        connection.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        body = json.dumps(INITIALIZE).encode()
        wire = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
        for name, value in {**wire, "Content-Length": str(len(body))}.items():
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_a_public_host_is_refused_unless_allowed() -> None:
    with serving() as port:
        status, body = post(port, {"Host": PUBLIC})
        assert status == 403 and f"Host header '{PUBLIC}' is not allowed" in body, body
        assert post(port, {"Host": f"127.0.0.1:{port}"})[0] == 200  # loopback, as before
    with serving("--allow-host", PUBLIC) as port:
        status, body = post(port, {"Host": PUBLIC})
        assert status == 200 and '"protocolVersion"' in body, body
        assert post(port, {"Host": f"{PUBLIC}:443"})[0] == 200  # a name without a port: any port
        assert post(port, {"Host": "evil.example.com"})[0] == 403  # only that name
        assert post(port, {"Host": f"127.0.0.1:{port}"})[0] == 200  # loopback still (a health check)


def test_a_browser_origin_is_refused_unless_allowed() -> None:
    origin = "https://app.example.com"
    with serving() as port:
        assert post(port, {"Host": f"127.0.0.1:{port}", "Origin": origin})[0] == 403
    with serving("--allow-origin", origin) as port:
        assert post(port, {"Host": f"127.0.0.1:{port}", "Origin": origin})[0] == 200
        assert post(port, {"Host": f"127.0.0.1:{port}", "Origin": "https://evil.example.com"})[0] == 403


def test_allow_host_is_for_http_and_checked() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "run", str(SERVER), "--allow-host", PUBLIC],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=checkout_env(),
    )
    assert done.returncode == 2 and done.stderr.strip() == (
        "backchannel run: --allow-host and --allow-origin are checks of HTTP requests: add --http"
    )
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "run", str(SERVER), "--http", "--allow-origin", "app.example.com"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=checkout_env(),
    )
    assert done.returncode == 2 and "error: argument --allow-origin: 'app.example.com' is not an origin" in done.stderr


# -- through nginx, as docs/deploy.md says --------------------------------------------------------------


def deploy_sample() -> str:
    """The nginx block of docs/deploy.md, as written there."""
    text = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```nginx\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, "docs/deploy.md should hold one nginx sample"
    return str(blocks[0])


def replace_once(text: str, pattern: str, replacement: str) -> str:
    changed, count = re.subn(pattern, lambda _match: replacement, text)
    assert count == 1, f"docs/deploy.md's nginx sample no longer has {pattern!r} once"
    return changed


def certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for mcp.example.com (and 127.0.0.1, where the client connects)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PUBLIC)])
    now = datetime.datetime.now(datetime.UTC)
    names = x509.SubjectAlternativeName([x509.DNSName(PUBLIC), x509.IPAddress(ipaddress.ip_address(LOOPBACK))])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(names, critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "fullchain.pem", directory / "privkey.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def nginx_program() -> str:
    found = shutil.which("nginx") or next((str(p) for p in (Path("/usr/sbin/nginx"),) if p.exists()), None)
    assert found is not None, "nginx is not installed: run tests/peers/install-services.sh"
    return found


@contextlib.contextmanager
def nginx_from_the_docs(upstream: int, cert: Path, key: Path) -> Iterator[tuple[int, int]]:
    """docs/deploy.md's nginx block on loopback ports: (its TLS port, its plain port)."""
    sample = deploy_sample()
    tls, plain = free_port(), free_port()
    sample = replace_once(sample, r"server 127\.0\.0\.1:8000;", f"server 127.0.0.1:{upstream};")
    sample = replace_once(sample, r"listen 443 ssl;", f"listen {LOOPBACK}:{tls} ssl;")
    sample = replace_once(sample, r"listen 80;", f"listen {LOOPBACK}:{plain};")
    sample = replace_once(sample, r"ssl_certificate\s+\S+;", f"ssl_certificate {cert};")
    sample = replace_once(sample, r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {key};")
    with tempfile.TemporaryDirectory(prefix="bc-nginx-") as name:
        directory = Path(name)
        temp = "\n".join(
            f"    {kind}_temp_path {directory / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        config = directory / "nginx.conf"
        config.write_text(
            f"daemon off;\nmaster_process off;\nworker_processes 1;\npid {directory}/nginx.pid;\n"
            f"error_log {directory}/error.log warn;\nevents {{ worker_connections 256; }}\n"
            f"http {{\n    access_log off;\n{temp}\n{sample}\n}}\n"
        )
        argv = [nginx_program(), "-p", str(directory), "-c", str(config), "-e", str(directory / "error.log")]
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        try:
            log = directory / "error.log"
            wait_for_port(tls, process, timeout=TIMEOUT, output=lambda: log.read_text() if log.exists() else "")
            yield tls, plain
        finally:
            stop_process(process)


def test_docs_nginx_sample_in_front_of_a_fleet_serves_the_public_name(tmp_path: Path, fleet_redis: RedisServer) -> None:
    cert, key = certificate(tmp_path)
    trusted = ssl.create_default_context(cafile=str(cert))
    port = free_port()
    with nginx_from_the_docs(port, cert, key) as (tls, plain):
        # Plain HTTP is sent to https://, for the same name.
        redirect = httpx2.get(f"http://{LOOPBACK}:{plain}/mcp", headers={"Host": PUBLIC}, timeout=TIMEOUT)
        assert redirect.status_code == 301 and redirect.headers["location"] == f"https://{PUBLIC}/mcp"
        url = f"https://{LOOPBACK}:{tls}/mcp"
        public = {"Host": PUBLIC}

        async def session() -> str:
            async with (
                httpx2.AsyncClient(verify=trusted, timeout=TIMEOUT) as http,
                Client.http(url, headers=public, httpx_client=http, era="handshake") as client,
            ):
                answer = await client.call_tool("whoami", {})
                return str(answer.content[0].text)  # type: ignore[union-attr]

        # Without --allow-host the fleet refuses the public name nginx passes on (403).
        fleet = ("--redis", fleet_redis.url, "--workers", "2")
        with serving(*fleet, port=port), pytest.raises(RequestError, match=f"Host header '{PUBLIC}' is not allowed"):
            run(session)
        with serving(*fleet, "--allow-host", PUBLIC, port=port):
            assert run(session).isdigit()  # a worker's pid: served, through TLS and nginx
