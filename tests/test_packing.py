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


def shown_in_part(line: str, source: list[str]) -> bool:
    """Is `line` one line of `source` with some of its sentences left out (each run of them
    marked `…`), its kept words in their order?"""
    if " … " not in f" {line} ":
        return False
    head, _, rest = line.partition(": ")
    rest = re.sub(r"\s*\[\[[^\]]*\]\]$", "", rest)  # the link to the whole turn
    pieces = [p.strip() for p in rest.split("…") if p.strip()]
    for whole in source:
        if not whole.startswith(head):
            continue
        at = 0
        for piece in pieces:
            at = whole.find(piece, at)
            if at < 0:
                break
            at += len(piece)
        else:
            return True
    return False


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
            # a whole line of its file, or (opening the context) sentences of one, `…` for the rest
            assert line in source[int(first) - 1:int(last)] or shown_in_part(line, source[int(first) - 1:int(last)]), line
            for link in parse_links(line):
                assert (workspace / link.target).exists()  # provenance resolves
    # the results are the hits packed, block for block, each with its links
    assert [re.match(r"\[(.+?):L", b).group(1) for b in packed] == [r.path for r in response.results]
    if budget >= 150 and api.search(question, workspace, limit=5).results:
        assert packed  # something fits


def test_packed_context_holds_more_evidence_than_whole_chunks(workspace):
    """Packing by the line fits what whole chunks cannot: at a budget below a chunk's size the
    matching lines, at a larger one more lines with the query's words (a line already shown is
    not shown again, so it may take fewer blocks). A top hit's matching lines and their
    neighbours go in before the next hit's: breadth first cost 0.07 budget recall at 1,000
    tokens on LoCoMo dev (`recall.sequence`)."""
    query = "Caroline support group" if DEV.exists() else "checkout Redis engineers"
    words = [w.lower() for w in query.split()[1:]]
    whole = api.search(query, workspace, limit=30)
    from memflow.tasks.recall import render_compact

    def matching(texts) -> int:  # distinct lines with a query word (a note line quoting a turn is the turn)
        said = {re.sub(r"\s*(\[\[[^\]]*\]\]|#L[\d,L-]+)\s*$", "", line).lstrip("- ").split(": ", 1)[-1]
                for text in texts for line in text.split("\n")[1:]}
        return sum(1 for line in said if any(w in line.lower() for w in words))

    for budget in (150, 1000):
        chunks, used = [], 0
        for result in whole.results:
            size = count_tokens(render_compact(result))
            if used + size > budget:
                break
            chunks, used = [*chunks, render_compact(result)], used + size
        response = api.search(query, workspace, limit=30, budget_tokens=budget)
        packed = response.packed
        every = response.packed_tokens < 0.8 * budget  # room left: every candidate's lines are in
        assert packed and (matching(packed) > matching(chunks) or every), \
            (budget, matching(packed), matching(chunks))
    # each note line keeps its anchor into the log; a transcript block is the log's own lines
    assert all("#L" in block or block.startswith("[session/dialog/") for block in packed)
    assert any(block.startswith("[session/dialog/") for block in packed)


@pytest.mark.parametrize("seed", [4, 23, 71])
def test_a_block_costs_the_sum_of_its_lines(seed):
    """Packing counts a block from its lines, each counted once (with its line end): that is
    exactly cl100k's count of the block, whatever the lines end or start with (a line of
    spaces only, which no block has, can only make the sum larger: never a budget overrun)."""
    import random

    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz" * 3 + "ÄéßøЖж记忆文件日志" + "0123456789" + " .,;:!?-_()[]{}#`'\"/\\|*…⏎\t"
    for _ in range(300):
        lines = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))).strip("\n")
                 for _ in range(rng.randint(1, 8))]
        text = "\n".join(lines)
        total = sum(count_tokens(line + "\n") for line in lines[:-1]) + count_tokens(lines[-1])
        if all(line.strip() for line in lines):
            assert total == count_tokens(text), repr(text)
        else:
            assert total >= count_tokens(text), repr(text)


