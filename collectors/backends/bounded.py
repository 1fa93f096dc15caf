"""Backend pages read within bounds: bytes per page, seconds per request, JSON depth.

Why: a backend is a server AEM does not control. Without bounds one endless or 1 GB
answer fills memory, one server that drips a byte every few seconds holds a page for as
long as it likes (a read timeout restarts with every byte), and one page nested 100,000
levels deep ends the run with a ``RecursionError``. Every request of a source (and of the
MLflow source's REST client) goes through :func:`pull_client`, AEM's one HTTP client
(:mod:`aem.foundation.http`) set to read at most ``max_page_bytes`` of an answer and to give up on
the whole request after ``request_seconds``, however the bytes trickle in;
:func:`parse_json` refuses nesting the way the file readers do (orjson's 1,024 levels,
then Python's json with its recursion guard). A bound that is reached raises
:class:`PullStopped` (:func:`bound_reached`): the source reports it as input it could not
read and keeps what it read before (:meth:`ReadProgress.stop`).

A bound in pages is not a bound on a read: a server that answers a new page of 100 traces
forever passed 2 GB in ten minutes within 10,000 pages. So the read as a whole is bounded
too — ``max_spans`` spans kept, ``max_bytes`` bytes received, ``max_seconds`` seconds —
checked before every request (:meth:`ReadProgress.over`); the defaults keep a hostile
read's audit under 1 GB and two minutes on a laptop, and an honest read that is larger raises
them in the URL. Reaching one is, like any bound, an issue with what was read audited.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from aem.foundation.http import RETRY_STATUSES as BUSY_STATUSES
from aem.foundation.http import HttpClient, HttpError, RetryPolicy
from aem.foundation.model import InputIssue
from collectors.backends.base import BackendError

DEFAULT_MAX_PAGE_BYTES = 64 * 1024 * 1024
DEFAULT_REQUEST_SECONDS = 60.0
DEFAULT_MAX_PAGES = 10_000
# The whole read's bounds. Measured (bench/backends/endless_search.py): an audit holds
# about 10 KB per span read through evaluation, over ~270 MB of its own, and evaluates
# ~1,500 spans/s on a shared core — so 50,000 spans stay under 1 GB, and a read cut at 60 s
# has its verdicts within two minutes. An honest larger read raises them in the URL.
DEFAULT_MAX_SPANS = 50_000
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_SECONDS = 60.0
# Asked again: a busy or restarting server, and a 500 (a backend restarting says that too).
RETRY_STATUSES = BUSY_STATUSES | {500}
# A record (one span, one trace) nested deeper than this is refused: attribute values
# nest at most 100 levels in a file (collectors.otlp), and code that walks a value
# recursively must not meet one deeper than Python's recursion limit allows.
MAX_RECORD_DEPTH = 128
LIMIT_KEYS = (
    "max_page_bytes",
    "request_seconds",
    "max_pages",
    "max_spans",
    "max_bytes",
    "max_seconds",
)
_SECONDS_KEYS = frozenset({"request_seconds", "max_seconds"})


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
    &max_pages=…``, and for the whole read ``max_spans``, ``max_bytes``, ``max_seconds``);
    generous by default, so only a hostile or broken server (or a read larger than a
    laptop holds) meets them."""

    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    request_seconds: float = DEFAULT_REQUEST_SECONDS
    max_pages: int = DEFAULT_MAX_PAGES
    max_spans: int = DEFAULT_MAX_SPANS
    max_bytes: int = DEFAULT_MAX_BYTES
    max_seconds: float = DEFAULT_MAX_SECONDS

    @classmethod
    def from_query(cls, query: Mapping[str, list[str]], backend: str) -> PullLimits:
        """The bounds a URL's query sets; ``BackendError`` naming a bad value."""
        values: dict[str, Any] = {}
        for key in LIMIT_KEYS:
            if key not in query:
                continue
            text = query[key][-1]
            try:
                value = float(text) if key in _SECONDS_KEYS else int(text)
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
    """The HTTP client (:mod:`aem.foundation.http`) of one source: every answer read within
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
    """What one read of a source has got so far, for the message when it stops, and
    whether it has reached a bound of the whole read (:meth:`over`)."""

    source: str
    pages: int = 0
    records: int = 0
    limits: PullLimits = field(default_factory=PullLimits)
    started: float = field(default_factory=time.monotonic)

    def over(self, received_bytes: int) -> PullStopped | None:
        """The bound of the whole read this read has reached (spans kept, bytes received
        — ``received_bytes`` — or seconds since it started), as the :class:`PullStopped`
        that ends it; ``None`` while it may ask for more."""
        limits = self.limits
        seconds = time.monotonic() - self.started
        if self.records >= limits.max_spans:
            reached = f"{self.records:,} spans, the most one read keeps (max_spans)"
        elif received_bytes >= limits.max_bytes:
            reached = f"{received_bytes:,} bytes received, the most one read takes (max_bytes)"
        elif seconds >= limits.max_seconds:
            reached = f"{seconds:,.0f} s, the longest one read takes (max_seconds)"
        else:
            return None
        return PullStopped(
            f"the read reached {reached}; a larger read sets it higher in the URL "
            "(?max_spans=…&max_bytes=…&max_seconds=…) or a narrower one uses --since/--until"
        )

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
