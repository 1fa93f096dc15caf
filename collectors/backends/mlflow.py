"""An MLflow experiment as a span source: ``mlflow://HOST:PORT/EXPERIMENT``.

Why these endpoints: MLflow 3 keeps traces per experiment and answers them in two steps —
``POST /api/3.0/mlflow/traces/search`` pages through trace infos (oldest first, the time
window as a filter), ``GET /api/3.0/mlflow/traces/batchGet`` returns a few whole traces
with their spans as OTLP-shaped JSON (snake_case fields, base64 ids). Each search page is
fetched in small groups of traces and each group is one batch, so memory is bounded by
one group whatever the experiment holds.

What the conversion restores, so AEM's dialects see what a file of the same spans shows:

- ids: base64 bytes → lowercase hex, through the same OTLP decoder as files
  (:func:`collectors.otlp.decode_proto_request`); MLflow's ``tr-`` trace ids are not used;
- attributes: MLflow hands a JSON text attribute (``gen_ai.input.messages``,
  ``gen_ai.tool.call.arguments`` …) back parsed, as a list or map; a value the OTel SDK
  cannot hold as an attribute (a map, or a list holding maps or lists) is turned back into
  compact JSON text;
- resource: MLflow keeps a span's resource only as trace tags (``service.name`` …): the
  tags that are not MLflow's own (``mlflow.*``) become the spans' resource.

What MLflow does not keep and no conversion can bring back: the span kind and the
instrumentation scope; AEM's verdicts use neither. MLflow's own attributes
(``mlflow.spanType``, ``mlflow.spanInputs`` …) are passed through unchanged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import SplitResult, parse_qs, unquote

from google.protobuf.json_format import ParseDict, ParseError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from aem.foundation.model import InputIssue, SourceRef, SpanRecord
from collectors.backends.base import BackendError, DeferredIssues, SourceWindow, future_starts
from collectors.backends.bounded import (
    LIMIT_KEYS,
    MAX_RECORD_DEPTH,
    PullLimits,
    PullStopped,
    ReadProgress,
    cursor_problem,
    deeper_than,
)
from collectors.backends.mlflow_rest import MlflowRest, auth_headers, base_url
from collectors.otlp import decode_proto_request

SEARCH_PATH = "/api/3.0/mlflow/traces/search"
BATCH_GET_PATH = "/api/3.0/mlflow/traces/batchGet"
# Trace infos per search page (MLflow allows at most 500) and whole traces per batchGet.
SEARCH_PAGE_TRACES = 100
TRACES_PER_BATCH = 10
# MLflow keeps no time a trace was stored, so ``--since last`` reads it by start time with
# this overlap (aem.pulls): a trace that reaches MLflow later than this after it started
# is not seen by an incremental run (``?late_arrival_seconds=`` changes it).
LATE_ARRIVAL_SECONDS = 24 * 3_600
_URL_KEYS = frozenset({*LIMIT_KEYS, "late_arrival_seconds"})


def open_mlflow(parts: SplitResult, environ: Mapping[str, str]) -> MlflowSource:
    """The opener registered for ``mlflow://`` and ``mlflow+https://``; the URL's query
    takes the bounds of :class:`PullLimits` and ``late_arrival_seconds``."""
    prefix, _, experiment = parts.path.strip("/").rpartition("/")
    if not experiment:
        raise BackendError(f"mlflow URL {parts.geturl()!r} names no experiment: …/EXPERIMENT")
    query = parse_qs(parts.query)
    unknown = sorted(set(query) - _URL_KEYS)
    if unknown:
        raise BackendError(f"mlflow: unknown URL parameter(s) {', '.join(unknown)}")
    limits = PullLimits.from_query(query, "mlflow")
    late = PullLimits.from_query(
        {"request_seconds": query.get("late_arrival_seconds", [str(LATE_ARRIVAL_SECONDS)])},
        "mlflow late_arrival_seconds",
    ).request_seconds
    base = base_url(parts, f"/{prefix}" if prefix else "")
    name = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"
    rest = MlflowRest(base, auth_headers(environ), limits=limits)
    source = MlflowSource(rest, unquote(experiment), name)
    source.late_arrival_nanos = int(late * 1_000_000_000)
    return source


class MlflowSource(DeferredIssues):
    """The traces of one experiment, oldest first, as pages of :class:`SpanRecord`."""

    def __init__(
        self,
        rest: MlflowRest,
        experiment: str,
        name: str,
        *,
        search_page: int = SEARCH_PAGE_TRACES,
        traces_per_batch: int = TRACES_PER_BATCH,
    ) -> None:
        super().__init__()
        self.rest = rest
        self.experiment = experiment
        self._name = name
        self.search_page = min(max(1, search_page), 500)
        self.traces_per_batch = max(1, traces_per_batch)
        self.late_arrival_nanos = LATE_ARRIVAL_SECONDS * 1_000_000_000

    @property
    def name(self) -> str:
        return self._name

    def batches(self, window: SourceWindow, issues: list[InputIssue]) -> Iterator[list[SpanRecord]]:
        """One batch per group of traces; a group too large or too deep to read is read
        trace by trace, and a trace that still is is reported and skipped; a request
        past its deadline, or a search that cannot go on, ends the read with an issue."""
        self.take_deferred(issues)
        experiment_id = self.experiment_id()
        progress = ReadProgress(self.name, limits=self.rest.limits)
        now = time.time_ns()
        for trace_ids in self._trace_id_pages(experiment_id, window, progress, issues):
            for start in range(0, len(trace_ids), self.traces_per_batch):
                group = trace_ids[start : start + self.traces_per_batch]
                reached = progress.over(self.rest.received_bytes)
                if reached is not None:
                    progress.stop(reached, f"traces {group[0]}…", issues)
                    return
                try:
                    spans = self._group(group, experiment_id, window, issues)
                except PullStopped as exc:
                    progress.stop(exc, f"traces {group[0]}…", issues)
                    return
                progress.records += len(spans)
                future_starts(spans, now, issues)
                yield spans

    def experiment_id(self) -> str:
        """The experiment's id: by name first, then (an all-digit path) as an id."""
        found = self.rest.call(
            "GET",
            "/api/2.0/mlflow/experiments/get-by-name",
            params={"experiment_name": self.experiment},
            missing_ok=True,
        )
        if not found and self.experiment.isdigit():
            found = self.rest.call(
                "GET",
                "/api/2.0/mlflow/experiments/get",
                params={"experiment_id": self.experiment},
                missing_ok=True,
            )
        experiment = found.get("experiment")
        experiment_id = experiment.get("experiment_id") if isinstance(experiment, dict) else None
        if not isinstance(experiment_id, str | int) or not str(experiment_id):
            raise BackendError(f"mlflow {self.rest.base}: no experiment {self.experiment!r}")
        return str(experiment_id)

    def _trace_id_pages(
        self,
        experiment_id: str,
        window: SourceWindow,
        progress: ReadProgress,
        issues: list[InputIssue],
    ) -> Iterator[list[str]]:
        """Trace ids page by page, oldest first, in the window (to the millisecond), for
        at most ``max_pages`` pages and never a page token twice."""
        body: dict[str, Any] = {
            "locations": [
                {"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": experiment_id}}
            ],
            "max_results": self.search_page,
            "order_by": ["timestamp_ms ASC"],
        }
        if window_filter := _window_filter(window):
            body["filter"] = window_filter
        followed: set[bytes] = set()
        for number in range(1, self.rest.limits.max_pages + 2):
            where = f"search page {number}"
            if number > self.rest.limits.max_pages:
                too_many = f"more pages than {self.rest.limits.max_pages:,} (max_pages)"
                progress.stop(PullStopped(too_many), where, issues)
                return
            reached = progress.over(self.rest.received_bytes)
            if reached is not None:
                progress.stop(reached, where, issues)
                return
            try:
                page = self.rest.call("POST", SEARCH_PATH, body=body)
            except PullStopped as exc:
                progress.stop(exc, where, issues)
                return
            progress.pages += 1
            yield self._trace_ids(page, where, issues)
            token = page.get("next_page_token")
            if token is None or token == "":
                return
            problem = cursor_problem(token, followed, "next_page_token")
            if problem:
                progress.stop(PullStopped(problem), where, issues)
                return
            body["page_token"] = token

    def _trace_ids(
        self, page: Mapping[str, Any], where: str, issues: list[InputIssue]
    ) -> list[str]:
        traces = page.get("traces") or []
        if not isinstance(traces, list):
            raise BackendError(f"mlflow POST {self.rest.base}{SEARCH_PATH}: malformed page")
        ids = [t.get("trace_id") for t in traces if isinstance(t, dict)]
        good = [i for i in ids if isinstance(i, str) and i]
        if len(good) != len(traces):
            issues.append(
                InputIssue(
                    kind="bad_span",
                    message=f"{len(traces) - len(good)} trace(s) without a trace_id skipped",
                    source=f"{self.name} {where}",
                    spans_skipped=len(traces) - len(good),
                )
            )
        return good

    def _group(
        self,
        trace_ids: list[str],
        experiment_id: str,
        window: SourceWindow,
        issues: list[InputIssue],
    ) -> list[SpanRecord]:
        """The spans of a group of traces; a group whose answer is too large or too deep
        is asked again trace by trace, so one bad trace costs only itself."""
        try:
            return self._spans_of(trace_ids, experiment_id, window, issues)
        except PullStopped as exc:
            if exc.kind == "unreadable":
                raise
            if len(trace_ids) == 1:
                issues.append(
                    InputIssue(
                        kind=exc.kind,
                        message=f"trace {trace_ids[0]} skipped: {exc}",
                        source=f"{self.name} trace {trace_ids[0]}",
                        trace_id=trace_ids[0],
                    )
                )
                return []
        spans: list[SpanRecord] = []
        for trace_id in trace_ids:
            spans.extend(self._group([trace_id], experiment_id, window, issues))
        return spans

    def _spans_of(
        self,
        trace_ids: list[str],
        experiment_id: str,
        window: SourceWindow,
        issues: list[InputIssue],
    ) -> list[SpanRecord]:
        params = {"trace_ids": trace_ids, "experiment_ids": [experiment_id]}
        page = self.rest.call("GET", BATCH_GET_PATH, params=params)
        traces = page.get("traces")
        if not isinstance(traces, list):
            raise BackendError(f"mlflow GET {self.rest.base}{BATCH_GET_PATH}: malformed page")
        records: list[SpanRecord] = []
        for trace in traces:
            spans = trace_spans(trace, self.name, issues)
            if spans and _in_window(min(s.start_unix_nano for s in spans), window):
                records.extend(spans)
        return records


