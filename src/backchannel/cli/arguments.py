"""The ``backchannel`` command line: its subcommands, their options, and a check for each value.

Every option that takes a value is checked while the line is parsed (a ``choices`` list or a
type function), so a bad value ends in argparse's usage line and one ``error:`` line naming
the option, with exit status 2, before anything starts.
"""

from __future__ import annotations

__all__ = ["LOG_LEVELS", "build_parser", "is_argument_word", "plain_help", "tool_arguments"]

import argparse
import ipaddress
import re
from pathlib import Path

from .._version import __version__
from .options import header_option, seconds, whole_number

#: The MCP log levels (``logging/setLevel``), lowest first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# "legacy" and "modern" are the old spellings of "handshake" and "stateless"; Client normalises them.
_ERA_SPELLINGS = ("auto", "handshake", "stateless", "legacy", "modern")
_ERA_HELP = "protocol era: auto (probe), handshake (initialize) or stateless (legacy/modern: old spellings)"
_PYTHON_LEVELS = ("debug", "info", "warning", "error", "critical")
_HOSTNAME = re.compile(
    r"(?=.{1,253}\.?$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?"
)
_URL_PATH = re.compile(r"/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")

_RUN = """Serve the Server that a Python file or module defines: on stdio, for a client that
spawns this command, or with --http over Streamable HTTP, saying on stderr where it listens."""
_CONNECT = """An interactive session with an MCP server, in the terminal: forms, links to open,
progress bars, logs, Tab completion, Ctrl-C to cancel a request. The server is a command
and its arguments, spawned and spoken to over stdio (after --, so that its own options are
not read as ours), or the http(s):// URL of a Streamable HTTP endpoint.

  backchannel connect -- python server.py --verbose
  backchannel connect --era handshake -- backchannel run server.py
  backchannel connect http://127.0.0.1:8000/mcp

A server that asks for a login (OAuth 2.1) gets one: your browser opens its page, and the
tokens are kept for the next time (backchannel logout URL forgets them)."""
_LOGOUT = """Forget the tokens that backchannel connect keeps for the http(s):// server at URL (in
$XDG_CONFIG_HOME/backchannel/oauth.json), revoking its refresh token where the authorization
server offers revocation. The next connect logs in again."""
_DEMO = """The terminal client on the bundled example server (examples/demo_server.py): tools to
call, a form, a link to authorize in the browser, a progress bar and log lines. Type help
once connected; Ctrl-C cancels a running call."""
_PROXY = """Serve one MCP server (the upstream) to hosts of either era, carrying its questions,
progress, logs and cancellations across: a desktop host that speaks only stdio and the
handshake era reaches a stateless-only server over HTTP, and the other way round. The
upstream is a command and its arguments, spawned and spoken to over stdio (after --), or
the http(s):// URL of a Streamable HTTP endpoint (HTTP+SSE of 2024-11-05 is found there
too). docs/bridge.md says what crosses and how.

  backchannel proxy -- python server.py
  backchannel proxy https://mcp.example.com/mcp
  backchannel proxy --serve http --port 8100 -- node server.js

In a desktop host's configuration:

  {"mcpServers": {"name": {"command": "backchannel", "args": ["proxy", "https://..."]}}}

An upstream that asks for a login (OAuth 2.1) gets one: the login backchannel connect keeps
for that URL, else your browser opens its page (--no-browser prints the link on stderr),
or, with --client-id, the client credentials grant. Tokens are kept for the next time.
An upstream that cannot be started or reached is named in one line on stderr, and each
request of the host is answered with a JSON-RPC error (-32603) saying so."""
_CALL_USAGE = """%(prog)s [options] TOOL -- COMMAND [ARGS ...]
       %(prog)s [options] TOOL -- URL
       %(prog)s [options] "COMMAND LINE" TOOL"""


