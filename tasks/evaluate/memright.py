"""memory-right evaluation: is the current value of a fact what an agent gets first?

Per scenario folder (`sessions/*.json`, `questions.json`; the format and the scoring rule are in
the data set's README): a fresh workspace, every session captured in order, indexed (and with
`dream`, dreamt until no backlog, then indexed again). Every question is asked at each token
budget of memory-flows' packed search (what `memflow.api.search(budget_tokens=B, as_of=...)`
packs) and of two raw-message BM25 baselines, and each context is scored `found` (every current
string in it) and `current_first` (no stale-only line before the first current line, no current
line labelled `(replaced`). `life-*` scenarios also score the 300-token profile.
Out: questions.parquet (a row per question x budget x system) and summary.json.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from statistics import mean

from memflow.schemas.settings import Settings
from memflow.tasks.capture import auto_memory
from memflow.tasks.dream import build_profile, run_dream
from memflow.tasks.evaluate.grid import job_settings
from memflow.tasks.ground.tokens import count_tokens
from memflow.tasks.ground.workspace import init_workspace, layout
from memflow.tasks.index import run_index

SYSTEMS = ("memflow", "bm25", "bm25-newest")
KINDS = ("update", "chain", "coexist", "not_a_change", "stable", "past")
BASELINE_TOP = 20  # documents a baseline ranks before packing
PROFILE_BUDGET = 300
PROFILE_KINDS = ("update", "chain", "stable")
MAX_DREAMS = 50  # dream runs per scenario before giving up on a backlog that does not shrink
REPLACED = "(replaced"


# -- scoring (pure) ---------------------------------------------------------------------------

def score_context(context: str, current: list[str], stale: list[str]) -> tuple[bool, bool]:
    """(found, current_first) of one context: found when every `current` string occurs in it;
    current_first when found, no non-empty line holding a `stale` string but no `current` one
    comes before the first line holding a `current` string, and no line holding a `current`
    string is labelled `(replaced`."""
    found = all(value in context for value in current)
    if not found:
        return False, False
    lines = [line for line in context.splitlines() if line.strip()]
    holds = [any(value in line for value in current) for line in lines]
    first = holds.index(True) if True in holds else len(lines)
    stale_first = any(any(value in line for value in stale) for line in lines[:first])
    replaced = any(REPLACED in line for line, held in zip(lines, holds) if held)
    return True, not stale_first and not replaced


# -- baselines --------------------------------------------------------------------------------

def message_documents(sessions: list[tuple[str, list[dict]]],
                      as_of: str | None) -> list[tuple[str, str]]:
    """Every message as (timestamp, `"<YYYY-MM-DD> <name or role>: <content>"`), in session
    order; with `as_of` only the messages dated that day or before."""
    docs = []
    for _, messages in sessions:
        for m in messages:
            stamp = str(m.get("timestamp") or "")
            if as_of and stamp[:10] > as_of:
                continue
            docs.append((stamp, f"{stamp[:10]} {m.get('name') or m['role']}: {m['content']}"))
    return docs


def pack_documents(texts: list[str], budget: int, count: Callable[[str], int] = count_tokens) -> str:
    """Whole documents in the order given, joined by blank lines, until the next one would take
    the context over `budget` tokens (packing stops there: no smaller later one is tried)."""
    kept: list[str] = []
    for text in texts:
        if count("\n\n".join([*kept, text])) > budget:
            break
        kept.append(text)
    return "\n\n".join(kept)


def baseline_contexts(ranked: list[int], docs: list[tuple[str, str]], budget: int,
                      count: Callable[[str], int] = count_tokens) -> dict[str, str]:
    """{"bm25": ..., "bm25-newest": ...} contexts of one question at one budget: `ranked` are the
    document numbers best first (positive scores only); the first BASELINE_TOP are packed in
    score order, and in newest-first order (by timestamp; ties keep score order)."""
    top = ranked[:BASELINE_TOP]
    newest = sorted(top, key=lambda i: docs[i][0], reverse=True)
    return {"bm25": pack_documents([docs[i][1] for i in top], budget, count),
            "bm25-newest": pack_documents([docs[i][1] for i in newest], budget, count)}


Ranked = Callable[[str, str | None], tuple[list[int], list[tuple[str, str]]]]


def baseline_searcher(sessions: list[tuple[str, list[dict]]]) -> Ranked:
    """`(question, as_of) -> (ranked document numbers, documents)`: bm25s (lucene, PyStemmer
    English, English stopwords) over the messages up to `as_of`, one index per `as_of` asked."""
    from memflow.tasks.stores.keyword import stemmed_english_search

    built: dict[str | None, tuple[list[tuple[str, str]], Callable]] = {}

    def ranked(question: str, as_of: str | None) -> tuple[list[int], list[tuple[str, str]]]:
        if as_of not in built:
            docs = message_documents(sessions, as_of)
            built[as_of] = (docs, stemmed_english_search([text for _, text in docs]))
        docs, find = built[as_of]
        return find(question, BASELINE_TOP), docs
    return ranked


# -- memory-flows -----------------------------------------------------------------------------

# (settings, question, budget, as_of) -> the context memory-flows gives: what
# `memflow.api.search(question, settings, budget_tokens=budget, as_of=as_of).packed` holds, joined
# by blank lines. The caller passes that function (the CLI does); a stage cannot import the API,
# and a copy of its packing call here would drift from it while recall changes.
PackedSearch = Callable[[Settings, str, int, str | None], str]


def build_scenario(sessions: list[tuple[str, list[dict]]], settings: Settings, dream: bool,
                   writer=None) -> None:
    """A fresh workspace with every session captured in order and indexed; with `dream`, dream
    runs on the last day captured until no backlog is left, then the index again."""
    lay = layout(settings)
    if lay.root.exists():
        shutil.rmtree(lay.root)
    init_workspace(lay)
    last: date | None = None
    for sid, messages in sessions:
        result = auto_memory(settings, messages, sid, writer=writer)
        last = max(filter(None, [last, result.date]), default=None)
    run_index(settings)
    if dream and last:
        for _ in range(MAX_DREAMS):
            summary = run_dream(settings, last, max_units=100_000, max_notes=100_000)
            if not summary.notes_left or not summary.notes_consumed:
                break
        run_index(settings)


# -- one scenario -----------------------------------------------------------------------------

def load_scenario(folder: Path) -> tuple[list[tuple[str, list[dict]]], list[dict]]:
    """(sessions as (session id, messages) in file-name order, questions) of a scenario folder."""
    sessions = [(path.stem, json.loads(path.read_text(encoding="utf-8")))
                for path in sorted((folder / "sessions").glob("*.json"))]
    return sessions, json.loads((folder / "questions.json").read_text(encoding="utf-8"))


def scenario_folders(data: Path, names: list[str] | None = None) -> list[Path]:
    """The scenario folders under `data` (or `data` itself when it is one), by name; `names`
    picks some (an unknown name is an error)."""
    found = [data] if (data / "questions.json").is_file() else sorted(
        p for p in data.iterdir() if (p / "questions.json").is_file())
    if not found:
        raise ValueError(f"{data}: no scenario folder (one holding questions.json and sessions/)")
    if names:
        missing = sorted(set(names) - {p.name for p in found})
        if missing:
            raise ValueError(f"scenarios not in {data}: {', '.join(missing)}")
        found = [p for p in found if p.name in names]
    return found


def score_question(q: dict, scenario: str, budgets: list[int],
                   contexts: Callable[[int], dict[str, str]]) -> list[dict]:
    """One row per budget and system: `contexts(budget)` gives each system's context."""
    rows = []
    for budget in budgets:
        for system, context in contexts(budget).items():
            found, first = score_context(context, q["current"], q.get("stale") or [])
            rows.append({"scenario": scenario, "id": q["id"], "kind": q["kind"], "system": system,
                         "budget": budget, "found": found, "current_first": first,
                         "tokens": count_tokens(context)})
    return rows


