"""Turn policy for agent hosts (pure): when to flush a conversation into memory."""

from __future__ import annotations

from dataclasses import dataclass

SKIPPED_SOURCES = frozenset({"cron", "heartbeat"})


@dataclass(frozen=True)
class TurnState:
    user_turns: int = 0  # user turns since the last flush


def next_turn(state: TurnState, role: str, interval: int | None = 5, source: str | None = None,
              compacting: bool = False) -> tuple[TurnState, bool]:
    """Count a message; returns (new state, flush now?).

    Flushes every `interval` user turns (None or <= 0 disables that), and before a context
    compaction when there is anything unflushed. Requests from `cron` or `heartbeat` never count
    and never flush.
    """
    if source in SKIPPED_SOURCES:
        return state, False
    turns = state.user_turns + (1 if role == "user" else 0)
    if compacting:
        return TurnState(0), turns > 0
    if interval and interval > 0 and turns >= interval:
        return TurnState(0), True
    return TurnState(turns), False
