"""Retrieval metrics (pure): coverage of evidence turns by ranked results, recall@k, budgets,
MRR and nDCG. Tested against hand-computed tables."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from memflow.tasks.ground.markdown import parse_anchor, parse_links

MAX_SPAN = 3  # a provenance link citing more turns than this covers none


def normalise(text: str) -> str:
    return " ".join(text.split())


def link_turns(anchor: str, line_turns: list[str]) -> list[str]:
    """Turns cited by a log-line anchor, or [] when it cites more than MAX_SPAN turns."""
    lines = [n for a, b in parse_anchor(anchor) for n in range(a, b + 1)]
    turns = list(dict.fromkeys(line_turns[n - 1] for n in lines if 0 < n <= len(line_turns)))
    return turns if 0 < len(turns) <= MAX_SPAN else []


def covered_turns(text: str, turn_texts: dict[str, str], logs: dict[str, list[str]],
                  follow: Callable[[str, str], str] | None = None,
                  quotes: dict[str, str] | None = None) -> set[str]:
    """Turns a shown result covers: by containing a turn's text (whitespace normalised) or the
    statement the evidence label quotes from it (`quotes`: turn -> normalised sentence, for long
    turns whose question rests on one sentence), by a session-log link citing at most MAX_SPAN
    turns, or through a link to a note line whose own provenance links do (how a digest node's
    sources reach the conversation).

    `logs` maps a session-log path to the turn id of each of its lines; `follow(path, anchor)`
    returns the text of the anchored lines of a workspace note.
    """
    flat = normalise(text)
    covered = {turn for turn, body in turn_texts.items() if body and body in flat}
    covered.update(turn for turn, quote in (quotes or {}).items() if quote and quote in flat)
    for link in parse_links(text):
        if link.target in logs:
            covered.update(link_turns(link.anchor, logs[link.target]))
        elif follow and link.anchor and link.target.endswith(".md"):
            for inner in parse_links(follow(link.target, link.anchor)):
                if inner.target in logs:
                    covered.update(link_turns(inner.anchor, logs[inner.target]))
    return covered


def first_hit(ranked_cover: list[set[str]], evidence: set[str]) -> int | None:
    return next((i + 1 for i, c in enumerate(ranked_cover) if c & evidence), None)


def recall_at(ranked_cover: list[set[str]], evidence: set[str], k: int) -> tuple[float, float]:
    """(any, all) evidence turns covered by the top k."""
    seen = set().union(*ranked_cover[:k]) if ranked_cover[:k] else set()
    return float(bool(seen & evidence)), float(evidence <= seen)


def ndcg_at(ranked_cover: list[set[str]], evidence: set[str], k: int = 10) -> float:
    """Binary relevance: a result is relevant when it covers an evidence turn that no higher
    result covered (a digest node and its daily note covering the same turn count once), so the
    ideal ranking has min(|evidence|, k) relevant results first and nDCG stays within [0, 1]."""
    seen: set[str] = set()
    dcg = 0.0
    for i, cover in enumerate(ranked_cover[:k]):
        if (cover & evidence) - seen:
            dcg += 1.0 / math.log2(i + 2)
        seen |= cover & evidence
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(evidence), k)))
    return dcg / ideal if ideal else 0.0


def budget_cut(shown: list[str], budget: int, count: Callable[[str], int],
               truncate: Callable[[str, int], str]) -> tuple[list[str], int]:
    """Results in rank order until `budget` tokens; the last one is cut to fit."""
    kept, used = [], 0
    for text in shown:
        size = count(text)
        if used + size <= budget:
            kept.append(text)
            used += size
            continue
        room = budget - used
        if room > 0:
            part = truncate(text, room)
            kept.append(part)
            used += count(part)
        break
    return kept, used


_SESSION_RE = re.compile(r"D(\d+):")


def session_of(turn: str) -> str:
    match = _SESSION_RE.match(turn)
    return match.group(1) if match else ""


def _value_at(text: str, value: str) -> int:
    """Where `value` first stands as a whole token in `text` (-1: nowhere): "80" is not found
    in "8080" or "1.80"."""
    match = re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", text)
    return match.start() if match else -1


def current_first(text: str, current: str, previous: list[str]) -> float:
    """1.0 when a context states the current value of a changed fact before every earlier value
    it shows (a knowledge-update question: `previous` are the values it replaced); 0.0 when the
    current value is missing or an earlier one comes first."""
    at = _value_at(text, current)
    if at < 0:
        return 0.0
    return float(all(not (0 <= _value_at(text, old) < at) for old in previous if old != current))
