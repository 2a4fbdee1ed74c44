"""What a server publishing skills answers on the wire (SEP-2640), in both eras, over stdio and HTTP.

Folder skills (``add_skills``) and a skill made in code (``@server.skill``): ``skills/list``
entries whose digests and sizes are those of the files' bytes, the files read back through
``resources/read`` byte for byte, ``skills/get``, ``resources/directory/read``, pagination, and
the errors (-32602 for what is not served, -32601 from a server without skills). The answers are
read raw (``client.request``), as they crossed the wire.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from _skill_folders import GIT_SKILL_MD, NOTES_FILE, PDF_FILES, PDF_ORDER, digest, skills_server

from backchannel import Server
from backchannel.testing import connected, run
from backchannel.types.errors import RequestError

ERAS = ["handshake", "stateless"]
TRANSPORTS = ["stdio", "http"]
EXTENSION = "io.modelcontextprotocol/skills"
PDF = "skill://pdf-processing"


def wire_bytes(contents: dict[str, Any]) -> bytes:
    return contents["text"].encode() if "text" in contents else base64.b64decode(contents["blob"])


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
def test_entries_carry_each_files_digest_and_size_and_the_files_read_back_as_those_bytes(
    era: str, transport: str, tmp_path: Path
) -> None:
    async def body() -> None:
        async with connected(skills_server(tmp_path), era, transport) as client:
            listed = await client.request("skills/list")
            uris = [entry["uri"] for entry in listed["skills"]]
            # add_skills takes the folders by name; the code skill comes after
            assert uris == [
                "skill://git-workflow/SKILL.md",
                "skill://pdf-processing/SKILL.md",
                "skill://release-notes/SKILL.md",
            ]
            pdf = listed["skills"][1]
            # The front matter verbatim, as YAML 1.2 reads it ("yes" stays a string), every field the author wrote.
            assert pdf["frontmatter"] == {
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "license": "Apache-2.0",
                "metadata": {"version": "2.1.0", "reviewed": "yes"},
            }
            # Every file once (hidden ones are no part of it), SKILL.md first, each with the digest of its bytes.
            assert pdf["resources"] == [
                {"uri": f"{PDF}/{path}", "digest": digest(data), "size": len(data)}
                for path, data in ((path, PDF_FILES[path]) for path in PDF_ORDER)
            ]
            for path, data in PDF_FILES.items():
                read = await client.request("resources/read", {"uri": f"{PDF}/{path}"})
                (contents,) = read["contents"]
                assert wire_bytes(contents) == data
                assert ("blob" in contents) is (path == "assets/logo.png")
            assert (await client.request("resources/read", {"uri": f"{PDF}/SKILL.md"}))["contents"][0][
                "mimeType"
            ] == "text/markdown"
            notes = listed["skills"][2]
            assert notes["frontmatter"] == {
                "name": "release-notes",
                "description": "Write release notes the way this project does.",
                "license": "MIT",
            }
            for resource in notes["resources"]:
                read = await client.request("resources/read", {"uri": resource["uri"]})
                data = wire_bytes(read["contents"][0])
                assert (digest(data), len(data)) == (resource["digest"], resource["size"])
            assert (
                wire_bytes(
                    (await client.request("resources/read", {"uri": "skill://release-notes/references/STYLE.md"}))[
                        "contents"
                    ][0]
                )
                == NOTES_FILE.encode()
            )
            # SEP-2549 caching hints: required on both results in 2026-07-28, and absent before it.
            got = await client.request("skills/get", {"uri": "skill://git-workflow/SKILL.md"})
            assert got["skill"] == listed["skills"][0]
            git_md = GIT_SKILL_MD.encode()
            assert got["skill"]["resources"] == [
                {"uri": "skill://git-workflow/SKILL.md", "digest": digest(git_md), "size": len(git_md)}
            ]
            assert "nextCursor" not in got
            for result in (listed, got):
                if era == "stateless":
                    assert result["ttlMs"] == 60_000 and result["cacheScope"] == "private"
                else:
                    assert "ttlMs" not in result and "cacheScope" not in result

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_the_skill_md_resources_are_listed_named_and_described_by_their_front_matter(era: str, tmp_path: Path) -> None:
    async def body() -> None:
        async with connected(skills_server(tmp_path), era) as client:
            listed = {item["uri"]: item for item in (await client.request("resources/list"))["resources"]}
            assert listed[f"{PDF}/SKILL.md"] == {
                "uri": f"{PDF}/SKILL.md",
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "mimeType": "text/markdown",
                "size": len(PDF_FILES["SKILL.md"]),
            }
            assert listed[f"{PDF}/templates/invoice.md"]["name"] == "invoice.md"
            assert listed[f"{PDF}/assets/logo.png"]["mimeType"] == "image/png"

    run(body)


def test_server_discover_declares_the_extension_with_directory_read_and_initialize_cannot(tmp_path: Path) -> None:
    async def body() -> None:
        server = skills_server(tmp_path)
        async with connected(server, "stateless") as client:
            found = await client.request("server/discover", cached=False)
            assert found["capabilities"]["extensions"][EXTENSION] == {"directoryRead": True}
            assert "resources" in found["capabilities"]  # the extension's files are resources
        async with connected(server, "handshake") as client:
            # 2025-11-25's ServerCapabilities has no ``extensions`` (2026-07-28 changelog: "Add extensions
            # field"): the core leaves it out there, and the skills requests are served all the same.
            assert "extensions" not in client.server_capabilities
            assert (await client.request("skills/list"))["skills"]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_pages_follow_next_cursor_with_each_entry_whole_and_a_foreign_cursor_is_refused(
    era: str, tmp_path: Path
) -> None:
    async def body() -> None:
        async with connected(skills_server(tmp_path, page_size=1), era) as client:
            seen: list[str] = []
            cursor = None
            while True:
                page = await client.request("skills/list", {"cursor": cursor} if cursor else None)
                assert len(page["skills"]) == 1 and isinstance(page["skills"][0]["resources"], list)
                seen.append(page["skills"][0]["uri"])
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
            assert len(seen) == len(set(seen)) == 3
            tools_cursor = (await client.request("resources/list"))["nextCursor"]  # another list's cursor
            for bad in (tools_cursor, "garbage", 7):
                with pytest.raises(RequestError) as refused:
                    await client.request("skills/list", {"cursor": bad})
                assert refused.value.code == -32602

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_skills_get_of_anything_but_a_served_skill_md_is_invalid_params(era: str, tmp_path: Path) -> None:
    async def body() -> None:
        async with connected(skills_server(tmp_path), era) as client:
            for uri in (
                "skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md",
                f"{PDF}/references/FORMS.md",  # a file of a skill, not its SKILL.md
                PDF,
                f"{PDF}/../git-workflow/SKILL.md",
            ):
                with pytest.raises(RequestError) as refused:
                    await client.request("skills/get", {"uri": uri})
                assert refused.value.code == -32602 and uri in refused.value.message
            with pytest.raises(RequestError) as refused:
                await client.request("skills/get", {})
            assert refused.value.code == -32602

    run(body)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
def test_directory_read_lists_direct_children_and_refuses_what_is_no_directory(
    era: str, transport: str, tmp_path: Path
) -> None:
    async def body() -> None:
        async with connected(skills_server(tmp_path), era, transport) as client:

            async def children(uri: str) -> list[tuple[str, str | None]]:
                found = (await client.request("resources/directory/read", {"uri": uri}))["resources"]
                return [(item["uri"], item.get("mimeType")) for item in found]

            assert await children(PDF) == [
                (f"{PDF}/SKILL.md", "text/markdown"),
                (f"{PDF}/assets", "inode/directory"),
                (f"{PDF}/references", "inode/directory"),
                (f"{PDF}/templates", "inode/directory"),
            ]
            assert await children(f"{PDF}/templates") == [
                (f"{PDF}/templates/invoice.md", "text/markdown"),
                (f"{PDF}/templates/regional", "inode/directory"),
            ]
            assert await children(f"{PDF}/templates/regional") == [
                (f"{PDF}/templates/regional/eu-invoice.md", "text/markdown")
            ]
            for uri in (
                f"{PDF}/SKILL.md",  # a file
                f"{PDF}/templates/",  # directory URIs have no trailing slash
                f"{PDF}/nowhere",
                f"{PDF}/templates/..",
                f"{PDF}/../../",
                "skill://",
                "file:///etc",
            ):
                with pytest.raises(RequestError) as refused:
                    await client.request("resources/directory/read", {"uri": uri})
                assert refused.value.code == -32602, uri

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_a_prefix_is_a_directory_of_its_skills_and_directory_pages_follow_their_cursor(
    era: str, tmp_path: Path
) -> None:
    async def body() -> None:
        server = Server("prefixed", page_size=2)
        for name in ("refunds", "chargebacks", "invoices"):
            server.add_skill(name=name, description=f"Handle {name}", body=f"# {name}\n", prefix="acme/billing")
        async with connected(server, era) as client:
            entries = [entry["uri"] for entry in (await client.request("skills/list"))["skills"]]
            assert entries == ["skill://acme/billing/refunds/SKILL.md", "skill://acme/billing/chargebacks/SKILL.md"]
            first = await client.request("resources/directory/read", {"uri": "skill://acme/billing"})
            assert [item["uri"] for item in first["resources"]] == [
                "skill://acme/billing/chargebacks",
                "skill://acme/billing/invoices",
            ]
            second = await client.request(
                "resources/directory/read", {"uri": "skill://acme/billing", "cursor": first["nextCursor"]}
            )
            assert [item["uri"] for item in second["resources"]] == ["skill://acme/billing/refunds"]
            assert "nextCursor" not in second
            top = await client.request("resources/directory/read", {"uri": "skill://acme"})
            billing = {"uri": "skill://acme/billing", "name": "billing", "mimeType": "inode/directory"}
            assert top["resources"] == [billing]
            # (with the caching hints the TypeScript SDK requires of a 2026-07-28 directory page: skills/routes.py)
            assert ("ttlMs" in top and "cacheScope" in top) is (era == "stateless")
            with pytest.raises(RequestError) as refused:  # one directory's cursor is not another's
                await client.request("resources/directory/read", {"uri": "skill://acme", "cursor": first["nextCursor"]})
            assert refused.value.code == -32602

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_no_uri_reaches_past_the_files_read_when_the_skill_was_added(era: str, tmp_path: Path) -> None:
    async def body() -> None:
        server = skills_server(tmp_path)
        (tmp_path / "secret.txt").write_text("not a skill's")
        (tmp_path / "skills" / "pdf-processing" / "later.md").write_text("written after the start")
        async with connected(server, era) as client:
            for uri in (
                f"{PDF}/../../secret.txt",
                f"{PDF}/%2e%2e/%2e%2e/secret.txt",
                f"{PDF}/..%2F..%2Fsecret.txt",
                "skill://pdf-processing/" + str(tmp_path / "secret.txt"),
                f"{PDF}/later.md",
                f"{PDF}/.DS_Store",
                f"{PDF}/templates",
            ):
                with pytest.raises(RequestError) as refused:
                    await client.request("resources/read", {"uri": uri})
                assert refused.value.code == (-32002 if era == "handshake" else -32602), uri

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_a_server_that_publishes_no_skill_answers_method_not_found(era: str) -> None:
    async def body() -> None:
        server = Server("plain")
        server.add_resource("demo://a", lambda: "a")
        async with connected(server, era) as client:
            for method, params in (
                ("skills/list", None),
                ("skills/get", {"uri": "skill://x/SKILL.md"}),
                ("resources/directory/read", {"uri": "skill://x"}),
            ):
                with pytest.raises(RequestError) as refused:
                    await client.request(method, params)
                assert refused.value.code == -32601
            if era == "stateless":
                found = await client.request("server/discover", cached=False)
                assert EXTENSION not in (found["capabilities"].get("extensions") or {})

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_a_dynamic_skill_publishes_no_digests_and_writes_its_skill_md_at_each_read(era: str) -> None:
    async def body() -> None:
        server = Server("dynamic")
        reads = []

        @server.skill(dynamic=True)
        async def daily_report() -> str:
            """Assemble today's operational report from live data."""
            reads.append(1)
            return f"# Report\n\nRead number {len(reads)}.\n"

        async with connected(server, era) as client:
            (entry,) = (await client.request("skills/list"))["skills"]
            assert entry == {
                "uri": "skill://daily-report/SKILL.md",
                "frontmatter": {
                    "name": "daily-report",
                    "description": "Assemble today's operational report from live data.",
                },
                "resources": "dynamic",
            }
            assert reads == []  # listing reads nothing
            texts = [
                (await client.request("resources/read", {"uri": entry["uri"]}))["contents"][0]["text"] for _ in range(2)
            ]
            assert texts[0].startswith("---\nname: daily-report\n") and "Read number 1." in texts[0]
            assert "Read number 2." in texts[1]

    run(body)


def test_skills_are_withdrawn_with_their_files() -> None:
    async def body() -> None:
        server = Server("withdrawn")
        server.add_skill(name="one", description="The first", body="1", files={"a.md": "a"})
        server.add_skill(name="two", description="The second", body="2")
        server.remove_skill("one")
        async with connected(server, "stateless") as client:
            assert [e["uri"] for e in (await client.request("skills/list"))["skills"]] == ["skill://two/SKILL.md"]
            uris = {item["uri"] for item in (await client.request("resources/list"))["resources"]}
            assert uris == {"skill://two/SKILL.md"}
            with pytest.raises(RequestError):
                await client.request("resources/directory/read", {"uri": "skill://one"})
        with pytest.raises(KeyError):
            server.remove_skill("one")

    run(body)