def evaluate_scenario(folder: Path, settings: Settings, budgets: list[int], packed_search: PackedSearch,
                      dream: bool = False, writer=None, progress: Callable[[int], None] | None = None
                      ) -> tuple[list[dict], dict | None]:
    """Build one scenario's workspace (`settings.workspace`) and score its questions: (rows,
    its profile result for a `life-*` scenario, else None)."""
    sessions, questions = load_scenario(folder)
    build_scenario(sessions, settings, dream, writer)
    ranked = baseline_searcher(sessions)
    rows = []
    for q in questions:
        order, docs = ranked(q["question"], q.get("as_of"))

        def contexts(budget: int) -> dict[str, str]:
            mine = packed_search(settings, q["question"], budget, q.get("as_of"))
            return {"memflow": mine, **baseline_contexts(order, docs, budget)}

        rows += score_question(q, folder.name, budgets, contexts)
        if progress:
            progress(1)
    return rows, profile_result(settings, questions) if folder.name.startswith("life-") else None


def profile_result(settings: Settings, questions: list[dict]) -> dict:
    """The 300-token profile against a scenario's questions: the share of its update, chain and
    stable questions whose current strings all occur in it, and the stale strings (of any of its
    questions) it shows, each with the questions that call it stale."""
    text, _ = build_profile(layout(settings), settings, PROFILE_BUDGET)
    asked = [q for q in questions if q["kind"] in PROFILE_KINDS]
    met = [q["id"] for q in asked if all(value in text for value in q["current"])]
    # a `past` question's stale value is usually today's value: kept, with the question it is from
    stale = [{"value": value, "questions": [f"{q['id']} {q['kind']}" for q in questions
                                            if value in (q.get("stale") or [])]}
             for value in sorted({v for q in questions for v in q.get("stale") or [] if v in text})]
    share = round(len(met) / len(asked), 4) if asked else 0.0
    # a value an update, chain or stable question calls stale, on a line that does not say its
    # current value too ("Brisbane lasted a month, she took the Perth job" says both): wrong now
    lines = text.split("\n")
    alone = sorted({f"{value} ({q['id']} {q['kind']})" for q in asked for value in q.get("stale") or []
                    for line in lines if value in line and not any(c in line for c in q["current"])})
    return {"questions": len(asked), "met": len(met), "share": share, "met_ids": met,
            "stale_shown": stale, "stale_alone": alone, "tokens": count_tokens(text)}


