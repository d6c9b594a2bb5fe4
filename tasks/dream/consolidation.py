"""The offline consolidator (pure): daily-note facts -> units -> one decision per unit, and
interest topics. Deterministic, so a labelled fixture can pin its actions.

Units group a note's facts by shared salient terms; the bucket follows rules (preferences and
identity -> personal, how-to and imperatives -> procedure, else wiki). A decision compares the
unit with candidate digest nodes: the same subject with a changed value -> CORRECT, a
near-duplicate -> CORROBORATE, related -> REFINE, nothing -> CREATE.
"""

from __future__ import annotations

import re
from collections import Counter

from memflow.schemas.dream import (
    Correct,
    Corroborate,
    Create,
    Decision,
    Evidence,
    Refine,
    Topic,
    Unit,
)
from memflow.schemas.notes import Note
from memflow.tasks.capture import salient_terms
from memflow.tasks.dream.digest import claims_of, plain
from memflow.tasks.ground.tokenize import tokenize

NEAR_DUPLICATE, RELATED = 0.6, 0.2
# A quantity: a number and the word (or CJK character) it counts, e.g. `6 engineers`, `二十公里`.
_QUANTITY_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([A-Za-z]+|[\u4e00-\u9fff])|"
                          r"([零一二两三四五六七八九十百千]+)([\u4e00-\u9fff])")
_CHANGE_RE = re.compile(r"\b(switched|switch(ed)? (from|to)|instead of|no longer|not anymore|"
                        r"correction|changed to|now (prefer|use|drink|live|work)s?|moved to)\b|"
                        r"改成|换成|不再|现在改|已经不|改为|不.{0,3}了", re.IGNORECASE)
_PERSONAL_RE = re.compile(r"\b(i|i'm|my|me|mine|prefer|prefers|like|likes|love|loves|hate|hates|"
                          r"favorite|favourite|allergic|birthday|wife|husband|daughter|son|sister|"
                          r"brother|mother|father|family|drink|drinks|live|lives)\b|我|喜欢|女儿|儿子|"
                          r"妻子|丈夫|家人|爱好|生日|习惯", re.IGNORECASE)
_PROCEDURE_RE = re.compile(r"^(to \w+|run|restart|use|call|open|install|deploy|check|set|add|"
                           r"remove|watch|announce|first|then)\b|\b(how to|step|steps|run |"
                           r"restart |rollback|roll back|backoff)\b|步骤|先.*再|运行|执行",
                           re.IGNORECASE)
_BULLET_RE = re.compile(r"^\s*[-*+]\s+(.*\S)\s*$")


def note_facts(note: Note) -> list[Evidence]:
    """Facts of a daily note: its bullet lines (provenance links stripped) with their lines."""
    facts = []
    for offset, line in enumerate(note.body.split("\n")):
        match = _BULLET_RE.match(line)
        if match:
            text = plain(match.group(1))
            if len(text) >= 3:
                facts.append(Evidence(path=note.path, lines=[note.body_start + offset], text=text))
    return facts


def terms(text: str) -> set[str]:
    return {t for t in tokenize(text) if not t.isdigit()}


