"""Rank fusion (pure): weighted reciprocal-rank fusion of ranked candidate lists."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Fused:
    id: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # branch -> rank (1-based)
    raw: dict[str, float] = field(default_factory=dict)  # branch -> the branch's own score
    parts: dict[str, float] = field(default_factory=dict)  # branch -> w / (k + rank)
    restated_by: str | None = None  # path:lines of a digest chunk citing this one, whose score it took


def rrf(rankings: dict[str, list[tuple[str, float]]], weights: dict[str, float],
        k: int = 60) -> list[Fused]:
    """`score(d) = sum_b w_b / (k + rank_b(d))`, ranks from 1; the first occurrence of an id in
    a ranking counts (dedup). Ties break by id so the order is stable."""
    fused: dict[str, Fused] = {}
    for branch, ranking in rankings.items():
        weight = weights.get(branch, 0.0)
        seen: set[str] = set()
        for item_id, raw in ranking:
            if item_id in seen:
                continue
            seen.add(item_id)
            rank = len(seen)
            entry = fused.setdefault(item_id, Fused(item_id, 0.0))
            entry.ranks[branch], entry.raw[branch] = rank, raw
            entry.parts[branch] = weight / (k + rank)
            entry.score += entry.parts[branch]
    return sorted(fused.values(), key=lambda f: (-f.score, f.id))


def active_weights(vector_weight: float, keyword_weight: float, vectors_on: bool) -> dict[str, float]:
    """Weights of the branches that run: with vectors off, keyword search carries weight 1."""
    if not vectors_on:
        return {"keyword": 1.0}
    return {"vector": vector_weight, "keyword": keyword_weight}
