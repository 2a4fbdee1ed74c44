"""A skill that cannot be served is refused before anything is served, in one line naming the path
and the problem: a missing or broken ``SKILL.md``, a link, a file that is not regular, too many files
or bytes (the extension's limits), a folder of skills holding something else, one skill inside
another. ``backchannel run`` prints that one line and exits 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _skill_folders import write_skills

from backchannel import Server
from backchannel.skills import SkillError

GOOD = "---\nname: {name}\ndescription: Does a thing\n---\nBody.\n"


def skill(root: Path, name: str, skill_md: str | None = None, **files: bytes) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    if skill_md is not None:
        (folder / "SKILL.md").write_text(skill_md)
    for relative, data in files.items():
        (folder / relative).write_bytes(data)
    return folder


def refusal(folder: Path) -> str:
    with pytest.raises(SkillError) as refused:
        Server("refuses").add_skill(folder)
    message = str(refused.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("skill_md", "problem"),
    [
        (None, "no SKILL.md (every skill has one at its root)"),
        ("# Just markdown\n", "does not begin with YAML front matter"),
        ("---\nname: broken\ndescription: x\n", "its front matter has no closing --- line"),
        ("---\nname: [broken\n---\n", "its front matter is not valid YAML"),
        ("---\n- a list\n---\n", "its front matter is not a mapping of fields"),
        ("---\ndescription: Does a thing\n---\n", "has no name"),
        ("---\nname: broken\n---\n", "has no description"),
        ("---\nname: broken\ndescription: '  '\n---\n", "has no description"),
        (f"---\nname: broken\ndescription: {'x' * 1025}\n---\n", "a description of 1025 characters; at most 1024"),
        ("---\nname: Broken\ndescription: x\n---\n", "names the skill 'Broken': a name is 1-64 lowercase"),
        ("---\nname: other\ndescription: x\n---\n", "names the skill 'other' but its folder is 'broken'"),
        ("---\nname: broken\nname: broken\ndescription: x\n---\n", "gives 'name' twice"),
        ("---\nname: broken\ndescription: &d x\nlicense: *d\n---\n", "uses an alias (*d)"),
        ("---\nname: broken\ndescription: x\nweight: .nan\n---\n", "holds nan, which JSON cannot carry"),
        ("---\nname: broken\ndescription: x\nmetadata: {1: one}\n---\n", "a key that is not a string: 1"),
        ("---\nname: broken\ndescription: x\nlogo: !!binary aGk=\n---\n", "holds a bytes"),
    ],
)
def test_a_missing_or_invalid_skill_md_is_refused_in_one_line(
    tmp_path: Path, skill_md: str | None, problem: str
) -> None:
    folder = skill(tmp_path, "broken", skill_md)
    message = refusal(folder)
    where = str(folder if skill_md is None else folder / "SKILL.md")
    assert message.startswith(where + ": ") and problem in message, message


def test_a_skill_md_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    folder = skill(tmp_path, "latin")
    (folder / "SKILL.md").write_bytes("---\nname: latin\ndescription: caf\u00e9\n---\n".encode("latin-1"))
    assert refusal(folder) == f"{folder / 'SKILL.md'}: not UTF-8 text"


def test_links_are_refused_wherever_they_point(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("a secret beside the skill")
    inside = skill(tmp_path, "inside", GOOD.format(name="inside"), **{"real.md": b"real"})
    os.symlink(inside / "real.md", inside / "alias.md")  # even one that points inside
    only = "a symbolic link; a skill is served from its own regular files only"
    assert refusal(inside) == f"{inside / 'alias.md'}: {only}"
    escape = skill(tmp_path, "escape", GOOD.format(name="escape"))
    (escape / "refs").mkdir()
    os.symlink(outside, escape / "refs" / "secret.txt")
    assert refusal(escape).startswith(f"{escape / 'refs' / 'secret.txt'}: a symbolic link")
    linked_dir = skill(tmp_path, "linkdir", GOOD.format(name="linkdir"))
    os.symlink(tmp_path, linked_dir / "everything")
    assert refusal(linked_dir).startswith(f"{linked_dir / 'everything'}: a symbolic link")
    os.symlink(inside, tmp_path / "via-link")
    assert refusal(tmp_path / "via-link") == f"{tmp_path / 'via-link'}: a symbolic link; give the folder it points to"
    linked_md = skill(tmp_path, "linkmd")
    os.symlink(inside / "SKILL.md", linked_md / "SKILL.md")
    assert refusal(linked_md).startswith(f"{linked_md / 'SKILL.md'}: a symbolic link")


def test_what_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    folder = skill(tmp_path, "fifo", GOOD.format(name="fifo"))
    os.mkfifo(folder / "pipe")
    assert refusal(folder) == f"{folder / 'pipe'}: not a regular file"


def test_the_extensions_limits_are_kept_files_and_bytes(tmp_path: Path) -> None:
    many = skill(tmp_path, "many", GOOD.format(name="many"))
    for n in range(511):
        (many / f"f{n:03}.md").write_bytes(b"x")
    Server("at the limit").add_skill(many)  # 512 files, SKILL.md included: a host must accept it
    (many / "one-more.md").write_bytes(b"x")
    assert refusal(many) == f"{many}: more than 512 files; a host need not load a bigger skill"
    big = skill(tmp_path, "big", GOOD.format(name="big"))
    room = 16 * 1024 * 1024 - len(GOOD.format(name="big"))
    with (big / "blob.bin").open("wb") as blob:
        blob.truncate(room)  # (sparse: no 16 MiB written)
    Server("at the limit").add_skill(big)
    with (big / "blob.bin").open("ab") as blob:
        blob.write(b"!")
    assert refusal(big) == f"{big}: more than 16777216 bytes of files; a host need not load a bigger skill"


def test_a_folder_of_skills_holds_skill_folders_only_and_nothing_is_published_on_a_refusal(tmp_path: Path) -> None:
    folder = write_skills(tmp_path)
    (folder / "README.md").write_text("not a skill")
    server = Server("all or nothing")
    with pytest.raises(SkillError) as refused:
        server.add_skills(folder)
    assert str(refused.value) == f"{folder / 'README.md'}: not a skill folder (each entry of a folder of skills is one)"
    assert len(server.skills) == 0 and not server.registry.resources
    (folder / "README.md").unlink()
    skill(folder, "zz-empty")
    with pytest.raises(SkillError, match=r"zz-empty: no SKILL.md"):
        server.add_skills(folder)
    assert len(server.skills) == 0
    with pytest.raises(SkillError, match="not a folder of skills"):
        server.add_skills(tmp_path / "nowhere")


def test_skills_that_overlap_or_take_a_taken_uri_are_refused(tmp_path: Path) -> None:
    server = Server("overlaps")
    outer = skill(tmp_path, "outer", GOOD.format(name="outer"))
    skill(outer, "inner", GOOD.format(name="inner"))
    server.add_skill(outer)  # its inner/SKILL.md is a file of outer's
    with pytest.raises(SkillError, match=r"skill://outer/inner overlaps the skill at skill://outer"):
        server.add_skill(outer / "inner", prefix="outer")
    server.add_skill(outer / "inner", prefix="nested")  # under a prefix of its own
    server.add_resource("skill://taken/SKILL.md", lambda: "a resource of the server's own")
    with pytest.raises(SkillError, match=r"a resource 'skill://taken/SKILL.md' is already registered"):
        server.add_skill(name="taken", description="Taken", body="x", files={"a.md": "a"})
    assert "skill://taken/a.md" not in server.registry.resources  # what it had registered went again


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"name": "Bad_Name", "description": "x", "body": "b"}, "names the skill 'Bad_Name'"),
        ({"name": "ok", "description": "", "body": "b"}, "has no description"),
        ({"name": "ok", "description": "x", "body": "b", "files": {"../up.md": "x"}}, "file '../up.md'"),
        ({"name": "ok", "description": "x", "body": "b", "files": {"/abs.md": "x"}}, "file '/abs.md'"),
        ({"name": "ok", "description": "x", "body": "b", "files": {"SKILL.md": "x"}}, "file 'SKILL.md'"),
        ({"name": "ok", "description": "x", "body": "b", "files": {".hidden": "x"}}, "file '.hidden'"),
        ({"name": "ok", "description": "x", "body": "b", "prefix": "/acme"}, "skill prefix '/acme'"),
        ({"name": "ok", "description": "x", "body": "b", "front_matter": {"name": "other"}}, "not in front_matter"),
        ({"name": "ok", "description": "x", "body": "b", "front_matter": {"n": float("inf")}}, "holds inf"),
    ],
)
def test_a_skill_made_in_code_is_checked_as_a_folder_is(arguments: dict[str, object], problem: str) -> None:
    with pytest.raises(SkillError) as refused:
        Server("code").add_skill(**arguments)  # type: ignore[arg-type]
    assert problem in str(refused.value) and "\n" not in str(refused.value)


def test_an_async_function_makes_only_a_dynamic_skill() -> None:
    server = Server("async")
    with pytest.raises(SkillError, match="is async: only a dynamic=True skill's body is"):

        @server.skill(description="x")
        async def report() -> str:
            return "x"


def test_backchannel_run_refuses_a_broken_skill_folder_in_one_line(tmp_path: Path) -> None:
    folder = write_skills(tmp_path)
    (folder / "git-workflow" / "SKILL.md").write_text("---\nname: git-workflow\n---\nNo description.\n")
    script = tmp_path / "server.py"
    script.write_text(f"from backchannel import Server\nserver = Server('s')\nserver.add_skills({str(folder)!r})\n")
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "run", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"backchannel run: {folder / 'git-workflow' / 'SKILL.md'}: has no description "
        "(a non-empty string saying what the skill does and when to use it)"
    ]
