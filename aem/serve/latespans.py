"""Late spans counted per session and logged once per session per interval.

Why not a line per span: a session that keeps sending after it was cut (the byte budget
evicted it, or it passed ``max_session_spans``) makes every further span late — a
1 M-span session logged 905,001 "late span" lines (138 MB), and formatting them took the
assembler thread's time from every other session. One line per session, with the count,
says the same thing: the first late span of a session is logged at once, the rest are
summed and logged every ``interval`` seconds while they keep coming (and at shutdown).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("aem.serve.pipeline")

# Sessions whose late spans were logged within the interval, remembered so the next one
# is summed rather than logged; beyond this many the oldest are forgotten (logged anew).
MAX_TRACKED_SESSIONS = 10_000


class LateSpanTally:
    """Counts late spans per session; :meth:`flush` logs what accumulated."""

    def __init__(self, interval: float, clock: Callable[[], float]) -> None:
        self._interval = interval
        self._clock = clock
        self._pending: dict[str, tuple[int, str]] = {}  # session → (count, last span id)
        self._logged_at: dict[str, float] = {}  # session → when its last line was written
        # The assembler thread adds and flushes; the stopping thread flushes what is left
        # when the assembler did not end within the drain timeout.
        self._lock = threading.Lock()

    def add(self, session_id: str, span_id: str) -> None:
        """One late span of ``session_id``: logged now if its session has no recent line."""
        with self._lock:
            count, _ = self._pending.get(session_id, (0, ""))
            self._pending[session_id] = (count + 1, span_id)
            if session_id not in self._logged_at:
                self._write(session_id, self._clock())

    def flush(self, *, force: bool = False) -> None:
        """Log every session's count whose interval is over (all of them if ``force``)."""
        with self._lock:
            now = self._clock()
            for session_id in list(self._pending):
                if force or now - self._logged_at.get(session_id, 0.0) >= self._interval:
                    self._write(session_id, now)
            for session_id, at in list(self._logged_at.items()):
                if now - at >= self._interval and session_id not in self._pending:
                    del self._logged_at[session_id]

    def _write(self, session_id: str, now: float) -> None:
        count, span_id = self._pending.pop(session_id)
        log.info(
            "late span" if count == 1 else "late spans",
            extra={"session_id": session_id, "spans": count, "last_span_id": span_id},
        )
        self._logged_at[session_id] = now
        if len(self._logged_at) > MAX_TRACKED_SESSIONS:
            oldest = min(self._logged_at, key=self._logged_at.__getitem__)
            del self._logged_at[oldest]