def test_line_scores_do_not_depend_on_the_order_of_a_lines_terms():
    """Lines holding the same query terms (among others) score the same float: a set's order
    follows the hash seed and the line's other words, and a plain sum in that order broke ties
    between lines differently from run to run (the evaluation moved by a question)."""
    import random

    from memflow.schemas.recall import SearchResult
    from memflow.tasks.recall.packing import line_scores

    for seed in range(6):
        rng = random.Random(seed)
        words = [f"{a}{b}{c}" for a in "bcdfghjklmnprstvz" for b in ("ar", "en", "ix", "ol", "um")
                 for c in "aeiou"]
        query = rng.sample(words, rng.randint(3, 9))
        weights = {w: rng.uniform(0.1, 9.0) for w in query}
        others = [w for w in words if w not in weights]
        lines = [" ".join(rng.sample(query, len(query)) + rng.sample(others, rng.randint(0, 80)))
                 for _ in range(300)]
        hit = SearchResult(id="x", path="daily/2026-01-01/a.md", start_line=1, end_line=len(lines),
                           score=1.0, text="\n".join(lines))
        scores = set(line_scores(hit, weights, "bigram"))
        assert len(scores) == 1 and scores.pop() > max(weights.values())


def test_a_related_line_is_never_packed_as_evidence():
    """A digest node's `Related: [[..]], [[..]]` line matches a query through its targets'
    names only ("work" in `the-user-work.md`): packing never shows it, so it costs no budget;
    a person's own line of links is content and is packed."""
    from memflow.schemas.recall import SearchResult
    from memflow.tasks.recall import packer

    related = SearchResult(id="r", path="digest/personal/the-user-life.md", start_line=12, end_line=12,
                           score=1.0, text="# The user – life\n[Part 3/3]\nRelated: [[digest/personal/the-user-work.md]], "
                                           "[[digest/personal/the-user-health.md]]")
    fact = SearchResult(id="f", path="daily/2026-03-03/acme.md", start_line=13, end_line=13, score=0.5,
                        text="# Acme\n## Facts\n- I work at Acme as a data engineer. [[session/dialog/s1.jsonl#L1]]")
    mine = SearchResult(id="m", path="resource/notes/work.md", start_line=3, end_line=3, score=0.4,
                        text="# Work\n- [[digest/personal/the-user-work.md]]")
    blocks = packer([related, fact, mine], {"work": 1.0}, count_tokens)(300)
    assert not any("Related:" in b for b in blocks), blocks
    assert any("I work at Acme" in b for b in blocks) and any(b.startswith("[resource/notes/work.md") for b in blocks)


def test_a_fact_shown_above_is_blanked_with_its_history_and_the_other_lines_keep_their_place():
    """`elide_repeats`: a digest fact line already said by a hit above (its daily line) is left
    out with its `until` history, as a blank line, so every other line keeps its file line (they
    are numbered back from the hit's end line) and no history hangs under the fact before it."""
    from memflow.tasks.recall.hybrid import _fact_key, elide_repeats

    lines = ["# The user – life", "",
             "- 2026-01-05: I prefer dark roast coffee in the morning. [[daily/2026-01-05/a.md#L14]]",
             "- 2026-02-12: I'm not allergic to penicillin after all. [[daily/2026-02-12/b.md#L13]]",
             "  - until 2026-02-12: I'm allergic to penicillin. [[daily/2026-01-06/c.md#L14]]",
             "- 2026-01-06: Call me Sam. [[daily/2026-01-06/c.md#L15]]"]
    said = {_fact_key("- I'm not allergic to penicillin after all. [[session/dialog/x.jsonl#L1]]")}
    text, fresh, dropped = elide_repeats("\n".join(lines), said)
    kept = text.split("\n")
    assert dropped == 1 and len(kept) == len(lines)
    assert kept[3] == kept[4] == "" and [kept[i] for i in (0, 2, 5)] == [lines[i] for i in (0, 2, 5)]
    assert _fact_key(lines[2]) in fresh and _fact_key(lines[5]) in fresh


@pytest.mark.parametrize("seed", [int(x) for x in __import__("os").environ.get("MEMFLOW_SEEDS", "4,19").split(",")])
def test_a_turn_quoted_by_the_note_is_not_packed_again_whatever_the_speaker_is_called(tmp_path, seed):
    """Messages as OpenAI clients send them (roles `user`/`assistant`, or a lower-case `name`):
    the daily note quotes a turn, and packing shows it once, from the note; the turn's own line
    was shown again under the transcript's header, since `user: ` was taken for part of what
    was said (only a capitalised name was known as a speaker)."""
    import random

    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze", "dri", "sho"]
    vocab = ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(400)]
    ws = tmp_path / "ws"
    statements = [f"My {rng.choice(vocab)} {rng.choice(vocab)} is {rng.choice(vocab)} {rng.randint(2, 900)}."
                  for _ in range(12)]
    speaker = rng.choice([{}, {"name": rng.choice(vocab)}])
    messages = []
    for text in statements:
        messages += [{"role": "user", "content": text, **speaker},
                     {"role": "assistant", "content": f"{rng.choice(vocab).capitalize()} {rng.choice(vocab)}."}]
    api.capture(messages, "chat", ws, date="2026-04-01")
    for text in rng.sample(statements, 4):
        asked = " ".join(text.split()[1:3])
        packed = api.search(f"what is my {asked}?", ws, budget_tokens=300).packed
        shown = [re.sub(r"^(?:- )?(?:[\w ]{1,40}: )?", "", line).split(" [[")[0].split(" #L")[0]
                 for block in packed for line in expand(block).split("\n")[1:] if line != "…"]
        assert shown.count(text) == 1, (text, packed)


