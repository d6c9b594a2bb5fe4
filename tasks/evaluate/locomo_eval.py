"""LoCoMo retrieval evaluation: per sample, a fresh workspace; capture every session, index,
optionally dream, then search every question and score coverage of the evidence turns, beside a
raw-turn BM25 baseline computed on the same questions."""

from __future__ import annotations

import shutil
from datetime import date
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from memflow.schemas.settings import Settings
from memflow.tasks.capture import auto_memory, log_path, message_text, read_log
from memflow.tasks.evaluate.locomo import (
    parse_evidence,
    session_id,
    session_messages,
    session_numbers,
    session_time,
    turn_text,
)
from memflow.tasks.evaluate.metrics import (
    budget_cut,
    covered_turns,
    current_first,
    first_hit,
    ndcg_at,
    normalise,
    recall_at,
    session_of,
)
from memflow.tasks.ground.tokens import block_floor, count_tokens, least_tokens, truncate_tokens
from memflow.tasks.ground.workspace import init_workspace, layout, safe_path
from memflow.tasks.index import run_index
from memflow.tasks.recall import (
    answer_head,
    asked_window,
    expand,
    follow_values,
    line_citations,
    packer,
    render_compact,
    search,
    term_weights,
)


def build_workspace(sample: dict, settings: Settings, dream: bool, writer=None) -> dict:
    """Capture, index and optionally dream one sample; returns {session log path: turn ids}."""
    lay = layout(settings)
    if lay.root.exists():
        shutil.rmtree(lay.root)
    init_workspace(lay)
    last = None
    for number in session_numbers(sample["conversation"]):
        sid = session_id(sample, number)
        result = auto_memory(settings, session_messages(sample, number), sid, writer=writer)
        last = max(filter(None, [last, result.date]), default=None)
    run_index(settings)
    if dream and last:
        from memflow.tasks.dream import run_dream

        run_dream(settings, last, max_units=100_000, max_notes=100_000)
    return built_logs(sample, settings)


def built_logs(sample: dict, settings: Settings) -> dict:
    """{session log path: turn ids} of a built workspace (this job's or an earlier one's)."""
    lay = layout(settings)
    logs = {}
    for number in session_numbers(sample["conversation"]):
        sid = session_id(sample, number)
        logs[log_path(lay, sid)] = [m.get("id", "") for m in read_log(lay, sid)]
    return logs


def statements(sample: dict) -> dict[str, str]:
    """Turn id -> the labelled statement of a long turn (`statement`, normalised), for the turns
    that carry one (the generated technical chats do; LoCoMo's short turns do not)."""
    conversation = sample["conversation"]
    return {turn["dia_id"]: normalise(turn["statement"]) for number in session_numbers(conversation)
            for turn in conversation[f"session_{number}"] if turn.get("statement")}


def note_reader(root: Path) -> Callable[[str, str], str]:
    from memflow.tasks.ground.markdown import parse_anchor

    @lru_cache(maxsize=4096)
    def lines_of(path: str) -> tuple[str, ...]:
        try:
            return tuple(safe_path(root, path).read_text(encoding="utf-8", errors="replace").split("\n"))
        except (OSError, ValueError):
            return ()

    def follow(path: str, anchor: str) -> str:
        lines = lines_of(path)
        return "\n".join(line for a, b in parse_anchor(anchor) for line in lines[a - 1:b])
    return follow


QA_BUDGET = 1000  # tokens of context given to the answering model


def cited_sessions(text: str, logs: dict[str, list[str]]) -> set[str]:
    """Sessions whose log a shown result links to (any span)."""
    from memflow.tasks.ground.markdown import parse_links

    return {session_of(logs[l.target][0]) for l in parse_links(text) if logs.get(l.target)}


class Baseline:
    """bm25s over raw turns (lucene, k1 1.5, b 0.75, PyStemmer English stemming, English
    stopwords), one document per turn: `<speaker>: <text> <blip_caption>`."""

    def __init__(self, sample: dict):
        from memflow.tasks.stores.keyword import stemmed_english_search

        self.ids, self.texts = [], []
        conversation = sample["conversation"]
        for number in session_numbers(conversation):
            for turn in conversation[f"session_{number}"]:
                self.ids.append(turn["dia_id"])
                caption = turn.get("blip_caption") or ""
                self.texts.append(f"{turn['speaker']}: {turn.get('text', '')} {caption}".strip())
        self.search = stemmed_english_search(self.texts)