def similarity(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def related(a: set[str], b: set[str]) -> bool:
    """Same subject: at least two shared terms covering a fair part of the shorter text."""
    shared = len(a & b)
    return shared >= 2 and shared / max(1, min(len(a), len(b))) >= 0.15


def bucket_of(texts: list[str]) -> str:
    votes = Counter()
    for text in texts:
        if _PROCEDURE_RE.search(text.strip()):
            votes["procedure"] += 1
        elif _PERSONAL_RE.search(text):
            votes["personal"] += 1
        else:
            votes["wiki"] += 1
    return max(("personal", "procedure", "wiki"), key=lambda b: (votes[b], b == "wiki"))


def group_facts(facts: list[Evidence], min_shared: int = 2) -> list[list[Evidence]]:
    """Facts of one note that share at least `min_shared` terms end up in one group."""
    parent = list(range(len(facts)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    sets = [terms(f.text) for f in facts]
    for i in range(len(facts)):
        for j in range(i + 1, len(facts)):
            if len(sets[i] & sets[j]) >= min_shared and not conflicting(facts[i].text, facts[j].text):
                parent[find(j)] = find(i)
    groups: dict[int, list[Evidence]] = {}
    for i, fact in enumerate(facts):
        groups.setdefault(find(i), []).append(fact)
    return list(groups.values())


def make_unit(group: list[Evidence]) -> Unit:
    texts = [f.text for f in group]
    name = ", ".join(salient_terms(texts, n=3)) or texts[0][:60]
    summary = " ".join(texts)[:500]
    return Unit(name=name, bucket=bucket_of(texts), summary=summary,
                paths=sorted({f.path for f in group}), evidence=group)


def extract_units(notes: list[Note]) -> list[tuple[Unit, str]]:
    """Units of the given notes, oldest note first; each with the note it came from."""
    units = []
    for note in notes:
        for group in group_facts(note_facts(note)):
            units.append((make_unit(group), note.path))
    return units


def quantities(text: str) -> dict[str, str]:
    """Counted word -> number, e.g. {"engin": "6"} (words stemmed like the index)."""
    found = {}
    for match in _QUANTITY_RE.finditer(text):
        number, unit = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        key = (tokenize(unit) or [unit.lower()])[0] if unit.isascii() else unit
        found[key] = number
    return found


def conflicting(new: str, old: str) -> bool:
    """Same subject, different value: shared terms plus the same counted thing with another
    number (`6 engineers` -> `8 engineers`), or a change cue (`switched to`, `改成`)."""
    shared = terms(new) & terms(old)
    if not shared:
        return False
    before, after = quantities(old), quantities(new)
    if any(before[unit] != after[unit] for unit in before.keys() & after.keys()) and len(shared) >= 2:
        return True
    return bool(_CHANGE_RE.search(new)) and similarity(terms(new), terms(old)) < NEAR_DUPLICATE


def decide_offline(unit: Unit, candidates: dict[str, str], new_path: str) -> Decision:
    """Unit + candidate digest nodes (path -> text) -> one decision."""
    unit_terms = terms(unit.summary)
    best_path, best_sim, refine_path = None, 0.0, None
    for path, text in candidates.items():
        for claim in claims_of(text):
            for fact in unit.evidence or [None]:
                fact_text = fact.text if fact else unit.summary
                if conflicting(fact_text, claim):
                    return Correct(path=path, old=claim, new=fact_text,
                                   reason="a later note says otherwise")
            claim_terms = terms(claim)
            sim = similarity(unit_terms, claim_terms)
            if sim > best_sim:
                best_path, best_sim = path, sim
            if refine_path is None and related(unit_terms, claim_terms):
                refine_path = path
    if best_path and best_sim >= NEAR_DUPLICATE:
        return Corroborate(path=best_path, reason=f"similarity {best_sim:.2f}")
    if refine_path:
        known = {plain(c) for c in claims_of(candidates[refine_path])}
        additions = [f.text for f in unit.evidence if f.text not in known] or [unit.summary]
        return Refine(path=refine_path, additions=additions)
    links = [p for p, t in candidates.items()
             if any(similarity(unit_terms, terms(c)) >= RELATED / 2 for c in claims_of(t))][:3]
    return Create(path=new_path, name=unit.name, description=unit.summary[:200],
                  claims=[f.text for f in unit.evidence] or [unit.summary], related=links)


def choose_topics(facts: list[Evidence], count: int, recent: set[str]) -> list[Topic]:
    """Recurring salient terms of recent facts, skipping titles chosen lately."""
    by_term: dict[str, list[Evidence]] = {}
    for fact in facts:
        for term in salient_terms([fact.text], n=4):
            by_term.setdefault(term.lower(), []).append(fact)
    ranked = sorted(by_term.items(), key=lambda kv: (-len({f.path for f in kv[1]}), -len(kv[1]), kv[0]))
    topics = []
    for term, evidence in ranked:
        if term in recent or len(topics) >= count:
            continue
        paths = sorted({f.path for f in evidence})
        topics.append(Topic(
            title=term, reason=f"came up {len(evidence)} time(s) in {len(paths)} note(s)",
            evidence=[f.text for f in evidence[:3]],
            keywords=salient_terms([f.text for f in evidence], n=5), paths=paths))
    return topics
