"""A judge behind any OpenAI-compatible chat-completions endpoint (``httpx``).

Why one client for all: vLLM, Ollama, llama.cpp's server and hosted APIs all speak
``POST {base_url}/chat/completions``. What differs is tolerated instead of configured:
the verdict is asked for as a JSON schema (``response_format``), a server that rejects
that is asked again without it (and, when that works, from then on) and its reply's final
verdict is read, and a 429 or 5xx is retried with backoff (``Retry-After`` honoured,
capped). A failure after the retries is returned as a judge *error*, never raised and
never turned into a score.

Why the reply is streamed: a server is a peer AEM does not control. ``timeout_seconds``
bounds each attempt whole (a server dripping one byte at a time never trips a per-read
timeout), and ``max_response_bytes`` bounds what is read (an endless body would otherwise
be held in memory until the process dies). The attempt runs in a worker thread the
caller waits for until the deadline, so even a read blocked inside the socket cannot hold
the run; the abandoned thread ends on its own read timeout. What one judge may cost a run
in all is :mod:`aem.judges.guard`'s.
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
from aem.judges.guard import JudgeGuard
from aem.judges.kinds import JudgeResources
from aem.judges.parse import ReplyError, parse_score_reply, parse_step_reply
from aem.judges.prompts import render_messages, verdict_schema
from aem.judges.reply import ReplyTooLong, read_reply
from aem.judges.settings import OpenAIJudgeSettings

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
# What a server without structured output answers to ``response_format``.
_REFUSED_FORMAT_STATUS = frozenset({400, 415, 422})
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


class _Failed(Exception):
    """One attempt failed; ``retry`` says whether another attempt may help."""

    def __init__(
        self, message: str, *, retry: bool, wait: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.retry = retry
        self.wait = wait
        self.status = status


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


def _payload_text(data: bytes) -> tuple[str, dict[str, int]]:
    """The reply's text and usage from a chat-completions body, or :class:`_Failed`."""
    import json

    try:
        payload = json.loads(data)
        text = payload["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise _Failed(f"malformed response body: {data[:200]!r}", retry=False) from exc
    if not isinstance(text, str):
        raise _Failed(f"the reply has no text content: {str(text)[:200]!r}", retry=False)
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
        if self.structured:
            body["response_format"] = verdict_schema(request)
        return body

    def _exchange(self, url: str, body: dict[str, Any], deadline: float) -> tuple[int, Any, bytes]:
        """POST and read the reply (status, headers, body) by ``deadline``, at most
        ``max_response_bytes`` of it."""
        seconds = max(0.001, deadline - time.monotonic())
        with self._client.stream(
            "POST", url, json=body, headers=self._headers(), timeout=seconds
        ) as response:
            data = read_reply(response.iter_bytes(), self.settings.max_response_bytes, deadline)
            return response.status_code, response.headers, data

    def _watched(self, url: str, body: dict[str, Any], seconds: float) -> tuple[int, Any, bytes]:
        """:meth:`_exchange` in a worker thread, waited for ``seconds`` and no longer."""
        deadline = time.monotonic() + seconds
        outcome: list[Any] = []

        def work() -> None:
            try:
                outcome.append(self._exchange(url, body, deadline))
            except BaseException as exc:  # handed to the caller below
                outcome.append(exc)

        worker = threading.Thread(target=work, name=f"judge-{self.name}", daemon=True)
        worker.start()
        worker.join(seconds + 0.05)
        if not outcome:
            raise httpx.TimeoutException("the whole request exceeded its deadline")
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    def _attempt(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        """One POST: the reply's text and usage, or :class:`_Failed`."""
        url = self.settings.base_url.rstrip("/") + "/chat/completions"
        seconds = self.settings.timeout_seconds
        remaining = self.guard.remaining()
        if remaining is not None:
            seconds = min(seconds, remaining)
        try:
            status, headers, data = self._watched(url, body, seconds)
        except httpx.TimeoutException as exc:
            raise _Failed(f"timed out after {seconds:g}s", retry=True) from exc
        except ReplyTooLong as exc:
            raise _Failed(str(exc), retry=False) from exc
        except httpx.TransportError as exc:
            raise _Failed(f"cannot reach {url}: {exc}", retry=True) from exc
        if status != 200:
            retry = status in _RETRY_STATUS or status >= 500
            raise _Failed(
                f"HTTP {status}: {data[:200].decode('utf-8', 'replace')}",
                retry=retry,
                wait=retry_after_seconds(headers.get("Retry-After")),
                status=status,
            )
        return _payload_text(data)

    def _complete(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        """The reply after up to ``retries`` retries with capped exponential backoff."""
        attempts = self.settings.retries + 1
        for attempt in range(attempts):
            try:
                return self._attempt(body)
            except _Failed as failure:
                if failure.status in _REFUSED_FORMAT_STATUS and "response_format" in body:
                    return self._without_format(body)
                if not failure.retry or attempt == attempts - 1:
                    tried = f" (after {attempt + 1} attempts)" if attempt else ""
                    raise _Failed(f"{failure}{tried}", retry=False) from failure
                wait = failure.wait
                if wait is None:
                    wait = self.settings.backoff_seconds * (2**attempt)
                self._sleep(min(wait, self.settings.max_backoff_seconds))
        raise AssertionError("unreachable")

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
