import json

from helpers import run_cli

from memflow import api
from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.dream.nightly import catalog_path


def say(*texts, day="2026-04-01"):
    return [{"id": f"m{n}", "role": "user", "timestamp": f"{day}T09:{n:02d}:00Z", "content": t}
            for n, t in enumerate(texts)]


def test_check_finds_what_is_wrong_and_repair_fixes_what_is_safe(settings, lay):
    auto_memory(settings, say("Our platform team has 5 engineers in Berlin.",
                              "The staging cluster runs Kubernetes 1.29 on three nodes."), "a")
    ws = str(lay.root)
    api.dream(ws)
    digest_before = {p.name: p.read_bytes() for p in (lay.root / "digest").rglob("*.md")}
    # damage: a dream run left `running` by a dead process, a lost catalog, a temp file of an
    # interrupted write, a broken link a person wrote, a stale index
    run_dir = next((lay.state_dir / "dream_runs").iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    (run_dir / "manifest.json").write_text(json.dumps({**manifest, "status": "running", "pid": 999999}))
    catalog_path(lay).unlink()
    (lay.root / "daily/2026-04-01/.note.md.x1y2.tmp").write_text("half")
    (lay.root / "daily/2026-04-01/mine.md").write_text("# Mine\n\nSee [[digest/wiki/nowhere.md]].\n")
    res = run_cli("-w", ws, "check")
    assert res.returncode == 1
    out = res.stdout
    assert "dream " in out and "run was killed before it finished [--repair: roll" in out
    assert "the dream catalog is missing" in out and "temp file of an interrupted write" in out
    assert "[[digest/wiki/nowhere.md]] does not resolve" in out and "changed since the last index" in out
    assert api.dream_runs(ws)[0]["status"] == "interrupted"
    res = run_cli("-w", ws, "check", "--repair")
    assert res.returncode == 1  # the broken link is a person's to fix
    assert not (lay.root / "daily/2026-04-01/.note.md.x1y2.tmp").exists()
    assert api.dream_runs(ws)[0]["status"] == "interrupted (recovered)"
    # the run was rolled back to its pre-images: the digest is as before the run (empty)
    assert not list((lay.root / "digest").rglob("*.md")) and digest_before
    assert catalog_path(lay).exists()
    res = run_cli("-w", ws, "check", "--json")
    findings = json.loads(res.stdout)["findings"]
    assert [f["area"] for f in findings] == ["links"]
    again = api.dream(ws)  # the notes were not consumed by the rolled-back run: dreamt again
    assert {p.name: p.read_bytes() for p in (lay.root / "digest").rglob("*.md")} == digest_before
    assert again.notes_consumed >= 1


def test_an_anchor_on_a_similar_line_is_stale_when_another_line_says_it(settings, lay):
    """Lines that share most words ("Seeing this on the X box: ...") are not a paraphrase of each
    other when one of them holds the quote itself: an anchor left on a neighbour (lines shifted by
    an outside edit) is reported and `--repair` re-points it to the line that says it."""
    import random

    from test_change_rule import vocabulary

    rng = random.Random(7)
    words = vocabulary(rng, 300)
    for _ in range(20):
        boxes = rng.sample(words, 3)
        said = [f"- Seeing this on the {b} box: The {rng.choice(words)} is {rng.randint(2, 999)} ms. [[session/dialog/s.jsonl#L{n}]]"
                for n, b in enumerate(boxes, 1)]
        note = "daily/2026-03-02/seeing.md"
        (lay.root / "daily/2026-03-02").mkdir(parents=True, exist_ok=True)
        (lay.root / note).write_text("---\nname: Seeing\n---\n\n# Seeing\n\n" + "\n".join(said) + "\n")
        quote = f"Seeing this on the {boxes[2]} box:"
        node = lay.root / "digest/wiki/seeing.md"
        node.parent.mkdir(parents=True, exist_ok=True)
        node.write_text(f"---\nname: Seeing\n---\n\n# Seeing\n\n- 2026-03-02: {quote} [[{note}#L9]]\n")
        assert not [f for f in api.check(settings.workspace).findings if f.area == "anchors"]  # L9 says it
        node.write_text(node.read_text().replace("#L9]]", "#L7]]"))  # left on another box's line
        stale = [f for f in api.check(settings.workspace).findings if f.area == "anchors"]
        assert len(stale) == 1, stale
        api.check(settings.workspace, repair=True)
        assert f"[[{note}#L9]]" in node.read_text()
        assert not [f for f in api.check(settings.workspace).findings if f.area == "anchors"]


def test_a_dream_killed_before_its_manifest_is_listed_and_explained(settings, lay, monkeypatch):
    """Issue 57: a dream killed after saving a pre-image but before its first manifest left a
    run folder that `dream runs` did not list and nothing explained. It is listed (killed
    before its manifest), `check` says it changed nothing, `--repair` (or the next dream)
    removes it, and the workspace is untouched."""
    from memflow.tasks.dream import dream_runs

    auto_memory(settings, say("Our platform team has 5 engineers in Berlin."), "a")
    ws = str(lay.root)
    note = next(p for p in (lay.root / "daily").rglob("*.md") if p.parent.name == "2026-04-01")
    rel = note.relative_to(lay.root).as_posix()
    before = note.read_bytes()

    class Killed(BaseException):
        pass

    def killed(self):
        raise Killed

    record = dream_runs.RunRecord(lay)
    monkeypatch.setattr(dream_runs.RunRecord, "save", killed)
    try:
        record.before_write(rel, "# rewritten\n")
    except Killed:
        pass
    monkeypatch.undo()
    assert (record.dir / "pre" / rel).exists() and not (record.dir / "manifest.json").exists()

    [run] = [r for r in api.dream_runs(ws) if r["run_id"] == record.run_id]
    assert run["status"] == "killed before its manifest" and run["files"] == [rel]
    listed = run_cli("-w", ws, "dream", "runs")
    assert record.run_id in listed.stdout and "killed before its manifest" in listed.stdout
    res = run_cli("-w", ws, "check")
    assert res.returncode == 1
    line = next(x for x in res.stdout.splitlines() if record.run_id in x)
    assert "killed before it wrote its manifest" in line and "changed nothing" in line, line
    assert run_cli("-w", ws, "check", "--repair").returncode == 0
    assert not record.dir.exists() and note.read_bytes() == before
    assert not [r for r in api.dream_runs(ws) if r["run_id"] == record.run_id]


def test_a_workspace_only_memflow_wrote_is_check_clean(tmp_path):
    """Issue 57: a workspace written by memflow commands alone must pass `check` (exit 0). It
    failed on a resource card citing a heading of its Markdown resource. Built with the CLI
    only: capture of two sessions (sentences from the test data), resources (the project's own
    README with its headings, tables and code, a Markdown reading list with frontmatter, a text
    file), index, dream, a resource edited and read again, index again."""
    from pathlib import Path

    here = Path(__file__).parent
    ws = str(tmp_path / "ws")
    assert run_cli("-w", ws, "init").returncode == 0
    data = json.loads((here / "data/two_conversations.json").read_text(encoding="utf-8"))
    for sample in data:
        conversation = sample["conversation"]
        for n in (1, 2):
            turns = conversation.get(f"session_{n}") or []
            messages = [{"id": t["dia_id"],
                         "role": "user" if t["speaker"] == conversation["speaker_a"] else "assistant",
                         "content": t["text"], "timestamp": f"2024-03-0{n + 2}T10:{i:02d}:00Z"}
                        for i, t in enumerate(turns)]
            if messages:
                res = run_cli("-w", ws, "capture", "--session", f"{sample['sample_id']}-{n}", "-",
                              input=json.dumps(messages))
                assert res.returncode == 0, res.stderr
    resource = Path(ws) / "resource"
    (resource / "README.md").write_bytes((here.parent / "README.md").read_bytes())
    reme = here / "data/reme/workspace/resource/2026-11-21"
    for name in ("reading-list.md", "recipes.txt"):
        (resource / name).write_bytes((reme / name).read_bytes())
    for args in (["resources"], ["index"], ["dream"]):
        res = run_cli("-w", ws, *args)
        assert res.returncode == 0, (args, res.stderr)
    with (resource / "reading-list.md").open("a", encoding="utf-8") as handle:
        handle.write("\n## Later\n\nA book added after the first card.\n")
    for args in (["resources"], ["index"]):
        assert run_cli("-w", ws, *args).returncode == 0
    res = run_cli("-w", ws, "check")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 finding(s)" in res.stdout
