"""The pull ledger: what ``aem audit --from URL --since last`` has already evaluated.

Why a ledger in the results store and not just a timestamp: backends file spans by start
time but receive them when they end, so a root span (first to start, last to end) can land
after its children were read; a conversation exported late lands after spans that started
after it; a span dated by a wrong clock (2099) starts after everything; and a conversation
grows by new traces that keep the session's id. A cursor on "the newest start time read"
misses the first three for good and evaluates the last from its new spans only. So the
cursor is what the backend *received*, and the ledger keeps, per session evaluated, its
traces, its first start and a fingerprint of its spans. An incremental run

1. reads the *news*, the spans the backend received since the previous run:
   - a source that pages in storage order (:class:`collectors.backends.IngestionOrdered`,
     Phoenix's row ids) is read after the mark of the last span the previous run read;
   - any other (MLflow keeps no time of arrival) is read by start time from a cursor
     ``late_arrival`` before the previous run's clock (24 hours by default; a span that
     reaches the backend later than that after it started is not seen), and a span
     already seen there (the set is kept until the cursor passes it) is not news;
2. re-reads from the first start of every known session the news touch, so a session that
   grew is assembled whole again;
3. evaluates the sessions touched by the news whose fingerprint changed, and replaces
   their rows (never adds a second one). A session selected but left unrecorded (its
   evaluation raised: ``aem.cli.audit`` takes it out of :attr:`PullPlan.seen`) is kept as
   *pending*: the next run reads its traces again, news or not, until one evaluates it.

Start times read never move a cursor forward: a span from the future is news once, is
reported by its source (``future_start``) and changes nothing for the next run. A read
that a bound ended (:mod:`collectors.backends.bounded`) moves the mark only past what it
read (a time cursor not at all), and what it met is reported by the audit's own read.
Everything is written in one transaction after the run succeeded: a backend that fails
mid-way leaves the ledger as it was and the next run reads the same news again.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from aem.foundation.model import ClosedSession, InputIssue, SpanRecord
from aem.store import Store
from collectors.assembler import session_key_of
from collectors.backends import IngestionOrdered, SourceWindow, SpanSource

CONCERN = "pulls"
# How far before its first span a session read without a root keeps a time cursor: its
# root started earlier and will be filed there when it ends.
UNROOTED_LOOKBACK_NANOS = 3_600 * 1_000_000_000
# How late after its start a span may reach a backend that keeps no time of arrival and
# still be news to an incremental run (a source may say otherwise: ``late_arrival_nanos``).
LATE_ARRIVAL_NANOS = 24 * 3_600 * 1_000_000_000
_CHUNK = 500  # SQLite's bound on parameters, with room to spare
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
    # Version 1 kept "the newest start read": such a cursor goes back a day, so what
    # reached the backend late in that day is read again (sessions already evaluated as
    # they are stay as they are).
    2: """
