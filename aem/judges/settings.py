"""Judge configuration: ``[judges.<name>]`` tables, checked like every other setting.

Why named judges: a test records the *name* of each check's judge and is fixed to it
after its first run, so the name must mean one model at one endpoint. The embedded judge
is always available as ``embedded``; a ``[judges.embedded]`` table only tunes it.

A table's ``kind`` chooses a registered judge kind (:mod:`aem.judges.kinds`); the rest of
the table is checked against that kind's ``Settings``. The two models here are the
settings of AEM's own kinds.

    [judges.local-qwen]
    kind = "openai"
    base_url = "http://127.0.0.1:8000/v1"   # vLLM, Ollama, llama.cpp server, hosted APIs
    model = "qwen2.5-7b-instruct"
    api_key_env = "LOCAL_QWEN_KEY"           # the key's environment variable, never the key
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

from aem.judges.kinds import EMBEDDED, validate_judge_settings


class OpenAIJudgeSettings(BaseModel):
    """An OpenAI-compatible chat-completions endpoint used as a judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["openai"] = "openai"
    base_url: str = Field(description="the API root, e.g. http://127.0.0.1:11434/v1")
    model: str = Field(description="the model name the server expects")
    api_key_env: str | None = Field(
        default=None, description="environment variable holding the API key (none: no key)"
    )
    timeout_seconds: float = Field(
        default=60.0,
        gt=0,
        description="one attempt, whole: connecting, sending and every byte of the reply",
    )
    retries: int = Field(default=3, ge=0, description="extra attempts on 429, 5xx, timeouts")
    backoff_seconds: float = Field(default=1.0, ge=0, description="first wait; doubles per retry")
    max_backoff_seconds: float = Field(
        default=30.0, ge=0, description="longest wait, Retry-After included"
    )
    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int = Field(default=400, ge=16)
    json_mode: bool = Field(
        default=True,
        description="ask for a structured verdict (response_format json_schema); a server "
        "that rejects it is asked again without, and its reply's final JSON object is read",
    )
    max_response_bytes: int = Field(
        default=1_000_000,
        ge=1024,
        description="a reply body longer than this is not read further: a judge error",
    )
    circuit_errors: int = Field(
        default=5,
        ge=1,
        description="consecutive judge errors after which the circuit opens: further "
        "requests are judge errors at once, without being sent",
    )
    circuit_retry_seconds: float = Field(
        default=60.0,
        ge=0,
        description="an open circuit lets one request through after this long",
    )
    budget_seconds: float | None = Field(
        default=None,
        gt=0,
        description="total seconds this judge may spend on requests in one run "
        "(aem serve: per process); once spent, requests are judge errors (none: no limit)",
    )


class EmbeddedJudgeSettings(BaseModel):
    """The embedded judge's similarity bands; every threshold is configuration."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["embedded"] = "embedded"
    close_similarity: float = Field(
        default=0.75,
        ge=0,
        le=1,
        description="answer-reference cosine at or above which the answer says what the "
        "reference says",
    )
    unrelated_similarity: float = Field(
        default=0.35,
        ge=0,
        le=1,
        description="answer-reference cosine at or below which the answer is about something else",
    )


# One ``[judges.<name>]`` table: the settings of the kind it names, checked when the
# configuration loads (the kinds are looked up then, so a plug-in kind is one too).
JudgeSettings = Annotated[BaseModel, PlainValidator(validate_judge_settings)]

__all__ = ["EMBEDDED", "EmbeddedJudgeSettings", "JudgeSettings", "OpenAIJudgeSettings"]
