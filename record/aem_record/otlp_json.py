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

Each ``export`` call appends whole lines and hands them to the operating system, under a
lock (a ``BatchSpanProcessor`` exports from its own thread). A write that fails half-way
(a full disk, a file-size limit) is cut back to where it began, so a failed export leaves
no half line in the middle of the file; a file a crashed process left ending in half a
line is ended with a line break before the next line is appended (the half line is a
record the reader reports, and everything after it reads).

No line is longer than :data:`MAX_LINE_BYTES`, the most AEM's reader takes as one record
(``aem audit --max-record-bytes``, 64 MiB): a batch over it is written span by span, and a
span still over it has its long string attributes cut to :data:`MAX_VALUE_CHARS`
characters (a sixteenth of the limit, when that is less), each cut said in the value and
the keys named in the span's ``aem_record.truncated`` attribute. A span that no cut
brings under the limit is refused (the export fails, as the SDK expects of a span that
was not written).

It imports the OpenTelemetry SDK, its OTLP encoder and protobuf, nothing else: this module
runs inside the agent, where the evaluator is not installed.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["OtlpJsonFileExporter", "otlp_json"]

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")
# AEM's reader's default record limit (collectors.readers.DEFAULT_MAX_RECORD_BYTES).
MAX_LINE_BYTES = 64 * 1024 * 1024
# What is kept of a string attribute cut to bring a span under the line limit.
MAX_VALUE_CHARS = 1024 * 1024
TRUNCATED_KEY = "aem_record.truncated"


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


def _line(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _cut_strings(node: Any, cap: int, cut: list[str], key: str = "") -> None:
    """Every ``stringValue`` longer than ``cap`` under ``node`` cut to ``cap`` characters
    (with a note of how much was cut); the attribute keys cut are added to ``cut``."""
    if isinstance(node, dict):
        text = node.get("stringValue")
        if isinstance(text, str) and len(text) > cap:
            node["stringValue"] = (
                f"{text[:cap]}…[aem_record: {len(text) - cap:,} more characters cut]"
            )
            cut.append(key)
        named = node.get("key")
        name = named if isinstance(named, str) else key
        for child_key, child in node.items():
            if child_key != "stringValue":
                _cut_strings(child, cap, cut, name)
    elif isinstance(node, list):
        for item in node:
            _cut_strings(item, cap, cut, key)


def _truncated(document: dict[str, Any], cap: int) -> dict[str, Any]:
    """A one-span document with its long string attributes cut, the cut keys named."""
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                cut: list[str] = []
                _cut_strings(span, cap, cut)
                if cut:
                    span.setdefault("attributes", []).append(
                        {"key": TRUNCATED_KEY, "value": {"stringValue": ",".join(cut)}}
                    )
    return document


class OtlpJsonFileExporter(SpanExporter):
    """Appends each exported batch to ``path`` as OTLP/JSON lines (one, unless the batch
    is over ``max_line_bytes``: then one a span).

    ``mode="w"`` starts the file afresh: for a script that re-runs under the same
    conversation id, appending would put two runs in one session (AEM says so, ``runs``,
    but a fresh file is what the developer meant).
    """

    def __init__(
        self,
        path: str | Path,
        mode: Literal["a", "w"] = "a",
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_line_bytes = max_line_bytes
        self._lock = threading.Lock()
        how = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if mode == "w" else 0)
        self._fd: int | None = os.open(self.path, how | os.O_CLOEXEC, 0o644)
        self._torn_tail = self._ends_mid_line()

    def _ends_mid_line(self) -> bool:
        """Whether the file ends in half a line (a crashed writer's)."""
        try:
            with self.path.open("rb") as existing:
                if existing.seek(0, os.SEEK_END) == 0:
                    return False
                existing.seek(-1, os.SEEK_END)
                return existing.read(1) != b"\n"
        except OSError:
            return False

    def _lines(self, spans: Sequence[ReadableSpan]) -> Iterator[bytes | None]:
        """The batch as lines within the limit (``None`` for a span no cut brings under
        it)."""
        line = _line(otlp_json(spans))
        if len(line) <= self.max_line_bytes:
            yield line
        elif len(spans) > 1:
            for span in spans:
                yield from self._lines([span])
        else:
            cap = min(MAX_VALUE_CHARS, self.max_line_bytes // 16)
            cut = _line(_truncated(otlp_json(spans), cap))
            yield cut if len(cut) <= self.max_line_bytes else None

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        lines = list(self._lines(spans))
        data = b"".join(line for line in lines if line is not None)
        with self._lock:
            if self._fd is None:
                return SpanExportResult.FAILURE  # shut down: the SDK says so, not us
            if self._torn_tail:
                data = b"\n" + data
            if not self._write_whole(self._fd, data):
                return SpanExportResult.FAILURE
            self._torn_tail = False
        return SpanExportResult.SUCCESS if None not in lines else SpanExportResult.FAILURE

    @staticmethod
    def _write_whole(fd: int, data: bytes) -> bool:
        """``data`` appended whole, or not at all: a write that fails part-way is cut
        back to where it began (a shorter file needs no space)."""
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            return False
        return True

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # each export is written to the operating system before it returns

    def shutdown(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
