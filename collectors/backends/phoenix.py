"""Phoenix (Arize) as a span source: ``phoenix://HOST:PORT/PROJECT`` or ``phoenix+https://…``.

Why the REST route ``GET /v1/projects/{project}/spans`` (Phoenix's public API) and not
GraphQL or a database: it is the documented, versioned way out, it pages with a cursor,
and it filters on start time, which is what ``--since``/``--until`` mean. Pages are asked
for in start-time order (``sort=start_time&order=asc``), so a session's spans arrive
together and the assembler closes sessions as a file of the same spans would; one page
(``limit`` spans, at most 1,000) is in memory at a time.

What Phoenix keeps of a span, and so what comes back: ids, name, start and end time (to
the microsecond), status, attributes (``openinference.span.kind`` moved to ``span_kind``,
given back here) and events. It does not keep the span kind, resource, scope or links, and
it adds OpenInference attributes synthesised from ``gen_ai.*`` ones; docs/integrations/
phoenix.md says what that means for a report.

The token comes from ``PHOENIX_API_KEY`` (never from the URL); ``?page_size=N`` sets the
page size (a smaller page, less memory, more requests). A page that fails is retried
a bounded number of times (connection errors, 429 and 5xx); then :class:`BackendError`
names the backend and the page. A span that cannot be decoded is an :class:`InputIssue`
and the rest of its page is kept.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import SplitResult, parse_qs, quote

import httpx

from aem.model import InputIssue, SourceRef, SpanEvent, SpanRecord
from collectors.backends.base import BackendError, SourceWindow, register_scheme

API_KEY_ENV = "PHOENIX_API_KEY"
PAGE_SIZE = 1000  # Phoenix's own maximum for this route
ATTEMPTS = 3  # per page: the first try and two retries
RETRY_BASE_SECONDS = 0.5
TIMEOUT_SECONDS = 30.0
_STATUS_CODES = {"UNSET": 0, "OK": 1, "ERROR": 2}
_SPAN_KIND_KEY = "openinference.span.kind"
# What Phoenix's gen_ai → OpenInference conversion writes (phoenix.trace.gen_ai.conversion).
_SYNTHESISED_KEYS = frozenset(
    {
        _SPAN_KIND_KEY,
        "session.id",
        "llm.model_name",
        "llm.system",
        "llm.provider",
        "llm.invocation_parameters",
        "llm.finish_reason",
        "input.value",
        "input.mime_type",
        "output.value",
        "output.mime_type",
        "tool.name",
        "tool.description",
        "tool.id",
        "tool.parameters",
        "embedding.model_name",
        "embedding.invocation_parameters",
    }
)
_SYNTHESISED_PREFIXES = (
    "llm.input_messages.",
    "llm.output_messages.",
    "llm.token_count.",
    "llm.tools.",
    "retrieval.documents.",
)
_RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


def _unix_nano(value: Any) -> int:
    """An ISO-8601 timestamp (Phoenix gives them with an offset) as Unix nanoseconds."""
    moment = datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = int(moment.replace(microsecond=0).timestamp())
    return seconds * 1_000_000_000 + moment.microsecond * 1_000


def iso(unix_nano: int) -> str:
    """Unix nanoseconds as the ISO-8601 UTC time Phoenix's time filters take, rounded up
    to the microsecond: Phoenix keeps microseconds, so "at or after" and "before" a
    nanosecond bound mean the same spans as at or after (before) its ceiling."""
    seconds, nanos = divmod(-(-unix_nano // 1_000) * 1_000, 1_000_000_000)
    moment = datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=nanos // 1_000)
    return moment.isoformat()


def without_synthesised(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """A ``gen_ai.*`` span's attributes without the OpenInference ones Phoenix derives from
    them at ingestion (``llm.*``, ``input.*``, ``session.id`` …, and the span kind).

    Why: left in, they make the span read as OpenInference too and change what a turn is
    called; the span as the agent sent it had only its ``gen_ai.*`` ones. The cost: a span
    that really carried both loses its OpenInference copy (docs/integrations/phoenix.md).
    """
    return {
        key: value
        for key, value in attributes.items()
        if key not in _SYNTHESISED_KEYS and not key.startswith(_SYNTHESISED_PREFIXES)
    }


def span_record(raw: Mapping[str, Any], origin: SourceRef) -> SpanRecord:
    """One span of a Phoenix page as a :class:`SpanRecord` (``KeyError``/``ValueError``
    when the page's record is not a span)."""
    context = raw["context"]
    attributes = dict(raw.get("attributes") or {})
    span_kind = raw.get("span_kind")
    if any(key.startswith("gen_ai.") for key in attributes):
        attributes = without_synthesised(attributes)
    elif span_kind and span_kind != "UNKNOWN":  # Phoenix's default when the span had none
        attributes.setdefault(_SPAN_KIND_KEY, span_kind)
    status = str(raw.get("status_code") or "UNSET")
    if status not in _STATUS_CODES:
        raise ValueError(f"unknown status_code {status!r}")
    return SpanRecord(
        trace_id=str(context["trace_id"]),
        span_id=str(context["span_id"]),
        parent_span_id=raw.get("parent_id") or None,
        name=str(raw["name"]),
        start_unix_nano=_unix_nano(raw["start_time"]),
        end_unix_nano=_unix_nano(raw["end_time"]),
        status_code=_STATUS_CODES[status],
        status_message=str(raw.get("status_message") or ""),
        attributes=attributes,
        events=[
            SpanEvent(
                name=str(e.get("name") or ""),
                time_unix_nano=_unix_nano(e["timestamp"]) if e.get("timestamp") else 0,
                attributes=dict(e.get("attributes") or {}),
            )
            for e in raw.get("events") or []
        ],
        origin=origin,
    )


class PhoenixSource:
    """One Phoenix project, read page by page in start-time order."""

    def __init__(
        self,
        base_url: str,
        project: str,
        *,
        api_key: str | None = None,
        page_size: int = PAGE_SIZE,
        timeout: float = TIMEOUT_SECONDS,
        attempts: int = ATTEMPTS,
        name: str | None = None,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._project = project
        self._page_size = page_size
        self._attempts = max(1, attempts)
        self._timeout = timeout
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._name = name or f"phoenix {self._base_url}/{project}"

    @property
    def name(self) -> str:
        return self._name

    def batches(self, window: SourceWindow, issues: list[InputIssue]) -> Iterator[list[SpanRecord]]:
        params: dict[str, Any] = {"limit": self._page_size, "sort": "start_time", "order": "asc"}
        if window.since_unix_nano is not None:
            params["start_time"] = iso(window.since_unix_nano)
        if window.until_unix_nano is not None:
            params["end_time"] = iso(window.until_unix_nano)
        path = f"/v1/projects/{quote(self._project, safe='')}/spans"
        with httpx.Client(
            base_url=self._base_url, headers=self._headers, timeout=self._timeout
        ) as client:
            cursor: str | None = None
            page = 0
            while True:
                page += 1
                if cursor is not None:
                    params["cursor"] = cursor
                body = self._page(client, path, params, page)
                yield self._decode(body["data"], page, issues)
                cursor = body.get("next_cursor")
                if not cursor:
                    return

    def _page(
        self, client: httpx.Client, path: str, params: Mapping[str, Any], page: int
    ) -> dict[str, Any]:
        """One page's JSON body, retried on what a retry can cure."""
        where = f"{self._name}: page {page}"
        problem = ""
        for attempt in range(self._attempts):
            if attempt:
                time.sleep(RETRY_BASE_SECONDS * 2 ** (attempt - 1))
            try:
                response = client.get(path, params=params)
            except httpx.HTTPError as exc:
                problem = f"unreachable ({type(exc).__name__}: {exc})"
                continue
            if response.status_code in _RETRIED_STATUSES:
                problem = f"answered {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code != 200:
                raise BackendError(
                    f"{where}: answered {response.status_code}: {response.text[:200]}"
                    + _hint(response.status_code)
                )
            return _page_body(response, where)
        raise BackendError(f"{where}: {problem} (gave up after {self._attempts} attempts)")

    def _decode(self, records: list[Any], page: int, issues: list[InputIssue]) -> list[SpanRecord]:
        spans: list[SpanRecord] = []
        for index, raw in enumerate(records):
            origin = SourceRef(f"{self._name} page {page}", index + 1)
            try:
                spans.append(span_record(raw, origin))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                issues.append(
                    InputIssue.at_origin(
                        "bad_span", f"not a Phoenix span ({type(exc).__name__}: {exc})", origin
                    )
                )
        return spans


def _page_body(response: httpx.Response, where: str) -> dict[str, Any]:
    """The page's JSON, refused with the page named when it is not a span page."""
    try:
        body = response.json()
    except ValueError as exc:
        raise BackendError(f"{where}: the answer is not JSON ({exc})") from exc
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise BackendError(f"{where}: the answer has no 'data' list of spans")
    cursor = body.get("next_cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise BackendError(f"{where}: 'next_cursor' is not a string")
    return body


def _hint(status: int) -> str:
    if status in (401, 403):
        return f" (set {API_KEY_ENV} to a Phoenix API key)"
    if status == 404:
        return " (no such project: the URL's path is the project name)"
    return ""


def open_phoenix(parts: SplitResult, environ: Mapping[str, str]) -> PhoenixSource:
    """``phoenix://HOST:PORT/PROJECT`` (HTTP) or ``phoenix+https://HOST/PROJECT``."""
    transport = parts.scheme.partition("+")[2] or "http"
    if transport not in ("http", "https"):
        raise BackendError(f"phoenix: unknown transport {transport!r} (use phoenix+https://)")
    if not parts.hostname:
        raise BackendError("phoenix: the URL needs a host, e.g. phoenix://127.0.0.1:6006/default")
    project = parts.path.strip("/") or "default"
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    return PhoenixSource(
        f"{transport}://{host}",
        project,
        api_key=environ.get(API_KEY_ENV) or None,
        page_size=_page_size(parse_qs(parts.query)),
        name=f"{parts.scheme}://{host}/{project}",
    )


def _page_size(query: Mapping[str, list[str]]) -> int:
    """``?page_size=N`` (1 to 1,000, Phoenix's bound); the only query the URL takes."""
    unknown = sorted(set(query) - {"page_size"})
    if unknown:
        raise BackendError(f"phoenix: unknown URL parameter(s) {', '.join(unknown)}")
    text = (query.get("page_size") or [str(PAGE_SIZE)])[-1]
    if not text.isdigit() or not 1 <= int(text) <= PAGE_SIZE:
        raise BackendError(f"phoenix: page_size={text!r} must be a whole number 1 to {PAGE_SIZE}")
    return int(text)


register_scheme("phoenix", open_phoenix)
