"""Keep secrets and personal data out of log messages sent to the client.

The logging page of the spec says log messages MUST NOT contain credentials,
secrets or personal data. Handlers should not put them there; this is the net
below them. ``Redactor.redact(data)`` returns a copy of ``data`` that is safe to
send and that the JSON encoder can always write:

- **Under a sensitive key** (any depth, any mapping), the value becomes
  ``"[REDACTED]"``, whatever it is; ``None``, ``True`` and ``False`` stay (they
  tell nothing). Which keys are sensitive, and why ``max_tokens`` is not, is
  the word rule in ``secret_patterns.py`` (whole words: ``key`` alone is
  a secret, ``keyboard``, ``monkey`` and ``cache_key`` are not). Keys are strings on the way
  out (``str()`` of any other key) and are redacted as text too.
- **In text** (strings, and keys), each secret of a known shape becomes
  ``[REDACTED:label]`` (``DEFAULT_PATTERNS``), and in ``key=value``,
  ``key: value``, ``"key": "value"`` or ``key is value`` with a sensitive key the
  value becomes ``[REDACTED]`` (or ``[REDACTED:label]`` when the whole value is a
  secret of a known shape). A string that is a JSON object or array is decoded,
  redacted as data and encoded again (compactly) when anything in it changed.
  Bytes are decoded as UTF-8 (invalid bytes replaced) and redacted as text.
- **Containers and objects** are walked, never passed through: lists, tuples,
  sets and frozensets, deques and mapping views become lists (sets sorted when
  their items can be); any ``Mapping`` becomes a dict; dataclasses, named tuples,
  attrs classes, msgspec Structs and pydantic models become dicts of their
  fields, so the key rule sees their field names. Anything else becomes its
  ``str()`` redacted as text (what ``logging`` would print; ``repr()`` when
  ``str()`` fails): its ``__dict__`` is not walked, because an arbitrary object
  reaches whatever it holds (a connection, a server) and its author chose what
  ``str()`` shows. An exception becomes ``"TypeName: message"``.
- **Bounds.** Nesting deeper than ``max_depth`` becomes ``"[REDACTED:too deep]"``
  and a container met again inside itself ``"[REDACTED:cycle]"``.

Cost: one compiled alternation of every pattern runs over each string in one
pass (``benchmarks/redaction.py`` measures it per message); the verdict on each
distinct key is cached.
"""

from __future__ import annotations

__all__ = ["BARE_KEYS", "DEFAULT_KEYS", "DEFAULT_PATTERNS", "REDACTED", "Redactor"]

import contextlib
import copy
import dataclasses
import datetime
import decimal
import enum
import re
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Set, ValuesView
from typing import Any

import msgspec

from .secret_patterns import (
    BARE_KEYS,
    DEFAULT_KEYS,
    DEFAULT_PATTERNS,
    PROPERTY_WORDS,
    REDACTED,
    SIGNATURE_KINDS,
    TOKEN_COUNTERS,
    TRIGGERS,
    VALIDATORS,
    key_words,
)

# Triggers are facts about our own patterns: a pattern given under the same label is searched always.
_DEFAULT_SOURCES = dict(DEFAULT_PATTERNS)
_TOO_DEEP = "[REDACTED:too deep]"
_CYCLE = "[REDACTED:cycle]"
_MAX_DEPTH = 32
_KEY_CACHE_SIZE = 4096
_COMBO_CACHE_SIZE = 64
# Shorter phrases would match the ends of ordinary words ("spin", "compass", "oauth").
_MIN_SUFFIX = 5

_LEADING_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")
_OPENERS = {"[": "]", "{": "}"}


