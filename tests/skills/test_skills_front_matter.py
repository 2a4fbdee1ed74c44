"""A ``SKILL.md``'s front matter is read as the YAML 1.2 core schema reads it, so that an entry's
``frontmatter`` (sent as JSON) and a host's own reading of the file agree field by field, which the
host checks (SEP-2640 §Frontmatter Verification); and a skill made in code gets a ``SKILL.md``
whose front matter reads back as given.
"""

from __future__ import annotations

from typing import Any

import pytest

from backchannel.skills import FrontMatterError, parse_front_matter, split_skill_md
from backchannel.skills.frontmatter import render_skill_md


@pytest.mark.parametrize(
    ("yaml", "value"),
    [
        ("yes", "yes"),  # YAML 1.1 (PyYAML's default) would make these booleans
        ("on", "on"),
        ("No", "No"),
        ("true", True),
        ("FALSE", False),
        ("2024-01-01", "2024-01-01"),  # no timestamps: JSON has none
        ("0o17", 15),
        ("0x1F", 31),
        ("017", 17),  # decimal in YAML 1.2 (octal in 1.1)
        ("1_000", "1_000"),
        ("1:20", "1:20"),  # no sexagesimal numbers
        ("1.5e3", 1500.0),
        ("~", None),
        ("", None),
        ("<<", "<<"),
        ('"quoted: yes"', "quoted: yes"),
    ],
)
def test_plain_scalars_are_yaml_1_2_core(yaml: str, value: Any) -> None:
    front = parse_front_matter(f"name: x\nvalue: {yaml}\n")
    assert front["value"] == value and type(front["value"]) is type(value)


def test_the_block_is_cut_from_the_body_with_a_bom_and_crlf_allowed() -> None:
    text = "\ufeff---\r\nname: a\r\ndescription: b\r\n---  \r\n# Body\r\n"
    yaml, body = split_skill_md(text)
    assert parse_front_matter(yaml) == {"name": "a", "description": "b"}
    assert body == "# Body\r\n"
    assert split_skill_md("---\nname: a\n---") == ("name: a\n", "")


def test_nesting_too_deep_or_too_long_is_refused() -> None:
    with pytest.raises(FrontMatterError, match="nests too deeply"):
        parse_front_matter("a: " + "[" * 10_000 + "]" * 10_000)
    with pytest.raises(FrontMatterError, match="longer than 65536 bytes"):
        parse_front_matter("a: " + "x" * 70_000)


@pytest.mark.parametrize(
    "front",
    [
        {"name": "plain", "description": "Plain words, a comma; and (parentheses)."},
        {"name": "tricky", "description": "yes", "license": "2024-01-01", "note": "# not a comment"},
        {"name": "quotes", "description": 'It\'s "quoted": with a colon', "x": "trailing space "},
        {"name": "types", "description": "d", "n": 1, "f": 2.5, "b": True, "none": None, "list": ["a", 1]},
        {"name": "nested", "description": "d", "metadata": {"version": "2.1", "io.example/key": {"deep": [1]}}},
        {"name": "unicode", "description": "Caf\u00e9 \u2603 \U0001f600", "allowed-tools": "Read Bash(git:*)"},
        {"name": "lines", "description": "two\nlines", "weird key: yes": "v"},
    ],
)
def test_a_skill_md_written_in_code_reads_back_as_given(front: dict[str, Any]) -> None:
    text = render_skill_md(front, "# Body\n")
    yaml, body = split_skill_md(text)
    assert parse_front_matter(yaml) == front
    assert body == "\n# Body\n"
    if front["name"] == "plain":
        assert text.startswith("---\nname: plain\ndescription: Plain words, a comma; and (parentheses).\n---\n")
