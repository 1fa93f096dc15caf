"""Backend pages read within bounds: bytes per page, seconds per request, JSON depth.

Why: a backend is a server AEM does not control. Without bounds one endless or 1 GB
answer fills memory, one server that drips a byte every few seconds holds a page for as
long as it likes (a read timeout restarts with every byte), and one page nested 100,000
levels deep ends the run with a ``RecursionError``. Every page of a source (and every
request of the MLflow client, which the MLflow sink shares) goes through :func:`fetch`,
which reads at most ``max_page_bytes`` of an answer and gives up on the whole request
after ``request_seconds``, however the bytes trickle in; :func:`parse_json` refuses
nesting the way the file readers do (orjson's 1,024 levels, then Python's json with its
recursion guard). A bound that is reached raises :class:`PullStopped`: the source reports
it as input it could not read and keeps what it read before (:func:`stop_reading`).

The deadline is kept by running the request in a daemon thread and waiting for it: the
caller gets its answer or :class:`PullStopped` within ``request_seconds`` whatever the
server does, and the abandoned request is ended by shutting its socket down.
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from aem.model import InputIssue
from collectors.backends.base import BackendError

DEFAULT_MAX_PAGE_BYTES = 64 * 1024 * 1024
DEFAULT_REQUEST_SECONDS = 60.0
DEFAULT_MAX_PAGES = 10_000
# What is kept of an answer that is not a page (an error status): enough for its message.
ERROR_BODY_BYTES = 4096
# A record (one span, one trace) nested deeper than this is refused: attribute values
# nest at most 100 levels in a file (collectors.otlp), and code that walks a value
# recursively must not meet one deeper than Python's recursion limit allows.
MAX_RECORD_DEPTH = 128
LIMIT_KEYS = ("max_page_bytes", "request_seconds", "max_pages")


class PullStopped(BackendError):
    """A bound was reached: this page (or the rest of the source) cannot be read, and
    what was read before it is still good. ``kind`` is the input issue it becomes
    (``record_too_large``, ``bad_json``, or ``unreadable`` when no later page can be)."""

    def __init__(self, reason: str, kind: str = "unreadable") -> None:
        super().__init__(reason)
        self.kind = kind


@dataclass(frozen=True)
class PullLimits:
    """The bounds of one source, set by its URL (``?max_page_bytes=…&request_seconds=…
    &max_pages=…``); generous by default, so only a hostile or broken server meets them."""

    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    request_seconds: float = DEFAULT_REQUEST_SECONDS
    max_pages: int = DEFAULT_MAX_PAGES

    @classmethod
    def from_query(cls, query: Mapping[str, list[str]], backend: str) -> PullLimits:
        """The bounds a URL's query sets; ``BackendError`` naming a bad value."""
        values: dict[str, Any] = {}
        for key in LIMIT_KEYS:
            if key not in query:
                continue
            text = query[key][-1]
            try:
                value = float(text) if key == "request_seconds" else int(text)
            except ValueError:
                value = 0
            if not (value > 0 and math.isfinite(value)):
                raise BackendError(f"{backend}: {key}={text!r} must be a number above 0")
            values[key] = value
        return cls(**values)


@dataclass(frozen=True)
class Answer:
    """A status and the body read (all of a 200's, the first bytes of any other)."""

    status: int
    content: bytes | bytearray  # a page is not copied once more to become ``bytes``

    def text(self, limit: int = 200) -> str:
        return self.content[:limit].decode("utf-8", errors="replace")


def fetch(client: httpx.Client, method: str, url: str, limits: PullLimits, **send: Any) -> Answer:
    """One request, its answer read within ``limits``.

    Raises ``httpx.HTTPError`` for what a retry may cure (refused, reset, a read that timed
    out) and :class:`PullStopped` when the answer is larger than ``max_page_bytes`` or not
    whole within ``request_seconds`` (not retried: the same server would do it again).
    """
    job = _Request(client, method, url, limits, send)
    worker = threading.Thread(target=job.run, name="aem-backend-request", daemon=True)
    worker.start()
    worker.join(limits.request_seconds)
    if worker.is_alive():
        job.cancel()
        raise PullStopped(
            f"no whole answer within {limits.request_seconds:g} s (request_seconds); "
            f"{job.received:,} bytes had arrived"
        )
    if job.error is not None:
        raise job.error
    assert job.answer is not None
    return job.answer


