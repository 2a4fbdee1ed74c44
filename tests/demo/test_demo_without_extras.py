"""With ``pip install -e .`` alone, the deploy story says what to install before it asks anything
(issue #18, rough edge 8).

The demo runs in a pseudo-terminal with a ``PYTHONPATH`` shim that makes ``import authlib``
(or ``import starlette``) fail as it does when the examples extra is not installed; the
person types ``call deploy_to_production`` in an 80-column terminal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from check_demo_screen import demo, foreign_lines


def without(tmp_path: Path, module: str) -> str:
    """A directory that, first on ``PYTHONPATH``, makes ``import module`` fail as if not installed."""
    shim = tmp_path / "shim" / module
    shim.mkdir(parents=True)
    message = f"No module named {module!r}"
    (shim / "__init__.py").write_text(f"raise ModuleNotFoundError({message!r}, name={module!r})\n")
    return str(shim.parent)


@pytest.mark.parametrize("module", ["authlib", "starlette"])
def test_the_missing_extra_is_named_before_the_form(tmp_path: Path, module: str) -> None:
    with demo(tmp_path, columns=80, PYTHONPATH=without(tmp_path, module)) as (term, _):
        term.expect("demo>")
        term.sendline("call deploy_to_production")
        first = term.expect(r"which branch|branch\*:|The authorization step needs \w+").group(0)
        assert first == f"The authorization step needs {module}", "the form was asked before the check"
        term.expect("demo>")
        term.sendline("quit")
        assert term.wait_end() == 0
    lines = term.screen.splitlines()
    said = [line for line in lines if "The authorization step needs" in line]
    assert said == [f"The authorization step needs {module}: pip install -e '.[examples]'"]  # one whole line
    assert not any("branch" in line for line in lines)  # nothing of the form was shown
    assert foreign_lines(term.screen) == [] and term.errors.strip() == ""
