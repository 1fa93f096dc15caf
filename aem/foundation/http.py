"""One HTTP client, with one retry policy, for every peer AEM talks to over HTTP.

Why one: the backends AEM pulls spans from (Phoenix, MLflow), the sinks it delivers
verdicts to and the judges it asks are all servers AEM does not control, and each used to
carry its own loop — its own idea of attempts, backoff, ``Retry-After`` and what a slow or
endless answer costs. Here that is decided once:

* :class:`RetryPolicy` says what is asked again (connection failures and 429/502/503/504
  by default; a caller may add statuses) and how long to wait first: a doubling pause
  from ``backoff_seconds``, capped, with jitter so clients that failed together do not
  retry together (``jitter=0`` makes the schedule exact, for tests), or the server's own
  ``Retry-After`` (seconds or an HTTP date), capped the same way. The header is read in
  one place (:func:`retry_after_seconds`), which never raises: a date that overflows
  (year 99999999999999999999 ended pulls and sinks with exit 3), lies in the past or is
  more than an hour ahead is ignored, and the policy's own pause is used.
* An answer that redirects is not followed (a token must not go where the configuration
  did not send it); its error names the ``Location`` it pointed to.
* :class:`HttpClient` bounds every attempt whole: one deadline covers connecting, sending
  and every byte of the answer (a per-read timeout restarts with each byte, so a server
  dripping one byte a second would hold a request for ever), kept by a timer that shuts
  the socket down whatever phase the request is in; and the answer is read as a stream
  that stops at ``max_body_bytes`` (an endless body would otherwise fill memory).
* Whatever fails raises :class:`HttpError`, whose message names the request (method and
  URL) and what was read of the answer, and whose fields let a caller say it in its own
  words.

The shape follows the OpenTelemetry OTLP/HTTP exporters' shared retry: a short list of
retryable answers, exponential backoff with jitter, everything within a deadline.
"""

from __future__ import annotations

import email.utils
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from types import TracebackType
from typing import Any, Literal

import httpx

# Answers that say "busy or restarting, ask again": not "your request is wrong".
RETRY_STATUSES = frozenset({429, 502, 503, 504})
# What is kept of an answer that is not a success: enough for an error message.
ERROR_BODY_BYTES = 4096
# A timeout that fires this close to the deadline is the deadline's, not a stall's.
_DEADLINE_SLACK_SECONDS = 0.05

Failure = Literal["unreachable", "status", "deadline", "too_large", "malformed", "closed"]


