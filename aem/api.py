"""The public library entry points that take user input: paths as ``str`` or ``Path``,
spans as the OTel SDK or OTLP protobuf hands them over.

Why a module of its own: the audit and the cases loader take what the CLI gives them
(lists of strings, a ``Path``); a library user passes whatever they have, and a single
string must be one path, not an iterable of one-character paths. Validation of that
kind lives here, once, and ``aem`` re-exports these names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from aem import audit as _audit
from aem import cases as _cases
from aem.cases import Case
from aem.evaluate import Evaluator
from aem.foundation.model import AuditReport, Session, SpanRecord
from aem.settings import AemConfig
from collectors.otlp import decode_proto_request
from collectors.reading import assemble_all

PathLike = str | Path


def _path_list(paths: PathLike | Iterable[PathLike]) -> list[str]:
    """One path or several, as strings; a missing one raises ``FileNotFoundError``."""
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    out = [str(p) for p in items]
    missing = [p for p in out if p != "-" and not Path(p).exists()]
    if missing:
        raise FileNotFoundError(f"no such file or directory: {', '.join(missing)}")
    return out


def audit_paths(paths: PathLike | Iterable[PathLike], **options: Any) -> AuditReport:
    """Audit trace files or directories, exactly as ``aem audit`` does.

    ``paths`` is one path (``str`` or ``Path``) or a list of them; ``options`` are those
    of :func:`aem.audit.audit_paths` (``config``, ``workers``...); ``cases`` is a cases
    file's path, or the ``{session_id: Case}`` :func:`load_cases` returns.

    >>> audit_paths("no/such/dir")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no such file or directory: no/such/dir
    >>> audit_paths([], cases=42)
    Traceback (most recent call last):
    ...
    TypeError: cases: a cases file's path or {session_id: Case}, not int
    """
    cases = options.get("cases")
    if isinstance(cases, str | Path):
        options["cases"] = load_cases(cases)
    elif cases is not None and not isinstance(cases, Mapping):
        raise TypeError(
            f"cases: a cases file's path or {{session_id: Case}}, not {type(cases).__name__}"
        )
    return _audit.audit_paths(_path_list(paths), **options)


def load_cases(path: PathLike) -> dict[str, Case]:
    """``{session_id: Case}`` from a JSONL or YAML cases file; a missing file raises
    ``FileNotFoundError``, a malformed one :class:`aem.cases.CasesError`."""
    found = Path(path)
    if not found.is_file():
        raise FileNotFoundError(f"no such cases file: {found}")
    return _cases.load_cases(found)


def sessions_from_spans(spans: Iterable[Any], config: AemConfig | None = None) -> list[Session]:
    """Sessions from spans in memory, built as ``aem audit`` builds them from files
    (:func:`collectors.reading.assemble_all`: the session assembler with the
    ``[assembly]`` span limit, then :meth:`Evaluator.build`), sorted by session id.

    ``spans`` may mix OTel SDK ``ReadableSpan`` objects (e.g. from an
    ``InMemorySpanExporter``), OTLP protobuf ``ExportTraceServiceRequest`` / ``TracesData``
    messages and ``ResourceSpans`` messages. Pass each session to
    :func:`aem.evaluate_session`.
    """
    config = config or AemConfig()
    closed = assemble_all(_records(spans), config.assembly.span_limit)
    builder = Evaluator(config, metrics=[])
    sessions = [builder.build(session) for session in closed]
    return sorted(sessions, key=lambda s: s.session_id)


def _records(spans: Iterable[Any]) -> list[SpanRecord]:
    """Every span as a ``SpanRecord``, through the same OTLP decoder the readers use."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, TracesData
    from opentelemetry.sdk.trace import ReadableSpan

    records: list[SpanRecord] = []
    sdk_spans: list[ReadableSpan] = []
    for item in spans:
        if isinstance(item, ReadableSpan):
            sdk_spans.append(item)
            continue
        if isinstance(item, ResourceSpans):
            item = TracesData(resource_spans=[item])
        if not hasattr(item, "resource_spans"):
            raise TypeError(
                f"expected ReadableSpan, ExportTraceServiceRequest, TracesData or "
                f"ResourceSpans, got {type(item).__name__}"
            )
        records.extend(decode_proto_request(item)[0])
    if sdk_spans:
        records.extend(decode_proto_request(encode_spans(sdk_spans))[0])
    return records