def _window_filter(window: SourceWindow) -> str:
    """MLflow's filter on trace start (milliseconds), wide enough to lose no trace."""
    clauses = []
    if window.since_unix_nano is not None:
        clauses.append(f"trace.timestamp_ms >= {window.since_unix_nano // 1_000_000}")
    if window.until_unix_nano is not None:
        clauses.append(f"trace.timestamp_ms < {-(-window.until_unix_nano // 1_000_000)}")
    return " AND ".join(clauses)


def _in_window(start: int, window: SourceWindow) -> bool:
    """The exact ``[since, until)`` test on the trace's first span start, in nanoseconds."""
    if window.since_unix_nano is not None and start < window.since_unix_nano:
        return False
    return window.until_unix_nano is None or start < window.until_unix_nano


def trace_spans(trace: Any, source: str, issues: list[InputIssue]) -> list[SpanRecord]:
    """One MLflow trace (``trace_info`` + ``spans``) as the spans a file would hold; a
    record that is not a trace (``trace_info`` a string, nesting too deep …) is reported
    and skipped, and the other traces of the page are kept."""
    problem = _trace_problem(trace)
    if problem:
        info = trace.get("trace_info") if isinstance(trace, Mapping) else None
        trace_id = info.get("trace_id") if isinstance(info, Mapping) else None
        raws = trace.get("spans") if isinstance(trace, Mapping) else None
        issues.append(
            InputIssue.at_origin(
                "bad_span",
                f"not an MLflow trace, skipped: {problem}",
                SourceRef(f"{source} trace {str(trace_id)[:80] if trace_id else '?'}"),
                spans_skipped=max(1, len(raws) if isinstance(raws, list) else 1),
            )
        )
        return []
    info = trace.get("trace_info") or {}
    trace_id = str(info.get("trace_id", "?"))
    origin = SourceRef(f"{source} trace {trace_id}")
    parsed: list[Span] = []
    for raw in trace.get("spans") or []:
        try:
            parsed.append(ParseDict(raw, Span(), ignore_unknown_fields=True))
        except (ParseError, TypeError, ValueError, AttributeError) as exc:
            issues.append(
                InputIssue.at_origin(
                    "bad_span", f"span skipped: {exc}", origin, trace_id=trace_id, spans_skipped=1
                )
            )
    scope_spans = [ScopeSpans(spans=parsed)]
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=scope_spans)])
    records, decode_issues = decode_proto_request(request, origin)
    issues.extend(decode_issues)
    resource = resource_from_tags(info.get("tags"))
    for record in records:
        record.resource = dict(resource)
        record.attributes = {k: as_otel_attribute(v) for k, v in record.attributes.items()}
        for event in record.events:
            event.attributes = {k: as_otel_attribute(v) for k, v in event.attributes.items()}
    return records


