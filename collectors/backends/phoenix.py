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
page size (a smaller page, less memory, more requests). ``?max_page_bytes=``,
``?request_seconds=`` and ``?max_pages=`` bound one read (64 MiB per page, 60 s per
request however slowly the bytes come, 10,000 pages by default;
:mod:`collectors.backends.bounded`). A page that fails is retried a bounded number of
times (a refused or stalled connection, 429, 500, 502, 503, 504: :mod:`aem.foundation.http`); then
:class:`BackendError` names the backend and the page. A bound reached, or a cursor that
cannot be followed (not a string, or one already followed), ends the read with an issue,
and the pages before it are audited. A span that cannot be decoded — checked by the file
decoder, ids and all — is an :class:`InputIssue` and the rest of its page is kept.

For ``--since last`` the source pages in the order Phoenix stored the spans (``sort=id``,
:meth:`PhoenixSource.ingested`): the ledger's mark is the id of the last span read, so a
span that reaches Phoenix late, or one dated in 2099, is news exactly once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import SplitResult, parse_qs, quote

from aem.foundation.http import HttpClient, HttpError, Response
from aem.foundation.model import InputIssue, SourceRef, SpanRecord
from collectors.backends.base import (
    BackendError,
    DeferredIssues,
    Ingested,
    SourceWindow,
    future_starts,
)
from collectors.backends.bounded import (
    LIMIT_KEYS,
    MAX_RECORD_DEPTH,
    PullLimits,
    PullStopped,
    ReadProgress,
    bound_reached,
    cursor_problem,
    deeper_than,
    parse_json,
    pull_client,
)
from collectors.otlp import decode_json_traces

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


def otlp_span(raw: Any) -> dict[str, Any]:
    """One span of a Phoenix page as the OTLP/JSON span a file would hold.

    Why OTLP/JSON: the span is then decoded by the file reader's own decoder
    (:func:`collectors.otlp.decode_json_traces`), so a Phoenix span is checked exactly as
    a file's — hex ids of the right length (a ``parent_id`` that is an object is a bad
    record, not a crash during evaluation), typed fields, attribute nesting, the
    semantic-convention names that must be text. ``KeyError``/``TypeError``/
    ``ValueError`` when the record is not a span at all.
    """
    if not isinstance(raw, Mapping):
        raise TypeError(f"a span is an object, not {type(raw).__name__}")
    context = raw["context"]
    attributes = raw.get("attributes") or {}
    if not isinstance(context, Mapping) or not isinstance(attributes, Mapping):
        raise TypeError("'context' and 'attributes' must be objects")
    attributes = dict(attributes)
    span_kind = raw.get("span_kind")
    if any(str(key).startswith("gen_ai.") for key in attributes):
        attributes = without_synthesised(attributes)
    elif span_kind and span_kind != "UNKNOWN":  # Phoenix's default when the span had none
        attributes.setdefault(_SPAN_KIND_KEY, span_kind)
    status = str(raw.get("status_code") or "UNSET")
    if status not in _STATUS_CODES:
        raise ValueError(f"unknown status_code {status!r}")
    return {
        "traceId": context.get("trace_id"),
        "spanId": context.get("span_id"),
        "parentSpanId": raw.get("parent_id"),
        "name": raw["name"],
        "startTimeUnixNano": _unix_nano(raw["start_time"]),
        "endTimeUnixNano": _unix_nano(raw["end_time"]),
        "status": {"code": _STATUS_CODES[status], "message": raw.get("status_message") or ""},
        "attributes": _key_values(attributes),
        "events": [_otlp_event(e) for e in raw.get("events") or []],
    }


def _otlp_event(event: Any) -> dict[str, Any]:
    if not isinstance(event, Mapping):
        raise TypeError(f"an event is an object, not {type(event).__name__}")
    stamp = event.get("timestamp")
    return {
        "name": event.get("name") or "",
        "timeUnixNano": _unix_nano(stamp) if stamp else 0,
        "attributes": _key_values(event.get("attributes") or {}),
    }


