"""Hypothesis: root-URI normalisation (``backchannel.protocol.roots``, ``normalise_root`` on the
client, ``Roots.contains`` on the server) over generated paths, URIs and real symlinks.

What the functions promise (their docstrings):

* ``normalise_path``: absolute (relative against ``base``, default the working directory),
  ``.`` and ``..`` removed, symlinks followed when ``resolve_symlinks``;
* ``path_from_file_uri`` / ``local_path``: a ``file://`` URI (no host or ``localhost``) names a
  local path, anything else names none (None); a relative ``file:`` path stays relative until
  normalised, then counts from the working directory;
* ``normalise_root``: ``file://`` only (another scheme or a remote host is a ``ValueError``),
  relative paths from the working directory;
* ``Roots.contains``: compares after normalisation with symlinks resolved, so neither ``..``
  nor a link leads out of a root.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from backchannel.client.inputs import normalise_root
from backchannel.protocol.roots import file_uri, path_from_file_uri
from backchannel.runtime.local_paths import local_path, normalise_path
from backchannel.server.roots import RootItem, Roots

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX path rules")

FIXTURE_OK = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)

# -- strategies ------------------------------------------------------------------------------------

#: Characters that need percent-encoding in a URI path, or look like URI syntax, or are not ASCII.
AWKWARD = " %#?;&=+@:,[]!$'()*~\\\t\"<>^`{|}é中😀\u00a0\u200b"
name_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00") | st.sampled_from(AWKWARD)


def _fits(name: str) -> bool:
    return name not in (".", "..") and len(os.fsencode(name)) <= 255


#: One path segment (a file name): any text but ``/`` and NUL, never ``.`` or ``..``.
names = st.text(name_chars, min_size=1, max_size=16).filter(_fits) | st.sampled_from(
    ["%", "%25", "%2F", "%2E%2E", "a b", "#frag", "?q=1", "...", ".hidden", "~user", "é", "中文", "😀"]
)
#: A file name that is not valid UTF-8 (``os.fsdecode`` keeps the bytes as surrogate escapes).
byte_names = (
    st.binary(min_size=1, max_size=24)
    .filter(lambda raw: b"/" not in raw and b"\x00" not in raw and raw not in (b".", b".."))
    .map(os.fsdecode)
)
segments = st.lists(names, min_size=0, max_size=6)
#: Path steps: names, ``.``, ``..`` and empty steps (a doubled ``/``).
steps = st.lists(names | st.sampled_from([".", "..", "", "..", "."]), min_size=0, max_size=10)
other_schemes = st.from_regex(r"[A-Za-z][A-Za-z0-9+.\-]{0,10}", fullmatch=True).filter(
    lambda scheme: scheme.lower() != "file"
)
hosts = st.from_regex(r"[a-z0-9][a-z0-9.\-]{0,15}", fullmatch=True).filter(lambda host: host != "localhost")


def lexical(start: tuple[str, ...], walk: list[str]) -> Path:
    """The model: walk ``walk`` from ``start`` (parts below ``/``); ``..`` at ``/`` stays at ``/``."""
    stack = list(start)
    for step in walk:
        if step in ("", "."):
            continue
        if step == "..":
            if stack:
                stack.pop()
        else:
            stack.append(step)
    return Path("/", *stack)


def clean(path: Path) -> bool:
    """Absolute under ``/`` (not ``//``), with no ``.``, ``..`` or empty part left."""
    return path.is_absolute() and path.anchor == "/" and not {".", "..", ""} & set(path.parts[1:])


@st.composite
def climbing(draw: st.DrawFn) -> list[str]:
    """Steps that never climb above where they start (``..`` only below a name)."""
    walk: list[str] = []
    depth = 0
    for step in draw(steps):
        if step == "..":
            if depth == 0:
                continue
            depth -= 1
        elif step not in ("", "."):
            depth += 1
        walk.append(step)
    return walk


def fresh(tmp_path: Path) -> Path:
    """A new empty directory under ``tmp_path`` (one per Hypothesis example)."""
    return Path(tempfile.mkdtemp(dir=tmp_path))


# -- traversal -------------------------------------------------------------------------------------


@given(walk=steps, extra_slash=st.booleans())
def test_dotdot_never_survives_and_never_climbs_above_the_root(walk: list[str], extra_slash: bool) -> None:
    raw = ("//" if extra_slash else "/") + "/".join(walk)
    got = normalise_path(raw, resolve_symlinks=False)
    assert clean(got), got
    assert got == lexical((), walk)


@given(walk=steps, extra_slash=st.booleans())
def test_dotdot_never_survives_with_symlinks_resolved(walk: list[str], extra_slash: bool) -> None:
    # Against the real filesystem: whatever links these names meet, the answer is clean and final.
    got = normalise_path(("//" if extra_slash else "/") + "/".join(walk))
    assert clean(got), got
    assert normalise_path(got) == got


@FIXTURE_OK
@given(walk=climbing())
def test_resolved_without_links_is_the_lexical_answer(tmp_path: Path, walk: list[str]) -> None:
    base = fresh(tmp_path)  # real, and nothing below it is a link
    raw = str(base) + "/" + "/".join(walk)
    assert normalise_path(raw) == lexical(base.parts[1:], walk)
    assert normalise_path(raw, resolve_symlinks=False) == lexical(base.parts[1:], walk)


@given(walk=steps, encode_dots=st.booleans(), encode_slashes=st.booleans())
def test_dotdot_in_a_file_uri_never_survives(walk: list[str], encode_dots: bool, encode_slashes: bool) -> None:
    """Percent-encoded ``.``/``/`` are decoded before normalising: ``%2E%2E%2F`` is ``../``."""
    uri_path = "/" + quote("/".join(walk), safe="" if encode_slashes else "/")
    if encode_dots:
        uri_path = uri_path.replace(".", "%2E")
    for uri in ("file://" + uri_path, "file://localhost" + uri_path):
        for resolve in (True, False):
            got = local_path(uri, resolve_symlinks=resolve)
            assert got is not None and clean(got), (uri, got)
        assert local_path(uri, resolve_symlinks=False) == lexical((), walk)
        assert normalise_root(uri, resolve_symlinks=False).uri == file_uri(lexical((), walk))


@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=40), safe=st.sampled_from(["/", "", "/%"]))
def test_any_file_uri_names_a_clean_path_or_none(text: str, safe: str) -> None:
    """Whatever a client puts in a ``file://`` URI (NUL included), the server gets a clean
    absolute path or None, never an exception."""
    uri = "file:///" + quote(text, safe=safe)
    for resolve in (True, False):
        got = local_path(uri, resolve_symlinks=resolve)
        assert got is None or clean(got), (uri, got)


