"""Bounded hand-offs between receiving and assembling, counted in spans.

Why reserve-then-put: a receiver must know there is room *before* it writes the spans
to the spool and acknowledges them; otherwise it could acknowledge spans that then have
nowhere to go. ``try_reserve`` either claims room for the whole request or tells the
receiver to push back (RESOURCE_EXHAUSTED / 429) — nothing is dropped.
"""

from __future__ import annotations

import threading
from collections import deque

from aem.foundation.model import SpanRecord


class SpanQueue:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._reserved = 0
        self._batches: deque[list[SpanRecord]] = deque()
        self._queued = 0
        self._cond = threading.Condition()

    @property
    def depth(self) -> int:
        """Spans waiting (queued or reserved by a request being spooled)."""
        return self._queued + self._reserved

    def try_reserve(self, n: int) -> bool:
        """Claim room for ``n`` spans; a request bigger than the queue fits only when empty."""
        with self._cond:
            used = self._queued + self._reserved
            if used + n > self.capacity and used > 0:
                return False
            self._reserved += n
            return True

    def release(self, n: int) -> None:
        with self._cond:
            self._reserved -= n

    def put_reserved(self, spans: list[SpanRecord]) -> None:
        with self._cond:
            self._reserved -= len(spans)
            self._queued += len(spans)
            self._batches.append(spans)
            self._cond.notify()

    def get_all(self, timeout: float) -> list[list[SpanRecord]]:
        """Every queued batch (possibly none after ``timeout``); frees their room."""
        with self._cond:
            if not self._batches:
                self._cond.wait(timeout)
            batches = list(self._batches)
            self._batches.clear()
            self._queued = 0
            return batches
