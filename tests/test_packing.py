import re

import pytest

from memflow import api
from memflow.tasks.ground.markdown import parse_links
from memflow.tasks.ground.tokens import count_tokens
from memflow.tasks.ground.transcript import transcript_lines
from memflow.tasks.recall import expand

QUESTIONS = ["What did Caroline research?", "When did Melanie paint a sunrise?",
             "What does Mara drink before meetings?", "How to recover checkout when Redis restarts?"]
DEV = __import__("pathlib").Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo-dev.json"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    import json
    from pathlib import Path

    from memflow.tasks.evaluate.locomo import session_messages

    ws = tmp_path_factory.mktemp("packing") / "ws"
    api.init(ws)
    data = DEV if DEV.exists() else Path(__file__).parents[1] / "memflow/samples/locomo_sample.json"
    sample = json.loads(data.read_text())[0]
    n = 1
    while f"session_{n}" in sample["conversation"] and n <= 6:
        api.capture(session_messages(sample, n), f"s{n}", ws)
        n += 1
    api.index(ws)
    return ws


@pytest.mark.parametrize("budget", [60, 150, 400, 1000])
@pytest.mark.parametrize("question", QUESTIONS)
def test_packing_fits_the_budget_keeps_whole_lines_and_resolvable_sources(workspace, question, budget):
    response = api.search(question, workspace, limit=5, budget_tokens=budget)
    packed = response.packed
    assert packed is not None
    assert count_tokens("\n\n".join(packed)) <= budget and response.packed_tokens <= budget
    for block in packed:
        header, *lines = expand(block).split("\n")
        path, first, last = re.match(r"\[(.+?):L(\d+)-L(\d+)\]", header).groups()
        source = (workspace / path).read_text().split("\n")
        if path.endswith(".jsonl"):  # a session log is shown as its transcript, line for line
            source = [text for text, _day in transcript_lines((workspace / path).read_text(), "UTC")]
        for line in lines:
            if line == "…":
                continue
            assert line in source[int(first) - 1:int(last)], line  # a whole line of its file
            for link in parse_links(line):
                assert (workspace / link.target).exists()  # provenance resolves
    # the results are the hits packed, block for block, each with its links
    assert [re.match(r"\[(.+?):L", b).group(1) for b in packed] == [r.path for r in response.results]
    if budget >= 150 and api.search(question, workspace, limit=5).results:
        assert packed  # something fits


def test_packed_context_holds_more_hits_than_whole_chunks(workspace):
    query = "Caroline support group" if DEV.exists() else "checkout Redis engineers"
    whole = api.search(query, workspace, limit=30)
    budget = 300
    from memflow.tasks.recall import render_compact

    chunks, used = 0, 0
    for result in whole.results:
        size = count_tokens(render_compact(result))
        if used + size > budget:
            break
        chunks, used = chunks + 1, used + size
    packed = api.search(query, workspace, limit=30, budget_tokens=budget).packed
    assert len(packed) > chunks or (len(packed) == len(whole.results) and whole.results)
    # each note line keeps its anchor into the log; a transcript block is the log's own lines
    assert all("#L" in block or block.startswith("[session/dialog/") for block in packed)
    assert any(block.startswith("[session/dialog/") for block in packed)
