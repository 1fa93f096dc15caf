"""Closed sessions as compact bytes, to ship them to another process or a Ray block.

Why not pickle the dataclasses as they are: a span becomes one flat tuple (no class
reference, no field names), and pickle's memo writes an object shared by many spans once
— a resource dict, a file name — so what crosses the pipe is the span data and little
else. ``unpack_sessions(pack_sessions(s))`` equals ``s`` field for field.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

from aem.foundation.gcpause import cyclic_gc_paused
from aem.foundation.model import ClosedSession, SourceRef, SpanEvent, SpanRecord

SpanTuple = tuple[Any, ...]


def span_to_tuple(span: SpanRecord) -> SpanTuple:
    """A span's fields in declaration order, events and origin as plain tuples."""
    origin = span.origin
    return (
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        span.name,
        span.kind,
        span.start_unix_nano,
        span.end_unix_nano,
        span.status_code,
        span.status_message,
        span.attributes,
        [(e.name, e.time_unix_nano, e.attributes) for e in span.events],
        span.resource,
        span.links,
        span.scope,
        None if origin is None else (origin.source, origin.line),
    )


def span_from_tuple(row: SpanTuple) -> SpanRecord:
    """The inverse of :func:`span_to_tuple`."""
    origin = row[14]
    return SpanRecord(
        row[0],
        row[1],
        row[2],
        row[3],
        kind=row[4],
        start_unix_nano=row[5],
        end_unix_nano=row[6],
        status_code=row[7],
        status_message=row[8],
        attributes=row[9],
        events=[SpanEvent(*event) for event in row[10]],
        resource=row[11],
        links=row[12],
        scope=row[13],
        origin=None if origin is None else SourceRef(*origin),
    )


def pack_sessions(sessions: Sequence[ClosedSession]) -> bytes:
    """Sessions as one pickle of tuples (spans flattened by :func:`span_to_tuple`)."""
    rows = [
        (
            s.session_id,
            s.session_key,
            s.fallback,
            s.cut,
            s.issues,
            [span_to_tuple(span) for span in s.spans],
        )
        for s in sessions
    ]
    return dumps(rows)


def unpack_sessions(data: bytes) -> list[ClosedSession]:
    """The sessions :func:`pack_sessions` packed, in the same order."""
    with cyclic_gc_paused():
        return [
            ClosedSession(
                session_id,
                key,
                fallback,
                [span_from_tuple(row) for row in spans],
                cut=cut,
                issues=issues,
            )
            for session_id, key, fallback, cut, issues, spans in pickle.loads(data)
        ]


def loads(data: bytes) -> Any:
    """``pickle.loads`` with the collector paused (:func:`aem.foundation.gcpause.cyclic_gc_paused`).

    Why: (un)pickling builds tens of thousands of containers at once, none of them cyclic
    garbage; in the reading process, which holds every report so far, collections made the
    reports of 200 generated sessions take 0.5 s to unpickle, 0.1 s without them."""
    with cyclic_gc_paused():
        return pickle.loads(data)


def dumps(value: Any) -> bytes:
    """``pickle.dumps`` (highest protocol) with the collector paused."""
    with cyclic_gc_paused():
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
