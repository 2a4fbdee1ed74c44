"""The static-list index against a brute-force reference, and the benchmark contract's word list
over the wire (``/work/shared/bench/CONTRACT.md``: first ≤100 words in list order, total, hasMore)."""

from __future__ import annotations

import itertools
import random

import pytest
from _completion_harness import ERAS, bench_words, brute_force, connected, prompt_ref, run

from backchannel import Server
from backchannel.server.completion import PrefixIndex, complete_from

LETTERS = "abcdefghij"
PREFIXES = ["".join(p) for n in (1, 2, 3) for p in itertools.product(LETTERS, repeat=n)]


def _check(index: PrefixIndex, words: list[str], prefixes: list[str]) -> None:
    for prefix in prefixes:
        found = index.lookup(prefix)
        expected = brute_force(words, prefix)
        assert (found.values, found.total, found.has_more) == (
            expected["values"],
            expected["total"],
            expected["hasMore"],
        ), prefix


def test_bench_prefix_count() -> None:
    assert len(PREFIXES) == 1110 and len(bench_words()) == 10_000


@pytest.mark.parametrize("era", ERAS)
def test_bench_word_list_over_the_wire(era: str) -> None:
    """CP-03: the contract's ``greet``/``word`` completion for all 1,110 prefixes of 1-3 letters."""
    words = bench_words()
    server = Server("bench", completion_rate=None)  # 1,114 requests back to back: no rate limit
    server.add_prompt(lambda word: f"hello {word}", name="greet", completers={"word": words})

    async def body() -> None:
        async with connected(server, era) as client:
            for prefix in ["", *PREFIXES, "aaaa", "jjjj", "k", "aaaaa"]:
                result = await client.request(
                    "completion/complete", {"ref": prompt_ref("greet"), "argument": {"name": "word", "value": prefix}}
                )
                assert result["completion"] == brute_force(words, prefix), prefix

    run(body, timeout=60)


def test_shuffled_list_keeps_list_order() -> None:
    """An unsorted list: matches come back in *list* order, also for ranges served from stored nodes."""
    words = bench_words()
    random.Random(5).shuffle(words)
    index = complete_from(words)
    _check(index, words, ["", *PREFIXES])


def test_large_random_list_and_duplicates() -> None:
    rng = random.Random(11)
    words = ["".join(rng.choice("abcd") for _ in range(rng.randint(0, 7))) for _ in range(20_000)]
    index = PrefixIndex(words)
    prefixes = ["", *("".join(p) for n in (1, 2, 3, 4) for p in itertools.product("abcde", repeat=n))]
    _check(index, words, prefixes)


def test_deep_chain_past_the_storage_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pathological list (a, aa, aaa, ... interleaved with noise) with fewer stored nodes than trie
    nodes: ranges past the budget are sorted at lookup time, and the answers stay exact."""
    monkeypatch.setattr(PrefixIndex, "SORT_BELOW", 8)
    monkeypatch.setattr(PrefixIndex, "MAX_STORED", 5)
    rng = random.Random(3)
    words = ["a" * n for n in range(1, 400)] + ["".join(rng.choice("ab") for _ in range(6)) for _ in range(300)]
    rng.shuffle(words)
    index = PrefixIndex(words)
    assert len(index._stored) == 5
    _check(index, words, ["", *("a" * n for n in range(1, 402)), "ab", "aab", "b", "ba", "bab"])


def test_unicode_edges_and_case() -> None:
    top = chr(0x10FFFF)
    words = ["a" + top, "a" + top + "z", "ab", "a", top, top + top, "Straße", "STRASSE", "é", "e"]
    index = PrefixIndex(words)
    _check(index, words, ["", "a", "a" + top, top, top + top, "S", "é", "e", "z"])
    folded = PrefixIndex(words, case_sensitive=False)
    assert folded.lookup("strasse").values == ["Straße", "STRASSE"]
    assert folded.lookup("STRAß").total == 2


def test_limit_and_empty_list() -> None:
    assert PrefixIndex([]).lookup("").total == 0
    index = PrefixIndex([f"w{i}" for i in range(300)][::-1])
    assert index.lookup("w", limit=3).values == ["w299", "w298", "w297"]
    with pytest.raises(TypeError):
        PrefixIndex("abc")


def test_heavy_duplicates_keep_list_order() -> None:
    """Many equal values (a node made only of its terminals) and a prefix that is itself a value."""
    rng = random.Random(8)
    words = ["ab"] * 700 + ["abc"] * 700 + [f"ab{i}" for i in range(500)] + ["b"] * 300
    tagged = list(range(len(words)))
    rng.shuffle(tagged)
    words = [words[i] for i in tagged]
    index = PrefixIndex(words)
    _check(index, words, ["", "a", "ab", "abc", "abcd", "ab1", "ab12", "b", "c"])
