"""Model calls: the one module that imports litellm.

Every call passes an explicit timeout and turns off the OpenAI client's hidden retries; retries
belong to the Prefect task options at the network edge. Invalid structured output raises
`ModelOutputError` (never an empty result).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import TypeVar

from pydantic import BaseModel, SecretStr, ValidationError

from memflow.schemas.settings import Settings

T = TypeVar("T", bound=BaseModel)


class ModelOutputError(ValueError):
    """The model answered, but not with valid JSON for the expected schema."""


class ModelCallError(RuntimeError):
    """The model could not be reached or answered with an error (HTTP 4xx/5xx, timeout)."""


@lru_cache(maxsize=1)
def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


def api_key(settings: Settings) -> str:
    """The model API key: `model_api_key`, else the environment variable `model_api_key_env`
    names ("" when neither: litellm then reads its provider's usual variable)."""
    raw = settings.model_api_key  # a SecretStr (a plain str after an unvalidated model_copy)
    key = raw.get_secret_value() if isinstance(raw, SecretStr) else str(raw or "")
    if key or not settings.model_api_key_env:
        return key
    if not os.environ.get(settings.model_api_key_env):
        raise ModelCallError(f"model_api_key_env names {settings.model_api_key_env}, which is not set in "
                             "the environment: export it, or set MEMFLOW_MODEL_API_KEY")
    return os.environ[settings.model_api_key_env]


def _failed(settings: Settings, model: str, exc: Exception) -> ModelCallError:
    """A provider error as one line, the API key masked (some providers echo it)."""
    if isinstance(exc, ModelCallError):
        return exc
    message = f"{model}: {type(exc).__name__}: {exc}"
    key = api_key(settings)
    return ModelCallError(message.replace(key, "***") if len(key) >= 4 else message)


def _endpoint(settings: Settings) -> dict:
    extra: dict = {"timeout": settings.model_timeout, "max_retries": 0}
    if settings.model_api_base:
        extra["api_base"] = settings.model_api_base
    if key := api_key(settings):
        extra["api_key"] = key
    return extra


def complete_json(settings: Settings, messages: list[dict], schema: type[T]) -> T:
    """Chat completion whose reply must be a JSON object valid for `schema`."""
    litellm = _litellm()
    try:
        reply = litellm.completion(model=settings.chat_model, messages=messages,
                                   response_format={"type": "json_object"}, **_endpoint(settings))
    except Exception as exc:  # litellm raises many provider-specific types; keep the message
        raise _failed(settings, settings.chat_model, exc) from exc
    content = _first_choice(settings, reply).content or ""
    try:
        return schema.model_validate_json(_strip_fences(content))
    except ValidationError as exc:
        raise ModelOutputError(f"{settings.chat_model} reply is not a valid {schema.__name__}: "
                               f"{exc.errors()[0]['msg']} ({content[:200]!r})") from exc


def chat(settings: Settings, messages: list[dict], **kwargs) -> dict:
    """Plain chat completion; returns the assistant message as a dict."""
    litellm = _litellm()
    try:
        reply = litellm.completion(model=settings.chat_model, messages=messages,
                                   **_endpoint(settings), **kwargs)
    except Exception as exc:
        raise _failed(settings, settings.chat_model, exc) from exc
    return _first_choice(settings, reply).model_dump()


def _first_choice(settings: Settings, reply):
    """The reply's first message; ModelOutputError (not IndexError) when it has none."""
    if not getattr(reply, "choices", None) or reply.choices[0].message is None:
        raise ModelOutputError(f"{settings.chat_model} reply has no choices (an empty completion); "
                               "retried on the next run")
    return reply.choices[0].message


def embed(settings: Settings, texts: list[str]) -> list[list[float]]:
    litellm = _litellm()
    extra = _endpoint(settings)
    if settings.embedding_dimensions:
        extra["dimensions"] = settings.embedding_dimensions
    try:
        reply = litellm.embedding(model=settings.embedding_model, input=texts, **extra)
    except Exception as exc:
        raise _failed(settings, settings.embedding_model, exc) from exc
    try:
        data = sorted(reply.data, key=lambda d: d["index"])
        return [list(map(float, d["embedding"])) for d in data]
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelOutputError(f"{settings.embedding_model} embeddings reply is malformed: "
                               f"{type(exc).__name__}: {exc}") from exc


def _strip_fences(content: str) -> str:
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text or json.dumps(None)
