"""Copies of recorded spans as new traces: fresh ids, other sessions, later times.

Why: a backend keeps one span per span id (Phoenix does, whatever the project), so a test
or a bench that sends the same samples twice must rename them; and a bench that scales the
bundled samples up needs every copy to be a session of its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from aem.foundation.model import SpanRecord
from collectors.dialects.registry import session_keys


def renamed(
    spans: list[SpanRecord],
    seed: str,
    *,
    conversation: str | None = None,
    session_suffix: str | None = None,
    shift_ns: int = 0,
) -> list[SpanRecord]:
    """The spans with ids derived from ``seed``, ``shift_ns`` later; their session keys
    set to ``conversation`` or suffixed with ``session_suffix`` when given."""

    def new_id(old: str, size: int) -> str:
        return hashlib.sha256(f"{seed}:{old}".encode()).hexdigest()[:size]

    keys = session_keys()
    out = []
    for span in spans:
        attributes = dict(span.attributes)
        for key in keys:
            if key not in attributes:
                continue
            if conversation is not None:
                attributes[key] = conversation
            elif session_suffix is not None:
                attributes[key] = f"{attributes[key]}{session_suffix}"
        out.append(
            replace(
                span,
                trace_id=new_id(span.trace_id, 32),
                span_id=new_id(span.span_id, 16),
                parent_span_id=new_id(span.parent_span_id, 16) if span.parent_span_id else None,
                start_unix_nano=span.start_unix_nano + shift_ns,
                end_unix_nano=span.end_unix_nano + shift_ns,
                attributes=attributes,
                events=[
                    replace(e, time_unix_nano=e.time_unix_nano + shift_ns) for e in span.events
                ],
            )
        )
    return out
