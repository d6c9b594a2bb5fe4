"""Settings: the one configuration shape of a workspace.

Sources, lowest priority first: `memflow.toml` in the workspace, `MEMFLOW_*` environment
variables (every field: `MEMFLOW_CHAT_MODEL`, `MEMFLOW_MODEL_API_KEY`, ...), keyword arguments.
A model is a litellm model string; empty means offline. Secrets can stay in the environment
(`model_api_key_env`) and are never shown (`model_api_key` is a SecretStr).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

CONFIG_FILE = "memflow.toml"
ENV_PREFIX = "MEMFLOW_"


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    workspace: Path = Path(".")
    # Layer directories: ReMe's names by default; a QwenPaw workspace sets
    # session_dir="mem_session", daily_dir="memory", metadata_dir="mem_metadata".
    session_dir: str = "session"
    resource_dir: str = "resource"
    daily_dir: str = "daily"
    digest_dir: str = "digest"
    metadata_dir: str = "metadata"
    timezone: str = "UTC"

    chat_model: str = ""
    embedding_model: str = ""
    model_api_base: str = ""
    # The API key, never printed (a SecretStr shows as '**********'). Keep it out of
    # memflow.toml: set MEMFLOW_MODEL_API_KEY, or name the environment variable that holds it in
    # model_api_key_env (e.g. "OPENAI_API_KEY"); with neither, litellm reads its provider's usual
    # variable. The MCP server's HTTP bearer token comes from --token or MEMFLOW_MCP_TOKEN.
    model_api_key: SecretStr = SecretStr("")
    model_api_key_env: str = ""
    model_timeout: float = 60.0
    # A resource whose card failed on the model or the network is tried again by the first run
    # this many seconds later, doubled per further failure (capped at a day); 0: every run.
    model_retry_seconds: float = Field(default=300.0, ge=0.0)
    embedding_dimensions: int = 0

    decode_errors: Literal["replace", "strict"] = "replace"
    chunk_bytes: int = Field(default=1000, ge=200, le=4000)  # measured on LoCoMo dev, see README
    # A message whose transcript line is longer than this is indexed and packed in pieces
    # (paragraphs, list items, code blocks, then line and sentence ends): no LoCoMo turn is
    # (the longest is 445 bytes); a 600-token reply in a technical chat is about ten.
    piece_bytes: int = Field(default=600, ge=160, le=4000)
    keyword_tokenizer: Literal["jieba", "bigram"] = "bigram"
    # Processes that parse files in an index run of 2,000 files or more (a cold index, a
    # reindex): 0 is one per core (at most 4, within a container's CPU quota), 1 parses in the
    # calling process (a fleet's workspaces).
    index_workers: int = Field(default=0, ge=0, le=64)
    # A note's frontmatter name, description and tags count this many times in its first chunk's
    # BM25 terms, so a word there outranks the same word in a body (README, "Tags and fields").
    field_weight: int = Field(default=2, ge=1, le=5)

    # Fusion weights measured on LoCoMo dev with the local model: less vector weight was better
    # at every step (0.7 -> 0.5 -> 0.3 -> 0.1); the seed system's 0.7/0.3 was the worst. Measured
    # again on the packed context with the session layer (budget_any@250/500/1000/2000, keyword
    # 0.9): vector 0.05 0.644/0.790/0.868/0.916, 0.1 0.634/0.775/0.871/0.918, 0.2
    # 0.616/0.767/0.866/0.922; vectors off 0.640/0.786/0.858/0.915. 0.05 is the one at or above
    # vectors off at every budget.
    vector_weight: float = 0.05
    keyword_weight: float = 0.9
    rrf_k: int = 60
    candidate_multiplier: int = 3
    # Vector queries about "the user" are also embedded as the user would ask them ("How does
    # the user get to work?" -> "How do I get to work?"): notes keep the user's own words.
    first_person_queries: bool = True
    # A prior on digest chunks' branch scores (BM25, cosine), measured on LoCoMo dev with --dream
    # (README): budget_any@1000 0.747 at 0.9, 0.760 at 0.7, 0.768 at 0.5, 0.765 at 0.3; dream
    # off 0.755. Digest nodes gather one subject's facts from many days; at full weight they
    # crowd out the daily chunks that hold a question's evidence in its conversation.
    pack_results: bool = True  # budgets are filled line by line (recall.packing); false: whole chunks
    digest_weight: float = Field(default=0.5, ge=0.0, le=4.0)
    # The same prior on session transcripts (session logs, searched as `Speaker: text` lines
    # beside the notes). LoCoMo dev budget_any@250/500/1000/2000 (pack_neighbours 2): 1.0
    # 0.617/0.768/0.865/0.914, 1.5 0.643/0.792/0.860/0.918, 3.0 0.651/0.781/0.862/0.914.
    session_weight: float = Field(default=1.5, ge=0.0, le=4.0)
    # Lines kept either side of a matching line (the answer to a question is the next turn):
    # with sessions searched, 1: 0.543/0.714/0.807/0.856 (before dedup), 2: 0.617/0.768/0.865/0.914.
    pack_neighbours: int = Field(default=2, ge=0, le=10)
    # A packed context opens with the lines that answer the question, newest first
    # (`recall.answers`), in at most this many tokens (all of a smaller budget); 0: off.
    pack_answers_tokens: int = Field(default=400, ge=0)
    # A question naming a time ("yesterday", "last week", "in May", "昨天"), resolved in the
    # workspace timezone: chunks dated inside score (1 + time_weight) times higher (0: off).
    time_weight: float = Field(default=1.0, ge=0.0, le=10.0)
    # Newer chunks score (1 + recency_weight * 2^(-age / half-life)) times higher (age: days
    # before the newest dated chunk). LoCoMo dev budget_any@250/500/1000/2000: 0 (default)
    # 0.640/0.786/0.858/0.915, 0.3 0.621/0.775/0.858/0.912, 1.0 0.578/0.721/0.828/0.904.
    recency_weight: float = Field(default=0.0, ge=0.0, le=10.0)
    recency_half_life_days: float = Field(default=30.0, gt=0.0)
    # Pseudo-relevance feedback (RM3-style): the prf_terms best terms of the top prf_docs keyword
    # hits (tf x idf, weighted by the hit's score) are added to a second BM25 pass at prf_weight
    # (0 terms: off). LoCoMo dev, same budgets: 5 terms 0.636/0.780/0.861/0.919, 10 terms
    # 0.628/0.777/0.864/0.918, 5 terms from 3 docs at 0.1 0.643/0.781/0.859/0.918: within a
    # question or two of off (0.640/0.786/0.858/0.915), so off.
    prf_terms: int = Field(default=0, ge=0, le=50)
    prf_docs: int = Field(default=5, ge=1, le=50)
    prf_weight: float = Field(default=0.3, ge=0.0, le=2.0)
    # A note-level score: a keyword hit gains note_weight times the scores of the other hits in
    # its file, so a note with several matching lines outranks a lone line (0: off). LoCoMo
    # dev: 0.2 0.621/0.775/0.854/0.910, 0.5 0.565/0.714/0.796/0.867 (a long session's many
    # weak hits outrank the one line that answers), so off.
    note_weight: float = Field(default=0.0, ge=0.0, le=2.0)

    resource_max_bytes: int = 1024 * 1024  # what a resource's card is made from
    resource_index_max_bytes: int = 64 * 1024 * 1024  # larger resources are not indexed (logged)
    # Limits checked before a Markdown file is parsed (a file past one is skipped with the reason,
    # listed in the run summary, the inbox and `status`, and retried when it changes)
    note_max_bytes: int = 32 * 1024 * 1024
    frontmatter_max_bytes: int = 64 * 1024  # larger frontmatter is not parsed (read as text)
    nesting_max_depth: int = Field(default=100, ge=4, le=150)  # lists/quotes; the parser recurses
    line_max_bytes: int = 4 * 1024 * 1024
    digest_node_bytes: int = 8000  # a node past this size is split by subject, not grown
    # Capture replaces passwords, PINs, API keys, tokens and private keys in messages with
    # `[secret masked]` before writing anything (tasks.ground.secrets); extra regular
    # expressions widen it (a match's first group, or all of it, is masked); false: off.
    mask_secrets: bool = True
    secret_patterns: list[str] = Field(default_factory=list)
    lock_wait: float = 5.0  # how long a command or API call waits for a held lock (CLI --wait)
    lock_timeout: float = 600.0  # how long a scheduled flow waits for it

    @field_validator("secret_patterns")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        import re

        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"secret pattern {pattern!r} is not a regular expression: {exc}") from exc
        return value

    @field_validator("session_dir", "resource_dir", "daily_dir", "digest_dir", "metadata_dir")
    @classmethod
    def _plain_dir_name(cls, value: str) -> str:
        if not value or "/" in value or "\\" in value or value in {".", ".."} or "\0" in value:
            raise ValueError(f"layer directory must be a plain folder name, got {value!r}")
        return value


def load_settings(workspace: str | Path | None = None, **overrides: object) -> Settings:
    """Settings for a workspace: toml file < environment < explicit overrides. A workspace read
    before with the same environment and the same `memflow.toml` is served from memory
    (building Settings validates every field: ~1-2 ms, much of a search); the caller gets its
    own copy."""
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith("MEMFLOW_")))
    try:
        key = (None if workspace is None else str(workspace), os.getcwd(), env, tuple(sorted(overrides.items())))
        hash(key)
    except (TypeError, FileNotFoundError):  # an unhashable override, a removed working folder
        return _load_settings(workspace, **overrides)
    cached = _LOADED.get(key)
    if cached is not None and _stamp(cached[1]) == cached[2]:
        return cached[0].model_copy()
    settings = _load_settings(workspace, **overrides)
    toml = settings.workspace / CONFIG_FILE
    if len(_LOADED) >= 64:
        _LOADED.clear()
    _LOADED[key] = (settings, toml, _stamp(toml))
    return settings.model_copy()


_LOADED: dict[tuple, tuple[Settings, Path, bytes | None]] = {}


def _stamp(path: Path) -> bytes | None:
    """What a cached entry was built from: the file's bytes (a small read; a stat can miss an
    edit of the same size within the clock's tick)."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def env_values(environ: dict[str, str] | None = None) -> dict[str, object]:
    """The settings the environment sets: `MEMFLOW_<FIELD>` in any case (a list field's value is
    JSON); other `MEMFLOW_*` variables (the fleet's, the MCP token...) are not settings. Read here
    rather than through pydantic-settings, whose import costs a CLI call ~70 ms."""
    import typing

    out: dict[str, object] = {}
    for key, value in (os.environ if environ is None else environ).items():
        if not key.upper().startswith(ENV_PREFIX):
            continue
        name = key[len(ENV_PREFIX):].lower()
        field = Settings.model_fields.get(name)
        if field is None:
            continue
        if typing.get_origin(field.annotation) in (list, dict, set, tuple):
            import json

            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{key} is not JSON (a list setting is written like "
                                 f'["a", "b"]): {exc}') from exc
        out[name] = value
    return out


def _load_settings(workspace: str | Path | None = None, **overrides: object) -> Settings:
    env = env_values()
    root = Path(workspace if workspace is not None else env.get("workspace", ".")).expanduser()
    file_values = _read_toml(Path(root) / CONFIG_FILE)
    merged = {**file_values, **env, **overrides, "workspace": Path(root).resolve()}
    return Settings(**merged)


def _read_toml(path: Path) -> dict:
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        try:
            data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:  # name the file: "Invalid value (at end of document)" alone is no help
            raise ValueError(f"{path}: not valid TOML: {exc}") from exc
    return data.get("memflow", data)
