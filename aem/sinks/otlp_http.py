"""OTLP/HTTP export of the OTLP sink's spans and events through the bounded POST.

Why not the SDK's ``OTLPSpanExporter`` / ``OTLPLogExporter`` (http): they read the
downstream's answer whole, with per-read timeouts, so a downstream answering 200 with an
endless body, or dripping it, held the server's memory or its delivery thread (and its
shutdown). The SDK's encoders still build the protobuf, so what goes out is byte for byte
what the SDK would send; only reading the answer is ours (:mod:`aem.sinks.http`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from aem.sinks.base import DeliveryError
from aem.sinks.http import BoundedHttp

log = logging.getLogger("aem.sinks.otlp")

PROTOBUF = "application/x-protobuf"


class OtlpHttpExporter:
    """``export`` for spans and log records alike, over one :class:`BoundedHttp`."""

    def __init__(self, http: BoundedHttp) -> None:
        self._http = http

    def export(
        self, batch: Sequence[ReadableSpan] | Sequence[ReadableLogRecord]
    ) -> SpanExportResult | LogRecordExportResult:
        """SUCCESS once the downstream answered 2xx; a failure says why in the log (the
        outbox keeps the batch and retries it)."""
        spans = bool(batch) and isinstance(batch[0], ReadableSpan)
        if spans:
            body = encode_spans(batch).SerializeToString()  # type: ignore[arg-type]
        else:
            body = encode_logs(batch).SerializeToString()  # type: ignore[arg-type]
        path = "/v1/traces" if spans else "/v1/logs"
        ok = self._post(path, body)
        if spans:
            return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE
        return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE

    def _post(self, path: str, body: bytes) -> bool:
        try:
            response = self._http.post(path, body, PROTOBUF)
        except DeliveryError as exc:
            log.warning("otlp export failed", extra={"path": path, "error": str(exc)})
            return False
        if not 200 <= response.status < 300:
            log.warning(
                "otlp export refused",
                extra={"path": path, "status": response.status, "body": response.text()},
            )
            return False
        return True

    def shutdown(self) -> None:
        self._http.close()
