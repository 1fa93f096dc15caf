"""The pull ledger: what ``aem audit --from URL --since last`` has already evaluated.

Why a ledger in the results store and not just a timestamp: backends file spans by start
time but receive them when they end, so a root span (first to start, last to end) can land
after its children were read; and a conversation grows by new traces that keep the
session's id. A cursor alone would miss the first and evaluate the second from its new
spans only. So the ledger keeps, per source URL, a cursor (the spans already read start
before it) and, per session evaluated, its traces, its first start and a fingerprint of
its spans. An incremental run then

1. reads the spans that started at or after the cursor (the *news*) and notes their traces;
2. re-reads from the first start of every known session those traces belong to, so a
   session that grew is assembled whole again;
3. evaluates the sessions touched by the news whose fingerprint changed, and replaces
   their rows (never adds a second one).

The cursor stays an hour before the first start of a session read without the root span
of one of its traces, so that session is read again when its root arrives. Everything is written
in one transaction after the run succeeded: a backend that fails mid-way leaves the
ledger as it was and the next run reads the same news again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from aem.model import ClosedSession
from aem.store import Store
from collectors.assembler import session_key_of
from collectors.backends import SourceWindow, SpanSource

CONCERN = "pulls"
# How far before its first span a session read without a root keeps the cursor: its root
# started earlier and will be filed there when it ends.
UNROOTED_LOOKBACK_NANOS = 3_600 * 1_000_000_000
MIGRATIONS = {
    1: """
