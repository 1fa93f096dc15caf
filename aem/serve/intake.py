"""The receive path shared by gRPC and HTTP: decode, admit, spool, hand over, answer.

Why one place: both transports must give the same answers — the same partial-success
counts, the same push-back when full, the same "never acknowledge what is not on disk".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from aem.foundation.model import InputIssue, SourceRef, SpanRecord
from aem.serve.budget import Budget, OverBudget, client_of
from aem.serve.envelope import count_spans, parse_envelope
from aem.serve.ops import ServeMetrics
from aem.serve.queues import SpanQueue
from aem.serve.spool import Spool, encode_span
from collectors.otlp import DecodeError, decode_json_traces, decode_proto_request

log = logging.getLogger("aem.serve.intake")

MAX_MESSAGES_IN_ANSWER = 5


class Busy(Exception):
    """No room right now: the client should retry after ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: float, *, unavailable: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unavailable = unavailable  # shutting down / spool failing → 503, else 429


class BadRequest(Exception):
    """The whole request is unusable (not protobuf, not OTLP JSON)."""


class TooLarge(BadRequest):
    """The request decodes into more bytes than one request may (413 / INVALID_ARGUMENT)."""


MAX_VALUE_DEPTH = 32
# A tuple, not ``dict | list``: isinstance with a tuple is about twice as fast, and this
# runs for every attribute of every span on the receive path.
_NESTED = (dict, list)


def span_problem(span: SpanRecord) -> str | None:
    """Why a decoded span cannot be evaluated safely, or None.

    Why here as well as in the decoder: a span accepted with 200 and spooled that makes
    evaluation raise would fail its session at every restart. What the evaluator relies on
    — string ids and names, string attribute keys at every depth, bounded nesting — is
    checked once at the door, and a span that breaks it is refused in ``partial_success``.
    """
    for name in ("trace_id", "span_id", "name", "status_message", "scope"):
        if not isinstance(getattr(span, name), str):
            return f"{name} is not a string"
    if span.parent_span_id is not None and not isinstance(span.parent_span_id, str):
        return "parent_span_id is not a string"
    maps: list[tuple[str, Any]] = [("attribute", span.attributes), ("resource", span.resource)]
    maps += [("event attribute", e.attributes) for e in span.events]
    for what, value in maps:
        problem = _value_problem(value, 0)
        if problem:
            return f"{what} {problem}"
    return None


def _value_problem(value: Any, depth: int) -> str | None:
    if depth > MAX_VALUE_DEPTH:
        return f"nested deeper than {MAX_VALUE_DEPTH} levels"
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"key {key!r} is not a string"
            if isinstance(item, _NESTED):
                problem = _value_problem(item, depth + 1)
                if problem:
                    return problem
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, _NESTED):
                problem = _value_problem(item, depth + 1)
                if problem:
                    return problem
    return None


def screen(spans: list[SpanRecord], issues: list[InputIssue]) -> list[SpanRecord]:
    """The spans that pass :func:`span_problem`; the others become issues (refused)."""
    good: list[SpanRecord] = []
    for span in spans:
        problem = span_problem(span)
        if problem is None:
            good.append(span)
            continue
        issues.append(
            InputIssue(
                kind="invalid_span",
                message=f"span {span.span_id!s:.32}: {problem}; refused",
                spans_skipped=1,
            )
        )
    return good