def build_parser(call_help: bool = False) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser and each subcommand's own; ``call_help`` adds the long help of ``call``
    (it imports the terminal client, which ``backchannel run`` should not pay for)."""
    parser = argparse.ArgumentParser(prog="backchannel", description="An MCP runtime: serve and connect.")
    parser.add_argument("--version", action="version", version=f"backchannel {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    raw = argparse.RawDescriptionHelpFormatter
    run = commands.add_parser(
        "run", help="serve a Server defined in a Python file or module", description=_RUN, formatter_class=raw
    )
    run.add_argument("target", help="path/to/server.py or package.module, optionally with :NAME")
    _serving_options(run)
    connect = commands.add_parser(
        "connect",
        help="an interactive session with a server: a command to spawn (stdio) or an http(s):// URL",
        description=_CONNECT,
        formatter_class=raw,
        usage="%(prog)s [options] -- COMMAND [ARGS ...]\n       %(prog)s [options] URL",
    )
    demo = commands.add_parser(
        "demo", help="an interactive session with the bundled example server", description=_DEMO, formatter_class=raw
    )
    for sub in (connect, demo):
        _session_options(sub)
    header_option(connect)
    connect.add_argument(
        "target",
        nargs=argparse.REMAINDER,
        metavar="SERVER",
        help="the server: COMMAND [ARGS...] (spawned, stdio) or an http(s):// URL",
    )
    logout = commands.add_parser(
        "logout", help="forget the login kept for an http(s):// server", description=_LOGOUT, formatter_class=raw
    )
    logout.add_argument("url", type=_http_url, metavar="URL", help="the server's http(s):// URL, as given to connect")
    _call_parser(commands, call_help)
    _proxy_parser(commands)
    _gateway_parser(commands)
    from .report_card import add_check_parser

    add_check_parser(commands)
    from .install import add_install_parser

    add_install_parser(commands)
    return parser, dict(commands.choices)


_GATEWAY = """Serve one MCP endpoint in front of the servers a TOML file lists (docs/gateway.md): each
upstream (a command spawned over stdio, or an http(s):// URL) mounted under its name, its tools
named NAME_tool and its resources NAME+scheme://..., with its questions, progress, logs and
cancellations carried to the client in front. On stdio, for a host that spawns this command, or
with --http over Streamable HTTP (with --redis and --workers, as backchannel run).

  backchannel gateway gateway.toml
  backchannel gateway gateway.toml --http --port 8000
  backchannel gateway --check gateway.toml

A file that cannot be served is refused before anything starts: one line per problem, naming
the file and the key (gateway.toml: upstream[2].command: must be a list of strings), status 2."""


def _gateway_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    gateway = commands.add_parser(
        "gateway",
        help="serve one endpoint in front of the MCP servers a TOML file lists",
        description=_GATEWAY,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gateway.add_argument("config", metavar="FILE", help="the gateway's TOML file (docs/gateway.md)")
    gateway.add_argument(
        "--check",
        action="store_true",
        help="read the file and say what is wrong with it (or that nothing is); serve nothing",
    )
    _serving_options(gateway)


def _serving_options(sub: argparse.ArgumentParser) -> None:
    """How ``run`` and ``gateway`` serve: stdio, or ``--http`` with its host, port, fleet and checks."""
    sub.add_argument(
        "--log-level",
        default="warning",
        type=str.lower,
        choices=_PYTHON_LEVELS,
        help="Python logging level for the server's stderr (default warning)",
    )
    sub.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    _listening_options(sub, "HTTP")
    sub.add_argument(
        "--redis",
        type=_redis_url,
        default=None,
        metavar="URL",
        help="HTTP: keep sessions, streams and the reverse channel in this Redis (redis://host:port/db), "
        "so several workers serve as one server (docs/deploy.md)",
    )
    sub.add_argument(
        "--workers", type=_workers, default=1, help="HTTP: worker processes on the one port (more than 1 needs --redis)"
    )
    sub.add_argument(
        "--legacy-sse",
        action="store_true",
        help="HTTP: also serve the deprecated HTTP+SSE transport of 2024-11-05 (GET /sse, POST /messages/) "
        "for old clients; one worker only",
    )
    sub.add_argument(
        "--allow-host",
        action="append",
        default=None,
        type=_allowed_host,
        metavar="NAME",
        help="HTTP: a Host the server answers besides loopback names, as NAME, NAME:PORT or NAME:* "
        "(repeatable; the public name behind a proxy; * allows any): others get 403 (DNS rebinding)",
    )
    sub.add_argument(
        "--allow-origin",
        action="append",
        default=None,
        type=_allowed_origin,
        metavar="ORIGIN",
        help="HTTP: a browser Origin allowed besides local pages, as scheme://host[:port|:*] (repeatable; "
        "* allows any)",
    )
    sub.add_argument(
        "--debug", action="store_true", help="show the traceback of a failed start or of Ctrl-C, not one line"
    )


def _listening_options(sub: argparse.ArgumentParser, when: str) -> None:
    """``--host``, ``--port`` and ``--path``: where an HTTP server listens (``run`` and ``gateway``
    with ``--http``, ``proxy`` with ``--serve http``: ``when``, the help's first words)."""
    sub.add_argument(
        "--host", default="127.0.0.1", type=_host, help=f"{when}: the address to bind (default: loopback only)"
    )
    sub.add_argument("--port", type=_port, default=8000, help=f"{when}: the port, 1 to 65535 (default 8000)")
    sub.add_argument("--path", type=_url_path, default="/mcp", help=f"{when}: the endpoint path (default /mcp)")


def _session_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--root",
        action="append",
        default=None,
        type=_directory,
        metavar="PATH",
        help="a directory offered to the server as a root (repeatable; default: the current directory)",
    )
    sub.add_argument("--era", choices=_ERA_SPELLINGS, default="auto", help=_ERA_HELP)
    sub.add_argument(
        "--save-dir", default=None, type=_save_dir, metavar="DIR", help="where images and binary content are saved"
    )
    sub.add_argument(
        "--server-log-level",
        default="info",
        type=str.lower,
        choices=LOG_LEVELS,
        help="the server log messages to ask for at first, in either era (default info; the log command changes it)",
    )
    sub.add_argument(
        "--no-browser",
        dest="browser",
        action="store_false",
        help="print the links of logins, URL requests (after you agree) and the MCP Apps page instead of "
        "opening a browser",
    )
    _sampling_options(sub, "you approve each request and each reply; without these you type the reply")


def _sampling_options(sub: argparse.ArgumentParser, who: str) -> None:
    """Where the server's sampling requests go (``ui/sampling_models.py``)."""
    sampling = sub.add_argument_group("sampling", f"who answers the server's sampling requests ({who})")
    sampling.add_argument(
        "--sampling-endpoint",
        type=_http_url,
        default=None,
        metavar="URL",
        help="an OpenAI-compatible chat-completions URL (.../v1/chat/completions)",
    )
    sampling.add_argument("--sampling-model", default=None, metavar="MODEL", help="the model to ask the endpoint for")
    sampling.add_argument(
        "--sampling-key-env", default=None, metavar="NAME", help="the environment variable holding the endpoint's key"
    )
    sampling.add_argument(
        "--sampling-command",
        default=None,
        metavar="COMMAND",
        help="a program that reads the request as JSON on stdin and writes the result on stdout",
    )


def _call_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser], call_help: bool) -> None:
    description = plain_help(_call_description()) if call_help else None
    call = commands.add_parser(
        "call",
        help="call one tool with no person at the keyboard: questions answered from a file, the result as JSON",
        description=description or "Call one tool with no person at the keyboard.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage=_CALL_USAGE,
    )
    call.add_argument(
        "target",
        nargs="?",  # (required: main.py says so, once it has taken back what --args took of the positionals)
        metavar="TOOL",
        help="the tool, with the server after --; in the older form, the server's command line "
        "in one argument ('python server.py') or its URL, followed by the tool",
    )
    call.add_argument("tool", nargs="?", default=None, help=argparse.SUPPRESS)
    # Several words (--args a=2 b=40) as well as one: main.py gives back the words that are not
    # key=value (a TOOL after the option), then checks the arguments' form with tool_arguments.
    call.add_argument(
        "--args", default=None, nargs="+", metavar="ARGS", help="the arguments: a JSON object, or key=value words"
    )
    # Read (and refused with one line, status 2) before the server is started: ui/batch.py.
    call.add_argument("--answers", default=None, metavar="FILE", help="answers to the server's questions (JSON)")
    call.add_argument("--json", action="store_true", help="print the result (or the error) as JSON")
    call.add_argument(
        "--root", action="append", default=None, type=_directory, metavar="PATH", help="a root (default: the cwd)"
    )
    call.add_argument("--era", choices=_ERA_SPELLINGS, default="auto", help=_ERA_HELP)
    call.add_argument(
        "--timeout", type=seconds, default=300.0, help="seconds for the whole call (0: no limit; default 300)"
    )
    call.add_argument(
        "--log-level",
        default=None,
        type=str.lower,
        choices=LOG_LEVELS,
        help="print the server's log messages at this level and above on stderr (either era; default: none)",
    )
    header_option(call)
    _sampling_options(call, "without these, the answers file")