@pytest.mark.parametrize("seed", [int(x) for x in __import__("os").environ.get("MEMFLOW_SEEDS", "6,28").split(",")])
def test_no_block_is_only_a_reply_said_again_and_again(tmp_path, seed):
    """The daily note quotes a user turn, so the transcript does not show it again; its
    neighbours, the assistant's "Noted." said after every turn, then made a block of their own
    ("assistant: Noted. … assistant: Noted."), context for nothing. A line said word for word
    more than once in its hit does not open a block (a neighbour said once still may: in LoCoMo
    the answer is often the turn beside the one a note quotes)."""
    import random

    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze", "dri", "sho"]
    vocab = ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(400)]
    ws = tmp_path / "ws"
    acks = [f"{rng.choice(vocab).capitalize()}." for _ in range(2)]
    statements = [f"My {rng.choice(vocab)} {rng.choice(vocab)} is {rng.choice(vocab)} {rng.randint(2, 900)}."
                  for _ in range(10)]
    messages = []
    for text in statements:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": rng.choice(acks)}]
    api.capture(messages, "chat", ws, date="2026-04-01")
    for text in rng.sample(statements, 4):
        query = f"what is my {' '.join(text.split()[1:3])}?"
        for block in api.search(query, ws, budget_tokens=300).packed:
            lines = [line for line in block.split("\n")[1:] if line != "…"]
            assert not all(line.split(": ", 1)[-1] in acks for line in lines), (query, block)


@pytest.mark.parametrize("seed", [int(s) for s in __import__("os").environ.get("MEMFLOW_SEEDS", "13,58,404").split(",")])
def test_a_node_ranked_for_the_asked_days_shows_its_facts_of_those_days(settings, lay, seed):
    """A question naming a month ranks a digest node up for its facts of that month; packed,
    the node shows those facts, not its facts of other months that match the question's words
    too (at a tight budget one of those fitted where the asked month's fact did not, and took
    the place of the next hit's line of that month). A node with no matching fact of the month
    shows what matches."""
    import calendar
    import random

    from test_change_rule import vocabulary

    from memflow.tasks.index import run_index

    rng = random.Random(seed)
    words = vocabulary(rng, 500)
    for n in range(6):
        noun, verb = rng.choice(words), rng.choice(words)
        months = rng.sample(range(1, 13), 4)
        facts = [f"- 2025-{m:02d}-1{k}: The {noun} {verb}s the {rng.choice(words)} "
                 + " ".join(rng.choice(words) for _ in range(rng.randint(2, 12)))
                 + f". [[daily/2025-{m:02d}-1{k}/n{n}.md#L{k + 3}]]" for k, m in enumerate(months)]
        node = lay.root / f"digest/wiki/node-{n}.md"
        node.parent.mkdir(parents=True, exist_ok=True)
        node.write_text(f"# {noun.capitalize()}\n\n" + "\n".join(facts) + "\n", encoding="utf-8")
        run_index(settings)
        asked = months[rng.randrange(4)]
        question = f"What does the {noun} {verb} in {calendar.month_name[asked]} 2025?"
        packed = [line for block in api.search(question, settings, budget_tokens=rng.choice([150, 400, 1000])).packed
                  if block.startswith(f"[digest/wiki/node-{n}.md") for line in block.split("\n")[1:]]
        shown = [line for line in packed if line.startswith("- 2025-")]
        assert shown and all(line.startswith(f"- 2025-{asked:02d}-") for line in shown), (question, packed)
        outside = f"What does the {noun} {verb} in {calendar.month_name[({*range(1, 13)} - {*months}).pop()]} 2025?"
        packed = [line for block in api.search(outside, settings, budget_tokens=1000).packed
                  if block.startswith(f"[digest/wiki/node-{n}.md") for line in block.split("\n")[1:]]
        assert any(line.startswith("- 2025-") for line in packed), (outside, packed)
