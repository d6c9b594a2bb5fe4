"""The house's shape, checked from the source: no import cycles, stages meet only through their
packages' public names, one library per module, and pyproject installs every package."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"memflow": "memflow", "flows": "memflow.flows", "tasks": "memflow.tasks",
           "schemas": "memflow.schemas"}
STAGES = ("capture", "index", "dream", "recall", "evaluate", "forget", "check", "backup", "imports", "fleet")
SHARED = ("ground", "stores")
# Which stages a stage may call (through the package's public names); the loop's order.
STAGE_DEPS = {"capture": set(), "index": set(), "recall": {"capture", "index"},
              "dream": {"capture", "index", "recall"},
              "evaluate": {"capture", "index", "dream", "recall"},
              "forget": {"capture", "index", "dream"}, "check": {"capture", "index", "dream", "backup", "forget"}, "backup": set(),
              "imports": {"capture", "index", "dream"},
              "fleet": {"capture", "index", "dream"}}
# One library, one module.
LIBRARY_HOMES = {"prefect": "memflow.flows", "prefect_dask": "memflow.flows.fleet",
                 "dask": "memflow.flows.fleet", "distributed": "memflow.flows.fleet", "litellm": "memflow.tasks.ground.llm",
                 "mistletoe": "memflow.tasks.ground.markdown", "bm25s": "memflow.tasks.stores.keyword",
                 "lancedb": "memflow.tasks.stores.lance",
                 "sentence_transformers": "memflow.tasks.ground.local_embeddings",
                 "model2vec": "memflow.tasks.ground.static_embeddings",
                 "bs4": "memflow.tasks.ground.convert", "markdownify": "memflow.tasks.ground.convert",
                 "mcp": "memflow.mcp_server", "zstandard": "memflow.tasks.stores.archive",
                 "detect_secrets": "memflow.tasks.ground.secret_formats",
                 "watchfiles": "memflow.tasks.index.watching", "threadpoolctl": "memflow.tasks.ground.blas"}


def module_files() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


MODULES = module_files()


def is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def imports_of(name: str) -> list[tuple[str, list[str]]]:
    """(module imported, names taken from it) for every import in a module, nested ones too
    (a lazy import inside a function is still a dependency)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    package = name if is_package(name) else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [alias.name for alias in node.names]
            # A name a package exports wins over a submodule of the same name (the package's
            # `__init__` rebinds it), as at run time.
            exported = public_names(base) if base in MODULES and is_package(base) else set()
            submodules = [f"{base}.{n}" for n in names
                          if f"{base}.{n}" in MODULES and n not in exported]
            found += [(sub, []) for sub in submodules]
            rest = [n for n in names if f"{base}.{n}" not in submodules]
            if rest or not submodules:
                found.append((base, rest))
    return found


def internal_edges() -> dict[str, set[str]]:
    return {name: {target for target, _ in imports_of(name) if target in MODULES}
            for name in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def stage_of(name: str) -> str | None:
    parts = name.split(".")
    if parts[:2] == ["memflow", "tasks"] and len(parts) > 2:
        return parts[2]
    return None


def public_names(package: str) -> set[str]:
    """`__all__` of a package (a stage's public names)."""
    tree = ast.parse(MODULES[package].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            return set(ast.literal_eval(node.value))
    return set()


def test_cycle_finder_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"a"}}) == [["a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert cycles(internal_edges()) == []


def test_every_stage_package_names_its_entry_points():
    for stage in STAGES:
        package = f"memflow.tasks.{stage}"
        doc = ast.get_docstring(ast.parse(MODULES[package].read_text(encoding="utf-8")))
        assert doc and "Entry points" in doc, package
        names = public_names(package)
        assert names, f"{package} exports nothing"
        module = __import__(package, fromlist=["_"])
        assert all(hasattr(module, n) for n in names), package


def test_stages_meet_only_through_public_names():
    problems = []
    for name in MODULES:
        own = stage_of(name)
        for target, names in imports_of(name):
            theirs = stage_of(target)
            if theirs not in STAGES or theirs == own:
                continue
            if target != f"memflow.tasks.{theirs}":
                problems.append(f"{name} reaches into {target}")
            elif missing := set(names) - public_names(target):
                problems.append(f"{name} takes non-public {sorted(missing)} from {target}")
            elif own in STAGES and theirs not in STAGE_DEPS[own]:
                problems.append(f"stage {own} depends on stage {theirs} ({name})")
    assert problems == []


def test_shared_ground_and_schemas_depend_on_no_stage():
    allowed = {"memflow.schemas": ("memflow.schemas",),
               "memflow.tasks.stores": ("memflow.schemas", "memflow.tasks.stores"),
               "memflow.tasks.ground": ("memflow.schemas", "memflow.tasks.stores", "memflow.tasks.ground")}
    problems = []
    for name in MODULES:
        for layer, ok in allowed.items():
            if name == layer or name.startswith(layer + "."):
                problems += [f"{name} imports {target}" for target, _ in imports_of(name)
                             if target.startswith("memflow") and not target.startswith(ok)]
    assert problems == []


def test_tasks_never_reach_up_to_flows_or_the_cli():
    problems = [f"{name} imports {target}" for name in MODULES if name.startswith("memflow.tasks")
                for target, _ in imports_of(name)
                if target == "memflow" or target.startswith(("memflow.flows", "memflow.api",
                                                             "memflow.cli", "memflow.commands",
                                                             "memflow.demo_loop"))]
    assert problems == []


def test_each_library_lives_behind_one_module():
    problems = []
    for name in MODULES:
        for target, _ in imports_of(name):
            library = target.split(".")[0]
            home = LIBRARY_HOMES.get(library)
            if home and not (name == home or name.startswith(home + ".")):
                problems.append(f"{name} imports {library} (its home is {home})")
    assert problems == []


def test_pyproject_installs_every_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    packages = {name for name in MODULES if is_package(name)}
    assert packages - listed == set()
    data_folders = {"memflow.samples"}
    assert listed - packages == data_folders
    for folder in data_folders:
        assert folder in config["tool"]["setuptools"]["package-data"]


@pytest.mark.parametrize("stage", STAGES)
def test_stage_folder_holds_only_that_stage(stage):
    """Sanity of the walk itself: the stage's modules are found and named under it."""
    names = [n for n in MODULES if stage_of(n) == stage]
    assert f"memflow.tasks.{stage}" in names and len(names) > 1


def test_every_name_the_package_promises_resolves():
    import memflow

    promised = memflow._API | set(memflow._ELSEWHERE)
    assert {"demo", "capture", "search", "index", "dream"} <= promised
    for name in sorted(promised):
        assert callable(getattr(memflow, name)), name
    with pytest.raises(AttributeError):
        memflow.no_such_function  # noqa: B018
