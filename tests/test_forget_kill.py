"""`memflow forget` killed with SIGKILL at random points and run again (benchmarks/forget_kill.py,
a handful of trials): `check` is clean afterwards, no link dangles, no temp file is left and the
forgotten text is gone. Slow (real processes, a workspace per trial): deselected by default."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _harness():
    spec = importlib.util.spec_from_file_location("forget_kill", ROOT / "benchmarks" / "forget_kill.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_forget_killed_at_random_points_is_finished_by_running_it_again():
    summary = _harness().run(trials=4, seed=5)
    assert summary["killed"] >= 1
    assert (summary["rerun_failed"], summary["check_unclean"], summary["dangling_links"],
            summary["temp_files"], summary["text_left"]) == (0, 0, 0, 0, 0), summary["bad"]
