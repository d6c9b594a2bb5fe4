"""memory-flows: long-term memory for LLM agents as plain Markdown files.

Public API (imported lazily so `memflow --help` stays fast):
`memflow.init`, `read`, `write`, `edit`, `move`, `delete`, `frontmatter_get`, `frontmatter_set`,
`index`, `reindex`, `search`, `auto_memory_search`, `capture`, `capture_resources`, `inbox`,
`dream`, `dream_runs`, `dream_rollback`, `dream_migrate`, `proactive`, `forget`, `import_reme`,
`recent`, `context`, `profile`, `status`, `check`, `backup`, `restore`, `serve`, `evaluate`, `fleet`,
`settings_for`, `demo`: every CLI command and MCP tool (tests/test_api_verbs.py).
"""

from __future__ import annotations

from importlib import import_module

_API = {"init", "read", "write", "edit", "move", "delete", "frontmatter_get", "frontmatter_set",
        "settings_for", "index", "reindex", "search", "auto_memory_search", "capture",
        "capture_resources", "inbox", "dream", "dream_runs", "dream_rollback", "dream_migrate",
        "proactive", "forget", "import_reme", "recent", "context", "profile", "status", "check",
        "backup", "restore", "evaluate", "fleet"}
# they drive the API (or the MCP server does), so they cannot live in it
_ELSEWHERE = {"demo": "memflow.demo_loop", "serve": "memflow.mcp_server"}


def __dir__() -> list[str]:
    return sorted(set(globals()) | _API | set(_ELSEWHERE))


def __getattr__(name: str):
    if name == "__version__":  # importlib.metadata costs every CLI call ~35 ms: only when asked
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("memory-flows")
        except PackageNotFoundError:  # running from a source tree
            return "0.0.0"
    if name in _API or name in _ELSEWHERE:
        return getattr(import_module(_ELSEWHERE.get(name, "memflow.api")), name)
    raise AttributeError(f"module 'memflow' has no attribute {name!r}")