class Transcript:
    """memory-flows' own search, packed the same way, over the raw transcripts: one Markdown
    file per session under daily/<date>/, `# Session N — date` then one `Speaker: text` paragraph
    per turn. What the notes add over keeping the log (a workspace beside the sample's)."""

    def __init__(self, sample: dict, settings: Settings, built: bool = False):
        root = Path(settings.workspace)
        self.settings = settings.model_copy(update={"workspace": root.parent / f"{root.name}-transcript"})
        lay = layout(self.settings)
        if built:
            return
        if lay.root.exists():
            shutil.rmtree(lay.root)
        init_workspace(lay)
        conversation = sample["conversation"]
        for number in session_numbers(conversation):
            stamp = session_time(conversation, number) or "2000-01-01"
            lines = [f"# Session {number} — {stamp}", ""]
            for turn in conversation[f"session_{number}"]:
                lines += [f"{turn['speaker']}: {turn_text(turn)}", ""]
            path = lay.root / lay.daily / stamp[:10] / f"session-{number}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines), encoding="utf-8")
        run_index(self.settings)

    def ranked(self, question: str, limit: int):
        return search(self.settings, question, limit=limit, link_limit=0, with_watermark=False).results


def packed_cover(results: list, weights: dict[str, float], tokenizer: str,
                 cover: Callable[[str], set[str]], neighbours: int = 1,
                 citations: Callable[[str, int], frozenset] | None = None,
                 window: tuple[date, date] | None = None,
                 head=None) -> Callable[[int], tuple[list[set[str]], int]]:
    """`budget -> (coverage of each packed block, tokens)` for one ranked list (the lines of
    each hit chosen, and each text counted, once for all budgets; `citations` and `window`, the
    days the question asks about, as the API packs with: `recall.line_citations`,
    `recall.asked_window`; `head`: the lines answering the question open the context, as
    `memflow.api.search` packs: `recall.answer_head`)."""
    count = lru_cache(maxsize=None)(count_tokens)
    pack_into = packer(results, weights, count, tokenizer, neighbours, window, citations=citations,
                       floor=block_floor, line_floor=least_tokens, head=head)

    def packed(budget: int) -> tuple[list[set[str]], int, str]:
        blocks = pack_into(budget)
        return [cover(b) for b in blocks], sum(count(b) for b in blocks), "\n".join(blocks)
    return packed


def score(cover: list[set[str]], shown: list[str], evidence: set[str], ks: list[int],
          budgets: list[int], recover: Callable[[int, str], set[str]],
          sessions: list[set[str]], packed: Callable[[int], tuple[list[set[str]], int, str]] | None = None,
          values: tuple[str, list[str]] | None = None) -> dict:
    """Metrics of one ranked list for one question; `recover(i, text)` is the coverage of the
    i-th result when the budget cut its text; `sessions` are the sessions each result cites;
    `packed(budget)` (our side) gives the coverage, tokens and text of the context packed line
    by line into the budget, which the budget metrics then score. `values` (a knowledge update:
    the current value and the ones it replaced) adds `current_first@B`."""
    out: dict = {"first_hit": first_hit(cover, evidence), "ndcg10": ndcg_at(cover, evidence, 10)}
    wanted = {session_of(t) for t in evidence}
    for k in ks:
        out[f"any@{k}"], out[f"all@{k}"] = recall_at(cover, evidence, k)
        out[f"session@{k}"] = float(bool(wanted & set().union(*sessions[:k]))) if sessions[:k] else 0.0
    for budget in budgets:
        if packed is not None:
            cut_cover, used, text = packed(budget)
        else:
            kept, used = budget_cut(shown, budget, count_tokens, truncate_tokens)
            cut_cover = [cover[i] if text == shown[i] else recover(i, text) for i, text in enumerate(kept)]
            text = "\n".join(kept)
        out[f"budget_any@{budget}"], out[f"budget_all@{budget}"] = recall_at(cut_cover, evidence, len(cut_cover))
        out[f"tokens@{budget}"] = used
        if values is not None:
            out[f"current_first@{budget}"] = current_first(text, *values)
    return out


