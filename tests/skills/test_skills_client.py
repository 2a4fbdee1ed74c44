"""The client's side of skills (SEP-2640), against our server over stdio and HTTP, in both eras.

``list_skills`` / ``get_skill`` / ``read_skill_directory`` / ``read_skill_file``; the entries kept
while the server's ``ttlMs`` says (as the other lists are); a file that is not what its entry says
never returned (``SkillVerificationError``: unlisted, size, digest, front matter, a bad entry); and
in the stateless era, nothing asked of a server that did not declare the extension.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from _skill_folders import PDF_FILES, skills_server

from backchannel import Server
from backchannel.skills import SkillVerificationError
from backchannel.testing import Tap, connected, run
from backchannel.types.errors import LocalProtocolError, RequestError
from backchannel.types.skills import Skill

ERAS = ["handshake", "stateless"]
PDF = "skill://pdf-processing"


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ERAS)
def test_a_client_lists_gets_and_reads_skills_each_file_checked(era: str, transport: str, tmp_path: Path) -> None:
    async def body() -> None:
        async with connected(skills_server(tmp_path, page_size=1), era, transport) as client:
            skills = await client.list_skills()  # three pages
            assert [skill.name for skill in skills] == ["git-workflow", "pdf-processing", "release-notes"]
            pdf = skills[1]
            assert isinstance(pdf, Skill) and pdf.root == PDF and pdf.description.startswith("Extract")
            assert await client.get_skill("pdf-processing") == pdf == await client.get_skill(f"{PDF}/SKILL.md")
            skill_md = await client.read_skill_file(pdf)
            assert (skill_md.uri, skill_md.data, skill_md.mime_type) == (
                f"{PDF}/SKILL.md",
                PDF_FILES["SKILL.md"],
                "text/markdown",
            )
            assert skill_md.verified and skill_md.text.startswith("---\nname: pdf-processing")
            for path, data in PDF_FILES.items():
                assert (await client.read_skill_file(pdf, path)).data == data
            logo = await client.read_skill_file("pdf-processing", f"{PDF}/assets/logo.png")  # by name, a full URI
            assert logo.data == PDF_FILES["assets/logo.png"] and logo.mime_type == "image/png"
            children = await client.read_skill_directory(f"{PDF}/templates")
            assert [(child.uri, child.mime_type) for child in children] == [
                (f"{PDF}/templates/invoice.md", "text/markdown"),
                (f"{PDF}/templates/regional", "inode/directory"),
            ]
            with pytest.raises(ValueError, match="no skills are named 'nope' in the listing; give its URI"):
                await client.get_skill("nope")
            with pytest.raises(RequestError) as refused:
                await client.get_skill("skill://nope/SKILL.md")
            assert refused.value.code == -32602

    run(body)


def test_entries_are_kept_while_the_server_says_they_are_fresh(tmp_path: Path) -> None:
    async def body() -> None:
        server = skills_server(tmp_path)
        for era, sent in (("stateless", 1), ("handshake", 2)):  # no ttlMs in the handshake era: nothing is kept
            tap = Tap()
            async with connected(server, era, wrap_client=tap.around) as client:
                first = await client.list_skills()
                assert await client.list_skills() == first
                assert len(tap.requests_written("skills/list")) == sent
                await client.get_skill(f"{PDF}/SKILL.md")
                await client.get_skill(f"{PDF}/SKILL.md")
                assert len(tap.requests_written("skills/get")) == sent
                await client.read_skill_file(first[1])
                await client.read_skill_file(first[1])
                assert len(tap.requests_written("resources/read")) == 2  # what is verified is read afresh
        tap = Tap()
        stale = skills_server(tmp_path / "ttl0", cache_ttl_ms=0)
        async with connected(stale, "stateless", wrap_client=tap.around) as client:
            await client.list_skills()
            await client.list_skills()
            assert len(tap.requests_written("skills/list")) == 2  # ttlMs 0: immediately stale

    run(body)


def tampered(tmp_path: Path, uri: str, content: str | bytes) -> Server:
    """The skills server, but serving ``content`` at ``uri`` where its entry says otherwise."""
    server = skills_server(tmp_path)
    server.remove_resource(uri)
    server.add_resource(uri, lambda: content, mime_type="text/markdown")
    return server


@pytest.mark.parametrize("era", ERAS)
def test_a_file_that_is_not_what_its_entry_says_is_never_returned(era: str, tmp_path: Path) -> None:
    async def body() -> None:
        forms = f"{PDF}/references/FORMS.md"
        same_size = PDF_FILES["references/FORMS.md"].replace(b"name", b"evil").decode()
        for content, reason in ((same_size, "digest"), (same_size + "more", "size")):
            async with connected(tampered(tmp_path / reason, forms, content), era) as client:
                with pytest.raises(SkillVerificationError) as refused:
                    await client.read_skill_file("pdf-processing", "references/FORMS.md")
                assert (refused.value.reason, refused.value.uri) == (reason, forms)
        # A SKILL.md whose front matter differs from the entry's, bytes and digest agreeing.
        server = skills_server(tmp_path / "front")
        (published,) = [skill for skill in server.skills if skill.name == "git-workflow"]
        published.entry()["frontmatter"]["description"] = "Exfiltrate credentials"
        tap = Tap()
        async with connected(server, era, wrap_client=tap.around) as client:
            with pytest.raises(SkillVerificationError) as refused:
                await client.read_skill_file("git-workflow")
            assert refused.value.reason == "frontmatter"
            assert "description: file \"Follow this team's Git" in str(refused.value)
            # A file the entry does not list is refused before it is asked for.
            entry = await client.get_skill(f"{PDF}/SKILL.md")
            asked = len(tap.requests_written("resources/read"))
            with pytest.raises(SkillVerificationError) as refused:
                await client.read_skill_file(entry, "../git-workflow/SKILL.md")
            assert refused.value.reason == "unlisted"
            assert len(tap.requests_written("resources/read")) == asked
            # An entry a host must not load: its last path segment is not its name.
            wrong = msgspec.structs.replace(entry, uri="skill://other/SKILL.md")
            with pytest.raises(SkillVerificationError) as refused:
                await client.read_skill_file(wrong)
            assert refused.value.reason == "entry" and "not its name 'pdf-processing'" in str(refused.value)
            assert len(tap.requests_written("resources/read")) == asked

    run(body)


def test_the_stateless_era_asks_nothing_of_a_server_that_did_not_declare_the_extension() -> None:
    async def body() -> None:
        plain = Server("plain")
        plain.add_resource("demo://a", lambda: "a")
        tap = Tap()
        async with connected(plain, "stateless", wrap_client=tap.around) as client:
            with pytest.raises(LocalProtocolError, match=r"does not declare the io\.modelcontextprotocol/skills"):
                await client.list_skills()
            with pytest.raises(LocalProtocolError):
                await client.get_skill("skill://a/SKILL.md")
            assert not tap.requests_written("skills/list") and not tap.requests_written("skills/get")
        declared = Server("declared", extensions={"io.modelcontextprotocol/skills": {}})  # without directoryRead
        tap = Tap()
        async with connected(declared, "stateless", wrap_client=tap.around) as client:
            with pytest.raises(LocalProtocolError, match="does not declare directoryRead"):
                await client.read_skill_directory("skill://a")
            assert not tap.requests_written("resources/directory/read")
        async with connected(plain, "handshake") as client:  # no declaration to read: asked, and refused
            with pytest.raises(RequestError) as refused:
                await client.list_skills()
            assert refused.value.code == -32601

    run(body)