ALTER TABLE pull_cursors ADD COLUMN mark TEXT;
UPDATE pull_cursors SET since_unix_nano = since_unix_nano - 86400000000000;
CREATE TABLE pull_seen (
    source TEXT NOT NULL,
    span_key TEXT NOT NULL,
    start_unix_nano INTEGER NOT NULL,
    PRIMARY KEY (source, span_key)
) WITHOUT ROWID;
CREATE TABLE pull_pending (
    source TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    first_start_unix_nano INTEGER NOT NULL,
    PRIMARY KEY (source, trace_id)
) WITHOUT ROWID
""",
}


def span_key(span: SpanRecord) -> str:
    """One span as it was read: its ids and end (a span ended again is read again)."""
    return f"{span.trace_id}:{span.span_id}:{span.end_unix_nano}"


def fingerprint(session: ClosedSession) -> str:
    """Which spans a session held: the same spans give the same fingerprint."""
    ids = sorted(span_key(s) for s in session.spans)
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def _rooted(session: ClosedSession) -> bool:
    """Every trace of the session has its root span (a span without a parent)."""
    traces = {s.trace_id for s in session.spans}
    return traces <= {s.trace_id for s in session.spans if not s.parent_span_id}


@dataclass
class News:
    """What step 1 read: the traces and session ids it touches, how many spans, the
    first start among them, and where the next run starts (a mark, or the spans to
    remember as seen)."""

    touched: set[str] = field(default_factory=set)
    session_ids: set[str] = field(default_factory=set)
    count: int = 0
    first: int | None = None
    mark: str | None = None
    keys: list[tuple[str, int]] = field(default_factory=list)

    def add(self, spans: Iterable[SpanRecord]) -> None:
        for span in spans:
            self.touched.add(span.trace_id)
            key = session_key_of(span)
            if key is not None:
                self.session_ids.add(key[2])
            self.count += 1
            start = span.start_unix_nano
            self.first = start if self.first is None else min(self.first, start)


@dataclass(frozen=True, slots=True)
class Selected:
    """What the ledger keeps of a session it selected: enough to record it, not its spans.

    Why not the session: a plan kept every selected :class:`ClosedSession` until the run
    ended, so an incremental read held all its spans while the audit lets each session
    go once it is evaluated (30,000 spans: 559 MB peak, against 493 MB for the same read
    without ``--since last``; with this, 507 MB).
    """

    session_id: str
    fingerprint: str
    first_start_unix_nano: int
    spans: int
    trace_ids: tuple[str, ...]

    @classmethod
    def of(cls, session: ClosedSession, fingerprint: str) -> Selected:
        first = min(s.start_unix_nano for s in session.spans)
        traces = tuple(session.trace_ids)
        return cls(session.session_id, fingerprint, first, len(session.spans), traces)


@dataclass
class PullPlan:
    """What an incremental run reads and which sessions it evaluates."""

    source: str
    window: SourceWindow
    touched_traces: set[str]
    known: dict[str, str]  # session id -> fingerprint already evaluated
    news: int  # spans the backend received since the previous run, + pending traces
    previous_cursor: int | None
    next_cursor: int | None  # the start-time cursor of the next run (None: unchanged)
    previous_mark: str | None = None
    next_mark: str | None = None  # the storage-order mark of the next run (None: unchanged)
    seen_keys: list[tuple[str, int]] = field(default_factory=list)  # (span key, start)
    by_time: bool = True
    pending: set[str] = field(default_factory=set)  # traces read again: not evaluated yet
    seen: list[Selected] = field(default_factory=list)  # to record as evaluated
    selected: list[Selected] = field(default_factory=list)  # all select() chose
    late_arrival_nanos: int = LATE_ARRIVAL_NANOS  # the overlap of a read by start time

    def window_note(self) -> str | None:
        """What a read by start time left out, for the run to say: a trace that reached
        the backend more than the overlap after it started is never news (the run would
        otherwise say "no new spans" over it); ``None`` for a read in storage order or a
        first run (which reads everything)."""
        if not self.by_time or self.previous_cursor is None:
            return None
        since = datetime.fromtimestamp(self.previous_cursor / 1e9, UTC).isoformat(
            timespec="seconds"
        )
        late = self.late_arrival_nanos // 1_000_000_000
        return (
            f"{self.source}: --since last read traces that started from {since} on (the "
            f"previous run less late_arrival_seconds={late:,}); a trace stored later than "
            "that after its start is not read: widen it with ?late_arrival_seconds=N, or "
            "read that time with --since TIME"
        )

    def select(self, session: ClosedSession) -> bool:
        """Touched by the news and not evaluated before as it is now."""
        if self.touched_traces.isdisjoint(s.trace_id for s in session.spans):
            return False
        if self.by_time and not _rooted(session) and self.next_cursor is not None:
            first = min(s.start_unix_nano for s in session.spans)
            # Read it again when its root arrives: a root starts before its children.
            self.next_cursor = min(self.next_cursor, first - UNROOTED_LOOKBACK_NANOS)
        held = fingerprint(session)
        if self.known.get(session.session_id) == held:
            return False
        kept = Selected.of(session, held)
        self.seen.append(kept)
        self.selected.append(kept)
        return True


class PullLedger:
    """The ledger's tables in the results store."""

    def __init__(self, store: Store) -> None:
        self._store = store
        store.ensure(CONCERN, MIGRATIONS)

    def cursor(self, source: str) -> int | None:
        return self._position(source)[0]

    def _position(self, source: str) -> tuple[int | None, str | None]:
        """The start-time cursor and the storage-order mark kept for ``source``."""
        rows = self._store.read(
            "SELECT since_unix_nano, mark FROM pull_cursors WHERE source = ?", (source,)
        )
        if not rows:
            return None, None
        since, mark = rows[0]
        return int(str(since)), (str(mark) if mark is not None else None)

    def plan(self, source: SpanSource, until_unix_nano: int | None) -> PullPlan:
        """Read the news (step 1) and widen the window to the sessions it touches (2)."""
        cursor, mark = self._position(source.name)
        issues: list[InputIssue] = []  # bad records are reported by the audit's own read
        by_time = not isinstance(source, IngestionOrdered)
        if isinstance(source, IngestionOrdered):
            news, next_cursor = self._ingested(source, mark, until_unix_nano, issues), None
        else:
            news, next_cursor = self._by_time(source, cursor, until_unix_nano, issues)
        _defer_stops(source, issues)
        pending = self._pending(source.name)
        known = self._known(source.name, news.touched | pending.keys(), news.session_ids)
        earliest = [start for _, start in known.values()] + list(pending.values())
        earliest += [news.first] if news.first is not None else []
        return PullPlan(
            source=source.name,
            window=SourceWindow(min(earliest) if earliest else cursor, until_unix_nano),
            touched_traces=news.touched | pending.keys(),
            known={sid: fp for sid, (fp, _) in known.items()},
            news=news.count + len(pending),
            previous_cursor=cursor,
            next_cursor=next_cursor,
            previous_mark=mark,
            next_mark=news.mark,
            seen_keys=news.keys,
            by_time=by_time,
            pending=set(pending),
            late_arrival_nanos=int(getattr(source, "late_arrival_nanos", LATE_ARRIVAL_NANOS)),
        )

    def _pending(self, source: str) -> dict[str, int]:
        """Traces of sessions selected before but not evaluated: their first starts."""
        rows = self._store.read(
            "SELECT trace_id, first_start_unix_nano FROM pull_pending WHERE source = ?",
            (source,),
        )
        return {str(trace): int(str(start)) for trace, start in rows}

    def _ingested(
        self,
        source: IngestionOrdered,
        mark: str | None,
        until_unix_nano: int | None,
        issues: list[InputIssue],
    ) -> News:
        """The spans the backend stored after ``mark``, and the mark after the last."""
        news = News()
        for batch in source.ingested(mark, until_unix_nano, issues):
            news.add(batch.spans)
            news.mark = batch.mark if batch.mark is not None else news.mark
        return news

    def _by_time(
        self,
        source: SpanSource,
        cursor: int | None,
        until_unix_nano: int | None,
        issues: list[InputIssue],
    ) -> tuple[News, int | None]:
        """The spans that started at or after ``cursor`` and were not seen before, and
        the next cursor: ``late_arrival`` before this run's clock (never a start read),
        and not past ``--until`` nor, when the read stopped early, past this cursor."""
        now = time.time_ns()
        news = News()
        for batch in source.batches(SourceWindow(cursor, until_unix_nano), issues):
            fresh = self._unseen(source.name, batch)
            news.add(fresh)
            news.keys.extend((span_key(s), s.start_unix_nano) for s in fresh)
        late = getattr(source, "late_arrival_nanos", LATE_ARRIVAL_NANOS)
        if any(issue.kind == "unreadable" for issue in issues):
            return news, cursor
        next_cursor = now - int(late)
        if until_unix_nano is not None:
            next_cursor = min(next_cursor, until_unix_nano)
        return news, next_cursor

    def _unseen(self, source: str, spans: list[SpanRecord]) -> list[SpanRecord]:
        """The spans not in the seen set (asked in chunks: memory stays one page)."""
        keys = [span_key(s) for s in spans]
        seen: set[str] = set()
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._store.read(
                f"SELECT span_key FROM pull_seen WHERE source = ? AND span_key IN ({marks})",
                (source, *chunk),
            )
            seen.update(str(row[0]) for row in rows)
        return [span for span, key in zip(spans, keys, strict=True) if key not in seen]

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
        """Step 3's rows, the new cursor or mark, the spans now seen and the sessions
        still pending, in one transaction (replacing, never adding)."""
        now = time.time()
        with self._store.transaction() as conn:
            for session in plan.seen:
                conn.execute(
                    "INSERT OR REPLACE INTO pull_sessions VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        plan.source,
                        session.session_id,
                        session.fingerprint,
                        session.first_start_unix_nano,
                        session.spans,
                        root_causes.get(session.session_id, 0),
                        now,
                    ),
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO pull_traces VALUES (?, ?, ?)",
                    [(plan.source, t, session.session_id) for t in session.trace_ids],
                )
            _write_position(conn, plan, now)
            _write_pending(conn, plan)

    def sessions(self, source: str) -> list[dict[str, object]]:
        """The ledger's rows for ``source`` (for ``--json`` callers and tests)."""
        rows = self._store.read(
            "SELECT session_id, spans, root_causes, fingerprint FROM pull_sessions "
            "WHERE source = ? ORDER BY session_id",
            (source,),
        )
        keys = ("session_id", "spans", "root_causes", "fingerprint")
        return [dict(zip(keys, row, strict=True)) for row in rows]


