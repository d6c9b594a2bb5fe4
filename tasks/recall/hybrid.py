"""Stage 4, recall: hybrid search over the index with link expansion.

BM25 always; vectors when an embedding model is configured. Both branches search the same
snapshot rows under the same filter mask before their own top-k (limit x candidate_multiplier,
at most 200), then weighted reciprocal-rank fusion. Results carry their 1-hop out- and in-links
with the neighbour's name and description, read from the snapshot too.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.schemas.recall import Filters, LinkInfo, SearchResponse, SearchResult
from memflow.schemas.notes import tag_list
from memflow.schemas.settings import Settings
from memflow.tasks.ground.markdown import FACT_DATE_RE, line_date, line_text, parse_anchor, searchable_text
from memflow.tasks.ground.memo import memo
from memflow.tasks.ground.speakers import speaker_mask
from memflow.tasks.ground.tokenize import query_tokens, tokenize
from memflow.tasks.ground.transcript import message_line
from memflow.tasks.ground.workspace import Layout, PathError, date_of, layout, safe_path, today_in
from memflow.tasks.index import keyword_dir, other_snapshots, watermark
from memflow.tasks.recall.answers import Head, asks_now, values
from memflow.tasks.recall.evidence import evidence_first
from memflow.tasks.recall.factkeys import fact_keys, read_out_links
from memflow.tasks.recall.fusion import active_weights, rrf
from memflow.tasks.recall.perspective import first_person
from memflow.tasks.recall.speakers import search_tokens, speakers_after_words
from memflow.tasks.recall.replaced import current_first, label, replaced_in, replaced_parts
from memflow.tasks.recall.timeline import as_of_text, time_window, window_text
from memflow.tasks.stores import keyword, rowmaps
from memflow.tasks.stores.files import read_text

log = logging.getLogger("memflow.recall")
MAX_CANDIDATES = 200
RESULT_COLUMNS = ["id", "path", "start_line", "end_line", "text", "heading_path", "name",
                  "description", "date"]
_SEEN: dict[Path, str] = {}  # snapshot folder -> the generation last opened (warned about)


class IndexMissing(LookupError):
    """The workspace has no index yet."""


def open_index(lay: Layout, settings: Settings) -> keyword.KeywordIndex:
    """The search snapshot, cached per process until the index changes (every index run that
    changes anything swaps in a new generation; `keyword.current` is the one cache, shared with
    the incremental index, so a write's delta is read once). Searching never opens the LanceDB
    tables."""
    folder = keyword_dir(lay, settings)
    try:
        index = keyword.current(folder)  # a delta reuses the main segment
    except keyword.SnapshotOutdated as exc:
        raise IndexMissing(f"{exc}: run `memflow -w {lay.root} index`") from exc
    if index is None:
        others = other_snapshots(lay, settings)  # e.g. built before an upgrade changed how text is cut
        if others:
            raise IndexMissing(f"the index in {lay.root} was built for another tokenizer "
                               f"({', '.join(others)}; this version reads {folder.name}): "
                               f"run `memflow -w {lay.root} index` to rebuild it")
        raise IndexMissing(f"no index in {lay.root}: run `memflow -w {lay.root} index` first")
    if _SEEN.get(folder) != index.generation:
        _SEEN[folder] = index.generation
        vectors = index.meta.get("vectors")
        live = int(index.meta.get("docs", index.size))  # a delta's size counts the rows it replaced
        if vectors and vectors["rows"] < live:
            log.warning("%d of %d chunks have no vector of %s: they are found by keywords only until "
                        "`memflow index` embeds them", live - vectors["rows"], live, vectors["model"])
    return index


def filter_mask(docs: pa.Table, filters: Filters) -> np.ndarray:
    mask = pc.is_in(docs["kind"], pa.array(list(filters.kinds)))  # replaced lines: recall.replaced
    if filters.layer:
        mask = pc.and_(mask, pc.equal(docs["layer"], filters.layer))
    if filters.prefix:
        mask = pc.and_(mask, pc.starts_with(docs["path"], filters.prefix))
    if filters.since:
        mask = pc.and_(mask, pc.greater_equal(docs["date"], pa.scalar(filters.since)))
    for tag in tag_list(list(filters.tags)):  # every tag given: notes carrying all of them
        mask = pc.and_(mask, has_tag(docs["tags"], tag))
    last = last_day(filters)
    if last:  # a digest chunk's older lines may be inside: its lines are filtered (in_time)
        mask = pc.and_(mask, pc.or_(pc.less_equal(docs["date"], pa.scalar(last)),
                                    pc.equal(docs["layer"], "digest")))
    return pc.fill_null(mask, False).to_numpy(zero_copy_only=False)


def has_tag(tags: pa.ChunkedArray, tag: str) -> pa.Array:
    """Row i's tag list holds `tag` (one pass over the flattened lists)."""
    lists = tags.combine_chunks()
    hit = np.zeros(len(lists), dtype=bool)
    found = pc.equal(pc.list_flatten(lists), tag).to_numpy(zero_copy_only=False)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    hit[parents[np.asarray(found, dtype=bool)]] = True
    return pa.array(hit)


def last_day(filters: Filters) -> date | None:
    """The last day a search may show: the earlier of `until` and `as_of`."""
    return min(filter(None, (filters.until, filters.as_of)), default=None)


def row_mask(index: keyword.KeywordIndex, filters: Filters, tokenizer: str = "bigram") -> np.ndarray:
    """The filters as a boolean mask over the snapshot's rows, computed once per index."""
    key = filters.model_dump_json()
    if key not in index.masks and filters.since:
        # a search for values said later asks from the day after its hit: a new day each query,
        # the rest of its filters the same (a null date is false either way: `pc.and_` is not Kleene)
        later = pc.greater_equal(index.docs["date"], pa.scalar(filters.since))
        index.masks[key] = row_mask(index, filters.model_copy(update={"since": None}), tokenizer) \
            & pc.fill_null(later, False).to_numpy(zero_copy_only=False)
    if key not in index.masks:
        mask = filter_mask(index.docs, filters)
        if filters.speaker:  # the speaker is in the terms, as marked tokens
            mask = mask & speaker_mask(index.retriever, len(mask), filters.speaker, tokenizer)
        index.masks[key] = mask
    return index.masks[key]


def keyword_branch(index: keyword.KeywordIndex, tokens: list[str], n: int, filters: Filters,
                   settings: Settings, factor: np.ndarray | None = None) -> list[tuple[str, float]]:
    """BM25 top-n (the n best by score x `factor`, see `row_factors`); with
    `settings.prf_terms`, a second pass with the feedback terms added, and with
    `settings.note_weight`, each hit lifted by its file's other hits."""
    mask = row_mask(index, filters, settings.keyword_tokenizer)
    hits = speakers_after_words(index, tokens, n, mask, factor)
    if settings.prf_terms and hits:
        extra = feedback_terms(index, tokens, hits[:settings.prf_docs], settings.prf_terms,
                               settings.keyword_tokenizer)
        if extra:
            weights = {t: float(tokens.count(t)) for t in tokens}
            weights.update({t: settings.prf_weight * w for t, w in extra.items()})
            hits = keyword.top_k(index, list(weights), n, mask, weights, factor)
    if settings.note_weight and hits:
        hits = note_scores(index, hits, settings.note_weight)
    ids = index.docs.column("id")
    return [(ids[row].as_py(), score) for row, score in hits]


def feedback_terms(index: keyword.KeywordIndex, tokens: list[str], hits: list[tuple[int, float]],
                   count: int, tokenizer: str) -> dict[str, float]:
    """RM3-style expansion: term -> weight in (0, 1] for the `count` terms (not in the query)
    that weigh most in the top hits: sum over hits of (hit score / best score) x term frequency
    in the hit / its length, times the term's idf. Terms found in a single hit are left out (one
    chunk's vocabulary is no evidence of what the question is about)."""
    from collections import Counter

    texts = index.docs.column("text")
    best = max(score for _, score in hits) or 1.0
    mass: Counter = Counter()
    seen_in: Counter = Counter()
    asked = set(tokens)
    for row, score in hits:
        words = [w for w in query_tokens(texts[row].as_py() or "", tokenizer) if w not in asked]
        if not words:
            continue
        for word, tf in Counter(words).items():
            mass[word] += (score / best) * tf / len(words)
            seen_in[word] += 1
    shared = [w for w in mass if seen_in[w] > 1] if len(hits) > 1 else list(mass)
    idf = keyword.idf(index, shared)
    ranked = sorted(((mass[w] * idf[w], w) for w in shared if w in idf), reverse=True)[:count]
    top = ranked[0][0] if ranked else 0.0
    return {w: weight / top for weight, w in ranked if weight > 0} if top > 0 else {}


def note_scores(index: keyword.KeywordIndex, hits: list[tuple[int, float]],
                weight: float) -> list[tuple[int, float]]:
    """Each hit's score plus `weight` times the scores of the other hits in its file, re-sorted."""
    column = index.docs.column("path")
    paths = [column[row].as_py() for row, _ in hits]
    per_file: dict[str, float] = {}
    for path, (_, score) in zip(paths, hits):
        per_file[path] = per_file.get(path, 0.0) + score
    lifted = [(row, score + weight * (per_file[path] - score)) for path, (row, score) in zip(paths, hits)]
    return sorted(lifted, key=lambda pair: (-pair[1], pair[0]))


def vector_queries(settings: Settings, query: str) -> list[str]:
    """The texts the vector branch embeds: the query, and its first-person reading if any."""
    variant = first_person(query) if settings.first_person_queries else None
    return [query, variant] if variant else [query]


class VectorsUnavailable(RuntimeError):
    """The vector branch cannot answer (the embedding model failed, or returns vectors of
    another dimension than the index holds): search answers from BM25 with a warning."""


def vector_branch(index: keyword.KeywordIndex, settings: Settings, texts: list[str], n: int,
                  filters: Filters, factor: np.ndarray | None = None) -> list[tuple[str, float]]:
    """Exact cosine top-n over the snapshot's vectors for the embeddings of `texts`. Raises
    VectorsUnavailable when the embedding model fails or its dimension is not the index's."""
    from memflow.tasks.ground.blas import matmul
    from memflow.tasks.ground.llm import ModelCallError, ModelOutputError
    from memflow.tasks.index import embed_queries

    if (index.vector_model or "").startswith("local/"):
        from memflow.tasks.ground.local_embeddings import matmul
    dims = index.vectors.shape[1] if index.vectors is not None else None
    try:
        vectors = np.asarray(embed_queries(settings, texts), dtype=np.float32)
        if dims is not None and vectors.shape[-1] != dims:  # a cached query of another dimension?
            vectors = np.asarray(embed_queries(settings, texts, fresh=True), dtype=np.float32)
    except (ModelCallError, ModelOutputError) as exc:
        raise VectorsUnavailable(f"the embedding model failed ({exc})") from exc
    if dims is not None and vectors.shape[-1] != dims:
        raise VectorsUnavailable(
            f"{settings.embedding_model} now returns {vectors.shape[-1]}-dim vectors, the index holds "
            f"{dims}-dim ones: run `memflow reindex` to embed every chunk again")
    hits = keyword.nearest(index, vectors, n, row_mask(index, filters, settings.keyword_tokenizer), matmul,
                           factor)
    ids = index.docs.column("id")
    return [(ids[row].as_py(), score) for row, score in hits]


def term_weights(settings: Settings, query: str) -> dict[str, float]:
    """Query token -> idf in the workspace's index (what packing ranks a hit's lines by)."""
    index = open_index(layout(settings), settings)
    return keyword.idf(index, search_tokens(index, query, settings.keyword_tokenizer))


def answer_head(settings: Settings, query: str, as_of: date | None = None) -> Head | None:
    """What the opening of a packed context needs from this workspace (`answers.Head`); None
    when `pack_answers_tokens` is 0 or the question asks about the past (`answers.asks_now`)."""
    if not settings.pack_answers_tokens or not (as_of or asks_now(query)):
        return None
    logs = noted_logs(settings)
    return Head(term_idf(settings), lambda path: logs([path])[path], settings.pack_answers_tokens, as_of,
                settings.digest_dir, line_citations(settings), logs)


FOLLOWED_HITS = 5  # the most hits a search for a value said later adds


def follow_values(settings: Settings, query: str, results: list[SearchResult],
                  filters: Filters | None = None) -> list[SearchResult]:
    """The hits of a second search, dated after the line that answers `query` best (of its top
    hits), for the three rarest values that line names (`answers.values`: "I live in Leeds" -> a later "we
    left Leeds for Bristol", which holds no word of "where does the user live?"). Hits
    `results` holds already are left out; `filters` (`as_of`, `until`) hold for the second
    search too."""
    from memflow.tasks.recall.packing import line_scores

    weights = term_weights(settings, query)
    best, day, score = "", None, 0.0
    for result in results[:3]:
        for line, value in zip(result.text.split("\n"), line_scores(result, weights, settings.keyword_tokenizer)):
            if value > score:
                best, day, score = line, line_date(line) or result.date, value
    if not best or day is None:
        return []
    named = set(values(tokenize(searchable_text(best), settings.keyword_tokenizer), weights, term_idf(settings))[:3])
    words = [w for w in dict.fromkeys(_WORD_RE.findall(searchable_text(best)))
             if named.intersection(tokenize(w, settings.keyword_tokenizer))]
    if not words:
        return []
    later = (filters or Filters()).model_copy(update={"since": day + timedelta(days=1)})
    seen = {r.id for r in results}
    found = search(settings, " ".join(words), FOLLOWED_HITS, 0.0, later, link_limit=0, with_watermark=False)
    return [r for r in found.results if r.id not in seen]


_WORD_RE = re.compile(r"\w[\w.:/%€$£-]*\w|\w")


def term_idf(settings: Settings) -> Callable[[str], float]:
    """A term's idf in the workspace's index (0 for a term it does not know), remembered per
    snapshot (the opening of a packed context asks it of every term of its best lines)."""
    index = open_index(layout(settings), settings)
    known: dict[str, float] = index.masks.setdefault("term-idf", {})  # a snapshot's idf does not change

    def idf(term: str) -> float:
        if term not in known:
            known[term] = keyword.idf(index, [term]).get(term, 0.0)
        return known[term]
    return idf


def asked_window(settings: Settings, query: str, as_of: date | None = None) -> tuple[date, date] | None:
    """The days a question asks about, for ordering packed lines: the window its time words name
    (with `time_weight` on), else up to `as_of`; None when neither."""
    window = time_window(query, today_in(settings.timezone)) if settings.time_weight else None
    return window or ((date.min, as_of) if as_of else None)


def search(settings: Settings, query: str, limit: int = 5, min_score: float = 0.0,
           filters: Filters | None = None, explain: bool = False,
           link_limit: int = 10, with_watermark: bool = True) -> SearchResponse:
    """Query -> ranked results with links, the index watermark and each branch's hit count.

    The score is weighted RRF: `sum w_b / (rrf_k + rank_b)`; with vectors off the keyword branch
    has weight 1, so the first result scores 1/61 = 0.0164. `min_score` drops results below it.
    """
    if not query.strip():
        raise ValueError("empty query")
    filters = filters or Filters()
    lay = layout(settings)
    index = open_index(lay, settings)
    n = min(max(limit, 1) * settings.candidate_multiplier, MAX_CANDIDATES)
    vectors_on, warnings = bool(settings.embedding_model), []
    if vectors_on and index.vector_model != settings.embedding_model:
        warnings.append(f"the index has no vectors of {settings.embedding_model} (it has "
                        f"{index.vector_model}): keyword results only; run `memflow index` to embed")
        vectors_on = False
    texts = vector_queries(settings, query) if vectors_on else []
    tokens = search_tokens(index, query, settings.keyword_tokenizer)
    priors = {"digest": settings.digest_weight, "session": settings.session_weight}
    window = time_window(query, today_in(settings.timezone)) if settings.time_weight else None
    timing = time_factors(index, window, settings.time_weight, settings.recency_weight,
                          settings.recency_half_life_days)
    factor = row_factors(index, priors, timing)
    rankings = {"keyword": keyword_branch(index, tokens, n, filters, settings, factor)}
    if vectors_on:
        try:
            rankings["vector"] = vector_branch(index, settings, texts, n, filters, factor)
        except VectorsUnavailable as exc:
            warnings.append(f"keyword (BM25) results only: {exc}")
            vectors_on = False
    for warning in warnings:
        log.warning("%s", warning)
    weights = active_weights(settings.vector_weight, settings.keyword_weight, vectors_on)
    rankings = {b: weigh_layers(index, r, factor) for b, r in rankings.items()}
    fused = [f for f in rrf(rankings, weights, settings.rrf_k) if f.score >= min_score]
    idf = keyword.idf(index, tokens)
    fused = evidence_first(index, lay, fused, idf, settings.keyword_tokenizer, window)  # the turns a digest chunk restates go above it
    if not filters.superseded:  # a hit matching only on replaced lines goes below its replacement
        fused = current_first(index, lay, fused, set(tokens), settings.keyword_tokenizer, filters.as_of)
    fused, rows = one_hit_per_fact(index, lay, fused, limit, idf, settings.keyword_tokenizer,
                                   filters.as_of)
    fused, rows = in_time(fused, rows, filters)
    results = []
    for f, row in zip(fused, rows):
        shown = {k: row[k] for k in RESULT_COLUMNS} | {"tags": row.get("tags") or []}
        result = SearchResult(**shown, score=f.score, vector=f.raw.get("vector"),
                              keyword=f.raw.get("keyword"))
        result._indexed = (row["indexed_text"], row.get("line_terms"))  # read by packing
        if explain:
            time_factor = timing[index.row_of(f.id)] if timing is not None else 1.0
            result.explain = {"ranks": f.ranks, "contributions": f.parts, "weights": weights,
                              "rrf_k": settings.rrf_k, "candidates_per_branch": n,
                              "vector_queries": texts, "layer": row.get("layer"),
                              "date": row["date"].isoformat() if row.get("date") else None,
                              "time_window": [d.isoformat() for d in window] if window else None,
                              "time_factor": round(float(time_factor), 4),
                              "restated_by": f.restated_by}
        results.append(result)
    expand_links(index, lay, results, link_limit)
    links_in_time(results, filters)
    vector_hits, keyword_hits = len(rankings.get("vector", [])), len(rankings["keyword"])
    log.info("search %r: vector_hits=%d keyword_hits=%d", query[:80], vector_hits, keyword_hits)
    mark = watermark(lay, hits=indexed_mtimes(index, [r.path for r in results])) if with_watermark else {"skipped": True}
    return SearchResponse(query=query, results=results, watermark=mark,
                          vector_hits=vector_hits, keyword_hits=keyword_hits, warnings=warnings)


def indexed_mtimes(index: keyword.KeywordIndex, paths: list[str]) -> dict[str, int]:
    """The hits' files as the snapshot indexed them (path -> mtime_ns), for the freshness check."""
    return {p: row["mtime_ns"] for p, row in index.file_info(paths, ("mtime_ns",)).items()}


def row_factors(index: keyword.KeywordIndex, priors: dict[str, float],
                timing: np.ndarray | None = None) -> np.ndarray | None:
    """One score factor per snapshot row: its layer's prior (`digest_weight`, `session_weight`)
    times its time factor (`time_factors`); None when every factor is 1. The branches choose
    their candidates by score x factor and `weigh_layers` ranks by it."""
    priors = {layer: w for layer, w in priors.items() if w != 1.0}
    if not priors:
        return timing
    key = f"priors:{sorted(priors.items())}"
    if key not in index.masks:  # per index, like the filter masks
        layers = index.docs.column("layer")
        prior = np.ones(index.size)
        for layer, weight in priors.items():
            prior[pc.fill_null(pc.equal(layers, layer), False).to_numpy(zero_copy_only=False)] = weight
        index.masks[key] = prior
    return index.masks[key] if timing is None else index.masks[key] * timing


def weigh_layers(index: keyword.KeywordIndex, ranking: list[tuple[str, float]],
                 factor: np.ndarray | None) -> list[tuple[str, float]]:
    """A branch's ranking with each chunk's score (BM25, cosine) times its row's `factor`
    (`row_factors`), re-sorted: priors on relevance, so a chunk that matches far better still
    ranks first (None: unchanged)."""
    if factor is None:
        return ranking
    weighed = [(cid, score * float(factor[index.row_of(cid)])) for cid, score in ranking]
    return sorted(weighed, key=lambda pair: -pair[1])


def time_factors(index: keyword.KeywordIndex, window: tuple[date, date] | None, time_weight: float,
                 recency_weight: float, half_life_days: float) -> np.ndarray | None:
    """One score factor per snapshot row: `1 + time_weight` for a chunk dated inside the window
    the question names, times `1 + recency_weight * 2^(-age / half_life)` (age in days before the
    newest dated chunk); None when neither applies."""
    if window is None and not recency_weight:
        return None
    days = index.docs.column("date").cast(pa.int32()).to_numpy(zero_copy_only=False)
    dated = ~np.isnan(days.astype(np.float64))
    factor = np.ones(len(days))
    if window is not None:
        first, last = (d.toordinal() - date(1970, 1, 1).toordinal() for d in window)
        filled = np.nan_to_num(days, nan=-1)
        inside = dated & (filled >= first) & (filled <= last)
        factor = factor * np.where(inside, 1.0 + time_weight, 1.0)
    if recency_weight and dated.any():
        age = np.nanmax(days) - np.nan_to_num(days, nan=np.nanmin(days))
        factor = factor * np.where(dated, 1.0 + recency_weight * np.exp2(-age / half_life_days), 1.0)
    return factor


def in_time(fused: list, rows: list[dict], filters: Filters) -> tuple[list, list[dict]]:
    """Digest chunks cut to the fact lines the time filters let through (`since`/`until`: the
    lines stated inside; `as_of`: as the node stood that day); one with none left is dropped."""
    if not (filters.since or filters.until or filters.as_of):
        return fused, rows
    kept, out = [], []
    for candidate, row in zip(fused, rows):
        text, shown = row["text"], {**row}
        if row.get("layer") == "digest":
            if filters.as_of:
                text = as_of_text(text, filters.as_of)
            if text is not None and (filters.since or filters.until):
                text = window_text(text, filters.since, filters.until)
            if text is None:
                continue
            if text != row["text"]:  # the node's description is its current first fact: say the shown one
                first = next((line for line in text.split("\n") if FACT_DATE_RE.match(line)), "")
                shown["description"] = line_text(first)
        shown["text"] = text
        kept.append(candidate)
        out.append(shown)
    return kept, out


def links_in_time(results: list[SearchResult], filters: Filters | None) -> None:
    """Drop the links to and from notes dated after `until`/`as_of`: a result answering as of a
    day does not show, through its links, what was said later."""
    last = last_day(filters) if filters else None
    if last is None:
        return
    for result in results:
        result.links = [link for link in result.links if (date_of(link.path) or last) <= last]


def one_hit_per_fact(index: keyword.KeywordIndex, lay: Layout, fused: list, limit: int,
                     terms: dict[str, float] | None = None, tokenizer: str = "bigram",
                     as_of: date | None = None) -> tuple[list, list[dict]]:
    """The first `limit` candidates that each say something the ones above them did not: a
    digest chunk whose facts all come from daily lines already shown is left out, and so is a
    daily chunk whose lines a digest chunk above already states (a fact is one hit, not two).
    A candidate that matched only through lines already shown (what is left of it has none of
    the query's `terms`, term -> idf) is left out too, and so is a digest chunk whose fact
    matching the query best was shown above (`shown_best`). Lines replaced by `as_of` (all,
    without it) are labelled with the day they were replaced."""
    kept, rows, seen, said = [], [], set(), set()
    for start in range(0, len(fused), max(limit, 1)):
        batch = fused[start:start + max(limit, 1)]
        rows_read = index.rows([index.row_of(f.id) for f in batch])
        read_out_links(index, [row["path"] for row in rows_read])  # one read for the batch
        for candidate, row in zip(batch, rows_read):
            keys = fact_keys(index, lay, row)
            if keys and keys <= seen:
                continue
            labelled = label(row["text"], row["end_line"], replaced_in(row, as_of), replaced_parts(row))
            text, fresh, repeated = elide_repeats(labelled, said)
            if repeated and not fresh:
                continue  # every fact line of it was shown above, in other words of the same line
            if repeated and terms and terms.keys().isdisjoint(tokenize(searchable_text(text), tokenizer)):
                continue  # it matched through the lines shown above only
            if terms and row["path"].startswith(f"{lay.digest}/") and \
                    shown_best(labelled, text, seen, terms, tokenizer):
                continue  # it ranked for a fact shown above: its other facts rank as their own lines do
            seen |= keys
            said |= fresh
            kept.append(candidate)
            rows.append({**row, "text": text, "indexed_text": row["text"]})
            if len(kept) == limit:
                return kept, rows
    return kept, rows


_CITED_RE = re.compile(r"\[\[([^\[\]#|]+)#L(\d+)")


def shown_best(labelled: str, text: str, seen: set, terms: dict[str, float], tokenizer: str) -> bool:
    """Was the digest chunk's fact line matching the query best (by the summed idf of the query
    `terms` its words hold) shown above, while the facts left match less? Its rank was earned by
    that fact: the others, older ones too, would take the place of what ranks after it ("X and I
    lived together" shown, the node's "X sent me a video ... A is treating her well" went in
    above the newer "X took the B job"). Shown: left blank in `text` (`elide_repeats`) or citing
    a daily line a candidate above showed (`seen`)."""
    facts = [(before, not after.strip() or _cites_only(before, seen))
             for before, after in zip(labelled.split("\n"), text.split("\n")) if FACT_DATE_RE.match(before)]
    if not any(shown for _, shown in facts):
        return False
    best_shown = best_left = 0.0
    for line, shown in facts:
        weight = math.fsum(terms[t] for t in _fact_terms(line, tokenizer).split() if t in terms)
        if shown:
            best_shown = max(best_shown, weight)
        else:
            best_left = max(best_left, weight)
    return best_shown > best_left


def _cites_only(line: str, seen: set) -> bool:
    """Does every place a fact line cites lie in `seen`? (False for a line citing none.)"""
    cited = {(path, int(n)) for path, n in _CITED_RE.findall(line)}
    return bool(cited) and cited <= seen


@memo(1 << 16)  # the same digest lines come back query after query
def _fact_terms(line: str, tokenizer: str) -> str:
    """A digest fact line's search terms, each once, joined by spaces: its words, not its date
    or its links."""
    return " ".join(dict.fromkeys(tokenize(searchable_text(line[FACT_DATE_RE.match(line).end():]), tokenizer)))


_BULLET = r"^\s{0,1}[-*+]\s"
_BULLET_RE = re.compile(_BULLET)
_ANY_BULLET_RE = re.compile(_BULLET, re.MULTILINE)
_UNTIL_RE = re.compile(r"^\s+[-*+]\s+until ")


@memo(1 << 16)  # the same candidate lines come back query after query
def _fact_key(line: str) -> str | None:
    """A current fact line (not history) as comparable text: no bullet, date, speaker, links."""
    if not _BULLET_RE.match(line) or _UNTIL_RE.match(line):
        return None
    text = line_text(line).lower()
    return text if len(text) >= 12 else None


_UNSEEN = object()


def elide_repeats(text: str, said: set[str]) -> tuple[str, set[str], int]:
    """A result's text without the fact lines already shown above it (a digest line and the
    daily line it came from say one fact); returns (text, its new fact lines, lines dropped).
    A dropped line is left blank, not taken out, so every other line keeps its file line number
    (a hit's lines are numbered back from its end line), and its `until` history lines go with
    it: they were the history of the fact shown above, not of the fact before them (taken out,
    a digest block showed "I prefer dark roast coffee" over "until ...: I'm allergic to
    penicillin", both a line off)."""
    if _ANY_BULLET_RE.search(text) is None:  # no fact line (a transcript window, prose)
        return text, set(), 0
    out, fresh, dropped, dropping = [], set(), 0, False
    known = _fact_key.table.get  # the remembered keys read in place: a call per line cost more than the key
    for line in text.split("\n"):
        if dropping and _UNTIL_RE.match(line):
            out.append("")
            continue
        key = known(line, _UNSEEN)
        if key is _UNSEEN:
            key = _fact_key(line)
        dropping = key is not None and key in said
        if dropping:
            dropped += 1
            out.append("")
            continue
        if key is not None:
            fresh.add(key)
        out.append(line)
    return "\n".join(out), fresh, dropped


# "root\0path" -> (mtime_ns, size, text) of linked files read by earlier searches: a tuple of
# atoms and a dict of them, which the garbage collector does not walk (see tasks/ground/memo.py)
_READ: dict[str, tuple[int, int, str]] = {}
_READ_LIMIT = 4096


def _file_lines(lay: Layout, path: str) -> list[str]:
    """A linked file's lines, read again only when its mtime or size changed since a search of
    this process read it (one `stat`, instead of resolving the path and reading the file)."""
    key = f"{lay.root}\0{path}"
    try:
        stat = (lay.root / path).stat()
    except (OSError, ValueError):
        stat = None
    known = _READ.get(key)
    if stat is not None and known is not None and known[:2] == (stat.st_mtime_ns, stat.st_size):
        return known[2].splitlines()
    try:
        text = read_text(safe_path(lay.root, path))
    except (OSError, PathError):
        _READ.pop(key, None)
        return []
    # stat'ed before the read (a change in between is read again next time); a file changed in
    # the last 2 s is not kept: an edit within the clock's tick that keeps the size would look unchanged
    if stat is not None and time.time_ns() - stat.st_mtime_ns > 2_000_000_000:
        if len(_READ) >= _READ_LIMIT:
            _READ.clear()
        _READ[key] = (stat.st_mtime_ns, stat.st_size, text)
    return text.splitlines()


def _anchored_lines(lay: Layout, path: str, anchor: str, cache: dict[str, list[str]]) -> str:
    ranges = parse_anchor(anchor) if anchor else []
    if not ranges:
        return ""
    if path not in cache:
        cache[path] = _file_lines(lay, path)
    lines = cache[path]
    picked = [line for a, b in ranges for line in lines[a - 1:b]]
    if path.endswith(".jsonl"):  # session logs: show who said what, not raw JSON
        picked = [_message_line(line) for line in picked]
    return "\n".join(picked)


def _message_line(line: str) -> str:
    try:
        message = json.loads(line)
    except json.JSONDecodeError:
        return line
    return message_line(message) if isinstance(message, dict) else line


def line_citations(settings: Settings) -> Callable[[str, int], frozenset]:
    """`(path, line) -> the (path, line)s that line's provenance links cite`, from the
    snapshot's link graph, each file's links read once per snapshot (what packing follows from
    a digest line through the daily line it cites to the turn)."""
    index = open_index(layout(settings), settings)
    per_file: dict[str, dict[int, frozenset]] = index.masks.setdefault("line-citations", {})  # links do not change

    def cited(path: str, line: int) -> frozenset:
        if path not in per_file:
            lines: dict[int, set] = {}
            for number, target, anchor in _link_columns(index, "source", path, ("line", "target", "anchor")):
                if anchor:
                    lines.setdefault(number, set()).update(
                        (target, n) for a, b in parse_anchor(anchor) for n in range(a, b + 1))
            per_file[path] = {n: frozenset(places) for n, places in lines.items()}
        return per_file[path].get(line, frozenset())
    return cited


def noted_turns(settings: Settings) -> Callable[[str], frozenset[int] | None]:
    """`session log path -> the lines of it a note line cites` (the turns capture found a
    statement in), None for a log no note cites (not captured into notes yet); each log's
    links read once per snapshot (a search meets the same logs query after query)."""
    many = noted_logs(settings)
    return lambda path: many([path])[path]


def noted_logs(settings: Settings) -> Callable[[list[str]], dict[str, frozenset[int] | None]]:
    """`noted_turns` of many logs at once: the links of the logs not read yet in this snapshot
    are found in one lookup of the link table (a packed search meets ~50 hits, most of them
    new to a process that has not searched for long: a lookup per log was ~2 ms of it)."""
    index = open_index(layout(settings), settings)
    per_log: dict[str, frozenset[int] | None] = index.masks.setdefault("noted-turns", {})  # links do not change
    spans: dict[str, tuple[int, ...]] = index.masks.setdefault("anchor-lines", {})

    def lines_of(anchor: str) -> tuple[int, ...]:
        if anchor not in spans:
            spans[anchor] = tuple(n for a, b in parse_anchor(anchor) for n in range(a, b + 1))
        return spans[anchor]

    def noted(paths: list[str]) -> dict[str, frozenset[int] | None]:
        new = sorted({path for path in paths if path not in per_log})
        if new:
            found: dict[str, set[int]] = {}
            for target, anchor in _link_columns(index, "target", new, ("target", "anchor")):
                if anchor:
                    found.setdefault(target, set()).update(lines_of(anchor))
            for path in new:
                per_log[path] = frozenset(found[path]) if found.get(path) else None
        return {path: per_log[path] for path in paths}
    return noted


def _link_columns(index: keyword.KeywordIndex, column: str, path: str | list[str],
                  names: tuple[str, ...]) -> list[tuple]:
    """The `names` columns of the snapshot's links whose `column` is `path` (or one of a list
    of paths), one tuple per link in row order (only the columns wanted: a link row has six)."""
    numbers = rowmaps.live_rows(index, "links", column, [path] if isinstance(path, str) else path)
    if not len(numbers):
        return []
    return list(zip(*(rowmaps.take_column(index.links.column(name), numbers) for name in names)))


def attach_links(settings: Settings, results: list[SearchResult], limit: int = 10,
                 filters: Filters | None = None) -> None:
    """`expand_links` for results searched with `link_limit=0` (e.g. only the hits packed)."""
    lay = layout(settings)
    expand_links(open_index(lay, settings), lay, results, limit)
    links_in_time(results, filters)


def expand_links(index: keyword.KeywordIndex, lay: Layout, results: list[SearchResult],
                 limit: int) -> None:
    """Attach each result's 1-hop out-links and in-links (at most `limit` per direction).

    Out-links are those of the lines the result shows; in-links those pointing at the note as a
    whole or at lines the result shows. Out-links to the same non-Markdown target
    (a session log) are merged into one entry whose anchor lists the lines: the note already
    quotes them, so their text is not repeated. A link whose anchored lines only restate what the
    result says (a digest fact and the daily line it came from) is left out: one fact, one hit.
    In-links from day-index pages are left out: those pages only list the day's notes.
    """
    paths = sorted({r.path for r in results})
    if not paths or limit <= 0:
        return
    rows = index.links_of(paths)
    neighbours = {row["target"] for row in rows} | {row["source"] for row in rows}
    info = index.file_info(sorted(neighbours))
    cache: dict[str, list[str]] = {}
    by_source: dict[str, list[dict]] = {}
    by_target: dict[str, list[dict]] = {}
    for row in rows:  # in link-table order
        by_source.setdefault(row["source"], []).append(row)
        by_target.setdefault(row["target"], []).append(row)
    for result in results:
        shown = " ".join(result.text.split())
        outs = [r for r in by_source.get(result.path, ())
                if result.start_line <= r["line"] <= result.end_line]
        ins = [r for r in by_target.get(result.path, ()) if r["source"] != result.path
               and info.get(r["source"], {}).get("kind") != "day_index"
               and _points_into(r["anchor"], result.start_line, result.end_line)]
        result.links.extend([link for link in _out_links(lay, outs, info, cache)
                             if not _restates(shown, link.lines)][:limit])
        seen: set[str] = set()
        for row in ins:
            if row["source"] in seen or len(seen) >= limit:
                continue
            lines = _anchored_lines(lay, row["source"], f"L{row['line']}", cache)
            if _restates(shown, lines):
                continue
            seen.add(row["source"])
            meta = info.get(row["source"], {})
            result.links.append(LinkInfo(
                direction="in", path=row["source"], line=row["line"], anchor=row["anchor"],
                label=row["label"], kind=row["kind"], name=meta.get("name") or "",
                description=meta.get("description") or "", lines=lines))



def _points_into(anchor: str, start: int, end: int) -> bool:
    """A link to the whole note, or to lines of it the result shows (a link to other lines of
    the same note is about something else)."""
    ranges = parse_anchor(anchor) if anchor else []
    return not ranges or any(a <= end and b >= start for a, b in ranges)


def _restates(shown: str, lines: str) -> bool:
    """The anchored lines say nothing the result does not: each, without its bullet, date and
    links, is in the result's text."""
    said = [s for s in (line_text(line) for line in lines.split("\n")) if s]
    return bool(said) and all(s in shown for s in said)


def _out_links(lay: Layout, rows: list[dict], info: dict, cache: dict) -> list[LinkInfo]:
    merged: dict[tuple[str, str], LinkInfo] = {}
    for row in rows:
        target = row["target"]
        note = target.endswith(".md")
        key = (target, row["anchor"]) if note else (target, "")
        if key in merged:
            if not note and row["anchor"] and row["anchor"] not in merged[key].anchor.split(","):
                merged[key].anchor = ",".join(filter(None, [merged[key].anchor, row["anchor"]]))
            continue
        meta = info.get(target, {})
        merged[key] = LinkInfo(
            direction="out", path=target, line=row["line"], anchor=row["anchor"], label=row["label"],
            kind=row["kind"], name=meta.get("name") or "", description=meta.get("description") or "",
            lines=_anchored_lines(lay, target, row["anchor"], cache) if note else "")
    return list(merged.values())
