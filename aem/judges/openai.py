"""A judge behind any OpenAI-compatible chat-completions endpoint (``httpx``).

Why one client for all: vLLM, Ollama, llama.cpp's server and hosted APIs all speak
``POST {base_url}/chat/completions``. What differs is tolerated instead of configured:
a server that ignores ``response_format`` still gets its reply parsed tolerantly, and a
429 or 5xx is retried with backoff (``Retry-After`` honoured, capped). A failure after
the retries is returned as a judge *error*, never raised and never turned into a score.
"""

from __future__ import annotations

import email.utils
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from aem.judges.base import JudgeRequest, JudgeVerdict
from aem.judges.kinds import JudgeResources
from aem.judges.parse import ReplyError, parse_score_reply, parse_step_reply
from aem.judges.prompts import render_messages
from aem.judges.settings import OpenAIJudgeSettings

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


class _Failed(Exception):
    """One attempt failed; ``retry`` says whether another attempt may help."""

    def __init__(self, message: str, *, retry: bool, wait: float | None = None) -> None:
        super().__init__(message)
        self.retry = retry
        self.wait = wait


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header (seconds or an HTTP date) as seconds to wait."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class OpenAIJudge:
    """Scores requests with a chat model; ``usage`` totals the tokens it was billed."""

    kind = "openai"
    Settings = OpenAIJudgeSettings

    @classmethod
    def from_settings(
        cls, name: str, settings: OpenAIJudgeSettings, resources: JudgeResources
    ) -> OpenAIJudge:
        del resources  # a model reads the text itself
        return cls(name, settings)

    def __init__(
        self,
        name: str,
        settings: OpenAIJudgeSettings,
        *,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = name
        self.settings = settings
        self._client = client or httpx.Client(timeout=settings.timeout_seconds)
        self._sleep = sleep
        self._lock = threading.Lock()
        self.usage: dict[str, int] = dict.fromkeys((*_USAGE_KEYS, "requests"), 0)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        env = self.settings.api_key_env
        if env:
            key = os.environ.get(env)
            if not key:
                raise _Failed(f"environment variable {env} (the API key) is not set", retry=False)
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _body(self, request: JudgeRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": render_messages(request),
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
        }
        if self.settings.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def _attempt(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        """One POST: the reply's text and usage, or :class:`_Failed`."""
        url = self.settings.base_url.rstrip("/") + "/chat/completions"
        try:
            response = self._client.post(
                url, json=body, headers=self._headers(), timeout=self.settings.timeout_seconds
            )
        except httpx.TimeoutException as exc:
            raise _Failed(
                f"timed out after {self.settings.timeout_seconds:g}s", retry=True
            ) from exc
        except httpx.TransportError as exc:
            raise _Failed(f"cannot reach {url}: {exc}", retry=True) from exc
        if response.status_code != 200:
            retry = response.status_code in _RETRY_STATUS or response.status_code >= 500
            raise _Failed(
                f"HTTP {response.status_code}: {response.text[:200]}",
                retry=retry,
                wait=retry_after_seconds(response.headers.get("Retry-After")),
            )
        try:
            payload = response.json()
            text = payload["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _Failed(f"malformed response body: {response.text[:200]!r}", retry=False) from exc
        if not isinstance(text, str):
            raise _Failed(f"the reply has no text content: {text!r}", retry=False)
        raw_usage = payload.get("usage") if isinstance(payload, dict) else None
        usage = {
            k: int(raw_usage[k])
            for k in _USAGE_KEYS
            if isinstance(raw_usage, dict) and isinstance(raw_usage.get(k), int)
        }
        return text, usage

    def _complete(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        """The reply after up to ``retries`` retries with capped exponential backoff."""
        attempts = self.settings.retries + 1
        for attempt in range(attempts):
            try:
                return self._attempt(body)
            except _Failed as failure:
                if not failure.retry or attempt == attempts - 1:
                    tried = f" (after {attempt + 1} attempts)" if attempt else ""
                    raise _Failed(f"{failure}{tried}", retry=False) from failure
                wait = failure.wait
                if wait is None:
                    wait = self.settings.backoff_seconds * (2**attempt)
                self._sleep(min(wait, self.settings.max_backoff_seconds))
        raise AssertionError("unreachable")

    def _record(self, usage: dict[str, int]) -> None:
        with self._lock:
            self.usage["requests"] += 1
            for key, value in usage.items():
                self.usage[key] = self.usage.get(key, 0) + value

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        """Ask the model; a transport, server or parse failure is an ``error`` verdict."""
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