def _key_values(attributes: Any) -> list[dict[str, Any]]:
    """Phoenix's attribute map as OTLP/JSON ``KeyValue`` items (values as ``AnyValue``)."""
    if not isinstance(attributes, Mapping):
        raise TypeError("attributes must be an object")
    return [{"key": key, "value": _any_value(value)} for key, value in attributes.items()]


def _any_value(value: Any) -> dict[str, Any]:
    """A JSON value as OTLP/JSON ``AnyValue`` (the record's depth is checked before)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": value}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _key_values(value)}}
    return {}


def span_records(raw: Any, origin: SourceRef, issues: list[InputIssue]) -> list[SpanRecord]:
    """The span of one Phoenix record (none when it is not a valid span: then an issue
    names it and its place, and the rest of the page is kept)."""
    try:
        if deeper_than(raw, MAX_RECORD_DEPTH):
            raise ValueError(f"nested more than {MAX_RECORD_DEPTH} levels deep")
        span = otlp_span(raw)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        issues.append(
            InputIssue.at_origin(
                "bad_span",
                f"not a Phoenix span ({type(exc).__name__}: {exc})",
                origin,
                spans_skipped=1,
            )
        )
        return []
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    spans, found = decode_json_traces(document, origin)
    issues.extend(found)
    return spans


class PhoenixSource(DeferredIssues):
    """One Phoenix project, read page by page in start-time order (or, for ``--since
    last``, in the order Phoenix stored the spans)."""

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
        limits: PullLimits | None = None,
    ) -> None:
        super().__init__()
        self._base_url = base_url.rstrip("/")
        self._project = project
        self._page_size = page_size
        self._attempts = max(1, attempts)
        self._timeout = timeout
        self._limits = limits or PullLimits()
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._name = name or f"phoenix {self._base_url}/{project}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def limits(self) -> PullLimits:
        return self._limits

    def batches(self, window: SourceWindow, issues: list[InputIssue]) -> Iterator[list[SpanRecord]]:
        self.take_deferred(issues)
        params: dict[str, Any] = {"limit": self._page_size, "sort": "start_time", "order": "asc"}
        if window.since_unix_nano is not None:
            params["start_time"] = iso(window.since_unix_nano)
        if window.until_unix_nano is not None:
            params["end_time"] = iso(window.until_unix_nano)
        now = time.time_ns()
        for page, records in self._raw_pages(params, issues):
            spans = self._decode(records, page, issues)
            future_starts(spans, now, issues)
            yield spans

    def ingested(
        self, mark: str | None, until_unix_nano: int | None, issues: list[InputIssue]
    ) -> Iterator[Ingested]:
        """Spans Phoenix stored after the span whose id is ``mark`` (``sort=id``: Phoenix's
        row ids, its insertion order), each batch with the id of its last record.

        Phoenix pages "at or after" a cursor, and a span's id is the cursor of the page
        that starts with it: asking from ``mark`` gives that span again, and it is
        dropped. With ``until_unix_nano`` the read ends before the first span that started
        at or after it, so the mark never passes a span that was left out.
        """
        params: dict[str, Any] = {"limit": self._page_size, "sort": "id", "order": "asc"}
        if mark:
            params["cursor"] = mark
        for page, records in self._raw_pages(params, issues):
            batch: list[SpanRecord] = []
            last = None
            for index, raw in enumerate(records):
                record_id = raw.get("id") if isinstance(raw, Mapping) else None
                if record_id is not None and record_id == mark:
                    continue
                origin = SourceRef(f"{self._name} page {page}", index + 1)
                spans = span_records(raw, origin, issues)
                if until_unix_nano is not None and any(
                    s.start_unix_nano >= until_unix_nano for s in spans
                ):
                    yield Ingested(batch, last)
                    return
                batch.extend(spans)
                last = record_id if isinstance(record_id, str) and record_id else last
            yield Ingested(batch, last)

    def _client(self) -> HttpClient:
        return pull_client(
            self._base_url,
            self._limits,
            headers=self._headers,
            stall_seconds=self._timeout,
            attempts=self._attempts,
            pause=RETRY_BASE_SECONDS,
        )

    def _raw_pages(
        self, params: dict[str, Any], issues: list[InputIssue]
    ) -> Iterator[tuple[int, list[Any]]]:
        """Every page's records, following ``next_cursor`` within the bounds: a page too
        large, too slow or too deep, a cursor that is not a string or comes back, more
        than ``max_pages`` pages — each ends the read with an issue, what came before kept
        (:meth:`ReadProgress.stop`)."""
        path = f"/v1/projects/{quote(self._project, safe='')}/spans"
        progress = ReadProgress(self._name, limits=self._limits)
        followed: set[bytes] = set()
        with self._client() as client:
            for page in range(1, self._limits.max_pages + 2):
                if page > self._limits.max_pages:
                    too_many = f"more pages than {self._limits.max_pages:,} (max_pages)"
                    progress.stop(PullStopped(too_many), f"page {page}", issues)
                    return
                reached = progress.over(client.received_bytes)
                if reached is not None:
                    progress.stop(reached, f"page {page}", issues)
                    return
                try:
                    body = self._page(client, path, params, page)
                except PullStopped as exc:
                    progress.stop(exc, f"page {page}", issues)
                    return
                progress.pages += 1
                progress.records += len(body["data"])
                yield page, body["data"]
                cursor = body.get("next_cursor")
                if cursor is None or cursor == "":
                    return
                problem = cursor_problem(cursor, followed, "next_cursor")
                if problem:
                    progress.stop(PullStopped(problem), f"page {page}", issues)
                    return
                params["cursor"] = cursor

    def _page(
        self, client: HttpClient, path: str, params: Mapping[str, Any], page: int
    ) -> dict[str, Any]:
        """One page's JSON body (the client retries what a retry can cure)."""
        where = f"{self._name}: page {page}"
        try:
            answer = client.request("GET", path, params=params)
        except HttpError as exc:
            stopped = bound_reached(exc)
            if stopped is not None:
                raise stopped from exc
            raise BackendError(
                f"{where}: {exc.detail} (gave up after {exc.attempts} attempts)"
            ) from exc
        if answer.status != 200:
            raise BackendError(
                f"{where}: answered {answer.status}: {answer.text()}" + _hint(answer.status)
            )
        return _page_body(answer, where)

    def _decode(self, records: list[Any], page: int, issues: list[InputIssue]) -> list[SpanRecord]:
        spans: list[SpanRecord] = []
        for index, raw in enumerate(records):
            origin = SourceRef(f"{self._name} page {page}", index + 1)
            spans.extend(span_records(raw, origin, issues))
        return spans