# -- percent-encoding round trip ---------------------------------------------------------------------


@given(parts=segments)
def test_file_uri_round_trips(parts: list[str]) -> None:
    path = Path("/", *parts)
    uri = file_uri(path)
    split = urlsplit(uri)
    assert (split.scheme, split.netloc, split.query, split.fragment) == ("file", "", "", "")
    assert not set(" #?") & set(uri) and uri.isascii()
    assert path_from_file_uri(uri) == path
    assert local_path(uri, resolve_symlinks=False) == path
    root = normalise_root(path, resolve_symlinks=False)
    assert root.uri == uri
    assert path_from_file_uri(root.uri) == path
    assert normalise_root(uri, resolve_symlinks=False).uri == uri  # idempotent


@given(parts=st.lists(byte_names | names, min_size=1, max_size=4))
def test_file_uri_round_trips_names_that_are_not_utf8(parts: list[str]) -> None:
    path = Path("/", *parts)
    assert path_from_file_uri(file_uri(path)) == path
    assert local_path(file_uri(path), resolve_symlinks=False) == path


@given(parts=st.lists(names, min_size=1, max_size=4), host=st.sampled_from(["", "localhost"]))
def test_file_uri_spelled_with_raw_unicode_or_localhost(parts: list[str], host: str) -> None:
    path = Path("/", *parts)
    # Only ASCII is encoded; unicode is left as typed (an IRI-style spelling).
    uri = f"file://{host}" + "".join(c if not c.isascii() else quote(c, safe="/") for c in str(path))
    assert not uri.isascii() or str(path).isascii()
    assert path_from_file_uri(uri) == path


# -- relative paths ----------------------------------------------------------------------------------


