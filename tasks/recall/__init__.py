"""Stage 4, recall: hybrid search (BM25 + vectors, weighted reciprocal-rank fusion) that follows
wikilinks, and how its results are shown.

Entry points: `search` (raises `IndexMissing` when there is no index yet), and the renderings
`render_result`, `render_response`, `render_compact` (what an agent is shown) and
`tool_call_messages` (an OpenAI tool call and its answer), `results_table` (hits as table rows);
`pack`/`packer`/`hit_packer` (hits packed line by line into a token budget; `attach_links` for
the hits that made it; `asked_window`: the days a question asks about; `line_citations`: what a note line cites, for packing); browsing without a query: `recent_notes` and `note_context` (a note and its links to a depth).
"""

from memflow.tasks.recall.browse import note_context, recent_notes
from memflow.tasks.recall.hybrid import (
    IndexMissing,
    answer_head,
    asked_window,
    attach_links,
    follow_values,
    line_citations,
    noted_turns,
    search,
    term_idf,
    term_weights,
)
from memflow.tasks.recall.packing import expand, hit_packer, pack, packer
from memflow.tasks.recall.presenting import (
    render_compact,
    render_response,
    render_result,
    results_table,
    tool_call_messages,
)

__all__ = ["search", "IndexMissing", "render_result", "render_response", "render_compact",
           "tool_call_messages", "results_table", "recent_notes", "note_context", "pack", "packer",
           "hit_packer", "expand", "term_weights", "attach_links", "asked_window", "line_citations", "term_idf", "noted_turns", "answer_head", "follow_values"]