# -- the run ----------------------------------------------------------------------------------

def summarize(rows: list[dict], budgets: list[int]) -> dict:
    """{system: {kind or "all": {budget: {questions, found, current_first, found_n,
    current_first_n}}}}."""
    out: dict = {}
    for system in SYSTEMS:
        mine = [r for r in rows if r["system"] == system]
        kinds = ["all"] + [k for k in KINDS if any(r["kind"] == k for r in mine)]
        kinds += sorted({r["kind"] for r in mine} - set(KINDS))
        out[system] = {kind: {str(b): cell([r for r in mine if r["budget"] == b
                                            and (kind == "all" or r["kind"] == kind)])
                              for b in budgets} for kind in kinds}
    return out


def cell(rows: list[dict]) -> dict:
    found, first = [float(r["found"]) for r in rows], [float(r["current_first"]) for r in rows]
    return {"questions": len(rows), "found": round(mean(found), 4) if rows else 0.0,
            "current_first": round(mean(first), 4) if rows else 0.0,
            "found_n": int(sum(found)), "current_first_n": int(sum(first))}


def profile_summary(per_scenario: dict[str, dict]) -> dict:
    asked = sum(p["questions"] for p in per_scenario.values())
    met = sum(p["met"] for p in per_scenario.values())
    return {"budget": PROFILE_BUDGET, "kinds": list(PROFILE_KINDS), "questions": asked, "met": met,
            "share": round(met / asked, 4) if asked else 0.0,
            "stale_shown": sum(len(p["stale_shown"]) for p in per_scenario.values()),
            "stale_alone": sum(len(p.get("stale_alone", [])) for p in per_scenario.values()),
            "scenarios": per_scenario}


def run_record(data: Path, folders: list[Path], budgets: list[int], dream: bool, settings: Settings,
               overrides: dict, seconds: float) -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    return {"data": str(data), "scenarios": [p.name for p in folders], "budgets": budgets, "dream": dream,
            "overrides": overrides, "git_commit": commit or None,
            "settings": json.loads(settings.model_dump_json(exclude={"workspace", "model_api_key"})),
            "chat_model": settings.chat_model or None, "embedding_model": settings.embedding_model or None,
            "seconds": round(seconds, 1)}


