"""`memflow forget` killed with SIGKILL at random points, then run again: after the re-run,
`check` must be clean, no link may dangle, no temp file may be left, and the forgotten text must
be gone from every note, log and resource.

A generated workspace (sessions whose messages mix sentences that state the text with ones that
do not, note names that carry it, dream digest nodes with `Related:` lines, a note a person
wrote that links a renamed note, a text resource, a built index) is copied per trial. A forget
runs as its own process; once it holds the workspace lock it is killed after a delay drawn
uniformly over the time an unkilled forget holds it (measured first; every other trial), or
around the time its plan is saved and the files change (the others), so kills land in planning,
writing, renaming and the index rebuild alike. The same command is then run again.

    .venv/bin/python benchmarks/forget_kill.py --trials 50
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

MEMFLOW = str(Path(sys.executable).parent / "memflow")
_LINK = re.compile(r"\[\[([^\]|#]+)")
_WORDS = "amber birch cobalt dune ember fjord glade heron iris juniper kestrel lumen moss nectar".split()


def _name(rng: random.Random) -> str:
    return "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)).title()


def _sentence(rng: random.Random) -> str:
    """A statement about made-up people, places and things (none carries the phrase)."""
    forms = [lambda: f"My friend {_name(rng)} lives in {_name(rng)}ville.",
             lambda: f"I practise {rng.choice(_WORDS)} drills every {rng.choice(['Monday', 'Friday'])}.",
             lambda: f"The {rng.choice(_WORDS)} lamp costs {rng.randint(10, 99)} euros.",
             lambda: f"Dr. {_name(rng)} moved the appointment to {rng.randint(1, 12)} pm.",
             lambda: f"We adopted a cat named {_name(rng)} last spring."]
    return rng.choice(forms)()


def phrase_of(rng: random.Random) -> str:
    return f"{_name(rng)} {_name(rng)}"


def build(ws: Path, phrase: str, seed: int = 7, sessions: int = 10) -> None:
    """The workspace every trial copies."""
    from memflow import api
    from memflow.schemas.settings import load_settings
    from memflow.tasks.capture.conversation import auto_memory
    from memflow.tasks.dream import run_dream
    from memflow.tasks.index import run_index

    rng = random.Random(seed)
    api.init(ws)
    settings = load_settings(ws)
    start = date(2026, 5, 1)
    for s in range(sessions):
        day = start + timedelta(days=s // 2)
        messages = []
        for n in range(rng.randint(3, 5)):
            parts = [_sentence(rng) for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.4:  # the phrase, amid other sentences (first: names carry it)
                parts.insert(0 if n == 0 else rng.randint(0, len(parts)),
                             f"The {phrase} jar is kept on the {rng.choice(_WORDS)} shelf.")
            messages.append({"id": f"s{s}-{n}", "role": "user", "content": " ".join(parts),
                             "timestamp": f"{day.isoformat()}T09:{n:02d}:00Z"})
        auto_memory(settings, messages, f"s{s}")
    for d in range(sessions // 2):
        run_dream(settings, start + timedelta(days=d))
    notes = sorted(p.relative_to(ws).as_posix() for p in (ws / "daily").rglob("*/*.md"))
    mine = ws / "digest" / "wiki" / "pantry.md"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("# Pantry\n\n" + "".join(f"- see [[{rel}]]\n" for rel in notes[:4]))
    (ws / "resource").mkdir(exist_ok=True)
    (ws / "resource" / "shelves.txt").write_text(
        f"Top shelf: flour. The {phrase} jar sits here. Bottom shelf: rice.\nGarage: bikes.\n")
    run_index(settings)


def dangling(ws: Path) -> list[str]:
    out = []
    for path in list((ws / "daily").rglob("*.md")) + list((ws / "digest").rglob("*.md")):
        for target in _LINK.findall(path.read_text(encoding="utf-8")):
            target = target.strip()
            if target and not target.startswith(("http://", "https://")) and not (ws / target).exists():
                out.append(f"{path.relative_to(ws)} -> {target}")
    return out


def temp_files(ws: Path) -> list[str]:
    return [p.relative_to(ws).as_posix() for p in ws.rglob(".*.tmp")]


def left(ws: Path, phrase: str) -> list[str]:
    """Notes, logs and resources that still state the phrase."""
    from memflow.tasks.ground.tombstones import normalise

    wanted = normalise(phrase)
    return [p.relative_to(ws).as_posix() for top in ("daily", "digest", "session", "resource")
            for p in (ws / top).rglob("*") if p.is_file()
            and wanted in normalise(p.read_text(encoding="utf-8", errors="replace"))]


def forget(ws: Path, phrase: str) -> subprocess.CompletedProcess:
    return subprocess.run([MEMFLOW, "-w", str(ws), "forget", "--match", phrase],
                          capture_output=True, text=True, timeout=600)


def held_window(ws: Path, phrase: str) -> tuple[float, float]:
    """(Seconds an unkilled forget holds the workspace lock, seconds into it its plan is saved:
    the files change from there, then the index is rebuilt)."""
    proc, began = _start(ws, phrase)
    plan, saved = ws / "metadata" / "state" / "forget_plan.json", None
    while proc.poll() is None:
        if saved is None and plan.exists():
            saved = time.monotonic() - began
        time.sleep(0.002)
    return time.monotonic() - began, saved or 0.0


def _start(ws: Path, phrase: str) -> tuple[subprocess.Popen, float]:
    proc = subprocess.Popen([MEMFLOW, "-w", str(ws), "forget", "--match", phrase],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    lock = ws / "metadata" / "state" / "lock.json"
    while not lock.exists() and proc.poll() is None:
        time.sleep(0.002)
    return proc, time.monotonic()


def trial(template: Path, work: Path, phrase: str, delay: float) -> dict:
    """One kill at `delay` seconds into the lock, one re-run; what is wrong afterwards."""
    from memflow.schemas.settings import load_settings
    from memflow.tasks.check import check_workspace

    ws = work / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(template, ws)
    proc, _began = _start(ws, phrase)
    time.sleep(delay)
    killed = proc.poll() is None
    if killed:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    tmp_after_kill = len(temp_files(ws))
    plan_pending = (ws / "metadata" / "state" / "forget_plan.json").exists()
    rerun = forget(ws, phrase)
    findings = [f"{f.area} {f.path}: {f.detail}" for f in check_workspace(load_settings(ws)).findings]
    return {"delay": round(delay, 3), "killed": killed, "tmp_after_kill": tmp_after_kill,
            "plan_pending": plan_pending,
            "rerun_rc": rerun.returncode, "rerun_err": rerun.stderr.strip()[-300:],
            "findings": findings, "dangling": dangling(ws), "temp": temp_files(ws), "left": left(ws, phrase)}


def run(trials: int, seed: int, keep: Path | None = None) -> dict:
    rng = random.Random(seed)
    phrase = phrase_of(rng)
    work = Path(tempfile.mkdtemp(prefix="forget-kill-"))
    template = work / "template"
    build(template, phrase, seed)
    probe = work / "probe"
    shutil.copytree(template, probe)
    window, saved = held_window(probe, phrase)
    # half the kills anywhere in the lock, half around the file changes (plan saved, files
    # written, renamed and deleted: the start of what follows the save)
    delays = [rng.uniform(0, window) if n % 2 else rng.uniform(0.8 * saved, saved + 0.3 * (window - saved))
              for n in range(trials)]
    results = []
    for n, delay in enumerate(delays, 1):
        results.append(trial(template, work, phrase, delay))
        r = results[-1]
        print(f"trial {n}: delay {r['delay']}s killed={r['killed']} plan_pending={r['plan_pending']} "
              f"tmp_after_kill={r['tmp_after_kill']} rerun_rc={r['rerun_rc']} findings={len(r['findings'])} "
              f"dangling={len(r['dangling'])} temp={len(r['temp'])} left={len(r['left'])}",
              file=sys.stderr, flush=True)
    bad = [r for r in results if r["rerun_rc"] or r["findings"] or r["dangling"] or r["temp"] or r["left"]]
    summary = {"trials": trials, "killed": sum(r["killed"] for r in results), "window_s": round(window, 2),
               "plan_saved_at_s": round(saved, 2),
               "killed_with_plan_pending": sum(r["plan_pending"] for r in results),
               "tmp_left_by_kills": sum(r["tmp_after_kill"] > 0 for r in results),
               "rerun_failed": sum(r["rerun_rc"] != 0 for r in results),
               "check_unclean": sum(bool(r["findings"]) for r in results),
               "dangling_links": sum(len(r["dangling"]) for r in results),
               "temp_files": sum(len(r["temp"]) for r in results),
               "text_left": sum(len(r["left"]) for r in results), "bad": bad}
    if keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--seed", type=int, default=57)
    args = parser.parse_args()
    began = time.monotonic()
    summary = run(args.trials, args.seed)
    for r in summary.pop("bad"):
        print("BAD", r)
    print(" ".join(f"{k}={v}" for k, v in summary.items()), f"seconds={time.monotonic() - began:.0f}")
    sys.exit(1 if summary["rerun_failed"] or summary["check_unclean"] or summary["dangling_links"]
             or summary["temp_files"] or summary["text_left"] else 0)


if __name__ == "__main__":
    main()
