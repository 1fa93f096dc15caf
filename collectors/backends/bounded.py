"""Backend pages read within bounds: bytes per page, seconds per request, JSON depth.

Why: a backend is a server AEM does not control. Without bounds one endless or 1 GB
answer fills memory, one server that drips a byte every few seconds holds a page for as
long as it likes (a read timeout restarts with every byte), and one page nested 100,000
levels deep ends the run with a ``RecursionError``. Every request of a source (and of the
MLflow source's REST client) goes through :func:`pull_client`, AEM's one HTTP client
(:mod:`aem.http`) set to read at most ``max_page_bytes`` of an answer and to give up on
the whole request after ``request_seconds``, however the bytes trickle in;
:func:`parse_json` refuses nesting the way the file readers do (orjson's 1,024 levels,
then Python's json with its recursion guard). A bound that is reached raises
:class:`PullStopped` (:func:`bound_reached`): the source reports it as input it could not
read and keeps what it read before (:meth:`ReadProgress.stop`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from aem.http import RETRY_STATUSES as BUSY_STATUSES
from aem.http import HttpClient, HttpError, RetryPolicy
from aem.model import InputIssue
from collectors.backends.base import BackendError

DEFAULT_MAX_PAGE_BYTES = 64 * 1024 * 1024
DEFAULT_REQUEST_SECONDS = 60.0
DEFAULT_MAX_PAGES = 10_000
# Asked again: a busy or restarting server, and a 500 (a backend restarting says that too).
RETRY_STATUSES = BUSY_STATUSES | {500}
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


def pull_client(
    base_url: str,
    limits: PullLimits,
    *,
    headers: Mapping[str, str] | None = None,
    stall_seconds: float,
    attempts: int,
    pause: float,
) -> HttpClient:
    """The HTTP client (:mod:`aem.http`) of one source: every answer read within
    ``limits``; a refused or stalled connection (no byte for ``stall_seconds``), 429 and
    5xx asked again, ``attempts`` in all, pausing ``pause`` seconds, then doubling."""
    return HttpClient(
        base_url,
        deadline_seconds=limits.request_seconds,
        max_body_bytes=limits.max_page_bytes,
        retry=RetryPolicy(
            attempts=max(1, attempts), backoff_seconds=pause, retry_statuses=RETRY_STATUSES
        ),
        headers=headers,
        stall_seconds=stall_seconds,
        limit_names=("request_seconds", "max_page_bytes"),
    )


def bound_reached(error: HttpError) -> PullStopped | None:
    """A request that reached a bound (too large, or not whole within ``request_seconds``)
    as :class:`PullStopped`: not retried, since the same server would do it again, and
    reported as input not read; ``None`` for any other failure."""
    if error.kind == "deadline":
        return PullStopped(error.detail)
    if error.kind == "too_large":
        return PullStopped(error.detail, "record_too_large")
    return None


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
