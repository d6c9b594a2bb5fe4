"""How search results are shown to people and agents (pure): text blocks, JSON, tool calls."""

from __future__ import annotations

import hashlib
import json

from memflow.schemas.recall import SearchResponse, SearchResult

TOOL_NAME = "memory_search"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_result(result: SearchResult, explain: bool = False) -> str:
    head = (f"========== {result.path}:{result.start_line}-{result.end_line} "
            f"[score={result.score:.4f} vector={_num(result.vector)} "
            f"keyword={_num(result.keyword)}] ==========")
    lines = [head]
    if result.name or result.description:
        lines.append(f"({result.name}: {result.description})" if result.description else f"({result.name})")
    lines.append(result.text)
    for link in result.links:
        arrow = "->" if link.direction == "out" else "<-"
        target = f"{link.path}#{link.anchor}" if link.anchor else link.path
        about = f" {link.name}" if link.name else ""
        about += f": {link.description}" if link.description else ""
        kind = f" ({link.kind})" if link.kind != "link" else ""
        lines.append(f"  {arrow} [[{target}]]{kind}{about}")
        if link.lines:
            lines.extend(f"     | {text}" for text in link.lines.splitlines()[:6])
    if explain and result.explain:
        ex = result.explain
        ranks = ", ".join(f"{b} rank {r}" for b, r in ex["ranks"].items())
        parts = " + ".join(f"{ex['weights'][b]}/({ex['rrf_k']}+{ex['ranks'][b]})"
                           f"={c:.4f}" for b, c in ex["contributions"].items())
        lines.append(f"  explain: {ranks}; score = {parts}")
        if ex.get("restated_by"):
            lines.append(f"  raised to {result.score:.4f}, just above {ex['restated_by']}: the digest "
                         f"chunk that restates it")
        window = ex.get("time_window")
        lines.append(f"  date: {ex.get('date') or 'none'} ({ex.get('layer')}); time factor "
                     f"{ex.get('time_factor', 1.0)}" + (f", question names {window[0]}..{window[1]}" if window else ""))
        if len(ex.get("vector_queries", [])) > 1:
            lines.append("  vector queries: " + " | ".join(ex["vector_queries"]))
        for link in result.links:
            lines.append(f"  link path: {result.path} {'->' if link.direction == 'out' else '<-'}"
                         f" {link.path} (line {link.line})")
    return "\n".join(lines)


def render_compact(result: SearchResult) -> str:
    """The form agents get (tool messages, evaluation budgets): a short header, the text, and
    links to other notes with their anchored lines. Links to session logs are left out: the
    note's own fact lines already carry them."""
    lines = [f"[{result.path}:{result.start_line}-{result.end_line} score={result.score:.4f}]"]
    if result.name or result.description:
        lines.append(f"({result.name}: {result.description})" if result.description else f"({result.name})")
    lines.append(result.text)
    for link in result.links:
        if not link.path.endswith(".md"):
            continue
        target = f"{link.path}#{link.anchor}" if link.anchor else link.path
        arrow = "->" if link.direction == "out" else "<-"
        lines.append(f"{arrow} [[{target}]] {link.name}".rstrip())
        lines.extend(f"   {text}" for text in link.lines.splitlines()[:6])
    return "\n".join(lines)


def render_response(response: SearchResponse, explain: bool = False, compact: bool = False) -> str:
    blocks = [render_compact(r) if compact else render_result(r, explain) for r in response.results]
    mark = response.watermark
    if mark.get("stale"):
        blocks.append(f"(index last ran {mark.get('indexed_at') or 'never'}; "
                      f"{mark.get('changed_since') or 'some'} file(s) changed since: run `memflow index`)")
    if not response.results:
        blocks.append("no results")
    blocks += [f"(warning: {warning})" for warning in response.warnings]
    return "\n\n".join(blocks)


def tool_call_messages(query: str, response: SearchResponse, max_results: int) -> list[dict]:
    """An OpenAI-format assistant `tool_calls` message and the matching `tool` reply."""
    call_id = "call_" + hashlib.sha256(query.encode()).hexdigest()[:24]
    arguments = json.dumps({"query": query, "max_results": max_results}, ensure_ascii=False)
    return [
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": call_id, "type": "function",
            "function": {"name": TOOL_NAME, "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": call_id,
         "content": render_response(response, compact=True) if response.results else "no results"},
    ]


MEMORY_SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Search the long-term memory (Markdown notes) for relevant past facts.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "max_results": {"type": "integer", "default": 2}},
            "required": ["query"]},
    },
}


def results_table(queries: list[str], responses: list[SearchResponse], width: int = 160) -> list[dict]:
    """Search hits as table rows (query, rank, where, score, name, first words of the text): what
    a batch of searches found, for the Prefect UI."""
    rows = []
    for query, response in zip(queries, responses, strict=True):
        if not response.results:
            rows.append({"query": query, "rank": None, "path": "", "lines": "", "score": None,
                         "name": "", "text": "no results"})
        for rank, result in enumerate(response.results, 1):
            text = " ".join(result.text.split())
            rows.append({"query": query, "rank": rank, "path": result.path,
                         "lines": f"{result.start_line}-{result.end_line}",
                         "score": round(result.score, 4), "name": result.name or "",
                         "text": text if len(text) <= width else text[: width - 1] + "…"})
    return rows