CREATE TABLE pull_cursors (
    source TEXT PRIMARY KEY,
    since_unix_nano INTEGER NOT NULL,
    updated_at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE pull_sessions (
    source TEXT NOT NULL,
    session_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    first_start_unix_nano INTEGER NOT NULL,
    spans INTEGER NOT NULL,
    root_causes INTEGER NOT NULL,
    evaluated_at REAL NOT NULL,
    PRIMARY KEY (source, session_id)
) WITHOUT ROWID;
CREATE TABLE pull_traces (
    source TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    PRIMARY KEY (source, trace_id)
) WITHOUT ROWID
""",
}


def fingerprint(session: ClosedSession) -> str:
    """Which spans a session held: the same spans give the same fingerprint."""
    ids = sorted(f"{s.trace_id}:{s.span_id}:{s.end_unix_nano}" for s in session.spans)
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def _rooted(session: ClosedSession) -> bool:
    """Every trace of the session has its root span (a span without a parent)."""
    traces = {s.trace_id for s in session.spans}
    return traces <= {s.trace_id for s in session.spans if not s.parent_span_id}


@dataclass
class PullPlan:
    """What an incremental run reads and which sessions it evaluates."""

    source: str
    window: SourceWindow
    touched_traces: set[str]
    known: dict[str, str]  # session id -> fingerprint already evaluated
    news: int  # spans that started at or after the cursor
    previous_cursor: int | None
    next_cursor: int | None  # just after the latest start among the news
    seen: list[ClosedSession] = field(default_factory=list)

    def select(self, session: ClosedSession) -> bool:
        """Touched by the news and not evaluated before as it is now."""
        if self.touched_traces.isdisjoint(s.trace_id for s in session.spans):
            return False
        if not _rooted(session) and self.next_cursor is not None:
            first = min(s.start_unix_nano for s in session.spans)
            # Read it again when its root arrives: a root starts before its children.
            self.next_cursor = min(self.next_cursor, first - UNROOTED_LOOKBACK_NANOS)
        if self.known.get(session.session_id) == fingerprint(session):
            return False
        self.seen.append(session)
        return True


class PullLedger:
    """The ledger's tables in the results store."""

    def __init__(self, store: Store) -> None:
        self._store = store
        store.ensure(CONCERN, MIGRATIONS)

    def cursor(self, source: str) -> int | None:
        rows = self._store.read(
            "SELECT since_unix_nano FROM pull_cursors WHERE source = ?", (source,)
        )
        return int(str(rows[0][0])) if rows else None

    def plan(self, source: SpanSource, until_unix_nano: int | None) -> PullPlan:
        """Read the news (step 1) and widen the window to the sessions it touches (2)."""
        cursor = self.cursor(source.name)
        news_window = SourceWindow(cursor, until_unix_nano)
        touched: set[str] = set()
        keys: set[str] = set()  # session ids the news names (a new trace of a known session)
        news, first, last = 0, None, None
        for batch in source.batches(news_window, []):  # issues are reported by the run
            for span in batch:
                touched.add(span.trace_id)
                key = session_key_of(span)
                if key is not None:
                    keys.add(key[2])
                news += 1
                start = span.start_unix_nano
                first = start if first is None else min(first, start)
                last = start if last is None else max(last, start)
        known = self._known(source.name, touched, keys)
        earliest = [start for _, start in known.values()] + ([first] if first is not None else [])
        since = min(earliest) if earliest else cursor
        return PullPlan(
            source=source.name,
            window=SourceWindow(since, until_unix_nano),
            touched_traces=touched,
            known={sid: fp for sid, (fp, _) in known.items()},
            news=news,
            previous_cursor=cursor,
            next_cursor=None if last is None else last + 1,
        )

    def _known(
        self, source: str, traces: Iterable[str], session_ids: Iterable[str]
    ) -> dict[str, tuple[str, int]]:
        """Sessions already evaluated that hold any of ``traces`` or have one of
        ``session_ids``: their fingerprint and first start."""
        found: dict[str, tuple[str, int]] = {}
        by_trace = (
            "SELECT s.session_id, s.fingerprint, s.first_start_unix_nano "
            "FROM pull_traces t JOIN pull_sessions s "
            "ON s.source = t.source AND s.session_id = t.session_id "
            "WHERE t.source = ? AND t.trace_id IN ({marks})"
        )
        by_id = (
            "SELECT session_id, fingerprint, first_start_unix_nano FROM pull_sessions "
            "WHERE source = ? AND session_id IN ({marks})"
        )
        for sql, values in ((by_trace, sorted(traces)), (by_id, sorted(session_ids))):
            for start in range(0, len(values), 500):  # SQLite's bound on parameters
                chunk = values[start : start + 500]
                query = sql.format(marks=",".join("?" * len(chunk)))
                for session_id, fp, first in self._store.read(query, (source, *chunk)):
                    found[str(session_id)] = (str(fp), int(str(first)))
        return found

    def record(self, plan: PullPlan, root_causes: dict[str, int]) -> None:
        """Step 3's rows and the new cursor, in one transaction (replacing, never adding)."""
        now = time.time()
        cursor = plan.next_cursor if plan.next_cursor is not None else plan.previous_cursor
        with self._store.transaction() as conn:
            for session in plan.seen:
                first = min(s.start_unix_nano for s in session.spans)
                conn.execute(
                    "INSERT OR REPLACE INTO pull_sessions VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        plan.source,
                        session.session_id,
                        fingerprint(session),
                        first,
                        len(session.spans),
                        root_causes.get(session.session_id, 0),
                        now,
                    ),
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO pull_traces VALUES (?, ?, ?)",
                    [(plan.source, t, session.session_id) for t in session.trace_ids],
                )
            if cursor is not None:
                conn.execute(
                    "INSERT OR REPLACE INTO pull_cursors VALUES (?, ?, ?)",
                    (plan.source, cursor, now),
                )

    def sessions(self, source: str) -> list[dict[str, object]]:
        """The ledger's rows for ``source`` (for ``--json`` callers and tests)."""
        rows = self._store.read(
            "SELECT session_id, spans, root_causes, fingerprint FROM pull_sessions "
            "WHERE source = ? ORDER BY session_id",
            (source,),
        )
        keys = ("session_id", "spans", "root_causes", "fingerprint")
        return [dict(zip(keys, row, strict=True)) for row in rows]


__all__ = ["PullLedger", "PullPlan", "fingerprint"]
