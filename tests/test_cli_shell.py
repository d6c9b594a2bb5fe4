"""The CLI a shell user expects: every option says what it does, every command prints words by
default and JSON with --json, and a refusal is one line on stderr before anything claims success."""

from __future__ import annotations

import argparse
import json
import socket

import yaml
from helpers import run_cli

from memflow import api
from memflow.cli import _parser

NO_JSON = {"serve", "demo"}  # serve speaks JSON-RPC itself; demo is a guided tour


def walk(parser: argparse.ArgumentParser, name: str = "memflow"):
    """(command name, its parser, its actions), every subcommand at every depth."""
    yield name, parser, parser._actions
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from walk(child, f"{name} {sub}")


def leaves(parser: argparse.ArgumentParser):
    for name, sub, actions in walk(parser):
        if not any(isinstance(a, argparse._SubParsersAction) for a in actions):
            yield name, sub, actions


def test_every_option_positional_and_subcommand_has_help():
    missing = []
    for name, _parser_, actions in walk(_parser()):
        for action in actions:
            label = "/".join(action.option_strings) or action.dest
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{name}: {label}")
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{name} {choice.dest}: (command)" for choice in action._choices_actions
                            if not choice.help]
    assert not missing, "options without help:\n" + "\n".join(missing)


def test_every_command_takes_json_but_serve_and_demo_which_say_why_not():
    names = {}
    for name, parser, actions in leaves(_parser()):
        names[name] = any("--json" in a.option_strings for a in actions)
        if name.split()[1] in NO_JSON:
            assert "no --json" in parser.description, name
    assert [n for n, has in names.items() if not has and n.split()[1] not in NO_JSON] == []
    assert {"memflow recent", "memflow context", "memflow proactive", "memflow fm get"} <= set(names)


def test_help_walks_without_error_for_every_command():
    for name, _parser_, _actions in walk(_parser()):
        done = run_cli(*name.split()[1:], "--help") if name == "memflow context" else None
        assert done is None or (done.returncode == 0 and "--depth" in done.stdout)
        assert _parser_.format_help()


def linked_workspace(settings):
    ws = settings.workspace
    api.write("digest/wiki/harbour.md", "# Harbour\n\nThe small harbour by the lighthouse.\n",
              "Harbour", "where boats moor", None, ws)
    api.write("digest/wiki/boat.md", "# Boat\n\nThe boat is moored at [[digest/wiki/harbour.md]].\n",
              "Boat", "the family boat", None, ws)
    api.index(ws)
    return str(ws)


def test_recent_lists_changed_notes_newest_first_in_words_and_json(settings):
    ws = linked_workspace(settings)
    words = run_cli("-w", ws, "recent")
    assert words.returncode == 0, words.stderr
    lines = words.stdout.splitlines()
    assert lines[0].split()[1] == "digest/wiki/boat.md" and "Boat - the family boat" in lines[0]
    assert "digest/wiki/harbour.md" in lines[1]
    machine = run_cli("-w", ws, "recent", "--json", "--layer", "digest", "--limit", "1")
    assert json.loads(machine.stdout) == {"notes": api.recent(ws, 7.0, 1, "digest")}
    assert json.loads(machine.stdout)["notes"][0]["path"] == "digest/wiki/boat.md"
    assert run_cli("-w", ws, "recent", "--layer", "resource").stdout.strip() == "nothing changed in that time"
    refused = run_cli("-w", ws, "recent", "--days", "0")
    assert refused.returncode == 2 and "expected a number above 0" in refused.stderr


def test_context_shows_the_note_and_what_links_both_ways(settings):
    ws = linked_workspace(settings)
    words = run_cli("-w", ws, "context", "digest/wiki/harbour.md")
    assert words.returncode == 0, words.stderr
    assert "The small harbour by the lighthouse." in words.stdout
    assert "related (1):" in words.stdout
    assert "- [1<] digest/wiki/boat.md: Boat the family boat" in words.stdout
    machine = json.loads(run_cli("-w", ws, "context", "digest/wiki/boat.md", "--json").stdout)
    assert machine == api.context("digest/wiki/boat.md", ws)
    assert [(r["path"], r["direction"], r["hop"]) for r in machine["related"]] == [
        ("digest/wiki/harbour.md", "out", 1)]
    assert run_cli("-w", ws, "context", "digest/wiki/boat.md", "--depth", "0", "--json").stdout.count(
        '"hop"') == 0
    gone = run_cli("-w", ws, "context", "digest/wiki/nowhere.md")
    assert gone.returncode == 1 and gone.stdout == ""
    assert gone.stderr.count("\n") == 1 and gone.stderr.startswith("error: ")


def test_proactive_prints_topics_in_words_and_json_on_request(settings, lay):
    ws = str(lay.root)
    day = lay.root / lay.daily / "2026-04-02"
    day.mkdir(parents=True)
    topics = [{"title": "Kubernetes upgrade", "reason": "three notes this week",
               "evidence": ["the cluster runs 1.29"], "keywords": ["kubernetes", "cluster"],
               "paths": ["daily/2026-04-02/ops.md"]}]
    (day / "interests.yaml").write_text(yaml.safe_dump({"date": "2026-04-02", "topics": topics}))
    words = run_cli("-w", ws, "proactive", "--date", "2026-04-02")
    assert words.returncode == 0, words.stderr
    assert words.stdout.splitlines() == ["interest topics of 2026-04-02: 1",
                                         "- Kubernetes upgrade: three notes this week",
                                         "    keywords: kubernetes, cluster",
                                         "    daily/2026-04-02/ops.md"]
    machine = json.loads(run_cli("-w", ws, "proactive", "--date", "2026-04-02", "--json").stdout)
    assert machine == {"status": "ok", "date": "2026-04-02", "topics": topics}
    none = run_cli("-w", ws, "proactive", "--date", "2026-04-03")
    assert none.returncode == 0 and none.stdout.startswith("no interest topics for 2026-04-03: no daily/")


