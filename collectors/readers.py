"""Read OTLP trace data from files, directories and stdin, one record at a time.

Formats (each optionally gzipped, detected by magic bytes, not by name):

* the Collector file-exporter format: one ``ExportTraceServiceRequest`` JSON per line;
* a single OTLP/JSON document (pretty-printed or not);
* OTLP protobuf (``.pb``/``.binpb``): a single ``TracesData`` message, or the
  Collector's ``proto`` file format (each record behind a 4-byte big-endian length).

Reading streams: a JSONL file larger than memory is read line by line, and the caller
(the session assembler) decides how much to keep. A bad record becomes an
:class:`InputIssue` naming file and line; the next record is read as if nothing happened.

Memory is bounded whatever the input: no record (a line, a whole single document, one
protobuf message) is held beyond ``max_record_bytes``; a longer one is reported and
skipped up to the next newline without being kept, and a file that never reaches a
newline (``/dev/zero``, a gzip bomb of one endless line) is given up after a budget.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import stat
import struct
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from google.protobuf.message import DecodeError as ProtoDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from aem.foundation.model import InputIssue, SourceRef, SpanRecord
from collectors.otlp import (
    DEFAULT_MAX_ATTRIBUTE_BYTES,
    DecodeError,
    decode_json_traces,
    decode_proto_request,
)

TRACE_SUFFIXES = (".jsonl", ".json", ".ndjson", ".pb", ".binpb", ".proto", ".otlp")
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
# One record (a line, a single JSON document, one protobuf message) above this many
# bytes is reported and skipped: a Collector file-exporter line is a batch of a few MB.
DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
# Skipping an oversized record reads on to the next newline; past this many times the
# record limit without one, the rest of the file is given up (an endless line).
_SKIP_BUDGET_RECORDS = 16
_CHUNK = 1024 * 1024
# What a failing read of a (compressed) file raises: a truncated gzip stream ends in
# EOFError, a corrupt one in zlib.error, a bad header in gzip.BadGzipFile (an OSError).
_READ_ERRORS = (OSError, EOFError, zlib.error)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(slots=True)
class Batch:
    """The spans of one input record and whatever went wrong decoding it."""

    spans: list[SpanRecord]
    issues: list[InputIssue] = field(default_factory=list)
    source: str = ""
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """How much of the input one record may cost (see the module docstring)."""

    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    max_attribute_bytes: int = DEFAULT_MAX_ATTRIBUTE_BYTES

    @property
    def skip_budget(self) -> int:
        return self.max_record_bytes * _SKIP_BUDGET_RECORDS


def expand_paths(paths: Iterable[str | Path]) -> list[str]:
    """Files named directly, plus trace files found under directories (sorted, recursive)."""
    return find_trace_files(paths)[0]


def find_trace_files(paths: Iterable[str | Path]) -> tuple[list[str], list[InputIssue]]:
    """Like :func:`expand_paths`, and what could not be walked: a sub-directory that
    cannot be read, or a trace-named entry that is not a regular file (a FIFO, a device:
    read only when named directly, or ``aem audit dir/`` could block or never end)."""
    out: list[str] = []
    issues: list[InputIssue] = []
    for raw in paths:
        if str(raw) == "-":
            out.append("-")
        elif Path(raw).is_dir():
            out.extend(str(p) for p in sorted(_walk_directory(Path(raw), issues)))
        else:
            out.append(str(raw))
    return out, issues


def _walk_directory(root: Path, issues: list[InputIssue]) -> Iterator[Path]:
    seen: set[tuple[int, int]] = set()

    def unreadable(exc: OSError) -> None:
        where = exc.filename or str(root)
        issues.append(_issue("unreadable", f"directory skipped: {exc.strerror}", where, None))

    for folder, dirs, files in os.walk(root, onerror=unreadable, followlinks=True):
        try:
            info = os.stat(folder)
        except OSError as exc:
            unreadable(exc)
            dirs.clear()
            continue
        if (info.st_dev, info.st_ino) in seen:  # a symlink loop
            dirs.clear()
            continue
        seen.add((info.st_dev, info.st_ino))
        for name in files:  # os.walk lists devices, FIFOs and broken links with the files
            if name.lower().removesuffix(".gz").endswith(TRACE_SUFFIXES):
                path = Path(folder, name)
                if _is_regular(path, issues):
                    yield path


def _is_regular(path: Path, issues: list[InputIssue]) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        issues.append(_issue("unreadable", f"cannot open: {exc.strerror}", str(path), None))
        return False
    if stat.S_ISREG(mode):
        return True
    issues.append(
        _issue(
            "not_regular_file",
            "skipped: not a regular file (name it directly to read it)",
            str(path),
            None,
        )
    )
    return False


def _open_binary(path: str) -> IO[bytes]:
    # A 1 MiB buffer: skipping an endless line is a few syscalls per MiB, not a hundred.
    raw: IO[bytes] = (
        sys.stdin.buffer if path == "-" else open(path, "rb", buffering=_CHUNK)  # noqa: SIM115
    )
    head = raw.peek(2)[:2] if isinstance(raw, io.BufferedReader) else b""
    if head == _GZIP_MAGIC:
        # GzipFile reads every member of a multi-member file (`gzip -c a b`), not the first.
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


def _issue(kind: str, message: str, source: str, line: int | None, skipped: int = 0) -> InputIssue:
    return InputIssue(kind=kind, message=message, source=source, line=line, spans_skipped=skipped)


def read_batches(
    path: str,
    *,
    max_attribute_bytes: int = DEFAULT_MAX_ATTRIBUTE_BYTES,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
) -> Iterator[Batch]:
    """Yield one :class:`Batch` per record of one file (or ``-`` for stdin).

    Never raises for what is in the file: an unreadable, corrupt or truncated file ends
    in an ``unreadable`` issue naming it, after the records read before the fault.
    """
    source = "<stdin>" if path == "-" else path
    limits = ReadLimits(max_record_bytes, max_attribute_bytes)
    try:
        stream = _open_binary(path)
    except _READ_ERRORS as exc:
        yield Batch([], [_issue("unreadable", f"cannot open: {_reason(exc)}", source, None)])
        return
    position = _Position()
    with stream:
        name = path.lower().removesuffix(".gz")
        reader = _read_proto if name.endswith((".pb", ".binpb", ".proto")) else _read_json
        try:
            yield from reader(stream, source, limits, position)
        except _READ_ERRORS as exc:
            where = f" after record {position.record}" if position.record else ""
            yield Batch(
                [],
                [_issue("unreadable", f"read failed{where}: {_reason(exc)}", source, None)],
            )


@dataclass(slots=True)
class _Position:
    """The last record read, so a read error can say how far the file was read."""

    record: int = 0


def _reason(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return f"compressed data ends early (truncated file): {exc}"
    if isinstance(exc, zlib.error | gzip.BadGzipFile):
        return f"corrupt compressed data: {exc}"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _too_large(source: str, line: int, size: int, limits: ReadLimits, note: str = "") -> Batch:
    message = (
        f"record of {size:,} bytes is larger than max_record_bytes "
        f"({limits.max_record_bytes:,}); skipped{note}"
    )
    return Batch([], [_issue("record_too_large", message, source, line)], source, line)


def _lines(stream: IO[bytes], limits: ReadLimits) -> Iterator[tuple[int, bytes | None, int]]:
    """``(line number, line, size)``; an oversized line comes as ``None`` with its size
    (negative when no newline came within the skip budget: the caller stops there)."""
    number = 0
    while line := stream.readline(limits.max_record_bytes + 1):
        number += 1
        if len(line) <= limits.max_record_bytes or line.endswith(b"\n"):
            yield number, line, len(line)
            continue
        size = len(line)
        while size <= limits.skip_budget:
            chunk = stream.readline(_CHUNK)
            size += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                break
        else:
            yield number, None, -size
            return
        yield number, None, size


def _read_json(
    stream: IO[bytes], source: str, limits: ReadLimits, position: _Position
) -> Iterator[Batch]:
    first = True
    for number, line, size in _lines(stream, limits):
        position.record = number
        if line is None:
            endless = "; no newline within the skip budget, the rest of the file skipped"
            yield _too_large(source, number, abs(size), limits, endless if size < 0 else "")
            continue
        if not line.strip():
            continue
        notes: list[InputIssue] = []
        if first:
            first = False
            if line.startswith(_BOM):
                line = line[len(_BOM) :]
                notes.append(_issue("utf8_bom", "UTF-8 byte-order mark ignored", source, number))
            if line.strip() in (b"{", b"["):
                # Not one document per line: a pretty-printed single document.
                yield _read_document(stream, line, source, limits, notes)
                return
        batch = _decode_json_line(line, source, number, limits.max_attribute_bytes)
        batch.issues[:0] = notes
        yield batch


def _read_document(
    stream: IO[bytes], first: bytes, source: str, limits: ReadLimits, notes: list[InputIssue]
) -> Batch:
    rest = stream.read(limits.max_record_bytes - len(first) + 1)
    if len(first) + len(rest) > limits.max_record_bytes:
        note = " (a single JSON document is read whole: split it into one record per line)"
        return _too_large(source, 1, len(first) + len(rest), limits, note)
    batch = _decode_json_line(first + rest, source, 1, limits.max_attribute_bytes)
    batch.issues[:0] = notes
    return batch


def _decode_json_line(data: bytes, source: str, number: int, max_attribute_bytes: int) -> Batch:
    try:
        document = orjson.loads(data)
        issues: list[InputIssue] = []
    except orjson.JSONDecodeError as exc:
        parsed = _lenient_json(data, source, number)
        if parsed is None:
            text = data.decode("utf-8", errors="replace")
            kind = "truncated_json" if _looks_truncated(text) else "bad_json"
            return Batch([], [_issue(kind, f"not valid JSON: {exc}", source, number)])
        document, issues = parsed
    other = _other_signal(document)
    if other is not None:
        message = f"an OTLP {other} record, not traces: nothing in it to evaluate"
        return Batch([], [*issues, _issue("not_traces", message, source, number)])
    origin = SourceRef(source, number)
    try:
        spans, span_issues = decode_json_traces(
            document, origin, max_attribute_bytes=max_attribute_bytes
        )
    except DecodeError as exc:
        return Batch([], [*issues, _issue("not_otlp", str(exc), source, number)])
    return Batch(spans, issues + span_issues, source, number)


def _other_signal(document: Any) -> str | None:
    """``"logs"`` or ``"metrics"`` for an OTLP record of that signal: a logs file next to
    the traces in a directory is reported as such, not read as an empty trace file."""
    if not isinstance(document, dict) or "resourceSpans" in document:
        return None
    for key, signal in (("resourceLogs", "logs"), ("resourceMetrics", "metrics")):
        if key in document:
            return signal
    return None


def _lenient_json(data: bytes, source: str, number: int) -> tuple[Any, list[InputIssue]] | None:
    """Salvage what strict JSON refuses but a record can be read from, each reported: a
    stray non-UTF-8 byte (replaced with U+FFFD), a lone UTF-16 surrogate escape (replaced
    with U+FFFD), a bare ``NaN``/``Infinity`` (read as the string proto3 JSON uses).
    One bad character must not cost a whole record."""
    issues: list[InputIssue] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        issues.append(
            _note("invalid_utf8", "invalid UTF-8 bytes replaced with U+FFFD", source, number)
        )
    constants: list[str] = []

    def constant(name: str) -> str:
        constants.append(name)
        return name

    try:
        document = json.loads(text, parse_constant=constant)
    except (ValueError, RecursionError):
        return None
    surrogates = [0]
    document = _replace_surrogates(document, surrogates)
    if surrogates[0]:
        message = f"{surrogates[0]} string(s) with a lone UTF-16 surrogate, replaced with U+FFFD"
        issues.append(_note("lone_surrogate", message, source, number))
    if constants:
        message = f"bare {', '.join(sorted(set(constants)))} read as a string"
        issues.append(_note("non_standard_json", message, source, number))
    return document, issues


def _note(kind: str, message: str, source: str, number: int) -> InputIssue:
    return _issue(kind, f"{message}; the record was kept", source, number)


def _replace_surrogates(node: Any, count: list[int]) -> Any:
    if isinstance(node, str):
        fixed, n = _LONE_SURROGATE.subn("\ufffd", node)
        count[0] += bool(n)
        return fixed
    if isinstance(node, list):
        return [_replace_surrogates(item, count) for item in node]
    if isinstance(node, dict):
        return {
            _replace_surrogates(key, count): _replace_surrogates(value, count)
            for key, value in node.items()
        }
    return node


def _looks_truncated(text: str) -> bool:
    stripped = text.rstrip()
    return stripped.startswith("{") and stripped.count("{") > stripped.count("}")


def _read_proto(
    stream: IO[bytes], source: str, limits: ReadLimits, position: _Position
) -> Iterator[Batch]:
    """A single ``TracesData`` message, or the Collector's ``proto`` file format (records
    behind 4-byte big-endian lengths). A file within ``max_record_bytes`` is read whole
    and its framing checked; a larger one can only be the framed format, read record by
    record."""
    data = stream.read(limits.max_record_bytes + 1)
    if len(data) <= limits.max_record_bytes:
        stream.read(1)  # a truncated gzip stream raises here, not in the short read above
        for number, record in enumerate(_split_frames(data), start=1):
            position.record = number
            yield _decode_proto(record, source, number, limits)
        return
    yield from _read_frames(io.BytesIO(data), stream, source, limits, position)


def _split_frames(data: bytes) -> list[bytes]:
    records: list[bytes] = []
    offset = 0
    while offset + 4 <= len(data):
        (length,) = struct.unpack_from(">I", data, offset)
        if length == 0 or offset + 4 + length > len(data):
            return [data]
        records.append(data[offset + 4 : offset + 4 + length])
        offset += 4 + length
    return records if records and offset == len(data) else [data]


def _read_frames(
    head: IO[bytes], stream: IO[bytes], source: str, limits: ReadLimits, position: _Position
) -> Iterator[Batch]:
    def take(n: int) -> bytes:
        part = head.read(n)
        return part + stream.read(n - len(part)) if len(part) < n else part

    number = 0
    while prefix := take(4):
        number += 1
        position.record = number
        length = struct.unpack(">I", prefix)[0] if len(prefix) == 4 else 0
        if length == 0:
            message = (
                f"larger than max_record_bytes ({limits.max_record_bytes:,}) and not in "
                "the length-prefixed proto file format; the rest of the file skipped"
            )
            yield Batch([], [_issue("record_too_large", message, source, number)])
            return
        if length > limits.max_record_bytes:
            for done in range(0, length, _CHUNK):  # skipped, never held whole
                if len(take(min(_CHUNK, length - done))) < min(_CHUNK, length - done):
                    raise EOFError(f"record {number} of {length:,} bytes ends early")
            yield _too_large(source, number, length, limits)
            continue
        record = take(length)
        if len(record) < length:
            raise EOFError(f"record {number} ends after {len(record):,} of {length:,} bytes")
        yield _decode_proto(record, source, number, limits)


def _decode_proto(record: bytes, source: str, number: int, limits: ReadLimits) -> Batch:
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(record)
    except ProtoDecodeError as exc:
        return Batch([], [_issue("bad_protobuf", f"not OTLP protobuf: {exc}", source, number)])
    spans, issues = decode_proto_request(
        request, SourceRef(source, number), max_attribute_bytes=limits.max_attribute_bytes
    )
    return Batch(spans, issues, source, number)