def write_parquet(path: Path, rows: list[dict]) -> None:
    """The rows as Parquet, written atomically (to bytes, then `atomic_write_bytes`)."""
    import polars as pl

    from memflow.tasks.stores.files import atomic_write_bytes

    buffer = io.BytesIO()
    pl.DataFrame(rows, infer_schema_length=None).write_parquet(buffer)
    atomic_write_bytes(path, buffer.getvalue())


def run_memright(data: Path, out: Path, settings: Settings, budgets: list[int], packed_search: PackedSearch,
                 dream: bool = False, scenarios: list[str] | None = None, overrides: dict | None = None,
                 progress: Callable[[int], None] | None = None) -> dict:
    """The whole evaluation: each scenario's workspace under `out/workspaces/<scenario>`,
    questions.parquet and summary.json under `out`; returns the summary. `packed_search` is
    memory-flows' side (`PackedSearch`: `memflow.api.search`'s packed context); `progress(1)`
    after each question."""
    from memflow.tasks.stores.files import atomic_write_json

    started = time.perf_counter()
    folders = scenario_folders(data, scenarios)
    out.mkdir(parents=True, exist_ok=True)
    writer = None
    if settings.chat_model:
        from memflow.tasks.capture import model_writer

        writer = model_writer(settings)
    rows: list[dict] = []
    profiles: dict[str, dict] = {}
    for folder in folders:
        scenario = job_settings(settings, {}, out, folder.name)  # out/workspaces/<scenario>
        found, profile = evaluate_scenario(folder, scenario, budgets, packed_search, dream, writer, progress)
        rows += found
        if profile is not None:
            profiles[folder.name] = profile
    write_parquet(out / "questions.parquet", rows)
    asked = len({(r["scenario"], r["id"]) for r in rows})
    summary = {"questions": asked, "systems": summarize(rows, budgets),
               "profile": profile_summary(profiles),
               "run": run_record(data, folders, budgets, dream, settings, overrides or {},
                                 time.perf_counter() - started)}
    atomic_write_json(out / "summary.json", summary)
    return summary


def question_count(data: Path, scenarios: list[str] | None = None) -> int:
    """Questions of the scenarios a run would evaluate (for a progress bar)."""
    return sum(len(json.loads((p / "questions.json").read_text(encoding="utf-8")))
               for p in scenario_folders(data, scenarios))


# -- the printed report -----------------------------------------------------------------------

def report_lines(summary: dict, out: str = "") -> list[str]:
    """The summary as aligned text: per kind and budget, current_first (found) of each system,
    then the profile line."""
    run, systems = summary["run"], summary["systems"]
    lines = [f"memright: {summary['questions']} questions, {len(run['scenarios'])} scenario(s), "
             f"dream={'yes' if run['dream'] else 'no'}, {run['seconds']} s" + (f" -> {out}" if out else ""),
             "current_first (found) per kind and budget",
             f"{'kind':<13}{'n':>4}{'budget':>8}" + "".join(f"{name:>18}" for name in SYSTEMS)]
    for kind in systems["memflow"]:
        for budget, part in systems["memflow"][kind].items():
            cells = "".join(f"{systems[s][kind][budget]['current_first']:>10.3f} "
                            f"({systems[s][kind][budget]['found']:.3f})" for s in SYSTEMS)
            lines.append(f"{kind:<13}{part['questions']:>4}{budget:>8}{cells}")
    profile = summary["profile"]
    per = ", ".join(f"{name} {p['met']}/{p['questions']}" for name, p in profile["scenarios"].items())
    stale = [f"{shown['value']} ({name} {', '.join(shown['questions'])})"
             for name, p in profile["scenarios"].items() for shown in p["stale_shown"]]
    lines.append(f"profile@{profile['budget']}: current of update/chain/stable {profile['met']}/"
                 f"{profile['questions']} = {profile['share']:.3f} ({per or 'no life-* scenario'}); "
                 f"stale shown: {'; '.join(stale) if stale else 'none'}")
    alone = [f"{name} {value}" for name, p in profile["scenarios"].items() for value in p.get("stale_alone", [])]
    lines.append(f"profile@{profile['budget']}: a changed fact's old value on a line without its current one: "
                 f"{'; '.join(alone) if alone else 'none'}")
    return lines
