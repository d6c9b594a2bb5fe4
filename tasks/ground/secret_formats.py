"""Known credential formats (the one module that imports detect-secrets): where API keys and
tokens of known services sit in a text, as character spans.

detect-secrets is maintained against real services' formats (AWS, GitHub, GitLab, Slack,
Stripe, OpenAI, JWTs, private key headers...). Its regex plugins are used for their patterns
only: its generic plugins are left out here (hex and base64 entropy flag commit hashes and
UUIDs; the keyword plugin is for `password = "..."` in code; public IPs are no secret), and
`tasks.ground.secrets` has its own entropy and prose rules.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memflow.tasks.ground.screens import Screened, Seen, screened

_GENERIC = {"Base64 High Entropy String", "Hex High Entropy String", "Secret Keyword", "Public IP (ipv4)"}


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    found: list[re.Pattern] = []
    for kind, plugin in get_mapping_from_secret_type_to_class().items():
        if kind in _GENERIC or not issubclass(plugin, RegexBasedDetector):
            continue
        found += list(plugin().denylist)
    return tuple(found)


@lru_cache(maxsize=1)
def _screened() -> tuple[Screened, ...]:
    return tuple(map(screened, _patterns()))


def known_format_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every match of a known credential format. A pattern with a group marks
    the group (the password of `https://user:PASSWORD@host`), else the whole match, without the
    separators some patterns include at their edges. A pattern runs only on a text that holds
    what each of its matches would (`needed`): most texts hold no `AKIA`, `xox` or `-us`, and
    running all 45 patterns over every chunk of a resource cost as much as tokenizing it."""
    spans = []
    seen = Seen(text)  # patterns share screens ("key", "pwd", "token"...)
    for pattern in _screened():
        if pattern.may_match(seen):
            spans += _spans_of(pattern.pattern, text)
    return spans


def _spans_of(pattern: re.Pattern, text: str) -> list[tuple[int, int]]:
    spans = []
    for match in pattern.finditer(text):
        if match.re.groups and match.group(1) and match.start(1) >= 0 and _whole_is_prefix(match):
            spans.append((match.start(1), match.end(1)))
            continue
        start, end = match.span()
        while start < end and text[start] in " \t\n=:\"'":
            start += 1
        while end > start and text[end - 1] in " \t\n\"'":
            end -= 1
        if end > start:
            spans.append((start, end))
    return spans


def _whole_is_prefix(match: re.Match) -> bool:
    """A group that is the secret itself (not a token prefix such as GitHub's `ghp`)."""
    return match.end(1) - match.start(1) >= 8