class _Request:
    """The request :func:`fetch` runs in its worker thread, and how to abandon it."""

    def __init__(
        self,
        client: httpx.Client,
        method: str,
        url: str,
        limits: PullLimits,
        send: Mapping[str, Any],
    ) -> None:
        self.client, self.method, self.url, self.limits = client, method, url, limits
        self.send = dict(send)
        self.received = 0
        self.answer: Answer | None = None
        self.error: BaseException | None = None
        self._cancelled = threading.Event()
        self._streams: list[Any] = []
        self._lock = threading.Lock()

    def run(self) -> None:
        try:
            self.answer = self._read()
        except BaseException as exc:  # handed to the caller's thread, raised there
            self.error = exc

    def _read(self) -> Answer:
        extensions = {"trace": self._trace}
        with self.client.stream(self.method, self.url, extensions=extensions, **self._send()) as r:
            self._watch(r.extensions.get("network_stream"))
            if r.status_code != 200:
                return Answer(r.status_code, self._prefix(r.iter_bytes(), ERROR_BODY_BYTES))
            cap = self.limits.max_page_bytes
            declared = r.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > cap and not r.headers.get("content-encoding"):
                raise _too_large(cap, f"it declares {int(declared):,}")
            body = bytearray()
            for chunk in r.iter_bytes():
                if self._cancelled.is_set():
                    break
                self.received += len(chunk)
                if len(body) + len(chunk) > cap:
                    raise _too_large(cap, f"{self.received:,} bytes had arrived")
                body += chunk
            return Answer(200, body)

    def _send(self) -> dict[str, Any]:
        return {k: v for k, v in self.send.items() if v is not None}

    def _prefix(self, chunks: Iterator[bytes], size: int) -> bytes:
        body = bytearray()
        for chunk in chunks:
            body += chunk
            if len(body) >= size or self._cancelled.is_set():
                break
        return bytes(body[:size])

    def _trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpx's trace hook: note each connection's stream as soon as it is opened."""
        if event.endswith(("connect_tcp.complete", "start_tls.complete")):
            self._watch(info.get("return_value"))

    def _watch(self, stream: Any) -> None:
        if stream is None:
            return
        with self._lock:
            self._streams.append(stream)
            if self._cancelled.is_set():
                _shut(stream)

    def cancel(self) -> None:
        """Abandon the request: its socket is shut down, so a blocked read returns."""
        with self._lock:
            self._cancelled.set()
            for stream in self._streams:
                _shut(stream)


def _shut(stream: Any) -> None:
    try:
        sock = stream.get_extra_info("socket")
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except (OSError, AttributeError, ValueError):
        pass  # already closed: nothing left to end


def _too_large(cap: int, detail: str) -> PullStopped:
    return PullStopped(
        f"the answer is larger than {cap:,} bytes (max_page_bytes; {detail})", "record_too_large"
    )


def parse_json(content: bytes | bytearray) -> Any:
    """A page's JSON, as the file readers parse a record: orjson, then Python's json for
    what orjson refuses but JSON allows (integers beyond 64 bits). Nesting deeper than
    either allows raises :class:`PullStopped` (``bad_json``); anything else that is not
    JSON raises ``ValueError``."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise _too_deep("more than 1,024 levels") from None
        first = exc
    try:
        return json.loads(content)
    except RecursionError:
        raise _too_deep("deeper than Python's recursion limit") from None
    except ValueError:
        raise first from None


def _too_deep(detail: str) -> PullStopped:
    return PullStopped(f"the answer is nested {detail} deep; refused", "bad_json")


def deeper_than(value: Any, limit: int) -> bool:
    """``value`` nests lists and maps more than ``limit`` levels (walked without recursion,
    so a value deep enough to break recursive code is found, not met)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
    return False


@dataclass
class ReadProgress:
    """What one read of a source has got so far, for the message when it stops."""

    source: str
    pages: int = 0
    records: int = 0

    def stop(self, exc: PullStopped, where: str, issues: list[InputIssue]) -> None:
        """Report a bound reached at ``where`` (``PAGE`` of the source) as input not read,
        keeping what was read before; with nothing read yet there is nothing to keep, so
        it is an error (``BackendError``) naming the backend, as a server that is down."""
        if self.records == 0:
            raise BackendError(f"{self.source}: {where}: {exc}") from exc
        issues.append(
            InputIssue(
                kind="unreadable",
                message=(
                    f"{where}: {exc}; the read stopped there, after {self.pages:,} page(s) "
                    f"and {self.records:,} record(s): the rest of the source was not read"
                ),
                source=f"{self.source} {where}",
            )
        )


# A page cursor longer than this is not a cursor: Phoenix's and MLflow's are short tokens.
MAX_CURSOR_CHARS = 8192


def cursor_problem(cursor: Any, followed: set[bytes], field: str) -> str:
    """Why ``cursor`` cannot be followed (``""`` when it can; it is then noted in
    ``followed``): not a string, too long, or one this read already followed — a cursor
    that repeats or cycles would page for ever."""
    if not isinstance(cursor, str):
        return f"{field!r} is not a string (got {type(cursor).__name__} {str(cursor)[:40]!r})"
    if len(cursor) > MAX_CURSOR_CHARS:
        return f"{field!r} is {len(cursor):,} characters long: not a page cursor"
    digest = hashlib.sha256(cursor.encode("utf-8", errors="replace")).digest()
    if digest in followed:
        return f"{field!r} {cursor[:60]!r} was already followed: the pages would never end"
    followed.add(digest)
    return ""
