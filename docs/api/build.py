"""Build the API reference with pdoc, warnings as errors: ``python docs/api/build.py [OUT]``.

The public surface is what ``backchannel`` and each package whose ``__init__`` has a non-empty
``__all__`` export (``tests/test_exported_members.py`` pins the top level). Each of those modules
gets one page, into ``docs/api/site/`` (git ignores it) or OUT. The build fails on any warning
pdoc gives (a name in ``__all__`` that does not resolve, an annotation it cannot read) and on a
public name without a docstring: an exported function, an exported class without one of its
own, and every public method and property of an exported class that is defined in
backchannel. CONTRIBUTING.md says why pdoc.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import time
import warnings
from functools import cached_property
from pathlib import Path

import pdoc
import pdoc.doc

import backchannel

#: Public names allowed to lack a docstring for a while (none today); a name here that has a
#: docstring is reported, not refused, so the list only shrinks.
NOT_YET_DOCUMENTED: set[str] = set()


def public_modules() -> list[str]:
    """The top-level package and every package below it whose ``__all__`` names something."""
    names = ["backchannel"]
    for info in pkgutil.walk_packages(backchannel.__path__, "backchannel."):
        if info.ispkg and getattr(importlib.import_module(info.name), "__all__", None):
            names.append(info.name)
    return names


def resolve_lazy_names(name: str) -> None:
    """Put each name a package loads on first use (PEP 562 ``__getattr__``) in its namespace,
    where pdoc looks for ``__all__``'s names."""
    module = importlib.import_module(name)
    for exported in module.__all__:
        module.__dict__.setdefault(exported, getattr(module, exported))


def undocumented(module: pdoc.doc.Module) -> dict[str, str]:
    """Each public name of ``module`` with no docstring: where it is defined -> how it is exported."""
    found: dict[str, str] = {}
    for member in module.members.values():
        if not isinstance(member, pdoc.doc.Class | pdoc.doc.Function):
            continue
        if not member.docstring.strip():
            found[".".join(member.taken_from)] = member.fullname
        if not isinstance(member, pdoc.doc.Class):
            continue
        if not member.obj.__dict__.get("__doc__"):
            # pdoc shows a base class's docstring for a class without its own (inspect.getdoc)
            found[".".join(member.taken_from)] = member.fullname
        for attribute in member.members.values():
            where = ".".join(attribute.taken_from)
            if attribute.name.startswith("_") or not where.startswith("backchannel."):
                continue
            if isinstance(attribute, pdoc.doc.Variable):
                static = inspect.getattr_static(member.obj, attribute.name, None)
                if not isinstance(static, property | cached_property):
                    continue  # a field: its class's docstring says what it holds
            elif not isinstance(attribute, pdoc.doc.Function):
                continue
            if not attribute.docstring.strip():
                found[where] = attribute.fullname
    return found


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).parent / "site"
    names = public_modules()
    for name in names:
        resolve_lazy_names(name)
    # One page per public module: each spec adds a package with its submodules, so the
    # submodules are taken out again before the next public package goes in.
    specs: list[str] = []
    for name in names:
        specs += [name, "!" + name.replace(".", r"\.") + r"\..+"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.render.configure(docformat="markdown", show_source=False, search=True)
        pdoc.pdoc(*specs, output_directory=out)
        missing: dict[str, str] = {}
        for name in names:
            missing.update(undocumented(pdoc.doc.Module.from_name(name)))
    problems = [f"warning: {w.filename}:{w.lineno}: {w.message}" for w in caught]
    problems += [
        f"no docstring: {exported} (defined as {where})"
        for where, exported in sorted(missing.items())
        if where not in NOT_YET_DOCUMENTED
    ]
    for where in sorted(NOT_YET_DOCUMENTED - missing.keys()):
        print(f"note: {where} has a docstring now; take it out of NOT_YET_DOCUMENTED")
    for problem in problems:
        print(problem, file=sys.stderr)
    seconds = time.perf_counter() - started
    if problems:
        print(f"API reference: {len(problems)} problems ({seconds:.1f}s)", file=sys.stderr)
        return 1
    print(f"API reference: {len(names)} modules into {out} ({seconds:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
