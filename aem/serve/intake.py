"""The receive path shared by gRPC and HTTP: decode, admit, spool, hand over, answer.

Why one place: both transports must give the same answers — the same partial-success
counts, the same push-back when full, the same "never acknowledge what is not on disk".
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from aem.model import InputIssue, SourceRef, SpanRecord
from aem.serve.ops import ServeMetrics
from aem.serve.queues import SpanQueue
from aem.serve.spool import Spool
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
        self, spool: Spool, queue: SpanQueue, metrics: ServeMetrics, retry_after: float
    ) -> None:
        self._spool = spool
        self._queue = queue
        self._metrics = metrics
        self._retry_after = retry_after
        self._closing = threading.Event()

    def close(self) -> None:
        """Refuse new requests from now on (503/UNAVAILABLE); used at shutdown."""
        self._closing.set()

    @property
    def closing(self) -> bool:
        return self._closing.is_set()

    def decode_protobuf(
        self, body: bytes, origin: SourceRef
    ) -> tuple[list[SpanRecord], list[InputIssue]]:
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except Exception as exc:  # protobuf raises DecodeError / RuntimeWarning-like types
            raise BadRequest(
                f"body is not an OTLP ExportTraceServiceRequest protobuf: {exc}"
            ) from exc
        return decode_proto_request(request, origin)

    def decode_json(
        self, document: object, origin: SourceRef
    ) -> tuple[list[SpanRecord], list[InputIssue]]:
        try:
            return decode_json_traces(document, origin)  # type: ignore[arg-type]
        except (DecodeError, AttributeError, TypeError) as exc:
            raise BadRequest(f"body is not an OTLP/JSON trace request: {exc}") from exc

    def accept(self, spans: list[SpanRecord], issues: list[InputIssue], transport: str) -> Accepted:
        """Spool the spans and queue them for assembly; return the partial-success answer.

        Raises :class:`Busy` (nothing was written, nothing acknowledged) when there is no
        room or the server is shutting down.
        """
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
        if self._closing.is_set():
            self._refuse(transport, "shutting_down", len(spans))
            raise Busy("server is shutting down", self._retry_after, unavailable=True)
        if not self._queue.try_reserve(len(spans)):
            self._refuse(transport, "queue_full", len(spans))
            raise Busy(
                f"ingest queue full ({self._queue.depth} of {self._queue.capacity} spans); "
                "evaluation is behind, retry later",
                self._retry_after,
            )
        try:
            self._spool.append(spans)
        except Exception as exc:
            self._queue.release(len(spans))
            self._refuse(transport, "spool_error", len(spans))
            log.exception("spool write failed")
            raise Busy(f"spool write failed: {exc}", self._retry_after, unavailable=True) from exc
        self._queue.put_reserved(spans)
        self._metrics.spans_received.labels(transport).inc(len(spans))
        return answer

    def _refuse(self, transport: str, reason: str, spans: int) -> None:
        self._metrics.requests_rejected.labels(transport, reason).inc()
        self._metrics.spans_rejected.labels(reason).inc(spans)
