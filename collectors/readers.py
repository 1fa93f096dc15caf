"""Read OTLP trace data from files, directories and stdin, one record at a time.

Formats (each optionally gzipped, detected by magic bytes, not by name):

* the Collector file-exporter format: one ``ExportTraceServiceRequest`` JSON per line;
* a single OTLP/JSON document (pretty-printed or not);
* OTLP protobuf (``.pb``/``.binpb``): a single ``TracesData`` message, or the
  Collector's ``proto`` file format (each record behind a 4-byte big-endian length).

Reading streams: a JSONL file larger than memory is read line by line, and the caller
(the session assembler) decides how much to keep. A bad record becomes an
:class:`InputIssue` naming file and line; the next record is read as if nothing happened.
"""

from __future__ import annotations

import gzip
import io
import struct
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import orjson
from google.protobuf.message import DecodeError as ProtoDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from aem.model import InputIssue, SourceRef, SpanRecord
from collectors.otlp import (
    DEFAULT_MAX_ATTRIBUTE_BYTES,
    DecodeError,
    decode_json_traces,
    decode_proto_request,
)

TRACE_SUFFIXES = (".jsonl", ".json", ".ndjson", ".pb", ".binpb", ".proto", ".otlp")
_GZIP_MAGIC = b"\x1f\x8b"
# A single-document JSON file is read whole; above this size only the line-per-record
# format is accepted (a single multi-GB JSON document cannot be streamed).
_MAX_SINGLE_DOCUMENT_BYTES = 512 * 1024 * 1024


@dataclass(slots=True)
class Batch:
    """The spans of one input record and whatever went wrong decoding it."""

    spans: list[SpanRecord]
    issues: list[InputIssue] = field(default_factory=list)
    source: str = ""
    line: int | None = None


def expand_paths(paths: Iterable[str | Path]) -> list[str]:
    """Files named directly, plus trace files found under directories (sorted, recursive)."""
    out: list[str] = []
    for raw in paths:
        if str(raw) == "-":
            out.append("-")
            continue
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                name = child.name.lower().removesuffix(".gz")
                if child.is_file() and name.endswith(TRACE_SUFFIXES):
                    out.append(str(child))
        else:
            out.append(str(path))
    return out


def _open_binary(path: str) -> IO[bytes]:
    raw: IO[bytes] = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
    head = raw.peek(2)[:2] if isinstance(raw, io.BufferedReader) else b""
    if head == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


def _issue(kind: str, message: str, source: str, line: int | None, skipped: int = 0) -> InputIssue:
    return InputIssue(kind=kind, message=message, source=source, line=line, spans_skipped=skipped)


def _decode_json_line(data: bytes, source: str, number: int, max_attribute_bytes: int) -> Batch:
    issues: list[InputIssue] = []
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            # Salvage: a stray byte in one attribute must not cost the whole record.
            text = data.decode("utf-8", errors="replace")
            try:
                document = orjson.loads(text)
            except orjson.JSONDecodeError:
                return Batch([], [_issue("bad_json", f"not valid JSON: {exc}", source, number)])
            issues.append(
                _issue(
                    "invalid_utf8",
                    "invalid UTF-8 bytes replaced with U+FFFD; the record was kept",
                    source,
                    number,
                )
            )
        else:
            kind = "truncated_json" if _looks_truncated(text) else "bad_json"
            return Batch([], [_issue(kind, f"not valid JSON: {exc}", source, number)])
    origin = SourceRef(source, number)
    try:
        spans, span_issues = decode_json_traces(
            document, origin, max_attribute_bytes=max_attribute_bytes
        )
    except DecodeError as exc:
        return Batch([], [_issue("not_otlp", str(exc), source, number)])
    return Batch(spans, issues + span_issues, source, number)


def _looks_truncated(text: str) -> bool:
    stripped = text.rstrip()
    return stripped.startswith("{") and stripped.count("{") > stripped.count("}")


def _read_proto(stream: IO[bytes], source: str, max_attribute_bytes: int) -> Iterator[Batch]:
    data = stream.read()
    # The Collector's `proto` format: records behind 4-byte big-endian lengths.
    records: list[bytes] = []
    offset = 0
    while offset + 4 <= len(data):
        (length,) = struct.unpack_from(">I", data, offset)
        if length == 0 or offset + 4 + length > len(data):
            records = []
            break
        records.append(data[offset + 4 : offset + 4 + length])
        offset += 4 + length
    if not records or offset != len(data):
        records = [data]
    for number, record in enumerate(records, start=1):
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(record)
        except ProtoDecodeError as exc:
            yield Batch([], [_issue("bad_protobuf", f"not OTLP protobuf: {exc}", source, number)])
            continue
        spans, issues = decode_proto_request(
            request, SourceRef(source, number), max_attribute_bytes=max_attribute_bytes
        )
        yield Batch(spans, issues, source, number)


def read_batches(
    path: str, *, max_attribute_bytes: int = DEFAULT_MAX_ATTRIBUTE_BYTES
) -> Iterator[Batch]:
    """Yield one :class:`Batch` per record of one file (or ``-`` for stdin)."""
    source = "<stdin>" if path == "-" else path
    try:
        stream = _open_binary(path)
    except OSError as exc:
        yield Batch([], [_issue("unreadable", f"cannot open: {exc}", source, None)])
        return
    with stream:
        name = path.lower().removesuffix(".gz")
        if name.endswith((".pb", ".binpb", ".proto")):
            yield from _read_proto(stream, source, max_attribute_bytes)
            return
        yield from _read_json(stream, source, max_attribute_bytes)


def _read_json(stream: IO[bytes], source: str, max_attribute_bytes: int) -> Iterator[Batch]:
    first = True
    number = 0
    try:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            if first:
                first = False
                if line.strip() in (b"{", b"["):
                    # Not one document per line: a pretty-printed single document.
                    rest = stream.read(_MAX_SINGLE_DOCUMENT_BYTES)
                    yield _decode_json_line(line + rest, source, 1, max_attribute_bytes)
                    return
            yield _decode_json_line(line, source, number, max_attribute_bytes)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        yield Batch([], [_issue("unreadable", f"read failed: {exc}", source, number or None)])