def _proxy_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    proxy = commands.add_parser(
        "proxy",
        help="serve an MCP server (a command to spawn, or an http(s):// URL) to hosts of either era",
        description=_PROXY,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [options] -- COMMAND [ARGS ...]\n       %(prog)s [options] URL",
    )
    proxy.add_argument(
        "--serve",
        choices=("stdio", "http"),
        default="stdio",
        help="how hosts reach the proxy: stdio (default: a host spawns it) or Streamable HTTP (--host, --port)",
    )
    _listening_options(proxy, "--serve http")
    proxy.add_argument(
        "--upstream-era",
        choices=("auto", "handshake", "stateless"),
        default="auto",
        help="the era spoken to the upstream: auto (probe), handshake (initialize) or stateless (2026-07-28)",
    )
    proxy.add_argument(
        "--upstream-timeout",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="how long the upstream has to answer its introduction before it is named unavailable "
        "(a login's time is not counted; 0: no limit; default 60)",
    )
    header_option(proxy)
    proxy.add_argument(
        "--log-level",
        default="warning",
        type=str.lower,
        choices=_PYTHON_LEVELS,
        help="the level of the proxy's own log on stderr (Python logging; default warning: an upstream that "
        "cannot be reached is an error). The MCP log messages it passes on are at the host's level, "
        "as the host sets it",
    )
    proxy.add_argument(
        "--no-browser",
        dest="browser",
        action="store_false",
        help="print the link of an upstream's login on stderr instead of opening a browser",
    )
    proxy.add_argument(
        "--client-id",
        default=None,
        metavar="ID",
        help="log in to the upstream as this OAuth client on its own behalf (client credentials), not in a browser",
    )
    proxy.add_argument(
        "--client-secret-env",
        default=None,
        metavar="NAME",
        help="the environment variable holding that client's secret (with --client-id)",
    )
    proxy.add_argument(
        "target",
        nargs=argparse.REMAINDER,
        metavar="UPSTREAM",
        help="the upstream: -- COMMAND [ARGS...] (spawned, stdio) or an http(s):// URL",
    )