def parse_request(body: bytes) -> ExportTraceServiceRequest:
    """The message (parsed by protobuf's own C parser), or :class:`BadRequest`."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except Exception as exc:  # protobuf raises DecodeError / RuntimeWarning-like types
        raise BadRequest(f"body is not an OTLP ExportTraceServiceRequest protobuf: {exc}") from exc
    return request


@dataclass(frozen=True, slots=True)
class Accepted:
    rejected_spans: int
    error_message: str


def summarize(issues: list[InputIssue]) -> Accepted:
    rejected = sum(i.spans_skipped for i in issues)
    messages = [i.message for i in issues[:MAX_MESSAGES_IN_ANSWER]]
    if len(issues) > MAX_MESSAGES_IN_ANSWER:
        messages.append(f"... and {len(issues) - MAX_MESSAGES_IN_ANSWER} more issues")
    return Accepted(rejected, "; ".join(messages))


class Intake:
    def __init__(
        self,
        spool: Spool,
        queue: SpanQueue,
        metrics: ServeMetrics,
        retry_after: float,
        *,
        budget: Budget,
        max_request_decoded_bytes: int,
        spool_only: bool = False,
    ) -> None:
        self._spool = spool
        self._spool_only = spool_only
        self._budget = budget
        self._max_decoded = max_request_decoded_bytes
        self._queue = queue
        self._metrics = metrics
        self._retry_after = retry_after
        self._closing = threading.Event()
        self._queue_refusing = False

    @property
    def queue_refusing(self) -> bool:
        """Whether the last request was refused ``queue_full`` and the queue still holds
        spans: a request sent now would be refused too (``/readyz`` says so).

        Why not only the queue's depth: a request is refused when *it* does not fit, so
        a queue short of full refuses every request larger than what is left; and why
        "still holds spans": once the assembler takes the queue, the next request fits.
        """
        return self._queue_refusing and self._queue.depth > 0

    def close(self) -> None:
        """Refuse new requests from now on (503/UNAVAILABLE); used at shutdown."""
        self._closing.set()

    @property
    def closing(self) -> bool:
        return self._closing.is_set()

    def decode_protobuf(
        self, body: bytes, origin: SourceRef
    ) -> tuple[list[SpanRecord], list[InputIssue]]:
        return decode_proto_request(parse_request(body), origin)

    def receive_protobuf(self, body: bytes, transport: str, origin: str) -> Accepted:
        """A protobuf request (gRPC, or HTTP after inflating): decoded and accepted, or —
        evaluation paused — spooled as it came (see :meth:`spool_raw`)."""
        if self._spool_only:
            return self.spool_raw(body, transport, origin)
        spans, issues = self.decode_protobuf(body, SourceRef(origin))
        del body
        return self.accept(spans, issues, transport, origin)

    def spool_raw(self, body: bytes, transport: str, origin: str) -> Accepted:
        """Evaluation paused: spool the request's bytes and acknowledge, decoding no span.

        Why: decoding every span into Python objects was most of the receiver's CPU, and
        with evaluation paused nothing needs them until the next start. What stays at the
        door: the body must parse as the envelope of an ``ExportTraceServiceRequest``
        (:mod:`aem.serve.envelope`, upb in C) — garbage is still INVALID_ARGUMENT / 400 —
        and its serialized size must fit ``max_request_decoded_bytes``. Spans refused
        later (an all-zero id, a span that is not a protobuf ``Span``) cannot be named in
        ``partial_success`` any more: they go to the dead-letter tables at the next start
        (:func:`aem.serve.rawrequests.settle_raw_requests`), the rest of their request is
        evaluated.
        """
        self._check_open(transport, 0)
        try:
            spans = count_spans(parse_envelope(body))
        except Exception as exc:
            raise BadRequest(
                f"body is not an OTLP ExportTraceServiceRequest protobuf: {exc}"
            ) from exc
        if not spans:
            return Accepted(0, "")
        if len(body) > self._max_decoded:
            self._refuse(transport, "too_large_decoded", spans)
            raise TooLarge(
                f"request of {len(body):,} bytes of spans (serialized), above the "
                f"decoded-bytes limit of {self._max_decoded:,}; refused (send smaller batches)"
            )
        try:
            self._spool.append_request(origin, spans, body)
        except Exception as exc:
            self._spool_failed(transport, spans, exc)
        self._metrics.spans_received.labels(transport).inc(spans)
        return Accepted(0, "")

    def decode_json(
        self, document: object, origin: SourceRef
    ) -> tuple[list[SpanRecord], list[InputIssue]]:
        try:
            return decode_json_traces(document, origin)  # type: ignore[arg-type]
        except (DecodeError, AttributeError, TypeError) as exc:
            raise BadRequest(f"body is not an OTLP/JSON trace request: {exc}") from exc

    def accept(
        self, spans: list[SpanRecord], issues: list[InputIssue], transport: str, origin: str
    ) -> Accepted:
        """Spool the spans and queue them for assembly; return the partial-success answer.

        Raises :class:`Busy` (nothing was written, nothing acknowledged) when there is no
        room or the server is shutting down, :class:`TooLarge` when the request decodes
        into more than ``max_request_decoded_bytes``.
        """
        issues = list(issues)
        spans = screen(spans, issues)
        answer = summarize(issues)
        if answer.rejected_spans:
            self._metrics.spans_rejected.labels("invalid").inc(answer.rejected_spans)
            log.warning(
                "spans rejected",
                extra={
                    "transport": transport,
                    "rejected": answer.rejected_spans,
                    "error": answer.error_message[:500],
                },
            )
        if not spans:
            return answer
        encoded = self._encode(spans, transport)
        sizes = [len(e) for e in encoded]
        if self._spool_only:
            # Evaluation paused: nothing is held in memory, so only the disk bounds it.
            self._append(spans, encoded, transport, lambda: None)
            self._metrics.spans_received.labels(transport).inc(len(spans))
            return answer
        try:
            admission = self._budget.admit(client_of(origin), spans, sizes)
        except OverBudget as exc:
            self._refuse(transport, exc.reason, len(spans))
            raise Busy(str(exc), self._retry_after) from exc
        if not self._queue.try_reserve(len(spans)):
            self._queue_refusing = True
            self._budget.rollback(admission)
            self._refuse(transport, "queue_full", len(spans))
            raise Busy(
                f"ingest queue full ({self._queue.depth} of {self._queue.capacity} spans); "
                "evaluation is behind, retry later",
                self._retry_after,
            )
        self._queue_refusing = False

        def undo() -> None:
            self._queue.release(len(spans))
            self._budget.rollback(admission)

        self._append(spans, encoded, transport, undo)
        self._queue.put_reserved(spans)
        self._metrics.spans_received.labels(transport).inc(len(spans))
        return answer

    def _encode(self, spans: list[SpanRecord], transport: str) -> list[bytes]:
        """The spans' spool bytes (their lengths weigh them), unless shutting down or the
        request decodes into more than one request may."""
        self._check_open(transport, len(spans))
        encoded = [encode_span(s) for s in spans]
        size = sum(map(len, encoded))
        if size > self._max_decoded:
            self._refuse(transport, "too_large_decoded", len(spans))
            raise TooLarge(
                f"request decodes into {size:,} bytes of spans, above the limit of "
                f"{self._max_decoded:,}; refused (send smaller batches)"
            )
        return encoded

    def _append(
        self,
        spans: list[SpanRecord],
        encoded: list[bytes],
        transport: str,
        undo: Callable[[], None],
    ) -> None:
        """Spool durably (the group commit returns once the spans are on disk); on a
        failure ``undo`` what was reserved and push back: nothing is acknowledged."""
        try:
            self._spool.append(spans, encoded)
        except Exception as exc:
            undo()
            self._spool_failed(transport, len(spans), exc)

    def _check_open(self, transport: str, spans: int) -> None:
        if self._closing.is_set():
            self._refuse(transport, "shutting_down", spans)
            raise Busy("server is shutting down", self._retry_after, unavailable=True)

    def _spool_failed(self, transport: str, spans: int, exc: Exception) -> NoReturn:
        """A spool write failed: push back (503), nothing is acknowledged."""
        self._refuse(transport, "spool_error", spans)
        log.warning("spool write failed; request refused", extra={"error": str(exc)})
        raise Busy(f"spool write failed: {exc}", self._retry_after, unavailable=True) from exc

    def _refuse(self, transport: str, reason: str, spans: int) -> None:
        self._metrics.requests_rejected.labels(transport, reason).inc()
        self._metrics.spans_rejected.labels(reason).inc(spans)
