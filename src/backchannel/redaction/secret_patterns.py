"""What the log redactor treats as a secret: key names, and the shapes of secret values.

Both halves are data, read by ``redaction.py``; pass your own to ``Redactor``.

**Key names.** A key is cut into lower-case words at separators and camelCase
humps (``X-Api-Key``, ``aws_access_key_id``, ``accessToken``). It names a secret
when its words contain one of the phrases of ``DEFAULT_KEYS`` (``password``,
``api key``, ``card number``...), the phrase's last word also in the plural
(``passwords``, ``cookies``). A phrase of five letters or more also counts at the
end of a run-together word (``dbpassword``, ``authtoken``, ``myapikey``); shorter
ones (``pin``, ``otp``, ``ssn``, ``auth``, ``pass``) only as whole words, so
``spinner``, ``pinned``, ``oauth`` and ``bypass`` stay readable. Two things make a
key name a fact *about* a secret rather than the secret, and keep its value:

- a word of ``PROPERTY_WORDS`` after the phrase: ``token_count``, ``tokens_used``,
  ``password_min_length``, ``client_secret_expires_at``, ``token_endpoint``;
- for ``token`` only, a word of ``TOKEN_COUNTERS`` before it: ``max_tokens``,
  ``input_tokens``, ``cache_read_input_tokens`` (LLM token counts, everywhere in
  sampling), and the tokens that are not credentials (``progressToken``,
  ``next_page_token``).

``signature`` has its own such words: a ``function_signature`` or ``type_signature`` is code
(``SIGNATURE_KINDS``), a ``request_signature`` or ``X-Hub-Signature-256`` a credential.

A few words are secrets only as the whole key name (``BARE_KEYS``): ``{"key": ...}`` is
redacted, while ``cache_key``, ``sort_key``, ``primary_key``, ``keys`` and ``key_count`` stay
readable (the kinds of key that are secrets are phrases of their own: ``api_key``,
``private_key``...). Words are whole words in every rule: ``keyboard``, ``monkey`` and
``basalt`` are not ``key`` or ``salt``.

Words that merely start like a secret (``passwordless_enabled``, ``tokenizer``,
``secretary``) are not secrets. When in doubt the rule redacts: a leaked secret
costs more than a hidden counter.

**Values.** ``DEFAULT_PATTERNS`` are (label, regular expression) pairs for secrets
that are recognisable on their own: private keys in PEM, credentials in URLs,
HTTP Basic and Bearer credentials, JWTs, the API keys of the common providers
(their documented prefixes), e-mail addresses and phone numbers. ``key=value``,
``key: value`` and ``key is value`` in prose are handled by the redactor itself
with the key rule above.

**Why our own table.** ``detect-secrets`` (Yelp) is the maintained collection we
looked at. It scans files for a report, not messages for a replacement: it
brings ``requests`` and ``pyyaml``, costs about 80 ms at import (cold start is
benchmarked, and ours is about 200 ms in all) and about 300 µs a line, and its
default keyword plugin did not flag ``password=hunter2`` in a log line. The
facts we need (each provider's published token prefix) are few and stable, so
we keep them here as one alternation that a single regular-expression pass
checks; add a pattern when a provider publishes a new prefix.
"""

from __future__ import annotations

__all__ = [
    "BARE_KEYS",
    "DEFAULT_KEYS",
    "DEFAULT_PATTERNS",
    "NOT_SECRET_VALUES",
    "PROPERTY_WORDS",
    "REDACTED",
    "SIGNATURE_KINDS",
    "TOKEN_COUNTERS",
    "TRIGGERS",
    "VALIDATORS",
    "key_words",
]

import binascii
import re
from collections.abc import Callable

#: Phrases naming a secret (words separated by ``_``, ``-``, a space or camelCase).
#: What a secret value becomes (a secret of a known shape: ``[REDACTED:label]``).
REDACTED = "[REDACTED]"

