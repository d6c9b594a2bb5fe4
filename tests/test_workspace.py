from datetime import date

import pytest

from memflow.schemas.settings import load_settings
from memflow.tasks.ground.workspace import (
    PathError,
    check_session_id,
    date_of,
    init_workspace,
    is_day_index,
    kind_of,
    layout,
    safe_path,
)


@pytest.mark.parametrize("bad", ["../etc/passwd", "daily/../../x", "/etc/passwd", "a\0b",
                                 "..", "", "C:/x", "..\\x"])
def test_traversal_attempts_are_rejected(tmp_path, bad):
    with pytest.raises(PathError):
        safe_path(tmp_path, bad)


def test_symlink_leaving_workspace_is_rejected(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(outside)
    with pytest.raises(PathError, match="symlink"):
        safe_path(ws, "link/secret.md")


def test_symlink_inside_workspace_is_allowed(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert safe_path(tmp_path, "alias/x.md") == (tmp_path / "real" / "x.md").resolve()


@pytest.mark.parametrize("sid", ["abc", "conv-26_s1", "A.b-c_9"])
def test_valid_session_ids(sid):
    assert check_session_id(sid) == sid


@pytest.mark.parametrize("sid", ["", "../x", "a/b", ".hidden", "a b", "x" * 200, "a..b"])
def test_invalid_session_ids(sid):
    with pytest.raises(PathError):
        check_session_id(sid)


def test_init_creates_layers_and_is_idempotent(tmp_path):
    lay = layout(load_settings(tmp_path))
    created = init_workspace(lay)
    for rel in ["session/dialog", "resource", "daily", "digest/personal", "digest/procedure",
                "digest/wiki", "metadata/index", "metadata/state"]:
        assert (tmp_path / rel).is_dir()
        assert rel in created
    assert init_workspace(lay) == []
    assert (tmp_path / "metadata/state/README.md").exists()


def test_qwenpaw_layout_needs_only_directory_names(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMFLOW_SESSION_DIR", "mem_session")
    monkeypatch.setenv("MEMFLOW_DAILY_DIR", "memory")
    monkeypatch.setenv("MEMFLOW_METADATA_DIR", "mem_metadata")
    lay = layout(load_settings(tmp_path))
    init_workspace(lay)
    assert (tmp_path / "mem_session/dialog").is_dir()
    assert (tmp_path / "mem_metadata/state").is_dir()
    assert is_day_index(lay, "memory/2026-01-02/index.md")
    assert is_day_index(lay, "memory/2026-01-02.md")
    assert not is_day_index(lay, "memory/2026-01-02/notes.md")
    assert kind_of(lay, "memory/2026-01-02/index.md") == "day_index"


def test_settings_from_toml_env_and_overrides(tmp_path, monkeypatch):
    (tmp_path / "memflow.toml").write_text('timezone = "Asia/Shanghai"\nchunk_bytes = 1500\n')
    assert load_settings(tmp_path).timezone == "Asia/Shanghai"
    monkeypatch.setenv("MEMFLOW_CHUNK_BYTES", "1800")
    assert load_settings(tmp_path).chunk_bytes == 1800
    assert load_settings(tmp_path, chunk_bytes=1000).chunk_bytes == 1000


def test_settings_from_the_environment_as_users_write_them(tmp_path, monkeypatch):
    """Every field has its MEMFLOW_<FIELD> variable, in any case; a list field is JSON (a clear
    error when it is not); MEMFLOW_ variables that are not settings (the fleet root, the MCP
    token) are left alone; the environment beats memflow.toml and loses to arguments."""
    import subprocess
    import sys

    from memflow.errors import describe_error

    (tmp_path / "memflow.toml").write_text('lock_wait = 2.0\nmask_secrets = true\n')
    monkeypatch.setenv("MEMFLOW_LOCK_WAIT", "0.25")
    monkeypatch.setenv("memflow_mask_secrets", "false")
    monkeypatch.setenv("MEMFLOW_SECRET_PATTERNS", '["pin ([0-9]+)", "code-[a-z]+"]')
    monkeypatch.setenv("MEMFLOW_FLEET_ROOT", str(tmp_path / "fleet"))
    monkeypatch.setenv("MEMFLOW_MCP_TOKEN", "not a setting")
    monkeypatch.setenv("MEMFLOW_MODEL_API_KEY", "sk-test")
    settings = load_settings(tmp_path)
    assert (settings.lock_wait, settings.mask_secrets) == (0.25, False)
    assert settings.secret_patterns == ["pin ([0-9]+)", "code-[a-z]+"]
    assert settings.model_api_key.get_secret_value() == "sk-test" and "sk-test" not in repr(settings)
    assert {"lock_wait", "mask_secrets", "secret_patterns"} <= settings.model_fields_set
    assert "index_workers" not in settings.model_fields_set  # what the fleet asks: set by nobody
    assert load_settings(tmp_path, lock_wait=9.0).lock_wait == 9.0
    probe = ("import sys; from memflow.schemas.settings import load_settings; "
             f"load_settings({str(tmp_path)!r}); print('pydantic_settings' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"  # ~70 ms of every CLI call, not imported
    monkeypatch.setenv("MEMFLOW_SECRET_PATTERNS", "pin")
    with pytest.raises(ValueError, match="MEMFLOW_SECRET_PATTERNS is not JSON"):
        load_settings(tmp_path)
    monkeypatch.setenv("MEMFLOW_SECRET_PATTERNS", "[]")
    monkeypatch.setenv("MEMFLOW_LOCK_WAIT", "soon")
    with pytest.raises(ValueError) as caught:
        load_settings(tmp_path)
    assert describe_error(caught.value)[0].startswith("error: invalid setting lock_wait")


def test_settings_served_from_memory_follow_every_change(tmp_path, monkeypatch):
    """Settings are remembered per workspace (a search pays no env parsing), yet an edited
    memflow.toml, a new one, an environment variable or a new working folder is seen at once,
    and a caller's changes to its copy reach nobody else."""
    first = load_settings(tmp_path)
    assert first.chunk_bytes == 1000
    first.chunk_bytes = 3000
    assert load_settings(tmp_path).chunk_bytes == 1000  # each call gets its own copy
    (tmp_path / "memflow.toml").write_text("chunk_bytes = 1500\n")
    assert load_settings(tmp_path).chunk_bytes == 1500
    (tmp_path / "memflow.toml").write_text("chunk_bytes = 1700\n")  # same size, same second
    assert load_settings(tmp_path).chunk_bytes == 1700
    monkeypatch.setenv("MEMFLOW_CHUNK_BYTES", "1800")
    assert load_settings(tmp_path).chunk_bytes == 1800
    monkeypatch.delenv("MEMFLOW_CHUNK_BYTES")
    (tmp_path / "memflow.toml").unlink()
    assert load_settings(tmp_path).chunk_bytes == 1000
    other = tmp_path / "sub"
    other.mkdir()
    (other / "ws").mkdir()
    (other / "ws" / "memflow.toml").write_text('timezone = "Asia/Tokyo"\n')
    (tmp_path / "ws").mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_settings("ws").workspace == (tmp_path / "ws").resolve()
    monkeypatch.chdir(other)
    assert load_settings("ws").timezone == "Asia/Tokyo"  # a relative path, another folder


def test_settings_reject_unsafe_layer_names(tmp_path):
    with pytest.raises(ValueError):
        load_settings(tmp_path, daily_dir="../x")


def test_date_of_path():
    assert date_of("daily/2026-03-04/x.md") == date(2026, 3, 4)
    assert date_of("daily/2026-13-04/x.md") is None
    assert date_of("digest/wiki/x.md") is None
