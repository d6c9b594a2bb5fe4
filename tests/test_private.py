"""Private by default: the file tools (MCP over stdio, the CLI) never read or write
memflow.toml, metadata/ or anything outside the memory layers, symlinks included; the model API
key can live in the environment and is never printed."""

import json
import os

import pytest

from helpers import run_cli
from mcp import Client
from mcp.client.stdio import stdio_client
from test_mcp import run, stdio_params, text

from memflow import api

SECRET = "sk-test-0123456789abcdef"


def private_workspace(lay):
    (lay.root / "memflow.toml").write_text(f'model_api_key = "{SECRET}"\n')
    (lay.state_dir / "tombstones.json").write_text('{"forgotten": "my old password"}')
    (lay.root / "notes.md").write_text("# Outside every layer\n")
    api.write("digest/wiki/ok.md", "# Ok\n\nFine to read.\n", workspace=lay.root)
    (lay.root / "digest/wiki/settings.md").symlink_to(lay.root / "memflow.toml")
    (lay.root / "daily/state").symlink_to(lay.state_dir, target_is_directory=True)


REFUSED_CALLS = [
    ("read", {"path": "memflow.toml"}), ("read", {"path": "metadata/state/tombstones.json"}),
    ("read", {"path": "notes.md"}), ("read", {"path": "digest/wiki/settings.md"}),
    ("read", {"path": "daily/state/tombstones.json"}), ("frontmatter_get", {"path": "memflow.toml"}),
    ("context", {"path": "metadata/state/tombstones.json"}), ("write", {"path": "memflow.toml", "content": "x"}),
    ("write", {"path": "top.md", "content": "x"}), ("edit", {"path": "memflow.toml", "old": "sk", "new": "x"}),
    ("move", {"src": "digest/wiki/ok.md", "dst": "metadata/ok.md"}), ("move", {"src": "notes.md", "dst": "digest/n.md"}),
    ("delete", {"path": "memflow.toml"}), ("frontmatter_set", {"path": "notes.md", "values": {"a": 1}}),
]


def test_mcp_file_tools_refuse_settings_metadata_and_files_outside_the_layers(lay):
    private_workspace(lay)

    async def session():
        async with Client(stdio_client(stdio_params(lay.root), errlog=open(os.devnull, "w"))) as client:
            for tool, arguments in REFUSED_CALLS:
                result = await client.call_tool(tool, arguments)
                said = text(result)
                assert result.is_error and "refused: " in said, (tool, arguments, said)
                assert "\n" not in said and SECRET not in said and "password" not in said
            ok = await client.call_tool("read", {"path": "digest/wiki/ok.md"})
            assert not ok.is_error and "Fine to read." in text(ok)
            for uri in ("memory://memflow.toml", "memory://metadata/state/tombstones.json"):
                try:
                    leaked = await client.read_resource(uri)
                except Exception as exc:  # noqa: BLE001 - the SDK raises the server's error
                    assert "refused" in str(exc) and SECRET not in str(exc)
                else:
                    raise AssertionError(f"{uri} returned {leaked}")
            status = await client.call_tool("status", {})
            assert SECRET not in json.dumps(status.structured_content) and SECRET not in text(status)

    run(session)
    assert (lay.root / "memflow.toml").read_text() == f'model_api_key = "{SECRET}"\n'
    assert not (lay.root / "top.md").exists() and (lay.root / "digest/wiki/ok.md").exists()


def test_cli_file_commands_refuse_outside_the_layers_in_one_line(lay):
    private_workspace(lay)
    ws = str(lay.root)
    for args in (["read", "memflow.toml"], ["read", "metadata/state/tombstones.json"],
                 ["fm", "get", "digest/wiki/settings.md"], ["write", "notes.md", "--content", "x"]):
        res = run_cli("-w", ws, *args)
        assert res.returncode == 1 and res.stdout == "", args
        line = res.stderr.strip()
        assert line.startswith("error: refused: ") and "\n" not in line and SECRET not in line, line
    assert "not in a memory layer" in run_cli("-w", ws, "read", "memflow.toml").stderr
    status = run_cli("-w", ws, "status", "--json")
    assert status.returncode == 0 and SECRET not in status.stdout + status.stderr


def sent_key(fake_model) -> str:
    headers = {k.lower(): v for k, v in fake_model.requests[-1]["headers"].items()}
    return headers.get("authorization", "")


@pytest.mark.slow  # >10 s here (pytest --durations)
def test_the_api_key_comes_from_the_environment_and_is_never_printed(lay, fake_model):
    ws = str(lay.root)
    (lay.root / "memflow.toml").write_text(
        f'chat_model = "openai/test-chat"\nmodel_api_base = "{fake_model.api_base}"\n'
        'model_api_key_env = "MEMFLOW_TEST_KEY"\nmodel_timeout = 5.0\n')
    fake_model.default_chat = lambda messages: "OK"
    res = run_cli("-w", ws, "status", "--deep", "--json", env={"MEMFLOW_TEST_KEY": SECRET})
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["models"]["chat"]["health"].startswith("ok")
    assert sent_key(fake_model) == f"Bearer {SECRET}"
    assert SECRET not in res.stdout + res.stderr
    res = run_cli("-w", ws, "status", "--deep", env={"MEMFLOW_TEST_KEY": ""})
    assert "model_api_key_env names MEMFLOW_TEST_KEY, which is not set in the environment" in res.stdout
    res = run_cli("-w", ws, "status", "--deep", "--json", env={"MEMFLOW_MODEL_API_KEY": SECRET})
    assert sent_key(fake_model) == f"Bearer {SECRET}"
    assert SECRET not in res.stdout + res.stderr


def test_a_symlink_to_the_settings_or_metadata_is_neither_indexed_nor_carded(lay):
    private_workspace(lay)
    (lay.root / "resource").mkdir(exist_ok=True)
    (lay.root / "resource/cfg.txt").symlink_to(lay.root / "memflow.toml")
    (lay.state_dir / "secret.md").write_text("the forgotten password hunter2\n")
    ws = str(lay.root)
    resources = run_cli("-w", ws, "resources")
    assert "cfg.txt" not in resources.stdout and SECRET not in resources.stdout + resources.stderr
    index = run_cli("-w", ws, "index")
    assert index.returncode == 0, index.stderr
    for query in (SECRET, "model_api_key", "hunter2 forgotten password"):
        found = run_cli("-w", ws, "search", query, "--json")
        assert found.returncode == 0, found.stderr
        hits = json.dumps(json.loads(found.stdout)["results"])
        assert SECRET not in hits and "hunter2" not in hits and "settings.md" not in hits
    leaked = [p for p in lay.root.rglob("*") if p.is_file() and not p.is_symlink()
              and "metadata" not in p.parts and p.name != "memflow.toml" and SECRET.encode() in p.read_bytes()]
    assert leaked == []
