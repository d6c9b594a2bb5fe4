"""Dream with a model: extract units and decide actions as validated JSON.

Invalid output raises (ModelOutputError or ValueError); the Prefect tasks wrapping these retry,
then the unit fails and its notes stay unconsumed for the next run.
"""

from __future__ import annotations

from memflow.schemas.dream import Decision, DecisionReply, ExtractResult, Unit
from memflow.schemas.notes import Note
from memflow.schemas.settings import Settings
from memflow.tasks.ground.llm import complete_json

EXTRACT_SYSTEM = """You consolidate an agent's daily notes into long-term knowledge units.
Reply with JSON {"units": [{"name": str, "bucket": "personal"|"procedure"|"wiki", "summary": str,
"paths": [note path], "evidence": [{"path": note path, "lines": [int], "text": str}]}]}.
personal: preferences and identity; procedure: how-to and steps; wiki: everything else.
Cite the note lines (Lnn) each fact comes from. Only use the notes given."""

DECIDE_SYSTEM = """You integrate one knowledge unit into exactly one digest node.
A node is about one subject (a person and a facet of their life, a team, a system, a procedure);
each line `- DATE: fact [[source]]` is one fact, with replaced values kept under it as history.
Reply with JSON {"decision": D} where D is one of:
{"action": "create", "path": new path, "name": the subject, "description": str, "claims": [str], "related": [existing node paths]}
{"action": "corroborate", "path": existing node, "fact": the node's fact that says the same, "reason": str}
{"action": "refine", "path": existing node, "additions": [new facts about the node's subject]}
{"action": "correct", "path": existing node, "old": the node's fact as written, "new": the new value, "reason": str}
Correct a fact when the unit gives a new value for what that fact says (it answers the same
question now); the old value stays as history, so a correction loses nothing. "new" is the
unit's statement in its own words and values, citing nothing the unit does not say.
Prefer a candidate node about the same subject."""


def _numbered(note: Note) -> str:
    lines = note.text.split("\n")
    return "\n".join(f"L{n} {line}" for n, line in enumerate(lines, 1) if line.strip())


def extract_with_model(settings: Settings, notes: list[Note], hint: str = "") -> list[tuple[Unit, str]]:
    text = "\n\n".join(f"=== {n.path}\n{_numbered(n)}" for n in notes)
    if hint:
        text += f"\n\nCaller hint: {hint}"
    reply = complete_json(settings, [{"role": "system", "content": EXTRACT_SYSTEM},
                                     {"role": "user", "content": text}], ExtractResult)
    by_path = {n.path: n for n in notes}
    out = []
    for unit in reply.units:
        bad = [p for p in unit.paths + [e.path for e in unit.evidence] if p not in by_path]
        if bad:
            raise ValueError(f"unit {unit.name!r} cites notes that were not given: {bad}")
        for fact in unit.evidence:
            size = len(by_path[fact.path].text.split("\n"))
            if any(n > size for n in fact.lines):
                raise ValueError(f"unit {unit.name!r} cites line {max(fact.lines)} of {fact.path} ({size} lines)")
        origin = max(unit.paths, key=lambda p: [n.path for n in notes].index(p))
        out.append((unit, origin))
    return out


def decide_with_model(settings: Settings, unit: Unit, candidates: dict[str, str], new_path: str) -> Decision:
    shown = "\n\n".join(f"=== {path}\n{text}" for path, text in candidates.items()) or "(none)"
    prompt = (f"Unit:\n{unit.model_dump_json(indent=1)}\n\nCandidate nodes:\n{shown}\n\n"
              f"If you create a node, its path is {new_path}.")
    reply = complete_json(settings, [{"role": "system", "content": DECIDE_SYSTEM},
                                     {"role": "user", "content": prompt}], DecisionReply)
    return reply.decision