def evaluate_sample(sample: dict, settings: Settings, ks: list[int], budgets: list[int],
                    dream: bool = False, writer=None, progress=None, built: bool = False) -> list[dict]:
    """One row per question of `sample`; `built`: its workspaces (the sample's and the
    transcript's) were built by an earlier job of the run with the same build settings."""
    logs = built_logs(sample, settings) if built else build_workspace(sample, settings, dream, writer)
    lay = layout(settings)
    turns = {}
    for path, ids in logs.items():
        log = read_log(lay, Path(path).stem)
        turns.update({m.get("id"): normalise(message_text(m)) for m in log if m.get("id")})
    follow = note_reader(lay.root)
    quotes = statements(sample)
    baseline = Baseline(sample)
    transcript = Transcript(sample, settings, built)
    limit = max(max(ks), 100 if settings.pack_results else 30)  # packed hits are short: more fill a budget
    cited, t_cited = line_citations(settings), line_citations(transcript.settings)
    rows = []
    for q in sample["qa"]:
        ids, malformed = parse_evidence(q.get("evidence", []))
        evidence = {i for i in ids if i in turns}
        row = {"sample": sample["sample_id"], "question": q["question"],
               "category": int(q.get("category", 0)), "evidence": ids, "malformed": malformed,
               "dangling": len(set(ids) - evidence)}
        if q.get("category_name"):
            row["category_name"] = q["category_name"]
        values = (str(q["answer"]), [str(v) for v in q["previous"]]) if q.get("previous") else None
        response = search(settings, q["question"], limit=limit, link_limit=10, with_watermark=False)
        shown = [render_compact(r) for r in response.results]

        def cover_of(text: str) -> set[str]:
            return covered_turns(text, turns, logs, follow, quotes)

        cover = [cover_of(t) for t in shown]
        row["ranked_paths"] = [r.path for r in response.results]
        row["covered"] = sorted(set().union(*cover)) if cover else []
        if evidence:
            sessions = [cited_sessions(t, logs) | {session_of(c) for c in cov}
                        for t, cov in zip(shown, cover)]
            head = answer_head(settings, q["question"])
            followed = follow_values(settings, q["question"], response.results) if head else []
            packed = packed_cover(response.results + followed, term_weights(settings, q["question"]),
                                  settings.keyword_tokenizer, lambda b: cover_of(expand(b)),
                                  settings.pack_neighbours, cited, asked_window(settings, q["question"]), head)
            row.update(score(cover, shown, evidence, ks, budgets, lambda i, t: cover_of(t), sessions,
                             packed if settings.pack_results else None, values))
            hits = baseline.search(q["question"], 200)  # enough turns to fill every budget
            b_shown = [baseline.texts[i] for i in hits]
            b_cover = [{baseline.ids[i]} for i in hits]
            # a raw turn cut by the budget no longer contains its whole text: it covers nothing
            # (unless a labelled statement of it is still in what was kept)
            b_scores = score(b_cover, b_shown, evidence, ks, budgets,
                             lambda i, t: covered_turns(t, {}, {}, quotes=quotes) & {baseline.ids[hits[i]]},
                             [{session_of(baseline.ids[i])} for i in hits], values=values)
            row.update({f"baseline_{k}": v for k, v in b_scores.items()})
            t_results = transcript.ranked(q["question"], limit)
            t_shown = [render_compact(r) for r in t_results]
            t_cover = [covered_turns(t, turns, {}, quotes=quotes) for t in t_shown]
            t_packed = packed_cover(t_results, term_weights(transcript.settings, q["question"]),
                                    settings.keyword_tokenizer, lambda b: covered_turns(b, turns, {}, quotes=quotes),
                                    settings.pack_neighbours, t_cited, asked_window(transcript.settings, q["question"]))
            t_scores = score(t_cover, t_shown, evidence, ks, budgets,
                             lambda i, t: covered_turns(t, turns, {}, quotes=quotes),
                             [{session_of(c) for c in cov} for cov in t_cover],
                             t_packed if settings.pack_results else None, values)
            row.update({f"transcript_{k}": v for k, v in t_scores.items()})
        if settings.chat_model:
            from memflow.tasks.evaluate.qa_eval import answer_and_grade

            context, _ = budget_cut(shown, QA_BUDGET, count_tokens, truncate_tokens)
            gold = str(q.get("answer", q.get("adversarial_answer", "")))
            row["qa_answer"], row["qa_correct"] = answer_and_grade(
                settings, q["question"], "\n\n".join(context), gold)
        rows.append(row)
        if progress:
            progress(1)
    return rows