def test_file_commands_print_words_by_default_and_json_on_request(settings):
    ws = str(settings.workspace)
    made = run_cli("-w", ws, "write", "digest/wiki/a.md", "--content", "# A\n\nalpha\n", "--json")
    assert json.loads(made.stdout) == {"path": "digest/wiki/a.md", "detail": "written"}
    read = json.loads(run_cli("-w", ws, "read", "digest/wiki/a.md", "--start", "1", "--end", "1",
                              "--json").stdout)
    assert read == {"path": "digest/wiki/a.md", "start_line": 1, "end_line": 1, "text": "# A\n"}
    fm = run_cli("-w", ws, "fm", "set", "digest/wiki/a.md", "name=A", "tags=[x, y]", "day=2026-03-02")
    assert fm.returncode == 0, fm.stderr
    assert fm.stdout.splitlines() == ["name: A", "tags:", "- x", "- y", "day: 2026-03-02"]  # as in the note
    assert json.loads(run_cli("-w", ws, "fm", "get", "digest/wiki/a.md", "--json").stdout) == {
        "name": "A", "tags": ["x", "y"], "day": "2026-03-02"}
    moved = json.loads(run_cli("-w", ws, "move", "digest/wiki/a.md", "digest/wiki/b.md", "--json").stdout)
    assert moved == {"src": "digest/wiki/a.md", "dst": "digest/wiki/b.md", "relinked": []}
    gone = json.loads(run_cli("-w", ws, "delete", "digest/wiki/b.md", "--json").stdout)
    assert gone == {"path": "digest/wiki/b.md", "still_linked_from": []}
    events = json.loads(run_cli("-w", ws, "inbox", "--json").stdout)["events"]
    assert [e["job"] for e in events][:2] == ["write", "fm-set"]
    assert json.loads(run_cli("-w", ws, "dream", "runs", "--json").stdout) == {"runs": []}
    assert run_cli("-w", ws, "dream", "runs").stdout.strip() == "no dream runs yet"


def test_serve_refusals_print_no_banner(settings):
    ws = str(settings.workspace)
    refused = run_cli("-w", ws, "serve", "--transport", "http", "--host", "0.0.0.0",
                      env={"MEMFLOW_MCP_TOKEN": ""})
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "error: refusing to serve on 0.0.0.0 without a bearer token: pass --token (or "
        "MEMFLOW_MCP_TOKEN), or bind 127.0.0.1"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = run_cli("-w", ws, "serve", "--transport", "http", "--port", str(taken.getsockname()[1]))
    assert busy.returncode == 1 and "memory-flows MCP on" not in busy.stderr
    assert busy.stderr.count("\n") == 1 and "--port" in busy.stderr
    bad = run_cli("-w", ws, "serve", "--transport", "http", "--port", "70000")
    assert bad.returncode == 2 and "expected a port" in bad.stderr


def test_bad_input_is_refused_before_anything_is_written(settings, lay, tmp_path):
    ws = str(lay.root)
    talk = tmp_path / "talk.json"
    talk.write_text(json.dumps([{"role": "user", "content": "The boat is blue."}]))
    bad_day = run_cli("-w", ws, "capture", str(talk), "--session", "s1", "--date", "2026-02-30")
    assert bad_day.returncode == 2 and "expected a date YYYY-MM-DD, got '2026-02-30'" in bad_day.stderr
    assert not any((lay.root / lay.session).rglob("*.jsonl")) and not any((lay.root / lay.daily).iterdir())
    assert run_cli("-w", ws, "search", "boat", "--since", "last week").returncode == 2
    assert run_cli("-w", ws, "inbox", "--since", "yesterday").returncode == 2
    assert run_cli("-w", ws, "inbox", "--since", "2026-04-02T10:00").returncode == 0
    (lay.root / "memflow.toml").write_text('lock_wait = "soon"\n')
    for args in (["status"], ["recent"], ["serve", "--transport", "http", "--host", "0.0.0.0"]):
        done = run_cli("-w", ws, *args)
        assert done.returncode == 1 and done.stdout == "", args
        assert done.stderr.splitlines() == [
            "error: invalid setting lock_wait: Input should be a valid number, unable to parse string "
            "as a number"], args
    (lay.root / "memflow.toml").write_text("lock_wait = [\n")
    broken = run_cli("-w", ws, "serve", "--transport", "http", "--host", "0.0.0.0")
    assert broken.returncode == 1 and broken.stdout == ""
    assert broken.stderr.count("\n") == 1
    assert broken.stderr.startswith(f"error: {lay.root / 'memflow.toml'}: not valid TOML: ")


def test_a_folder_that_is_not_a_workspace_is_refused_without_w(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    done = run_cli("status", cwd=plain)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "is not a workspace" in done.stderr and "-w" in done.stderr
    assert list(plain.iterdir()) == []
    assert run_cli("init", cwd=plain).returncode == 0
    assert run_cli("recent", cwd=plain).returncode == 0
