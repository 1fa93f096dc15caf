"""Standard-output sink: one JSON line per turn verdict, for ``aem serve`` with no sink.

Why a sink at all when none is configured: a first ``aem serve`` without a
``[serve.sinks]`` table used to evaluate in silence (the verdicts only in the outbox
table); one line per verdict on standard output shows that it works and what it found,
while the logs stay on standard error. Metric items are not printed one by one: the
turn's line names the metrics that failed and the one-line explanation ``aem audit``
prints (``not checked (N skipped)`` where every metric skipped).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import TextIO

import orjson

from aem.sinks.records import OutboxItem

# A suspect failed nothing: its line names the metrics that left it unverified instead.
_FIELDS = (
    "session_id",
    "turn_id",
    "turn_name",
    "span_id",
    "label",
    "failed_metrics",
    "unverified_metrics",
    "explanation",
    "cut",
    "revision",
)


class StdoutSink:
    """Prints every turn item's verdict; accepts every item (printing cannot fail later)."""

    def __init__(self, stream: TextIO | None = None, *, name: str = "stdout") -> None:
        self.name = name
        self._stream = stream
        self._lock = threading.Lock()

    def deliver(self, items: Sequence[OutboxItem]) -> list[str]:
        lines = [
            orjson.dumps(
                {"verdict": i.payload.get("label"), **{k: i.payload.get(k) for k in _FIELDS}}
            ).decode()
            for i in items
            if i.kind == "turn"
        ]
        if lines:
            stream = self._stream or sys.stdout
            with self._lock:
                stream.write("\n".join(lines) + "\n")
                stream.flush()
        return [i.key for i in items]

    def close(self) -> None:
        """Nothing to release: standard output belongs to the process."""
