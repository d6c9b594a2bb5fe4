"""Notebooks: one colour per category in every plot, from one palette (analytics.colour)."""

import ast
import json
from pathlib import Path

from memflow.tasks.evaluate import analytics

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def plot_calls(source: str):
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("plot", "bar", "barh", "scatter", "step"):
            yield node


def test_every_labelled_series_in_the_notebooks_takes_its_colour_from_the_palette():
    found = 0
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "\n".join(l for l in "".join(cell["source"]).splitlines() if not l.startswith("%"))
            for call in plot_calls(source):
                keys = {k.arg: k.value for k in call.keywords}
                if "label" in keys:
                    found += 1
                    assert "color" in keys and ast.unparse(keys["color"]).startswith("analytics.colour("), \
                        f"{path.name}: {ast.unparse(call)}"
    assert found >= 3


def test_a_category_has_one_colour_everywhere_and_known_ones_differ():
    known = ["all", "multi-hop", "temporal", "open-domain", "single-hop", "adversarial"]
    assert len({analytics.colour(c) for c in known}) == len(known)
    assert analytics.colour("some run name") == analytics.colour("some run name")
    assert all(analytics.colour(c) in analytics.PALETTE for c in [*known, "x", "create", "refine"])