def _call_description() -> str:
    """``call``'s long help: the docstring of ``ui/batch.py``, read from its source. Importing the
    module would load the terminal client (rich, the client, httpx2), half a second of CPU for a
    page of text; a source that cannot be read (an install of bytecode alone) is imported."""
    import ast

    source = Path(__file__).resolve().parent.parent / "ui" / "batch.py"
    try:
        text = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8")), clean=False)
    except (OSError, SyntaxError, ValueError):
        text = None
    if text is None:
        from ..ui import batch

        text = batch.__doc__
    return text or ""


def plain_help(text: str) -> str:
    """A docstring as plain text for ``--help``: reStructuredText and Markdown markup taken out
    (``literal``, **strong**, *emphasis*), what they marked kept."""
    pieces = re.split(r"``(.+?)``", text, flags=re.DOTALL)
    for index in range(0, len(pieces), 2):  # the even pieces are outside literals
        piece = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"\1", pieces[index])
        pieces[index] = re.sub(r"(?<![\w*])\*(\S(?:[^*]*?\S)?)\*(?![\w*])", r"\1", piece)
    return "".join(pieces)


# -- the checks: each returns the value to use, or raises ArgumentTypeError saying what is wrong --


def _http_url(text: str) -> str:
    if not re.match(r"https?://[^/?#\s]+", text, re.IGNORECASE):
        raise argparse.ArgumentTypeError(f"{text!r} is not an http(s):// URL")
    return text