class Redactor:
    """``redact(data)`` returns a copy of ``data`` that is safe to send and JSON-encodable.

    ``keys`` replaces the sensitive key phrases and ``patterns`` the (label, regex)
    value patterns; extend the defaults with ``(*DEFAULT_KEYS, "badge_number")``.
    ``bare_keys`` are the names that are secrets only as the whole key (``key``).
    """

    def __init__(
        self,
        keys: Iterable[str] = DEFAULT_KEYS,
        patterns: Iterable[tuple[str, str]] = DEFAULT_PATTERNS,
        *,
        bare_keys: Iterable[str] = BARE_KEYS,
        max_depth: int = _MAX_DEPTH,
    ) -> None:
        self.keys = tuple(keys)
        self.bare_keys = tuple(bare_keys)
        self._bare = frozenset(tuple(words) for words in map(key_words, self.bare_keys) if words)
        self.max_depth = max_depth
        self._key_cache: dict[str, tuple[str, bool]] = {}
        self._hide: Callable[[str], str] | None = None
        self._sources = tuple(patterns)
        self._compiled = False
        if self._sources != DEFAULT_PATTERNS:  # a pattern that does not compile fails here, not at first use
            self._compile()

    @property
    def patterns(self) -> tuple[tuple[str, re.Pattern[str]], ...]:
        """The (label, compiled regex) value patterns."""
        if not self._compiled:
            self._compile()
        return self._patterns

    def _compile(self) -> None:
        # Ours are compiled at first use, with the key phrases: 21 patterns were 2 ms of every server's
        # start (the default redactor is made at import), and a server that never logs never needs them.
        from .key_values import redact_key_values  # (its regexes too)

        self._key_values: Callable[[str, Callable[[str], bool]], str] = redact_key_values
        self._phrases = tuple(dict.fromkeys(tuple(words) for words in map(key_words, self.keys) if words))
        # A run-together word ending in a long enough phrase ("dbpassword", "myapikey") counts too.
        self._run_together = {"".join(p): p for p in self._phrases if len("".join(p)) >= _MIN_SUFFIX}
        self._by_last: dict[str, list[tuple[str, ...]]] = {}
        for phrase in self._phrases:
            self._by_last.setdefault(phrase[-1], []).append(phrase)
        self._patterns = tuple((label, re.compile(pattern)) for label, pattern in self._sources)
        # Each alternative of the combined expression has a bit; a text is searched with the
        # alternatives whose trigger substrings it contains (all of them for one without triggers),
        # so that a plain sentence costs a few substring tests instead of a regex pass per pattern.
        self._branches: list[tuple[int, str]] = []
        self._labels: dict[str, str] = {}
        self._always = 0
        self._known = 0
        triggers: dict[str, int] = {}
        # A pattern with groups of its own can't join the alternation (its numbering would shift).
        self._separate: list[tuple[str, re.Pattern[str]]] = []
        for index, (label, pattern) in enumerate(self._patterns):
            if pattern.groups:
                self._separate.append((label, pattern))
                continue
            name = f"p{index}"
            source = _LEADING_FLAGS.sub(r"(?\1:", pattern.pattern)
            if source != pattern.pattern:
                source += ")"
            bit = 1 << len(self._branches)
            self._branches.append((bit, f"(?P<{name}>{source})"))
            self._labels[name] = label
            ours = pattern.pattern == _DEFAULT_SOURCES.get(label)
            if ours:
                self._known |= bit
            self._gate(bit, TRIGGERS.get(label) if ours else None, triggers)
        self._triggers = tuple(triggers.items())
        self._combos: dict[int, Callable[..., re.Match[str] | None]] = {}
        try:  # ours are known to combine; compiling them all up front would add to cold start
            if custom := sum(bit for bit, _ in self._branches) & ~self._known:
                self._combo(custom)
        except re.error:  # a pattern that can't share the alternation (inline flags midway, say)
            self._separate = list(self._patterns)
            self._branches = []
            self._always = 0
            self._triggers = ()
            self._combos.clear()
        self._compiled = True  # last: another thread sees it only once everything above is set

    def _gate(self, bit: int, subs: Iterable[str] | None, triggers: dict[str, int]) -> None:
        if subs is None:
            self._always |= bit
            return
        for sub in subs:
            triggers[sub] = triggers.get(sub, 0) | bit

    def _combo(self, mask: int) -> Callable[..., re.Match[str] | None]:
        search = self._combos.get(mask)
        if search is None:
            if len(self._combos) >= _COMBO_CACHE_SIZE:
                self._combos.clear()
            source = "|".join(source for bit, source in self._branches if mask & bit)
            search = self._combos[mask] = re.compile(source).search
        return search

    # ------------------------------------------------------------------ keys

    def sensitive_key(self, key: str) -> bool:
        """Whether the value under ``key`` is a secret (the rule is in ``secret_patterns``)."""
        return self._key(key)[1]

    def _key(self, key: str) -> tuple[str, bool]:
        cached = self._key_cache.get(key)
        if cached is None:
            if len(self._key_cache) >= _KEY_CACHE_SIZE:
                self._key_cache.clear()
            cached = self._key_cache[key] = (self.text(key), self._names_secret(key))
        return cached

    def _names_secret(self, key: str) -> bool:
        words = key_words(key)
        if tuple(words) in self._bare:
            return True
        # Split run-together words that end in a phrase ("dbpassword" -> "db", "password"),
        # preferring the longest phrase.
        expanded: list[str] = []
        for word in words:
            for base, plural in _forms(word):
                cut = next((n for n in range(len(base), _MIN_SUFFIX - 1, -1) if base[-n:] in self._run_together), 0)
                if cut:
                    phrase = self._run_together[base[-cut:]]
                    stem = base[:-cut]
                    expanded.extend((stem, *phrase[:-1], phrase[-1] + plural)[0 if stem else 1 :])
                    break
            else:
                expanded.append(word)
        for end, word in enumerate(expanded, 1):
            for base, _ in _forms(word):
                for phrase in self._by_last.get(base, ()):
                    start = end - len(phrase)
                    if start < 0 or tuple(expanded[start : end - 1]) != phrase[:-1]:
                        continue
                    if any(after in PROPERTY_WORDS for after in expanded[end:]):
                        continue
                    if base == "token" and any(before in TOKEN_COUNTERS for before in expanded[:start]):
                        continue
                    if base == "signature" and any(before in SIGNATURE_KINDS for before in expanded[:start]):
                        continue
                    return True
        return False

    # ------------------------------------------------------------------ text

    def hiding(self, hide: Callable[[str], str]) -> Redactor:
        """This redactor, passing every text (keys too) through ``hide`` before its own rules:
        ``ctx.log`` puts a placeholder where a sensitive root's path was this way
        (``server/roots.py``). Shares the compiled patterns, so it is cheap to make."""
        if not self._compiled:
            self._compile()  # (once, for both)
        other = copy.copy(self)
        other._hide = hide
        other._key_cache = {}
        return other

    def text(self, text: str) -> str:
        """``text`` with every secret of a known shape, and every sensitive ``key=value``, replaced."""
        if self._hide is not None:
            text = self._hide(text)
        text = self._shapes(text)  # (compiles first: self._key_values is set from then on)
        return self._key_values(text, self.sensitive_key) if self._phrases or self._bare else text

    def _shapes(self, text: str) -> str:
        if not self._compiled:
            self._compile()
        for label, pattern in self._separate:
            text = pattern.sub(f"[REDACTED:{label}]", text)
        mask = self._always
        for sub, bits in self._triggers:
            if sub in text:
                mask |= bits
        if not mask:
            return text
        search = self._combo(mask)
        match = search(text)
        if match is None:
            return text
        parts: list[str] = []
        done = 0
        while match is not None:
            start, end = match.span()
            label = self._labels[match.lastgroup or ""]
            validate = VALIDATORS.get(label)
            if start == end or (validate is not None and not validate(match.group())):
                match = search(text, start + 1) if start < len(text) else None
                continue
            parts.append(text[done:start])
            parts.append(f"[REDACTED:{label}]")
            done = end
            match = search(text, end) if end < len(text) else None
        parts.append(text[done:])
        return "".join(parts)

    # ------------------------------------------------------------------ data

    def redact(self, data: Any) -> Any:
        """A copy of ``data`` with secrets replaced, made of dict, list, str, int, float, bool and None."""
        return self._walk(data, 0, set())

    def _walk(self, data: Any, depth: int, active: set[int]) -> Any:
        kind = type(data)
        if kind is str:
            return self._string(data, depth, active)
        if kind is int or kind is float or kind is bool or data is None:
            return data
        if depth >= self.max_depth:
            return _TOO_DEEP
        if id(data) in active:
            return _CYCLE
        active.add(id(data))
        try:
            return self._convert(data, depth + 1, active)
        finally:
            active.discard(id(data))

    def _convert(self, data: Any, depth: int, active: set[int]) -> Any:
        if isinstance(data, dict | Mapping):
            return self._mapping(data.items(), depth, active)
        if isinstance(data, tuple) and hasattr(data, "_asdict"):  # a named tuple: its field names matter
            return self._mapping(data._asdict().items(), depth, active)
        if isinstance(data, list | tuple | deque | ValuesView):
            return [self._walk(item, depth, active) for item in data]
        if isinstance(data, Set):
            items = list(data)
            with contextlib.suppress(TypeError):  # mixed types: the set's own order
                items.sort()
            return [self._walk(item, depth, active) for item in items]
        if isinstance(data, str):  # a str subclass (StrEnum too): its characters, not its str()
            return self._string(str.__str__(data), depth, active)
        if isinstance(data, int):  # IntEnum, IntFlag
            return int(data)
        if isinstance(data, float):
            return float(data)
        if isinstance(data, bytes | bytearray | memoryview):
            return self.text(bytes(data).decode("utf-8", "replace"))
        if isinstance(data, enum.Enum):
            return self._walk(data.value, depth, active)
        if dataclasses.is_dataclass(data) and not isinstance(data, type):
            fields = ((field.name, getattr(data, field.name, None)) for field in dataclasses.fields(data))
            return self._mapping(fields, depth, active)
        if isinstance(data, msgspec.Struct):
            return self._mapping(msgspec.structs.asdict(data).items(), depth, active)
        attrs = getattr(type(data), "__attrs_attrs__", None)
        if attrs is not None:
            return self._mapping(((a.name, getattr(data, a.name, None)) for a in attrs), depth, active)
        model_dump = getattr(data, "model_dump", None)
        if callable(model_dump) and not isinstance(data, type):  # pydantic v2
            try:
                dumped = model_dump()
            except Exception:
                dumped = None
            if isinstance(dumped, dict):
                return self._mapping(dumped.items(), depth, active)
        if isinstance(data, datetime.date | datetime.time):
            return data.isoformat()
        if isinstance(data, uuid.UUID | decimal.Decimal):
            return str(data)
        if isinstance(data, BaseException):
            return self.text(f"{type(data).__name__}: {_shown(data)}")
        return self.text(_shown(data))

    def _mapping(self, items: Iterable[tuple[Any, Any]], depth: int, active: set[int]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for raw_key, value in items:
            key, secret = self._key(raw_key if type(raw_key) is str else _key_text(raw_key))
            if key in out:  # two keys redacted alike: keep both entries
                key = _unique(key, out)
            if secret and value is not None and value is not True and value is not False:
                out[key] = REDACTED
            else:
                out[key] = self._walk(value, depth, active)
        return out

    def _string(self, text: str, depth: int, active: set[int]) -> Any:
        stripped = text.strip()
        if stripped[:1] in _OPENERS and stripped[-1:] == _OPENERS[stripped[0]]:
            try:
                decoded = msgspec.json.decode(stripped)
            except Exception:  # not JSON (or nested too deep for the decoder): redact it as text
                decoded = None
            if isinstance(decoded, dict | list):
                if depth >= self.max_depth:
                    return _TOO_DEEP
                redacted = self._walk(decoded, depth + 1, active)
                if redacted == decoded:
                    return text
                return msgspec.json.encode(redacted).decode()
        return self.text(text)


def _forms(word: str) -> list[tuple[str, str]]:
    """``word`` and, when it may be a plural, its singular: (base, plural ending) pairs."""
    forms = [(word, "")]
    if word.endswith("s"):
        forms.append((word[:-1], "s"))
        if word.endswith("es"):
            forms.append((word[:-2], "es"))
    return forms


def _shown(data: object) -> str:
    try:
        return str(data)
    except Exception:
        try:
            return repr(data)
        except Exception:
            return f"<{type(data).__name__}>"


def _key_text(key: object) -> str:
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    if isinstance(key, int | float):
        return str(key)
    return _shown(key)


def _unique(key: str, taken: Mapping[str, Any]) -> str:
    number = 2
    while f"{key}#{number}" in taken:
        number += 1
    return f"{key}#{number}"
