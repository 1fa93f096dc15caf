"""Record an agent's spans to a file ``aem audit`` reads, without a Collector.

``OtlpJsonFileExporter`` is an OpenTelemetry SDK ``SpanExporter`` that writes what the
Collector's file exporter writes: one ``ExportTraceServiceRequest`` as OTLP/JSON per line,
with **hex** trace and span ids. Why not ``MessageToJson`` of the protobuf: proto3's JSON
mapping writes ``bytes`` as base64, and OTLP/JSON says ids are hex — a file of base64 ids
is refused by every OTLP/JSON reader, AEM's included. The spans are encoded by the same
encoder the SDK's OTLP exporters use, so the file holds exactly what they would send::

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from aem_record import OtlpJsonFileExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter("traces.jsonl")))

Each ``export`` call appends one line and flushes it, under a lock (a
``BatchSpanProcessor`` exports from its own thread), so a crash loses at most the batch
being written and never leaves half a line in the middle of the file.

It imports the OpenTelemetry SDK, its OTLP encoder and protobuf, nothing else: this module
runs inside the agent, where the evaluator is not installed.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Literal

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["OtlpJsonFileExporter", "otlp_json"]

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(node: Any) -> None:
    """Every id field under ``node`` from proto3-JSON base64 to OTLP/JSON hex, in place."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_FIELDS and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """SDK spans as one OTLP/JSON ``ExportTraceServiceRequest`` (hex ids, integer enums)."""
    document = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    _hex_ids(document)
    return document


class OtlpJsonFileExporter(SpanExporter):
    """Appends each exported batch to ``path`` as one OTLP/JSON line.

    ``mode="w"`` starts the file afresh: for a script that re-runs under the same
    conversation id, appending would put two runs in one session (AEM says so, ``runs``,
    but a fresh file is what the developer meant).
    """

    def __init__(self, path: str | Path, mode: Literal["a", "w"] = "a") -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._file: IO[str] | None = self.path.open(mode, encoding="utf-8")

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        line = json.dumps(otlp_json(spans), separators=(",", ":"), ensure_ascii=False)
        with self._lock:
            if self._file is None:
                return SpanExportResult.FAILURE  # shut down: the SDK says so, not us
            try:
                self._file.write(line + "\n")
                self._file.flush()
            except OSError:
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        with self._lock:
            if self._file is not None:
                self._file.flush()
        return True

    def shutdown(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