def _port(text: str) -> int:
    return whole_number(text, 1, 65535, "a port number")


def _host(text: str) -> str:
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        pass
    if not _HOSTNAME.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is neither an IP address nor a host name")
    return text


def _url_path(text: str) -> str:
    if not _URL_PATH.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a URL path: start it with / (like /mcp)")
    return text


def _redis_url(text: str) -> str:
    if not text.startswith(("redis://", "rediss://", "unix://")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a Redis URL (redis://host:port/db)")
    return text


def _workers(text: str) -> int:
    return whole_number(text, 1, 64, "a number of workers")


def _directory(text: str) -> str:
    if not Path(text).expanduser().is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory")
    return text


def _save_dir(text: str) -> str:
    """A directory, or one that can be made: its nearest existing ancestor is a directory."""
    path = Path(text).expanduser().absolute()
    existing = next((parent for parent in (path, *path.parents) if parent.exists()), None)
    if existing is None or not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory, nor a place one can be made")
    return text


def tool_arguments(words: list[str]) -> str:
    """``--args`` as the text ``parse_arguments`` reads, checked for form only (JSON object, or
    key=value words; read against the tool's schema later): one word as it is, several quoted
    so that each stays one word (``--args a=2 'city=New York'``)."""
    import shlex

    from ..ui.commands import CommandError, parse_arguments

    text = words[0] if len(words) == 1 else shlex.join(words)
    try:
        parse_arguments(text)
    except CommandError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def is_argument_word(word: str) -> bool:
    """A word ``--args`` takes: ``key=value``, or a JSON object."""
    return word.lstrip().startswith("{") or "=" in word.partition(" ")[0]


def _allowed_host(text: str) -> str:
    """``NAME``, ``NAME:PORT`` or ``NAME:*`` (an IPv6 address in brackets), or ``*``."""
    if text == "*":
        return text
    name, port = text, ""
    if text.startswith("["):
        end = text.find("]")
        name, port = text[: end + 1], text[end + 1 :]
        if end < 0 or (port and not port.startswith(":")):
            raise argparse.ArgumentTypeError(f"{text!r} is not NAME, NAME:PORT or NAME:*")
        port = port[1:]
    elif ":" in text:
        name, _, port = text.rpartition(":")
    if not name:
        raise argparse.ArgumentTypeError(f"{text!r} has no host name")
    _host(name)
    if port and port != "*":
        _port(port)
    return text.lower()


def _allowed_origin(text: str) -> str:
    """``scheme://host``, ``scheme://host:port`` or ``scheme://host:*``, or ``*``."""
    if text == "*":
        return text
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest or "/" in rest:
        raise argparse.ArgumentTypeError(f"{text!r} is not an origin: scheme://host[:port] (https://app.example.com)")
    _allowed_host(rest)
    return text.lower()
