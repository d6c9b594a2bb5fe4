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