def evaluate_job(data_path: str, sample_id: str, settings: Settings, ks: list[int], budgets: list[int],
                 dream: bool = False) -> list[dict]:
    """`evaluate_sample` as a job a worker process runs from paths alone: the sample is read from
    the data file (shared storage), the model writer, if any, is made where it runs."""
    import json

    data = json.loads(Path(data_path).read_text(encoding="utf-8"))
    [sample] = [s for s in data if s["sample_id"] == sample_id]
    writer = None
    if settings.chat_model:
        from memflow.tasks.capture import model_writer

        writer = model_writer(settings)
    return evaluate_sample(sample, settings, ks, budgets, dream, writer)


# (jobs of (sample, settings), ks, budgets, dream) -> rows of each job, in order
MapJobs = Callable[[list[tuple[dict, Settings]], list[int], list[int], bool], list[list[dict]]]


def run_evaluation(data_path: Path, out: Path, settings: Settings, ks: list[int], budgets: list[int],
                   dream: bool = False, samples: list[str] | None = None, progress=None,
                   evaluate: Callable | None = None, grid: dict[str, list] | None = None,
                   map_jobs: MapJobs | None = None) -> dict:
    """The whole evaluation: writes questions.parquet and summary.json under `out`.

    `grid` (setting -> values) evaluates every combination, each sample in its own workspace
    (`out/workspaces/<setting=value,...>/<sample>`), into one questions.parquet with a column
    per setting and one summary per combination (`summary["grid"]`). `map_jobs` runs the jobs
    (e.g. in parallel on a task runner); by default they run here, one after another, and a
    combination that differs from an earlier one only in recall settings (`RECALL_ONLY`:
    weights, packing, time, PRF) searches that combination's workspace instead of building its
    own (a grid over recall settings costs one build per sample)."""
    import json
    import time

    import polars as pl

    from memflow.tasks.evaluate.grid import build_key, combinations, grid_summary, job_settings, run_metadata
    from memflow.tasks.stores.files import atomic_write_json

    started = time.perf_counter()
    data = json.loads(Path(data_path).read_text(encoding="utf-8"))
    chosen = [s for s in data if not samples or s["sample_id"] in samples]
    if samples and len(chosen) != len(samples):
        missing = sorted(set(samples) - {s["sample_id"] for s in chosen})
        raise ValueError(f"samples not in {data_path}: {', '.join(missing)}")
    out.mkdir(parents=True, exist_ok=True)
    combos = combinations(grid or {})
    jobs = [(sample, job_settings(settings, combo, out, sample["sample_id"]))
            for combo in combos for sample in chosen]
    if map_jobs is not None:
        results = map_jobs(jobs, ks, budgets, dream)
    else:
        writer = None
        if settings.chat_model:
            from memflow.tasks.capture import model_writer

            writer = model_writer(settings)
        results = []
        built: dict[tuple[str, str], Path] = {}  # (sample, build settings) -> its workspace
        for sample, job in jobs:
            key = (sample["sample_id"], build_key(job))
            if evaluate is None and key in built:  # a recall-only setting differs: search it again
                reused = job.model_copy(update={"workspace": built[key]})
                results.append(evaluate_sample(sample, reused, ks, budgets, dream, writer, progress, True))
                continue
            built[key] = Path(job.workspace)
            results.append((evaluate or evaluate_sample)(sample, job, ks, budgets, dream, writer, progress))
    per_combo: list[list[dict]] = [[] for _ in combos]
    for number, ((_, job), job_rows) in enumerate(zip(jobs, results)):
        values = {key: getattr(job, key) for key in (grid or {})}
        per_combo[number // len(chosen)].extend({**row, **values} for row in job_rows)
    rows = [row for part in per_combo for row in part]
    pl.DataFrame(rows, infer_schema_length=None).write_parquet(out / "questions.parquet")
    summary = grid_summary(per_combo, combos, ks, budgets)
    summary["run"] = run_metadata(data_path, chosen, dream, ks, budgets, settings, grid,
                                  time.perf_counter() - started)
    atomic_write_json(out / "summary.json", summary)
    return summary