@given(rel=st.lists(names | st.sampled_from([".", ".."]), min_size=1, max_size=5))
def test_relative_paths_count_from_the_working_directory(rel: list[str]) -> None:
    raw = os.path.join(*rel)
    assume(not raw.startswith("~"))  # normalise_root expands a leading ~ first (``./~x`` is a name)
    cwd = Path.cwd()
    expected = lexical(cwd.parts[1:], rel)
    assert normalise_path(raw, resolve_symlinks=False) == expected
    assert local_path(raw, resolve_symlinks=False) == expected
    assert normalise_root(raw, resolve_symlinks=False).uri == file_uri(expected)
    # A relative file: URI stays relative until normalised, then counts from cwd too.
    uri = "file:" + quote(raw)
    assert path_from_file_uri(uri) == Path(raw)
    assert local_path(uri, resolve_symlinks=False) == expected


@FIXTURE_OK
@given(rel=climbing(), resolve=st.booleans())
def test_relative_paths_count_from_base(tmp_path: Path, rel: list[str], resolve: bool) -> None:
    assume(rel)
    base = fresh(tmp_path)
    assert normalise_path(os.path.join(*rel), base=base, resolve_symlinks=resolve) == lexical(base.parts[1:], rel)


@given(rel=st.lists(names, min_size=1, max_size=3), climbs=st.integers(1, 40))
def test_relative_dotdot_never_climbs_above_the_root(rel: list[str], climbs: int) -> None:
    got = normalise_path(os.path.join(*([".."] * climbs), *rel), base=Path("/x/y"), resolve_symlinks=False)
    assert clean(got)
    assert got == lexical(("x", "y"), [".."] * climbs + rel)


# -- other schemes and hosts ---------------------------------------------------------------------------


@given(scheme=other_schemes, parts=segments, slashes=st.sampled_from(["://", ":///", ":/", ":"]))
def test_other_schemes_are_rejected(scheme: str, parts: list[str], slashes: str) -> None:
    uri = scheme + slashes + quote("/".join(parts))
    assert path_from_file_uri(uri) is None
    if "://" in uri:  # "scheme:..." without "//" is a path to local_path and normalise_root
        assert local_path(uri) is None
        with pytest.raises(ValueError, match="file://"):
            normalise_root(uri)
        with pytest.raises(ValueError, match="file://"):
            normalise_root({"uri": uri})
        assert not Roots([RootItem.from_uri("file:///")], from_client=True).contains(uri)


@given(host=hosts, parts=segments, scheme=st.sampled_from(["file", "FILE", "File"]))
def test_remote_file_hosts_are_rejected(host: str, parts: list[str], scheme: str) -> None:
    uri = f"{scheme}://{host}/" + quote("/".join(parts))
    assert path_from_file_uri(uri) is None
    assert local_path(uri) is None
    with pytest.raises(ValueError, match="file://"):
        normalise_root(uri)
    assert RootItem.from_uri(uri).path is None


@given(parts=segments, scheme=st.sampled_from(["FILE", "File", "fIlE"]))
def test_the_file_scheme_is_case_insensitive(parts: list[str], scheme: str) -> None:
    path = Path("/", *parts)
    assert path_from_file_uri(scheme + file_uri(path)[4:]) == path


# -- symlinks ------------------------------------------------------------------------------------------


@FIXTURE_OK
@given(target_name=names, link_name=names, below=segments)
def test_symlinks_resolved_or_kept(tmp_path: Path, target_name: str, link_name: str, below: list[str]) -> None:
    base = fresh(tmp_path)
    target = base / "real" / target_name
    target.mkdir(parents=True)
    link = base / "links" / link_name
    link.parent.mkdir()
    link.symlink_to(target, target_is_directory=True)
    via_link = link.joinpath(*below)
    via_target = target.joinpath(*below)

    assert normalise_path(via_link) == via_target
    assert normalise_path(via_link, resolve_symlinks=False) == via_link
    assert local_path(file_uri(via_link)) == via_target
    assert local_path(file_uri(via_link), resolve_symlinks=False) == via_link
    assert normalise_root(via_link).uri == file_uri(via_target)
    assert normalise_root(via_link, resolve_symlinks=False).uri == file_uri(via_link)
    # ``..`` after a link: resolved, it climbs from the target; kept, it just drops the link.
    assert normalise_path(link / "..") == target.parent
    assert normalise_path(link / "..", resolve_symlinks=False) == link.parent


