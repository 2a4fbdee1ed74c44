"""The house's layers, read from the code: no import points up a layer, none forms a cycle.

The list below is the one in README, CONTRIBUTING (a test holds both to it, line for line)
and ``docs/architecture.md``, bottom first. A
subpackage may import its own modules and any subpackage of a lower layer; subpackages of
one layer are independent of each other. Type-only imports (under ``TYPE_CHECKING``) count
too: a name a module needs to be read is a dependency all the same.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "backchannel"
ROOT = PACKAGE.parents[1]

#: The documents that draw the layers, and the words their list follows.
LISTS = {"README.md": "The layers, top first", "CONTRIBUTING.md": "Each line below is one layer, top first"}

#: Bottom first. ``(package)`` is ``backchannel/__init__.py``, the curated public surface
#: (it re-exports server/, client/ and types/); ``__main__`` is ``python -m backchannel``;
#: ``_version`` is the version's one line (the package and the client's ``clientInfo`` read it);
#: ``_lazy`` loads a package's public names at their first use (each lazy ``__init__`` takes it).
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"_lazy", "_version", "_wiring"}),
    frozenset({"types"}),
    frozenset({"protocol", "framing", "forms", "telemetry", "redaction", "apps"}),
    frozenset({"transports", "state", "signatures", "progress"}),
    frozenset({"runtime", "auth", "completion", "skills"}),
    frozenset({"http_host", "composition"}),
    frozenset({"server", "client", "app_host"}),
    frozenset({"ui", "bridge", "middleware", "check"}),
    frozenset({"cli", "testing", "(package)"}),
    frozenset({"__main__"}),
)

#: Pairs that the ranks would allow but the design does not: the terminal client is a client,
#: and needs nothing of the server's (what both need lives lower down).
INDEPENDENT: frozenset[tuple[str, str]] = frozenset(
    {("ui", "server"), ("ui", "http_host"), ("client", "http_host"), ("bridge", "http_host")}
)

#: The top-level modules in LAYERS; the rest are folders.
MODULES = frozenset({"(package)", "__main__", "_lazy", "_version", "_wiring"})

#: Known exceptions, each with the issue that removes it. Keep this list short and dated.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}

RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}


def subpackage_of(module: tuple[str, ...]) -> str:
    """``("server", "tools")`` -> ``"server"``; ``("__main__",)`` -> ``"__main__"`` (``_version``
    alike); the package's own ``__init__`` (or a name imported from it) -> ``"(package)"``."""
    if len(module) > 1 or (PACKAGE / module[0]).is_dir() or module[0] in MODULES:
        return module[0]
    return "(package)"


def imports_of(path: Path) -> set[tuple[str, ...]]:
    """The ``backchannel`` modules ``path`` imports, as paths below the package."""
    relative = path.relative_to(PACKAGE).with_suffix("")
    package = relative.parts[:-1]  # a module's package; an __init__'s package is its folder
    found: set[tuple[str, ...]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = (*base, *(node.module.split(".") if node.module else ()))
            elif node.module and node.module.split(".")[0] == "backchannel":
                target = tuple(node.module.split(".")[1:])
            else:
                continue
            if target:
                found.add(target)
            else:  # ``from .. import x`` at the top: x is a subpackage or a top-level module
                found.update((alias.name,) for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "backchannel" and len(parts) > 1:
                    found.add(tuple(parts[1:]))
    return found


def subpackage_edges() -> dict[tuple[str, str], list[str]]:
    """(importer, imported) subpackage pairs, with the files that make each."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        source = subpackage_of(path.relative_to(PACKAGE).with_suffix("").parts)
        for target in imports_of(path):
            imported = subpackage_of(target)
            if imported != source:
                edges[source, imported].append(str(path.relative_to(PACKAGE)))
    return edges


def test_every_subpackage_is_in_a_layer() -> None:
    present = {subpackage_of(p.relative_to(PACKAGE).with_suffix("").parts) for p in PACKAGE.rglob("*.py")}
    assert present - RANK.keys() == set(), (
        "add the new subpackage to LAYERS here, in README, CONTRIBUTING and docs/architecture.md"
    )


def test_no_import_points_up_or_sideways() -> None:
    wrong = [
        f"{source} -> {imported} ({', '.join(files)})"
        for (source, imported), files in sorted(subpackage_edges().items())
        if (RANK[imported] >= RANK[source] or (source, imported) in INDEPENDENT)
        and (source, imported) not in KNOWN_UPWARD
    ]
    assert wrong == [], "imports against the layers:\n" + "\n".join(wrong)


def drawn_layers(document: str) -> list[frozenset[str]]:
    """A document's list of the layers, bottom first: the code block after its words in
    ``LISTS``, where each line names one layer's subpackages (``server/  client/   the high-level
    API``); a line naming no folder (``__main__``) is no layer here."""
    _, found, after = (ROOT / document).read_text(encoding="utf-8").partition(LISTS[document])
    assert found, f"{document} has no list of the layers (after the words {LISTS[document]!r})"
    block = after.split("```")[1]
    layers = []
    for line in block.splitlines():
        if names := re.match(r"(?:[a-z_]+/ *)+", line):
            layers.append(frozenset(re.findall(r"([a-z_]+)/", names.group())))
    return layers[::-1]


@pytest.mark.parametrize("document", sorted(LISTS))
def test_the_documents_list_these_layers(document: str) -> None:
    """README's and CONTRIBUTING's lists are this one, line for line: every subpackage, on its
    layer's line (the top-level modules, ``MODULES``, are not folders and are not counted)."""
    ours = [names for layer in LAYERS if (names := layer - MODULES)]
    theirs = drawn_layers(document)
    assert theirs == ours, f"{document}'s layers, top first:\n{_drawn(theirs)}\nthis file's:\n{_drawn(ours)}"


def _drawn(layers: list[frozenset[str]]) -> str:
    return "\n".join("  ".join(f"{name}/" for name in sorted(layer)) for layer in reversed(layers))


def test_the_known_exceptions_still_exist() -> None:
    """An exception that no longer happens is removed from the list, so the list stays true."""
    edges = subpackage_edges()
    gone = [f"{s} -> {i}: {why}" for (s, i), why in KNOWN_UPWARD.items() if (s, i) not in edges]
    assert gone == [], "remove from KNOWN_UPWARD:\n" + "\n".join(gone)


def test_no_cycle_between_subpackages_beyond_the_known_exceptions() -> None:
    edges = {pair for pair in subpackage_edges() if pair not in KNOWN_UPWARD}
    graph: dict[str, set[str]] = defaultdict(set)
    for source, imported in edges:
        graph[source].add(imported)

    def reaches(start: str, goal: str) -> bool:
        seen: set[str] = set()
        frontier = [start]
        while frontier:
            for step in graph.get(frontier.pop(), ()):
                if step == goal:
                    return True
                if step not in seen:
                    seen.add(step)
                    frontier.append(step)
        return False

    cycles = sorted(name for name in list(graph) if reaches(name, name))
    assert cycles == []


@pytest.mark.parametrize(
    ("source", "imported", "allowed"),
    [("server", "types", True), ("types", "server", False), ("server", "client", False), ("ui", "client", True)],
)
def test_the_rule_itself(source: str, imported: str, allowed: bool) -> None:
    assert (RANK[imported] < RANK[source]) is allowed
