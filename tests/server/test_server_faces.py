"""The method routes and ``Context`` see ``Server`` through protocols (``RouteServer`` in
``server/route_face.py``, ``ContextServer`` in ``server/faces.py``), and the tasks through
``TaskServer`` (issue #28, item 7): none of them imports ``server.py``, not even for type
checking, which would close a circle of imports through the facade above them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import backchannel.server

SERVER = Path(backchannel.server.__file__).parent
SEES_A_FACE = ["routes.py", "tasks/routes.py", "context.py", "tasks/service.py", "faces.py", "route_face.py"]


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (``if TYPE_CHECKING:`` blocks too), as dotted names."""
    package = ["backchannel", "server", *path.relative_to(SERVER).parent.parts]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("name", SEES_A_FACE)
def test_imports_no_server_module(name: str) -> None:
    assert "backchannel.server.server" not in imported_modules(SERVER / name)


def test_server_meets_the_faces_it_shows() -> None:
    """What the protocols name, ``Server`` has (mypy checks the types where the server passes itself)."""
    from backchannel.server import Server
    from backchannel.server.faces import ContextServer
    from backchannel.server.route_face import RouteServer

    server = Server("faces")
    for face in (ContextServer, RouteServer):
        for cls in face.__mro__:
            if cls in (ContextServer, RouteServer):
                for member in set(vars(cls)) | set(getattr(cls, "__annotations__", {})):
                    if not member.startswith("_"):
                        assert hasattr(server, member), (face.__name__, member)