DEFAULT_KEYS: tuple[str, ...] = (
    # passwords and their kin
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "passcode",
    "secret",
    "credential",
    "cred",
    "mnemonic",
    "seed_phrase",
    "recovery_phrase",
    "salt",
    "signature",
    # tokens and headers that carry them
    "token",
    "cookie",
    "authorization",
    "auth",
    "bearer",
    "jwt",
    "session_id",
    "session_key",
    # keys (``key`` alone is a cache key or a sort key: only these kinds)
    "api_key",
    "apikey",
    "access_key",
    "access_key_id",
    "private_key",
    "priv_key",
    "secret_key",
    "ssh_key",
    "signing_key",
    "encryption_key",
    "decryption_key",
    "master_key",
    "client_key",
    "consumer_key",
    "app_key",
    "account_key",
    "subscription_key",
    "license_key",
    "pass_key",
    "recovery_key",
    "hmac_key",
    "shared_key",
    "psk",
    # one-time codes and PINs
    "otp",
    "totp",
    "hotp",
    "pin",
    "mfa_code",
    "auth_code",
    "verification_code",
    "recovery_code",
    "backup_code",
    "security_code",
    "reset_code",
    # payment and identity numbers (personal data)
    "card_number",
    "card_num",
    "card_no",
    "credit_card",
    "cc_number",
    "cc_num",
    "cvv",
    "cvv2",
    "cvc",
    "cvc2",
    "iban",
    "account_number",
    "bank_account",
    "ssn",
    "social_security_number",
    "passport_number",
)

#: Names that are a secret only as the whole key (``key``; not ``cache_key`` or ``keys``).
BARE_KEYS: tuple[str, ...] = ("key",)

#: After a secret's phrase, these words make the key a property of the secret (kept).
PROPERTY_WORDS: frozenset[str] = frozenset(
    {
        "age",
        "alg",
        "algorithm",
        "budget",
        "changed",
        "configured",
        "cost",
        "count",
        "counts",
        "created",
        "disabled",
        "enabled",
        "endpoint",
        "endpoints",
        "estimate",
        "exists",
        "expiration",
        "expired",
        "expires",
        "expiry",
        "field",
        "fields",
        "file",
        "filename",
        "format",
        "issued",
        "kind",
        "label",
        "len",
        "length",
        "lifetime",
        "limit",
        "limits",
        "max",
        "method",
        "methods",
        "min",
        "mode",
        "name",
        "names",
        "path",
        "per",
        "policy",
        "provider",
        "rate",
        "remaining",
        "required",
        "rotated",
        "rounds",
        "scheme",
        "size",
        "status",
        "strength",
        "supported",
        "total",
        "ttl",
        "type",
        "types",
        "updated",
        "uri",
        "url",
        "urls",
        "usage",
        "used",
        "valid",
        "validity",
        "version",
    }
)

#: Before ``token``/``tokens``, these words make it a count or a non-credential token (kept).
TOKEN_COUNTERS: frozenset[str] = frozenset(
    {
        "accepted",
        "audio",
        "billed",
        "budget",
        "cache",
        "cached",
        "completion",
        "context",
        "continuation",
        "creation",
        "estimated",
        "generated",
        "image",
        "input",
        "max",
        "maximum",
        "min",
        "minimum",
        "n",
        "next",
        "num",
        "number",
        "output",
        "page",
        "pagination",
        "prediction",
        "progress",
        "prompt",
        "reasoning",
        "rejected",
        "remaining",
        "text",
        "thinking",
        "total",
        "used",
    }
)

#: Before ``signature``, these words make it code, not a credential (``function_signature``).
SIGNATURE_KINDS: frozenset[str] = frozenset({"call", "function", "method", "type"})

#: Values after ``password:``/``token is`` in prose that are words, not secrets ("password is required").
NOT_SECRET_VALUES: frozenset[str] = frozenset(
    {
        "",
        "a",
        "absent",
        "an",
        "changed",
        "correct",
        "empty",
        "expired",
        "false",
        "given",
        "incorrect",
        "invalid",
        "missing",
        "needed",
        "nil",
        "none",
        "not",
        "null",
        "ok",
        "optional",
        "present",
        "provided",
        "redacted",
        "[redacted]",
        "required",
        "reset",
        "revoked",
        "set",
        "the",
        "too",
        "true",
        "undefined",
        "unset",
        "valid",
        "wrong",
    }
)

