"""``backchannel install TARGET SERVER``: the entry that makes an MCP host run a server.

Each host keeps its servers in a JSON file of its own, under a key of its own:

==============  ============================================================  ==============
target          the file                                                      the key
==============  ============================================================  ==============
claude-desktop  ``claude_desktop_config.json`` in ``~/Library/Application     ``mcpServers``
                Support/Claude`` (macOS), ``%APPDATA%\\Claude`` (Windows),
                ``$XDG_CONFIG_HOME/Claude`` or ``~/.config/Claude`` (Linux)
claude-code     ``.mcp.json`` in the current directory (the project's scope)  ``mcpServers``
cursor          ``~/.cursor/mcp.json`` (every project)                        ``mcpServers``
vscode          ``.vscode/mcp.json`` in the current directory (the workspace)  ``servers``
mcp-json        none: printed on stdout                                       ``mcpServers``
==============  ============================================================  ==============

The entry runs ``backchannel run`` on the server's absolute path with this interpreter
(``sys.executable -m backchannel run /abs/server.py``), so the host needs neither a shell nor
a ``PATH`` that finds this virtual environment (a module, ``package.module``, gets the current
directory as ``PYTHONPATH``: the host starts it from a directory of its own). An existing
file is read, the one entry added (or replaced, under the same name) and the file written back
whole, every other entry and key as it was; a file that is not a JSON object is refused in one
line and left untouched.
"""

from __future__ import annotations

__all__ = ["TARGETS", "add_install_parser", "config_path", "install", "server_entry"]

import argparse
import os
import sys
from pathlib import Path
from typing import Any

# (json and tempfile are imported where used: every command builds this parser, `run` included)

#: The hosts ``install`` knows, and the key of their file that holds the servers.
TARGETS: dict[str, str] = {
    "claude-desktop": "mcpServers",
    "claude-code": "mcpServers",
    "cursor": "mcpServers",
    "vscode": "servers",
    "mcp-json": "mcpServers",
}
_HOST_NAMES = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "vscode": "VS Code",
}
_INSTALL = """Write the entry that makes an MCP host start SERVER (a Python file, or package.module,
optionally with :NAME): this interpreter running backchannel run on the file's absolute path,
written where the host reads it:

  claude-desktop  claude_desktop_config.json (macOS: ~/Library/Application Support/Claude,
                  Linux: ~/.config/Claude, Windows: %APPDATA%\\Claude)
  claude-code     .mcp.json in the current directory (the project's servers)
  cursor          ~/.cursor/mcp.json
  vscode          .vscode/mcp.json in the current directory (the workspace's servers)
  mcp-json        no file: the JSON is printed, to paste where a host wants it

The other entries of the file are kept as they are; an entry of the same name is replaced.
Restart the host (or reload its servers) to start it."""


class InstallError(Exception):
    """What stops ``install``, in one line (exit status 2)."""


def add_install_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    install = commands.add_parser(
        "install",
        help="write a host's entry for a server (Claude Desktop, Claude Code, Cursor, VS Code) or print it",
        description=_INSTALL,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    install.add_argument("host", choices=tuple(TARGETS), metavar="TARGET", help=", ".join(TARGETS))
    install.add_argument("server", metavar="SERVER", help="path/to/server.py or package.module, optionally with :NAME")
    install.add_argument("--name", type=_name, default=None, help="the entry's name (default: the Server's name)")
    install.add_argument(
        "--env",
        action="append",
        default=None,
        type=_key_value,
        metavar="KEY=VALUE",
        help="an environment variable the host sets for the server (repeatable)",
    )
    install.add_argument(
        "--config", default=None, metavar="PATH", help="the host's file to write, instead of where the host keeps it"
    )


def install(args: argparse.Namespace) -> int:
    """``backchannel install``: 0 once written (or printed), 2 with one line on stderr if not."""
    try:
        return _install(args)
    except InstallError as exc:
        print(f"backchannel install: {exc}", file=sys.stderr)
        return 2


def _install(args: argparse.Namespace) -> int:
    import json

    env = dict(args.env or [])
    target = _server_target(args.server)
    if target == args.server and not Path(target.partition(":")[0]).is_absolute():
        # a module, found from here (as ``run`` finds it): the host starts it from elsewhere
        env.setdefault("PYTHONPATH", str(Path.cwd()))
    name = args.name or _server_name(target, env)
    entry = server_entry(args.host, target, env)
    key = TARGETS[args.host]
    if args.host == "mcp-json":
        if args.config is not None:
            raise InstallError("mcp-json prints the entry; --config names a file to write, for the other targets")
        print(json.dumps({key: {name: entry}}, indent=2))
        return 0
    path = Path(args.config).expanduser() if args.config is not None else config_path(args.host)
    config = _read(path)
    servers = config.setdefault(key, {})
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: {key!r} is not a JSON object; the file is left as it is")
    replaced = name in servers
    servers[name] = entry
    _write(path, config)
    did = "replaced" if replaced else "added"
    print(f"backchannel install: {did} {name!r} in {path}; restart {_HOST_NAMES[args.host]} (or reload its servers)")
    return 0


def config_path(host: str) -> Path:
    """Where ``host`` keeps its servers, for this user and this directory."""
    home = Path.home()
    if host == "claude-desktop":
        if sys.platform == "darwin":
            folder = home / "Library" / "Application Support" / "Claude"
        elif sys.platform == "win32":
            folder = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
        else:
            folder = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"
        return folder / "claude_desktop_config.json"
    if host == "claude-code":
        return Path.cwd() / ".mcp.json"
    if host == "cursor":
        return home / ".cursor" / "mcp.json"
    if host == "vscode":
        return Path.cwd() / ".vscode" / "mcp.json"
    raise ValueError(f"{host!r} keeps no file")


def server_entry(host: str, target: str, env: dict[str, str]) -> dict[str, Any]:
    """The host's entry for ``backchannel run TARGET`` by this interpreter."""
    entry: dict[str, Any] = {"type": "stdio"} if host in ("claude-code", "vscode") else {}
    entry["command"] = sys.executable
    entry["args"] = ["-m", "backchannel", "run", target]
    if env:
        entry["env"] = env
    return entry


def _server_target(text: str) -> str:
    """A file's absolute path (with its ``:NAME``), or a module's name as given."""
    where, colon, name = text.partition(":")
    path = Path(where).expanduser()
    if path.suffix == ".py" or path.is_file():
        if not path.is_file():
            raise InstallError(f"no such file: {where}")
        return str(path.resolve()) + colon + name
    return text


def _server_name(target: str, env: dict[str, str]) -> str:
    """The Server's own name: its file is loaded (with ``env`` set) as ``backchannel run`` would."""
    from .loader import TargetError, load_server

    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        return load_server(target).name
    except TargetError as exc:
        raise InstallError(f"{exc} (give --name to install it anyway)") from None
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _read(path: Path) -> dict[str, Any]:
    import json

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path} is not JSON I can read ({exc}); it is left as it is") from None
    if not isinstance(config, dict):
        raise InstallError(f"{path} holds no JSON object; it is left as it is")
    return config


def _write(path: Path, config: dict[str, Any]) -> None:
    """Write ``config`` whole, in place of the old file only once it is written (a crash leaves one or the other)."""
    import json
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(json.dumps(config, indent=2) + "\n")
            os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InstallError(f"cannot write {path}: {exc.strerror or exc}") from None


def _name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the name is empty")
    return text


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key or key != key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value
