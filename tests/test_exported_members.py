"""The top-level surface is curated: every name in ``__all__`` resolves, and nothing else is promised."""

from __future__ import annotations

import subprocess
import sys

import backchannel


def test_every_exported_name_resolves() -> None:
    for name in backchannel.__all__:
        assert getattr(backchannel, name) is not None, name


def test_exports_are_exactly_the_documented_set() -> None:
    assert set(backchannel.__all__) == {
        "Audio",
        "Client",
        "Complete",
        "ConnectionClosed",
        "Context",
        "Elicited",
        "Image",
        "InvalidParams",
        "MCPError",
        "MissingCapability",
        "RequestError",
        "RequestTimeout",
        "ResourceNotFound",
        "Server",
        "ToolError",
        "__version__",
        "assistant",
        "user",
    }


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        backchannel.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_a_stdio_server_does_not_import_an_http_stack() -> None:
    code = (
        "import sys, backchannel\n"
        "from backchannel import Server\n"
        "from backchannel.transports.stdio import StdioServerTransport\n"
        "Server('x').add_tool(lambda text: text, name='echo')\n"
        "print(sorted(m for m in ('httpx', 'httpx2', 'starlette', 'uvicorn', 'anyio') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_a_server_loads_no_form_or_page_machinery_it_has_not_used() -> None:
    """Cold start is a benchmark row: the form machinery (FormSpec and pydantic's e-mail and URL
    types) and the URL-elicitation pages (HTML, ASGI helpers) load on first use."""
    code = (
        "import sys, backchannel\n"
        "from backchannel import Server\n"
        "Server('x').add_tool(lambda text: text, name='echo')\n"
        "lazy = ('html', 'pydantic.networks', 'backchannel.forms.types', 'backchannel.http_host.url_flows.pages')\n"
        "print(sorted(m for m in lazy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
