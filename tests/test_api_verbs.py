"""Everything the CLI and the MCP server do is reachable as `memflow.<verb>`."""

import argparse

import memflow
from memflow.cli import _parser
from memflow.mcp_server import build_server
from memflow.schemas.settings import load_settings

# CLI commands whose Python verb has another name (the CLI groups or abbreviates them)
CLI_VERBS = {"fm": ["frontmatter_get", "frontmatter_set"], "resources": ["capture_resources"],
             "import": ["import_reme"], "eval": ["evaluate"]}


def cli_commands() -> list[str]:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


def test_every_cli_command_has_a_python_verb():
    commands = cli_commands()
    assert {"search", "profile", "status", "serve", "backup"} <= set(commands)
    for command in commands:
        for verb in CLI_VERBS.get(command, [command]):
            assert callable(getattr(memflow, verb)), f"memflow {command}: no memflow.{verb}"


def test_every_mcp_tool_has_a_python_verb(tmp_path):
    import anyio

    server = build_server(load_settings(tmp_path / "ws"))
    tools = [t.name for t in anyio.run(server.list_tools)]
    assert {"search", "profile", "context", "status"} <= set(tools)
    for tool in tools:
        assert callable(getattr(memflow, tool)), f"MCP tool {tool}: no memflow.{tool}"
    assert set(tools) <= set(dir(memflow))
