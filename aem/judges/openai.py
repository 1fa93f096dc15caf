"""A judge behind any OpenAI-compatible chat-completions endpoint.

Why one client for all: vLLM, Ollama, llama.cpp's server and hosted APIs all speak
``POST {base_url}/chat/completions``. What differs is tolerated instead of configured:
the verdict is asked for as a JSON schema (``response_format``), a server that rejects
that is asked again without it (and, when that works, from then on) and its reply's final
verdict is read, and a 408, 409, 429 or 5xx, a refused connection or an attempt that ran
out of time is retried with backoff (``Retry-After`` honoured, capped). A failure after
the retries is returned as a judge *error*, never raised and never turned into a score.

Why the bounds: a server is a peer AEM does not control. ``timeout_seconds`` bounds each
attempt whole (a server dripping one byte at a time never trips a per-read timeout), and
``max_response_bytes`` bounds what is read (an endless body would otherwise be held in
memory until the process dies). Both are kept by AEM's one HTTP client
(:mod:`aem.foundation.http`), which also does the retrying; what one judge may cost a run in all is
:mod:`aem.judges.guard`'s.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from aem.foundation.http import HttpClient, HttpError, RetryPolicy
from aem.judges.base import JudgeRequest, JudgeVerdict
from aem.judges.guard import JudgeGuard
from aem.judges.kinds import JudgeServices
from aem.judges.parse import ReplyError, parse_score_reply, parse_step_reply
from aem.judges.prompts import render_messages, verdict_schema
from aem.judges.settings import OpenAIJudgeSettings

_RETRY_STATUS = frozenset({408, 409, 429, *range(500, 600)})
# What a server without structured output answers to ``response_format``.
_REFUSED_FORMAT_STATUS = frozenset({400, 415, 422})
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


class _Failed(Exception):
    """The request failed (after its retries): the judge error's text."""


def _failure_text(error: HttpError) -> str:
    """A failed request in the judge's words (a judge error's explanation)."""
    if error.kind == "deadline":
        text = f"timed out after {error.limit:g}s"
    elif error.kind == "status":
        text = f"HTTP {error.status}: {error.text()}"
    elif error.kind == "too_large":
        text = f"response over {int(error.limit):,} bytes (max_response_bytes)"
    else:
        text = f"{error.target}: {error.detail}"
    return text + (f" (after {error.attempts} attempts)" if error.attempts > 1 else "")


def _payload_text(data: bytes | bytearray) -> tuple[str, dict[str, int]]:
    """The reply's text and usage from a chat-completions body, or :class:`_Failed`."""
    import json

    try:
        payload = json.loads(data)
        text = payload["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise _Failed(f"malformed response body: {bytes(data[:200])!r}") from exc
    if not isinstance(text, str):
        raise _Failed(f"the reply has no text content: {str(text)[:200]!r}")
    raw_usage = payload.get("usage") if isinstance(payload, dict) else None
    usage = {
        k: int(raw_usage[k])
        for k in _USAGE_KEYS
        if isinstance(raw_usage, dict) and isinstance(raw_usage.get(k), int)
    }
    return text, usage


class OpenAIJudge:
    """Scores requests with a chat model; ``usage`` totals the tokens it was billed."""

    kind = "openai"
    Settings = OpenAIJudgeSettings

    @classmethod
    def from_settings(cls, settings: OpenAIJudgeSettings, services: JudgeServices) -> OpenAIJudge:
        return cls(services.name, settings)  # a model reads the text itself: no comparator

    def __init__(
        self,
        name: str,
        settings: OpenAIJudgeSettings,
        *,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.name = name
        self.settings = settings
        retry = RetryPolicy(
            attempts=settings.retries + 1,
            backoff_seconds=settings.backoff_seconds,
            max_backoff_seconds=settings.max_backoff_seconds,
            jitter=0.0,  # the settings promise a first wait that doubles, exactly
            retry_statuses=_RETRY_STATUS,
            retry_deadline=True,  # a model slow once may answer in time the next
            sleep=sleep,
        )
        self._client = HttpClient(
            settings.base_url,
            deadline_seconds=settings.timeout_seconds,
            max_body_bytes=settings.max_response_bytes,
            retry=retry,
            limit_names=("timeout_seconds", "max_response_bytes"),
        )
        self._lock = threading.Lock()
        self.usage: dict[str, int] = dict.fromkeys((*_USAGE_KEYS, "requests"), 0)
        self.guard = JudgeGuard(
            settings.circuit_errors, settings.circuit_retry_seconds, settings.budget_seconds
        )
        # Set when the server rejected ``response_format``: later requests go without it.
        self.structured = settings.json_mode

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        env = self.settings.api_key_env
        if env:
            key = os.environ.get(env)
            if not key:
                raise _Failed(f"environment variable {env} (the API key) is not set")
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _body(self, request: JudgeRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": render_messages(request),
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
        }
        if self.structured:
            body["response_format"] = verdict_schema(request)
        return body

    def _complete(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        """The reply's text and usage, or :class:`_Failed`; each attempt bounded by
        ``timeout_seconds`` or what is left of the judge's budget, if less."""
        seconds = self.settings.timeout_seconds
        remaining = self.guard.remaining()
        if remaining is not None:
            seconds = min(seconds, remaining)
        try:
            response = self._client.request(
                "POST",
                "/chat/completions",
                json=body,
                headers=self._headers(),
                deadline_seconds=seconds,
            )
        except HttpError as exc:
            raise _Failed(_failure_text(exc)) from exc
        if response.status in _REFUSED_FORMAT_STATUS and "response_format" in body:
            return self._without_format(body)
        if response.status != 200:
            raise _Failed(f"HTTP {response.status}: {response.text()}")
        return _payload_text(response.body)

    def _without_format(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        """``body`` asked again without ``response_format``; when that works, the server has
        no structured output and later requests go without it (a 400 for another reason,
        say a prompt too long, fails again and changes nothing)."""
        reply = self._complete({k: v for k, v in body.items() if k != "response_format"})
        self.structured = False
        return reply

    def _record(self, usage: dict[str, int]) -> None:
        with self._lock:
            self.usage["requests"] += 1
            for key, value in usage.items():
                self.usage[key] = self.usage.get(key, 0) + value

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        """Ask the model, unless the guard refuses; a transport, server or parse failure
        is an ``error`` verdict."""
        refused = self.guard.refusal()
        if refused is not None:
            return JudgeVerdict.error(self.name, f"judge error: {refused}")
        started = time.monotonic()
        verdict = self._ask(request)
        failed = verdict.explanation.removeprefix("judge error: ")
        self.guard.record(failed if verdict.status == "error" else None, time.monotonic() - started)
        return verdict

    def _ask(self, request: JudgeRequest) -> JudgeVerdict:
        try:
            text, usage = self._complete(self._body(request))
        except _Failed as failure:
            return JudgeVerdict.error(self.name, f"judge error: {failure}")
        self._record(usage)
        try:
            if request.step is not None:
                mistake, why = parse_step_reply(text)
                return JudgeVerdict(self.name, "scored", why, mistake=mistake, usage=usage)
            score, why = parse_score_reply(text)
        except ReplyError as exc:
            return JudgeVerdict.error(self.name, f"judge error: unparseable answer: {exc}", usage)
        return JudgeVerdict(self.name, "scored", why, score=score, usage=usage)

    def close(self) -> None:
        self._client.close()
