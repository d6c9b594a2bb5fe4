"""One-line messages for errors a user can fix (the CLI prints them, the MCP server returns
them as tool errors)."""

from __future__ import annotations

EXIT_ERROR, EXIT_BUSY = 1, 75


def describe_error(exc: BaseException) -> tuple[str | None, int]:
    """One-line message and exit code for errors a user can fix; (None, 1) for bugs."""
    from pydantic import ValidationError

    from memflow.tasks.ground.lock import WorkspaceBusy

    if isinstance(exc, WorkspaceBusy):
        return str(exc), EXIT_BUSY
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"error: invalid setting {where}: {first.get('msg')}", EXIT_ERROR
    if type(exc) in (KeyError, IndexError):
        # a bare IndexError/KeyError says nothing a user can act on ("error: 'files'")
        return (f"error: unexpected {type(exc).__name__} {str(exc)[:120]}; please report it with the "
                "command that failed"), EXIT_ERROR
    if isinstance(exc, (ValueError, OSError, LookupError)) or type(exc).__module__.startswith("memflow."):
        text = str(exc) if not isinstance(exc, OSError) or not exc.filename else \
            f"{exc.strerror}: {_target(exc)}"
        return f"error: {text or type(exc).__name__}", EXIT_ERROR
    return None, EXIT_ERROR


def _target(exc: OSError) -> str:
    """The file an OSError is about: the destination of a failed rename, not its hidden temp."""
    name = str(exc.filename)
    hidden_temp = name.rsplit("/", 1)[-1].startswith(".") and name.endswith(".tmp")
    return str(exc.filename2) if hidden_temp and exc.filename2 else name
