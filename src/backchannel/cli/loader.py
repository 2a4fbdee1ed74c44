"""Find the ``Server`` a user's file or module defines."""

from __future__ import annotations

__all__ = ["TargetError", "load_server"]

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from ..server.server import Server
from ..signatures.signature import SignatureError
from ..skills.folder import SkillError

_PREFERRED = ("server", "mcp", "app")


class TargetError(ValueError):
    """The target names no file, module or ``Server`` that can be served; the message says which.
    When the user's code failed to import, its exception is the ``__cause__`` (for ``--debug``)."""


def load_server(target: str) -> Server:
    """``path/to/file.py``, ``package.module``, either with ``:name`` to pick one object.

    Without a name: the module's ``server``/``mcp``/``app`` if it is a ``Server``,
    else its only ``Server``. Raises ``TargetError`` with a message naming what was
    found when that is ambiguous or empty.
    """
    where, _, name = target.partition(":")
    module = _import(where)
    if name:
        found = getattr(module, name, None)
        if not isinstance(found, Server):
            raise TargetError(f"{where} has no Server named {name!r}")
        return found
    for preferred in _PREFERRED:
        found = getattr(module, preferred, None)
        if isinstance(found, Server):
            return found
    servers = {key: value for key, value in vars(module).items() if isinstance(value, Server)}
    if len(servers) == 1:
        return next(iter(servers.values()))
    if not servers:
        raise TargetError(f"{where} defines no backchannel Server")
    names = ", ".join(sorted(servers))
    raise TargetError(f"{where} defines several Servers ({names}); pick one with {where}:NAME")


def _import(where: str) -> Any:
    path = Path(where)
    if path.suffix == ".py" or path.is_file():  # a directory is a package: imported by name below
        if not path.is_file():
            raise TargetError(f"no such file: {where}")
        module_name = f"_backchannel_user_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path.resolve())
        if spec is None or spec.loader is None:
            raise TargetError(f"cannot import {where}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        sys.path.insert(0, str(path.resolve().parent))  # so the file's own sibling imports work
        try:
            spec.loader.exec_module(module)
        except (SignatureError, SkillError) as exc:  # says in one line what to change: a traceback would bury it
            raise TargetError(str(exc)) from None
        except Exception as exc:
            raise TargetError(f"{where} failed to import: {_failure(exc)}") from exc
        return module
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # as `python -m` does; the console script does not
    try:
        return importlib.import_module(where)
    except (SignatureError, SkillError) as exc:
        raise TargetError(str(exc)) from None
    except ModuleNotFoundError as exc:
        if exc.name is None or not (where == exc.name or where.startswith(exc.name + ".")):
            # the module exists but one of its own imports is missing
            raise TargetError(f"{where} failed to import: {_failure(exc)}") from exc
        raise TargetError(f"no module named {where!r} (searched the current directory and sys.path)") from None
    except Exception as exc:
        raise TargetError(f"{where} failed to import: {_failure(exc)}") from exc


def _failure(exc: Exception) -> str:
    """``exc`` in one line, with the place in the user's code that raised it."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    if isinstance(exc, SyntaxError):  # its text says where already: "invalid syntax (server.py, line 3)"
        return text
    import traceback

    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if not frame.filename.startswith("<")]
    ours = str(Path(__file__).resolve().parents[1])  # a failure inside backchannel: the user's call into it
    theirs = [frame for frame in frames if not frame.filename.startswith(ours)]
    if not frames:
        return text
    last = (theirs or frames)[-1]
    try:
        shown = str(Path(last.filename).relative_to(Path.cwd()))
    except ValueError:
        shown = last.filename
    return f"{text} ({shown}, line {last.lineno})"
