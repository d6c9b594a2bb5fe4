"""Anchor rot under random edits: the seeded steps of tests/reliability/test_provenance.py
(capture into new and earlier days, dream, fm set, edit, forget --match, move; no repair), and
after each step the digest anchors that do not cite their text (the test's oracle), steps with
a fact twice or a history out of date order. Run the same seeds against another checkout (put
its package first on PYTHONPATH, from a folder outside the repo) to compare.

    python benchmarks/anchor_rot.py OUT_DIR 101,202,303 25
"""
import json
import os
import random
import shutil
import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(_TESTS / "reliability"), str(_TESTS)]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import test_provenance as tp  # noqa: E402
from memflow import api
from memflow.tasks.ground.markdown import iter_link_spans, parse_anchor
seeds, steps = [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3])
root = Path(sys.argv[1])
tot = {"anchors": 0, "stale": 0, "steps": 0, "bad_steps": 0, "digest_bad": 0, "by_kind": {}}
kinds = ["capture", "capture", "dream", "dream", "fm_set", "edit", "forget", "move"]  # no repair step
for seed in seeds:
    rng = random.Random(seed); ws = root / f"ws{seed}"
    shutil.rmtree(ws, ignore_errors=True)
    w = tp.World(ws, rng); api.init(ws); w.capture(); w.dream()
    for _ in range(steps):
        kind = rng.choice(kinds)
        getattr(w, kind)()
        n = sum(1 for p in tp._md_files(ws, "digest") for *_x, m in iter_link_spans(p.read_text()) if parse_anchor(m.group(2) or ""))
        bad = [f for f in tp.anchor_failures(ws) if f.startswith("digest/")]
        dbad = tp.digest_failures(ws)
        tot["anchors"] += n; tot["stale"] += len(bad); tot["steps"] += 1
        tot["bad_steps"] += bool(bad); tot["digest_bad"] += bool(dbad)
        k = tot["by_kind"].setdefault(kind, [0, 0]); k[0] += 1; k[1] += bool(bad)
print(json.dumps(tot))