_HUMPS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^a-z0-9]+")


def key_words(key: str) -> list[str]:
    """``key`` as lower-case words: ``"X-Api-Key"`` gives ``["x", "api", "key"]``, ``"APIKey"`` ``["api", "key"]``."""
    return [word for word in _SEPARATORS.split(_HUMPS.sub("_", key).lower()) if word]


def _basic_credentials(token: str) -> bool:
    # "Basic" is also an English word: only a base64 "user:password" after it is a credential.
    try:
        decoded = binascii.a2b_base64(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


#: Checks run on a match of the pattern with that label; False keeps the text.
VALIDATORS: dict[str, Callable[[str], bool]] = {
    "basic": lambda match: _basic_credentials(match.split()[-1].rstrip("=")),
}

_PROVIDER_TOKENS: tuple[tuple[str, str], ...] = (
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+"),
    ("slack-token", r"\b(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}"),
    ("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|\bwhsec_[A-Za-z0-9]{20,}"),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("google-oauth", r"\bya29\.[0-9A-Za-z_-]{20,}|\bGOCSPX-[0-9A-Za-z_-]{20,}"),
    ("aws-access-key-id", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}"),
    ("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{20,}"),
    ("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
)

#: (label, pattern): text matching a pattern is replaced by ``[REDACTED:label]``. Earlier
#: patterns win where two start at the same place. No capture groups (they are combined).
DEFAULT_PATTERNS: tuple[tuple[str, str], ...] = (
    # A private key runs to its END line, or to the end of the text when it was cut short.
    (
        "private-key",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)"
        r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    # user:password in scheme://user:password@host; the password runs to the last "@" of the authority.
    ("url-credentials", r"(?<=://)[^\s/?#@:]{0,256}:[^\s/?#]{0,256}(?=@)"),
    *_PROVIDER_TOKENS,
    ("bearer", r"(?i:\bbearer\s+[A-Za-z0-9\-._~+/]+=*)"),
    ("basic", r"\b[Bb]asic\s+[A-Za-z0-9+/]{4,}+={0,2}(?![A-Za-z0-9+/=])"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
    # Local part from its first character and at most 64 long (RFC 5321): a long run with an "@"
    # at its end costs one try, not one per position.
    ("email", r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,255}\.[A-Za-z]{2,}\b"),
    # International numbers (+ then 8-15 digits, separators allowed), or three or more digit
    # groups with separators; ISO dates and dotted IPv4 addresses are not phone numbers.
    (
        "phone",
        r"(?<![\w.])(?![0-9]{4}-[0-9]{2}-[0-9]{2}(?![0-9]))(?![0-9]{1,3}(?:\.[0-9]{1,3}){3}(?![0-9.]))"
        r"(?:\+[0-9](?:[ ().-]{0,2}[0-9]){7,14}|\(?[0-9]{2,4}\)?(?:[ .-][0-9]{2,4}){2,4})(?![\w.])",
    ),
)

#: Substrings one of which is in every text a default pattern matches: a text without any of
#: them skips that pattern. (A pattern passed under another label, or a changed one, is always tried.)
TRIGGERS: dict[str, tuple[str, ...]] = {
    "private-key": ("PRIVATE KEY",),
    "url-credentials": ("://",),
    "github-token": ("gh", "github_pat_"),
    "gitlab-token": ("glpat-",),
    "slack-webhook": ("hooks.slack.com",),
    "slack-token": ("xox", "xapp-"),
    "stripe-key": ("k_live_", "k_test_", "whsec_"),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "google-api-key": ("AIza",),
    "google-oauth": ("ya29.", "GOCSPX-"),
    "aws-access-key-id": ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    "huggingface-token": ("hf_",),
    "npm-token": ("npm_",),
    "pypi-token": ("pypi-",),
    "sendgrid-key": ("SG.",),
    "bearer": ("earer", "EARER"),
    "basic": ("asic",),
    "jwt": ("eyJ",),
    "email": ("@",),
    "phone": tuple("0123456789"),
}