# A ``Retry-After`` further ahead than this is no pause a server means (a year 9999, a
# broken clock): it is ignored, and the policy's own schedule used instead.
RETRY_AFTER_HORIZON_SECONDS = 3600.0


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` header (seconds, or an HTTP date) as seconds to wait from ``now``
    (``time.time()``); ``None`` — the header ignored — when absent, unreadable, not a
    finite number, in the past, or further ahead than :data:`RETRY_AFTER_HORIZON_SECONDS`.

    This is the one reader of the header: it never raises, whatever a server sends (a
    date in the year 99999999999999999999 overflows every date type; it is ignored)."""
    if not value or len(value) > 200:
        return None
    seconds: float | None
    try:
        seconds = float(value)
    except ValueError:
        seconds = _date_seconds(value, time.time() if now is None else now)
    if seconds is None or not 0 <= seconds <= RETRY_AFTER_HORIZON_SECONDS:
        return None  # NaN, infinite, negative (a past date) or far ahead: no answer
    return seconds


def _date_seconds(value: str, now: float) -> float | None:
    """An HTTP date as seconds after ``now``; ``None`` when it is no date a clock holds."""
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:  # "-0000": a UTC time by RFC 5322
            when = when.replace(tzinfo=UTC)
        return when.timestamp() - now
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None


def redirect_detail(status: int, headers: httpx.Headers) -> str:
    """What a redirect said: AEM does not follow one (a token must not go where the
    configuration did not send it), so the message names where it pointed."""
    location = headers.get("location")
    if not 300 <= status < 400 or location is None:
        return ""
    shown = location[:300].encode("unicode_escape").decode("ascii")
    return (
        f"; it redirects to {shown!r} (Location), which AEM does not follow: "
        "configure that URL instead"
    )


@dataclass(frozen=True)
class RetryPolicy:
    """How many times a request is tried and how long to wait between tries.

    ``attempts`` counts the first try. The pause before retry ``n`` is
    ``backoff_seconds * 2 ** (n - 1)`` give or take ``jitter`` (a fraction), never more
    than ``max_backoff_seconds``; a ``Retry-After`` the server sent replaces it, capped the
    same way (one :func:`retry_after_seconds` has already ignored a value that overflows,
    lies in the past or too far ahead). ``retry_deadline`` asks again after an attempt cut
    at its deadline (a judge may have been slow once; a backend page that took the whole
    deadline would again).
    """

    attempts: int = 3
    backoff_seconds: float = 0.5
    max_backoff_seconds: float = 30.0
    jitter: float = 0.2
    retry_statuses: frozenset[int] = RETRY_STATUSES
    retry_deadline: bool = False
    # How to wait (tests record the waits); ``None``: a wait that closing the client ends.
    sleep: Callable[[float], None] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts={self.attempts}: at least the first try")
        if not 0 <= self.jitter < 1:
            raise ValueError(f"jitter={self.jitter}: a fraction from 0 to below 1")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry)."""
        if retry_after is not None:
            return min(retry_after, self.max_backoff_seconds)
        wait: float = self.backoff_seconds * 2.0 ** (retry - 1)
        if self.jitter:
            wait *= random.uniform(1 - self.jitter, 1 + self.jitter)
        return min(wait, self.max_backoff_seconds)

    def pause(
        self, retry: int, retry_after: float | None = None, stop: threading.Event | None = None
    ) -> None:
        """Wait before retry number ``retry``; ``stop`` set ends the wait early."""
        seconds = self.delay(retry, retry_after)
        if self.sleep is not None:
            self.sleep(seconds)
        elif stop is not None:
            stop.wait(seconds)
        else:
            time.sleep(seconds)

    def retries(self, error: HttpError) -> bool:
        """Whether another attempt may cure ``error``."""
        if error.kind == "unreachable":
            return True
        if error.kind == "status":
            return error.status in self.retry_statuses
        return error.kind == "deadline" and self.retry_deadline


class HttpError(Exception):
    """A request that failed, after its retries: the target, what went wrong (``kind``),
    and what was read (the status, the bytes of the answer that arrived, the first of
    them). ``detail`` is the message without the target, for callers that name the
    request their own way."""

    def __init__(
        self,
        target: str,
        kind: Failure,
        detail: str,
        *,
        status: int | None = None,
        received: int = 0,
        body: bytes = b"",
        retry_after: float | None = None,
        limit: float = 0.0,
    ) -> None:
        super().__init__(f"{target}: {detail}")
        self.target, self.kind, self.detail = target, kind, detail
        self.status, self.received, self.body = status, received, body
        self.retry_after = retry_after
        self.limit = limit  # the deadline (seconds) or the cap (bytes) that was reached
        self.attempts = 1

    def after(self, attempts: int) -> HttpError:
        """This error as the last of ``attempts`` tries (said in its message)."""
        self.attempts = attempts
        if attempts > 1:
            self.args = (f"{self.target}: {self.detail} (after {attempts} attempts)",)
        return self

    def text(self, limit: int = 200) -> str:
        return self.body[:limit].decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class Response:
    """A final answer: its status, headers and body (all of a 2xx's, within the cap; the
    first :data:`ERROR_BODY_BYTES` of any other)."""

    target: str
    status: int
    headers: httpx.Headers
    body: bytes | bytearray  # a large page is not copied once more to become ``bytes``

    def text(self, limit: int = 200) -> str:
        return bytes(self.body[:limit]).decode("utf-8", errors="replace")

    def error(self) -> HttpError:
        """This answer as the error a caller raises when it expected another status."""
        return HttpError(
            self.target,
            "status",
            f"answered {self.status}: {self.text()}{redirect_detail(self.status, self.headers)}",
            status=self.status,
            received=len(self.body),
            body=bytes(self.body[:ERROR_BODY_BYTES]),
            retry_after=retry_after_seconds(self.headers.get("retry-after")),
        )


def shut_socket(sock: socket.socket) -> None:
    """Wake a read blocked on ``sock`` from another thread (a duplicate descriptor is
    shut, so the TLS layer and the owner's socket object stay usable for closing)."""
    try:
        dup = socket.socket(fileno=os.dup(sock.fileno()))
    except (OSError, ValueError):
        return
    try:
        dup.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        dup.close()


class HttpClient:
    """Requests to one base URL, each attempt finished (or cut) within its deadline and
    its answer read up to ``max_body_bytes``; retried by ``retry``.

    ``stall_seconds`` (default: the deadline) bounds one wait for the next byte: a stall
    is a failure to reach the server, retried like a refused connection, while the
    deadline bounds the attempt whole. ``limit_names`` are the settings the deadline and
    the cap come from, named in the messages so a user knows what to raise.
    """

    def __init__(
        self,
        base_url: str,
        *,
        deadline_seconds: float,
        max_body_bytes: int,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        stall_seconds: float | None = None,
        limit_names: tuple[str, str] = ("deadline_seconds", "max_body_bytes"),
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.deadline_seconds = deadline_seconds
        self.max_body_bytes = max_body_bytes
        self.retry = retry or RetryPolicy()
        self.stall_seconds = stall_seconds or deadline_seconds
        self.limit_names = limit_names
        # No connection is kept for the next request: each attempt opens its own, so its
        # socket is known from the start (a request on a kept one would wait unseen for
        # headers that drip) and no connection outlives a cut or failed attempt. Requests
        # here are pages, batches and judge calls: the handshake is small beside them.
        self._client = httpx.Client(
            base_url=self.base_url,
            headers=dict(headers or {}),
            limits=httpx.Limits(max_keepalive_connections=0),
        )
        self._lock = threading.Lock()
        self._in_flight: set[_Attempt] = set()
        self._closed = False
        self._closing = threading.Event()  # ends a pause between attempts
        self._received = 0

    def request(
        self,
        method: str,
        path: str,
        *,
        deadline_seconds: float | None = None,
        **send: Any,
    ) -> Response:
        """The final answer to ``method path`` (``send``: httpx's ``params``, ``json``,
        ``content``, ``headers``); a status the policy retries is tried again, and one
        still answered after the last attempt raises :class:`HttpError`, as does an
        answer that is unreachable, too slow or too large. Any other status is returned
        for the caller to judge (:meth:`Response.error`)."""
        target = f"{method} {self.base_url}{path}"
        seconds = self.deadline_seconds if deadline_seconds is None else deadline_seconds
        seconds = max(seconds, 0.001)
        send = {key: value for key, value in send.items() if value is not None}
        policy = self.retry
        for attempt in range(1, policy.attempts + 1):
            try:
                response = self._attempt(method, path, target, seconds, send)
                if response.status not in policy.retry_statuses:
                    return response
                error = response.error()
            except HttpError as exc:
                error = exc
            if attempt == policy.attempts or self._closed or not policy.retries(error):
                raise error.after(attempt)
            policy.pause(attempt, error.retry_after, self._closing)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _attempt(
        self, method: str, path: str, target: str, seconds: float, send: dict[str, Any]
    ) -> Response:
        attempt = _Attempt(self, target, seconds)
        with self._lock:
            if self._closed:
                raise HttpError(target, "closed", "the client is closed; nothing was sent")
            self._in_flight.add(attempt)
        timer = threading.Timer(seconds, attempt.cut)
        timer.daemon = True
        timer.start()
        try:
            return attempt.run(self._client, method, path, send)
        finally:
            timer.cancel()
            with self._lock:
                self._in_flight.discard(attempt)
                self._received += attempt.received

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def received_bytes(self) -> int:
        """Bytes of answers this client has read, every attempt of every request: what a
        caller bounding a whole read in bytes counts."""
        return self._received

    def close(self) -> None:
        """Refuse new requests and cut the ones in flight: a shutdown must not wait on a
        peer."""
        with self._lock:
            self._closed = True
            in_flight = list(self._in_flight)
        self._closing.set()
        for attempt in in_flight:
            attempt.cut()
        self._client.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class _Attempt:
    """One try of a request: its answer read within the bounds, and how to cut it."""

    def __init__(self, owner: HttpClient, target: str, seconds: float) -> None:
        self.owner, self.target, self.seconds = owner, target, seconds
        self.deadline = time.monotonic() + seconds
        self.received = 0
        self._streams: list[Any] = []
        self._lock = threading.Lock()
        self._cut = False
        self._done = False

    def run(self, client: httpx.Client, method: str, path: str, send: dict[str, Any]) -> Response:
        timeout = httpx.Timeout(min(self.owner.stall_seconds, self.seconds))
        extensions = {"trace": self._trace}
        try:
            with client.stream(
                method, path, timeout=timeout, extensions=extensions, **send
            ) as answer:
                self._watch(answer.extensions.get("network_stream"))
                body = self._read(answer)
                with self._lock:  # read whole: nothing is left for the timer to cut
                    self._done = True
                    cut = self._cut
                if cut:  # a body that ends with its connection ended when it was shut
                    raise self._failure(TimeoutError("cut at the deadline"))
                return Response(self.target, answer.status_code, answer.headers, body)
        except HttpError:
            raise
        except (httpx.HTTPError, OSError) as exc:
            raise self._failure(exc) from exc
        except RuntimeError as exc:  # httpx's "the client has been closed"
            if not self.owner.closed:
                raise
            raise self._failure(exc) from exc

    def _read(self, answer: httpx.Response) -> bytes | bytearray:
        ok = 200 <= answer.status_code < 300
        cap = self.owner.max_body_bytes if ok else ERROR_BODY_BYTES
        declared = answer.headers.get("content-length", "")
        encoded = bool(answer.headers.get("content-encoding"))  # its length is not the body's
        if ok and not encoded and declared.isdigit() and int(declared) > cap:
            raise self._too_large(answer.status_code, f"it declares {int(declared):,}")
        body = bytearray()
        for chunk in answer.iter_bytes():
            self.received += len(chunk)
            if len(body) + len(chunk) > cap:
                if not ok:  # an error's first bytes are all its message needs
                    body += chunk[: cap - len(body)]
                    break
                raise self._too_large(answer.status_code, f"{self.received:,} bytes had arrived")
            body += chunk
        return body

    def _too_large(self, status: int, detail: str) -> HttpError:
        cap, name = self.owner.max_body_bytes, self.owner.limit_names[1]
        return HttpError(
            self.target,
            "too_large",
            f"the answer is larger than {cap:,} bytes ({name}; {detail})",
            status=status,
            received=self.received,
            limit=cap,
        )

    def _failure(self, exc: BaseException) -> HttpError:
        """What a failed exchange was: cut at the deadline, closed under it, or a peer
        that could not be reached (refused, reset, stalled)."""
        if self.owner.closed:
            return HttpError(self.target, "closed", "the client was closed during the request")
        if self._cut or time.monotonic() >= self.deadline - _DEADLINE_SLACK_SECONDS:
            name = self.owner.limit_names[0]
            return HttpError(
                self.target,
                "deadline",
                f"no whole answer within {self.seconds:g} s ({name}); "
                f"{self.received:,} bytes had arrived",
                received=self.received,
                limit=self.seconds,
            )
        if isinstance(exc, httpx.DecodingError):
            return HttpError(self.target, "malformed", f"the answer cannot be decoded ({exc})")
        return HttpError(
            self.target,
            "unreachable",
            f"unreachable ({type(exc).__name__}: {exc})",
            received=self.received,
        )

    def _trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpx's trace hook: note each connection's stream as soon as it is opened."""
        if event.endswith(("connect_tcp.complete", "start_tls.complete")):
            self._watch(info.get("return_value"))

    def _watch(self, stream: Any) -> None:
        if stream is None:
            return
        with self._lock:
            self._streams.append(stream)
            cut = self._cut
        if cut:
            _shut_stream(stream)

    def cut(self) -> None:
        """End the attempt: its socket is shut down, so a blocked read returns."""
        with self._lock:
            if self._done:
                return
            self._cut = True
            streams = list(self._streams)
        for stream in streams:
            _shut_stream(stream)


def _shut_stream(stream: Any) -> None:
    try:
        sock = stream.get_extra_info("socket")
    except (AttributeError, OSError, ValueError):
        return
    if sock is not None:
        shut_socket(sock)