def _write_position(conn: sqlite3.Connection, plan: PullPlan, now: float) -> None:
    """Where the next run starts: the mark or cursor, and the spans already seen (those
    that started before a time cursor are never read again: forgotten)."""
    cursor = plan.next_cursor if plan.next_cursor is not None else plan.previous_cursor
    mark = plan.next_mark if plan.next_mark is not None else plan.previous_mark
    if cursor is not None or mark is not None:
        conn.execute(
            "INSERT OR REPLACE INTO pull_cursors (source, since_unix_nano, updated_at, mark) "
            "VALUES (?, ?, ?, ?)",
            (plan.source, cursor if cursor is not None else 0, now, mark),
        )
    conn.executemany(
        "INSERT OR IGNORE INTO pull_seen VALUES (?, ?, ?)",
        [(plan.source, key, start) for key, start in plan.seen_keys],
    )
    if plan.by_time and cursor is not None:
        conn.execute(
            "DELETE FROM pull_seen WHERE source = ? AND start_unix_nano < ?",
            (plan.source, cursor),
        )


def _write_pending(conn: sqlite3.Connection, plan: PullPlan) -> None:
    """Sessions selected and not recorded as evaluated wait, by their traces, for the next
    run; those read again and evaluated (or found as they were) wait no longer."""
    recorded = {s.session_id for s in plan.seen}
    done = plan.pending | {t for s in plan.seen for t in s.trace_ids}
    conn.executemany(
        "DELETE FROM pull_pending WHERE source = ? AND trace_id = ?",
        [(plan.source, trace) for trace in sorted(done)],
    )
    waiting = [s for s in plan.selected if s.session_id not in recorded]
    conn.executemany(
        "INSERT OR REPLACE INTO pull_pending VALUES (?, ?, ?)",
        [(plan.source, trace, s.first_start_unix_nano) for s in waiting for trace in s.trace_ids],
    )


def _defer_stops(source: SpanSource, issues: list[InputIssue]) -> None:
    """A read the bounds ended while finding the news is said in the audit's report: the
    source reports it with its next read (the audit's)."""
    stops = [i for i in issues if i.kind == "unreadable"]
    defer = getattr(source, "defer_issues", None)
    if stops and callable(defer):
        defer(
            [i.model_copy(update={"message": f"finding what is new: {i.message}"}) for i in stops]
        )


__all__ = ["News", "PullLedger", "PullPlan", "Selected", "fingerprint", "span_key"]
