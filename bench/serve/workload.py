"""The sample mix and the unique-text mix as pre-encoded OTLP requests, fresh ids per copy.

Why pre-encoded: one OTel SDK sender process encodes only 11–14 k spans/s (pure-Python
protobuf encoding, measured on the 2-core development machine), so a load test that
encodes while sending measures the sender.
Each copy of a sample session gets new trace/span ids and a new session id, so the
server sees N distinct sessions of the real shapes (dialects, parallel tools, sub-agents).
But their texts repeat: after the first copy every embedding is a cache hit. The
*unique-text* mix (:func:`unique_copies`) is production-like instead: sessions of
:mod:`bench.domains` (12 businesses, 4 languages, tool calls with message histories), each
with its own dates, amounts, references and people, so no message repeats across copies.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collectors.dialects.registry import session_keys

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
# The attributes the assembler keys sessions by: every registered dialect's session keys.
SESSION_KEYS = frozenset(session_keys())


def sample_requests(samples: Path = SAMPLES) -> list[tuple[str, list[ExportTraceServiceRequest]]]:
    """``(session id, its protobuf requests, one per line)`` for every sample session.

    A sample file may hold several sessions (the help-desk file holds seven): its lines are
    grouped by session, in file order, so each copy is one whole session. A line whose spans
    carry no session key belongs to the session of the trace it is part of."""
    out: list[tuple[str, list[ExportTraceServiceRequest]]] = []
    for path in sorted(samples.glob("*.otlp.jsonl")):
        requests = [_parse(line) for line in path.read_text().splitlines() if line.strip()]
        session_of_trace: dict[bytes, str] = {}
        for request in requests:
            session = _session_of(request)
            for trace in _trace_ids(request) if session else ():
                session_of_trace.setdefault(trace, session)
        sessions: dict[str, list[ExportTraceServiceRequest]] = {}
        for request in requests:
            traces = [session_of_trace[t] for t in _trace_ids(request) if t in session_of_trace]
            session = _session_of(request) or (traces[0] if traces else path.stem)
            sessions.setdefault(session, []).append(request)
        out.extend(sessions.items())
    return out


def _parse(line: str) -> ExportTraceServiceRequest:
    from google.protobuf import json_format

    doc = json.loads(line)
    _hex_to_b64(doc)
    request = ExportTraceServiceRequest()
    json_format.ParseDict(doc, request, ignore_unknown_fields=True)
    return request


def _trace_ids(request: ExportTraceServiceRequest) -> list[bytes]:
    return [
        span.trace_id for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans
    ]


def _hex_to_b64(node: object) -> None:
    """OTLP/JSON ids are hex; generic protobuf JSON parsing expects base64 for bytes."""
    import base64

    if isinstance(node, dict):
        for key, value in node.items():
            if key in {"traceId", "spanId", "parentSpanId"} and isinstance(value, str):
                node[key] = base64.b64encode(bytes.fromhex(value)).decode() if value else ""
            else:
                _hex_to_b64(value)
    elif isinstance(node, list):
        for item in node:
            _hex_to_b64(item)


def _session_of(request: ExportTraceServiceRequest) -> str:
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                for kv in span.attributes:
                    if kv.key in SESSION_KEYS:
                        return kv.value.string_value
    return ""


def copy_session(
    requests: list[ExportTraceServiceRequest], old_session: str, new_session: str
) -> list[ExportTraceServiceRequest]:
    """The session's requests with fresh trace and span ids and ``new_session`` as its key."""
    ids: dict[bytes, bytes] = {}

    def fresh(old: bytes) -> bytes:
        if not old:
            return old
        if old not in ids:
            ids[old] = os.urandom(len(old))
        return ids[old]

    out = []
    for request in requests:
        copy = ExportTraceServiceRequest()
        copy.CopyFrom(request)
        for rs in copy.resource_spans:
            _rename(rs.resource.attributes, old_session, new_session)
            for ss in rs.scope_spans:
                for span in ss.spans:
                    span.trace_id = fresh(span.trace_id)
                    span.span_id = fresh(span.span_id)
                    span.parent_span_id = fresh(span.parent_span_id)
                    for link in span.links:
                        link.trace_id = fresh(link.trace_id)
                        link.span_id = fresh(link.span_id)
                    _rename(span.attributes, old_session, new_session)
        out.append(copy)
    return out


def _rename(attributes: object, old: str, new: str) -> None:
    for kv in attributes:  # type: ignore[attr-defined]
        if kv.key in SESSION_KEYS and kv.value.string_value == old:
            kv.value.string_value = new


def session_copies(n: int, prefix: str = "load") -> Iterator[tuple[str, list[bytes]]]:
    """``n`` sessions cycling through the samples: ``(session id, encoded requests)``."""
    samples = sample_requests()
    for i in range(n):
        old, requests = samples[i % len(samples)]
        new = f"{prefix}-{i}-{old}"
        yield new, [r.SerializeToString() for r in copy_session(requests, old, new)]


def unique_copies(n: int, prefix: str = "load") -> Iterator[tuple[str, list[bytes]]]:
    """``n`` sessions whose every message and result differs (domains, languages and
    variants in turn, then the next number): ``(session id, encoded requests)``."""
    from bench.domains.catalog import DOMAINS, LANGUAGES
    from bench.domains.generate import VARIANTS, record_session

    combos = (
        (number, *combo)
        for number in itertools.count()  # product() would hold all of count() first
        for combo in itertools.product(DOMAINS, LANGUAGES, VARIANTS)
    )
    for i, (number, domain, language, variant) in zip(range(n), combos, strict=False):
        lines, truth = record_session(domain, language, variant, number)
        new = f"{prefix}-{i}-{truth.session_id}"
        requests = [_parse(line) for line in lines if line.strip()]
        yield new, [r.SerializeToString() for r in copy_session(requests, truth.session_id, new)]


MIXES = {"sample": session_copies, "unique": unique_copies}