@FIXTURE_OK
@given(root_name=names, outside_name=names, link_name=names, below=segments)
def test_a_link_never_leads_out_of_a_root(
    tmp_path: Path, root_name: str, outside_name: str, link_name: str, below: list[str]
) -> None:
    assume(not below or below[0] != link_name)  # root/<link_name> is the link that leads out
    base = fresh(tmp_path)
    root = base / "in" / root_name
    outside = base / "out" / outside_name
    root.mkdir(parents=True)
    outside.mkdir(parents=True)
    (root / link_name).symlink_to(outside, target_is_directory=True)  # inside, pointing out
    (base / "side").mkdir()
    (base / "side" / link_name).symlink_to(root, target_is_directory=True)  # outside, pointing in
    roots = Roots([RootItem.from_uri(file_uri(root))], from_client=True)

    escaping = (root / link_name).joinpath(*below)
    assert not roots.contains(escaping)
    assert not roots.contains(file_uri(escaping))
    entering = (base / "side" / link_name).joinpath(*below)
    assert roots.contains(entering)
    assert roots.contains(file_uri(entering))


@FIXTURE_OK
@given(real_name=names, link_name=names, below=segments)
def test_a_root_given_through_a_link_holds_the_linked_tree(
    tmp_path: Path, real_name: str, link_name: str, below: list[str]
) -> None:
    base = fresh(tmp_path)
    real = base / "r" / real_name
    real.mkdir(parents=True)
    link = base / "l" / link_name
    link.parent.mkdir()
    link.symlink_to(real, target_is_directory=True)
    item = RootItem.from_uri(file_uri(link))
    assert item.uri == file_uri(link)  # the URI as the client gave it
    assert item.path == real  # the path, resolved
    roots = Roots([item], from_client=True)
    assert roots.contains(real.joinpath(*below))
    assert roots.contains(link.joinpath(*below))


# -- contains ------------------------------------------------------------------------------------------


@FIXTURE_OK
@given(root_parts=st.lists(names, min_size=1, max_size=3), below=segments, as_uri=st.booleans())
def test_contains_every_descendant(tmp_path: Path, root_parts: list[str], below: list[str], as_uri: bool) -> None:
    root = tmp_path.joinpath(*root_parts)
    for roots in (
        Roots([RootItem.from_uri(file_uri(root))], from_client=True),
        Roots([RootItem.from_path(root)], from_client=False),
    ):
        descendant = root.joinpath(*below)
        assert roots.contains(file_uri(descendant) if as_uri else descendant)
        assert roots.root_of(descendant) == roots[0]
        # Going down and back up again stays inside.
        assert roots.contains(str(descendant) + "/x/..")


@FIXTURE_OK
@given(
    parent=st.lists(names, min_size=0, max_size=2),
    name=names,
    suffix=names,
    below=segments,
    as_uri=st.booleans(),
)
def test_contains_is_false_for_a_sibling_sharing_a_prefix(
    tmp_path: Path, parent: list[str], name: str, suffix: str, below: list[str], as_uri: bool
) -> None:
    root = tmp_path.joinpath(*parent, name)  # /…/b
    sibling = root.with_name(name + suffix).joinpath(*below)  # /…/bc/…
    roots = Roots([RootItem.from_uri(file_uri(root))], from_client=True)
    assert not roots.contains(file_uri(sibling) if as_uri else sibling)
    assert roots.root_of(sibling) is None
    assert not roots.contains(root.parent)
    # Climbing out with ``..`` (plain or percent-encoded) does not count as inside.
    climbed = root / "x" / ".." / ".." / (name + suffix)
    assert not roots.contains(climbed)
    assert not roots.contains(file_uri(root) + "/x/%2E%2E/%2E%2E/" + quote(name + suffix))


@FIXTURE_OK
@given(outer=st.lists(names, min_size=1, max_size=2), inner=st.lists(names, min_size=1, max_size=2), below=segments)
def test_root_of_is_the_innermost_root(tmp_path: Path, outer: list[str], inner: list[str], below: list[str]) -> None:
    outer_root = tmp_path.joinpath(*outer)
    inner_root = outer_root.joinpath(*inner)
    roots = Roots([RootItem.from_uri(file_uri(inner_root)), RootItem.from_uri(file_uri(outer_root))], from_client=True)
    assert roots.root_of(inner_root.joinpath(*below)) == roots[0]
    assert roots.root_of(outer_root / (inner[0] + "-other")) == roots[1]