def _trace_problem(trace: Any) -> str:
    """Why ``trace`` is not an MLflow trace record (``""`` when it is one)."""
    if not isinstance(trace, Mapping):
        return f"a trace is an object, not {type(trace).__name__}"
    info, spans = trace.get("trace_info"), trace.get("spans")
    if info is not None and not isinstance(info, Mapping):
        return f"'trace_info' is {type(info).__name__}, not an object"
    if deeper_than(info, MAX_RECORD_DEPTH):  # spans: protobuf refuses 100 levels, per span
        return f"'trace_info' is nested more than {MAX_RECORD_DEPTH} levels deep"
    if spans is not None and not isinstance(spans, list):
        return f"'spans' is {type(spans).__name__}, not a list"
    return ""


def resource_from_tags(tags: Any) -> dict[str, Any]:
    """The trace tags that came from the spans' resource: all but MLflow's own (MLflow's
    tags are text; anything else is not a resource attribute and is left out)."""
    if not isinstance(tags, dict):
        return {}
    return {
        k: v
        for k, v in tags.items()
        if isinstance(v, str | int | float | bool) and not str(k).startswith("mlflow.")
    }


def as_otel_attribute(value: Any) -> Any:
    """A value MLflow parsed out of JSON text, as that text again; others unchanged.

    >>> as_otel_attribute({"city": "Paris"})
    '{"city":"Paris"}'
    >>> as_otel_attribute(["stop"])
    ['stop']
    """
    structured = isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(v, dict | list) for v in value)
    )
    if structured:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return value