def _page_body(answer: Response, where: str) -> dict[str, Any]:
    """The page's JSON, refused with the page named when it is not a span page (too deep
    a page raises :class:`PullStopped`: it is reported, not fatal)."""
    try:
        body = parse_json(answer.body)
    except ValueError as exc:
        raise BackendError(f"{where}: the answer is not JSON ({exc})") from exc
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise BackendError(f"{where}: the answer has no 'data' list of spans")
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
    query = parse_qs(parts.query)
    return PhoenixSource(
        f"{transport}://{host}",
        project,
        api_key=environ.get(API_KEY_ENV) or None,
        page_size=_page_size(query),
        name=f"{parts.scheme}://{host}/{project}",
        limits=PullLimits.from_query(query, "phoenix"),
    )


def _page_size(query: Mapping[str, list[str]]) -> int:
    """``?page_size=N`` (1 to 1,000, Phoenix's bound); besides it the URL takes only the
    bounds of :class:`PullLimits`."""
    unknown = sorted(set(query) - {"page_size", *LIMIT_KEYS})
    if unknown:
        raise BackendError(f"phoenix: unknown URL parameter(s) {', '.join(unknown)}")
    text = (query.get("page_size") or [str(PAGE_SIZE)])[-1]
    if not text.isdigit() or not 1 <= int(text) <= PAGE_SIZE:
        raise BackendError(f"phoenix: page_size={text!r} must be a whole number 1 to {PAGE_SIZE}")
    return int(text)
