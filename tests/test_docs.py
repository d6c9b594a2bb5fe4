"""The documentation: README stays a short front door whose tour runs as written; the generated
docs pages are fresh; the chat-model recipe reaches an OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent


def section(title: str, text: str = README) -> str:
    """README's text from the heading `## title...` to the next `## ` heading."""
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.M | re.S)


def shell_lines(text: str) -> list[str]:
    """The commands of a section's bash blocks, comments dropped."""
    out = []
    for block in blocks(text, "bash"):
        for line in block.splitlines():
            command = line.split("  #", 1)[0].strip()
            if command and not command.startswith("#"):
                out.append(command)
    return out


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMFLOW_", "PREFECT_API_URL"))}
    env.update({"HOME": str(home), "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra})
    return env


def sh(command: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, executable="/bin/bash")
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


# ---------------------------------------------------------------- README's shape

def test_readme_is_at_most_250_lines_and_keeps_the_ci_blocks():
    assert len(README.splitlines()) <= 250
    for name in ("setup", "test"):
        found = re.findall(rf"<!-- ci:{name} -->\n```bash\n(.+?)\n```\n<!-- /ci:{name} -->", README, re.S)
        assert len(found) == 1, f"the ci:{name} block is gone or doubled"
    setup = re.search(r"<!-- ci:setup -->\n```bash\n(.+?)\n```", README, re.S).group(1)
    assert setup == "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/memflow demo"
    assert "pytest" in re.search(r"<!-- ci:test -->\n```bash\n(.+?)\n```", README, re.S).group(1)


def test_readme_links_point_at_files_that_exist():
    targets = re.findall(r"\]\(((?!https?://)[^)#]+)\)", README)
    assert targets, "README links into the docs"
    missing = [t for t in targets if not (ROOT / t).is_file()]
    assert not missing, missing


# ---------------------------------------------------------------- generated pages

def test_generated_docs_pages_are_fresh():
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "gen.py"), "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_every_setting_and_command_is_in_the_reference():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import gen
    finally:
        sys.path.remove(str(ROOT / "docs"))
    from memflow.cli import _parser
    from memflow.schemas.settings import Settings

    rows = [line for line in gen.settings_page().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(Settings.model_fields)
    empty = [row.split("`")[1] for row in rows if not row.rstrip(" |").rsplit("|", 1)[1].strip()]
    assert not empty, f"settings with no meaning (comment it in schemas/settings.py, or MEANING): {empty}"
    page = gen.cli_page()
    for name, _ in gen._subparsers(_parser()):
        assert f"## `memflow {name}`" in page


def test_evaluation_page_shows_every_committed_result():
    page = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    results = sorted((ROOT / "docs" / "results").rglob("summary.json"))
    assert results, "docs/results/ holds at least one run"
    for path in results:
        name = str(path.parent.relative_to(ROOT / "docs" / "results"))
        assert f"--out docs/results/{name}" in page
        summary = json.loads(path.read_text(encoding="utf-8"))
        if "systems" in summary:  # memright: the 'all' row at the smallest budget, as printed
            budget = str(summary["run"]["budgets"][0])
            assert f"{summary['systems']['memflow']['all'][budget]['current_first']:.3f}" in page


# ---------------------------------------------------------------- the tour, as written

def test_readme_tour_runs_as_written_on_a_fresh_workspace(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = env_for(home)
    tour = section("A five-minute tour")
    (home / "chat.json").write_text(blocks(tour, "json")[0], encoding="utf-8")
    outputs = {}
    for command in shell_lines(tour):
        outputs[command] = sh(command, home, env)
    workspace = home / "memory"
    # every file the README says the workspace now holds
    listing = blocks(tour, "")[0]
    for path in re.findall(r"^(\S+\.\w+)\s", listing, re.M):
        assert (workspace / path).is_file(), f"README shows {path}, the tour did not write it"
    digest = (workspace / "digest/personal/the-user.md").read_text(encoding="utf-8")
    quoted = re.search(r"A digest line reads `(.+?)`;", tour, re.S).group(1)
    assert " ".join(quoted.split()) in " ".join(digest.split())
    searched = {cmd.split('"')[1]: out for cmd, out in outputs.items() if " search " in cmd}
    assert "Bristol" in searched["where does the user live"]
    assert "rollback.sh" in searched["roll back a deploy"]
    profile = next(out for cmd, out in outputs.items() if cmd.endswith(" profile"))
    assert "I moved from Leeds to Bristol" in profile

    # connecting an agent over MCP, as the README's client configuration starts it
    config = json.loads(blocks(section("Connect an agent"), "json")[0])["mcpServers"]["memory"]
    args = [str(workspace) if a == "/home/me/memory" else a for a in config["args"]]
    params = StdioServerParameters(command=str(BIN / "memflow"), args=args, env=env)

    async def ask() -> dict:
        async with Client(stdio_client(params, errlog=open(os.devnull, "w"))) as client:
            found = await client.call_tool("search", {"query": "Where does the user live?", "limit": 3})
            assert not found.is_error
            return found.structured_content

    hits = anyio.run(ask)["results"]
    assert any("Bristol" in hit["text"] for hit in hits)

    # the Python client of docs/how-to/mcp.md, pointed at this workspace
    client = blocks((ROOT / "docs/how-to/mcp.md").read_text(encoding="utf-8"), "python")[0]
    client = client.replace('"/home/me/memory"', repr(str(workspace))).replace(
        'command="memflow"', f"command={str(BIN / 'memflow')!r}")
    done = subprocess.run([sys.executable, "-c", client], cwd=home, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "'search'" in done.stdout and "Bristol" in done.stdout


def test_readme_chat_model_recipe_reaches_a_local_openai_compatible_server(tmp_path, fake_model):
    """The local-server recipe's exports, its api base pointed at the loopback fake server:
    `status --deep` calls the model they name; the same settings read from `memflow.toml`."""
    home = tmp_path / "home"
    home.mkdir()
    recipe = section("Turn on a chat model")
    exports = dict(re.findall(r"^export (MEMFLOW_\w+)=(\S+)", "\n".join(shell_lines(recipe)), re.M))
    assert set(exports) == {"MEMFLOW_CHAT_MODEL", "MEMFLOW_MODEL_API_BASE", "MEMFLOW_MODEL_API_KEY"}
    model = exports["MEMFLOW_CHAT_MODEL"].split("/", 1)[1]
    exports["MEMFLOW_MODEL_API_BASE"] = fake_model.api_base
    sh("memflow init memory", home, env_for(home))
    deep = next(c for c in shell_lines(recipe) if c.startswith("memflow ") and "status --deep" in c)
    out = sh(deep, home, env_for(home, **exports))
    assert re.search(r"chat model: .*ok", out), out
    assert any(r["body"].get("model") == model for r in fake_model.requests)

    # the same settings as the workspace's own memflow.toml, the key left in the environment
    (home / "memory" / "memflow.toml").write_text(
        f'chat_model = "{exports["MEMFLOW_CHAT_MODEL"]}"\nmodel_api_base = "{fake_model.api_base}"\n',
        encoding="utf-8")
    from memflow.schemas.settings import load_settings

    settings = load_settings(home / "memory")
    assert settings.chat_model == exports["MEMFLOW_CHAT_MODEL"]
    assert settings.model_api_base == fake_model.api_base


def test_readme_commands_are_the_cli_s_own():
    """Every `memflow` command README shows parses (flags and subcommands exist)."""
    from memflow.cli import _parser

    parser = _parser()
    for line in shell_lines(README):
        if not line.startswith("memflow "):
            continue
        words = [w.replace("~", "/tmp") for w in shlex.split(line)[1:]]
        parser.parse_args(words)  # SystemExit (an unknown flag or command) fails the test


# ---------------------------------------------------------------- the site

def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
               "--site-dir", str(site)]
    return subprocess.run(command,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_site_builds_strict_without_the_pages_other_branches_bring(tmp_path):
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="reference/cli/"' in home
    for page in ("secrets", "vectors", "health"):  # arriving pages not on this branch: no dead link
        if not (ROOT / "docs" / f"{page}.md").is_file():
            assert f'href="{page}/"' not in home


def test_an_arriving_page_joins_the_nav_once_its_file_exists_and_a_nav_typo_still_fails(tmp_path):
    """A small site using docs/nav_slots.py: the slot of a missing arriving page is dropped, a
    present one is built and linked, and a missing page that is not a slot fails the strict build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n", encoding="utf-8")
    (docs / "speed.md").write_text("# Speed\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"

    def write(nav: str) -> None:
        config.write_text(
            f"site_name: t\nstrict: true\nhooks: [{ROOT / 'docs' / 'nav_slots.py'}]\n"
            "extra:\n  arriving_pages: [speed.md, vectors.md]\n"
            f"nav:\n  - Home: index.md\n  - Evaluation:\n{nav}", encoding="utf-8")

    write("      - Speed: speed.md\n      - Vectors: vectors.md\n")
    done = _build(config, tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="speed/"' in home and "vectors" not in home

    write("      - Speed: speed.md\n      - Typo: spede.md\n")
    done = _build(config, tmp_path / "site2")
    assert done.returncode != 0 and "spede.md" in done.stderr


def _commands_and_options(line: str, root) -> tuple[list, list[str]]:
    """The (sub)parsers a docs line names (`read|write` names two) and the `--options` it shows.
    Synopsis lines (`[--date D]`, `a|b`) are read the same way as runnable ones."""
    import argparse

    words = re.sub(r"[\[\]]", " ", line.split("  #", 1)[0]).split()[1:]
    takes_value = {s for a in root._actions for s in a.option_strings if a.nargs != 0}
    while words and words[0].startswith("-"):
        words = words[2:] if words[0] in takes_value else words[1:]
    parsers = [root]
    while words:
        subs = {n: p for a in parsers[0]._actions if isinstance(a, argparse._SubParsersAction)
                for n, p in a.choices.items()}
        names = words[0].split("|")
        if not subs or not all(n in subs for n in names):
            break
        parsers, words = [subs[n] for n in names], words[1:]
    return parsers, re.findall(r"(?<![\w-])--[a-z][\w-]*", " ".join(words))


def test_every_memflow_command_on_the_docs_pages_names_real_commands_and_options():
    """The hand-written docs pages show commands and synopses (`dream [--date D]`): each names a
    subcommand the parser has, and every `--option` it shows is one of that subcommand's."""
    from memflow.cli import _parser

    root = _parser()
    pages = [p for p in (ROOT / "docs").rglob("*.md")
             if not p.read_text(encoding="utf-8").startswith("<!-- generated")]
    checked, wrong = 0, []
    for page in pages:
        for line in shell_lines(page.read_text(encoding="utf-8")):
            if not line.startswith("memflow "):
                continue
            parsers, options = _commands_and_options(line, root)
            if parsers == [root]:
                wrong.append(f"{page.name}: no such command: {line}")
            for parser in parsers:
                known = {s for a in parser._actions for s in a.option_strings}
                wrong += [f"{page.name}: {parser.prog} has no {o}" for o in options if o not in known]
            checked += 1
    assert checked >= 20, checked
    assert not wrong, "\n".join(wrong)


def test_the_notebooks_page_saves_an_executed_notebook_with_its_plots(tmp_path):
    """docs/how-to/notebooks.md's block up to its first notebook run, in a folder that has the
    repository's notebooks and venv: the saved notebook holds outputs, plots among them."""
    page = (ROOT / "docs/how-to/notebooks.md").read_text(encoding="utf-8")
    block = blocks(page, "bash")[-1]
    first_run = block.index("\n", block.index(".venv/bin/python run_notebook.py"))
    script = block[:first_run].replace("/tmp/nb/", f"{tmp_path}/nb/")
    (tmp_path / ".venv").symlink_to(BIN.parent)
    (tmp_path / "notebooks").symlink_to(ROOT / "notebooks")
    sh(script, tmp_path, env_for(tmp_path, TMPDIR=str(tmp_path)))
    import nbformat

    nb = nbformat.read(tmp_path / "nb" / "workspace_analytics.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
