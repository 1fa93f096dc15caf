"""The durable spool: spans on disk before the receiver acknowledges them.

Why SQLite in WAL mode with one writer thread (group commit): every acknowledged span
must survive ``kill -9``; committing once per request from many receiver threads would
serialise on fsync, so requests queue here and one transaction commits a whole group.
``synchronous=FULL`` (default) fsyncs the WAL at every commit and survives power loss;
``NORMAL`` survives a crashed process (the WAL is in the OS cache) but not a crashed
machine — a setting, with that trade-off stated.

A session's life in the file: its spans are rows of ``spans`` until it is evaluated; then
one transaction deletes them, records the session and its traces as done, and enqueues
its verdicts in the outbox. After a crash either all of that happened or none did, so a
session is evaluated exactly once and its verdicts are never lost.
"""

from __future__ import annotations

import logging
import pickle
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from aem.model import SpanRecord
from aem.sinks import outbox
from aem.sinks.records import OutboxItem

log = logging.getLogger("collectors.live.spool")

SCHEMA = """
CREATE TABLE IF NOT EXISTS spans (
    seq INTEGER PRIMARY KEY,
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS spans_trace ON spans (trace_id);
CREATE TABLE IF NOT EXISTS done_sessions (
    session_id TEXT PRIMARY KEY,
    evaluated_at REAL NOT NULL,
    spans INTEGER NOT NULL,
    cut INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS done_traces (
    trace_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL
) WITHOUT ROWID;
"""

Op = Callable[[sqlite3.Connection], Any]


class SpoolClosed(RuntimeError):
    """The spool is shutting down; the caller must not acknowledge."""


def _encode(span: SpanRecord) -> bytes:
    # pickle: exact round trip of every attribute type (bytes included) at a few µs per
    # span; the file is written and read only by this process's own code.
    return pickle.dumps(span, protocol=pickle.HIGHEST_PROTOCOL)


class Spool:
    """SQLite spool with a single group-committing writer thread."""

    def __init__(
        self,
        path: Path,
        *,
        synchronous: str = "FULL",
        commit_batch: int = 64,
        sinks: Sequence[str] = (),
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._sinks = list(sinks)
        self._commit_batch = commit_batch
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA synchronous={synchronous}")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.executescript(SCHEMA)
        outbox.create_schema(self._conn)
        self._ops: queue.Queue[tuple[Op, Future[Any]] | None] = queue.Queue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="spool-writer", daemon=True)
        self._thread.start()
        self.commits = 0

    # ---- writer thread --------------------------------------------------------------
    def _run(self) -> None:
        while True:
            first = self._ops.get()
            if first is None:
                return
            group = [first]
            stop = False
            while len(group) < self._commit_batch:
                try:
                    nxt = self._ops.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                group.append(nxt)
            self._commit(group)
            if stop:
                return

    def _commit(self, group: list[tuple[Op, Future[Any]]]) -> None:
        results: list[Any] = []
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            for op, _ in group:
                results.append(op(self._conn))
            self._conn.execute("COMMIT")
            self.commits += 1
        except Exception as exc:
            log.exception("spool transaction failed; retrying its operations one by one")
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            if len(group) > 1:
                for item in group:
                    self._commit([item])
                return
            group[0][1].set_exception(exc)
            return
        for (_, future), result in zip(group, results, strict=True):
            future.set_result(result)

    def _submit(self, op: Op) -> Future[Any]:
        if self._closed:
            raise SpoolClosed("spool is closed")
        future: Future[Any] = Future()
        self._ops.put((op, future))
        return future

    # ---- operations ----------------------------------------------------------------
    def append(self, spans: Sequence[SpanRecord]) -> None:
        """Write spans durably; returns only once they are committed (then ack)."""
        rows = [(s.trace_id, s.span_id, _encode(s)) for s in spans]

        def op(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT INTO spans (trace_id, span_id, data) VALUES (?, ?, ?)", rows)

        self._submit(op).result()

    def commit_session(
        self,
        session_id: str,
        trace_ids: Sequence[str],
        items: Sequence[OutboxItem],
        *,
        spans: int,
        cut: bool,
    ) -> bool:
        """Atomically: mark evaluated, forget its spans, enqueue its verdicts.

        Returns False (and changes nothing) when the session was already evaluated.
        """

        def op(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "INSERT OR IGNORE INTO done_sessions VALUES (?, ?, ?, ?)",
                (session_id, time.time(), spans, int(cut)),
            )
            if cur.rowcount == 0:
                return False
            conn.executemany(
                "INSERT OR IGNORE INTO done_traces VALUES (?, ?)",
                [(t, session_id) for t in trace_ids],
            )
            conn.executemany("DELETE FROM spans WHERE trace_id = ?", [(t,) for t in trace_ids])
            outbox.enqueue(conn, items, self._sinks, time.time())
            return True

        return bool(self._submit(op).result())

    def forget_spans(self, keys: Sequence[tuple[str, str]]) -> None:
        """Delete late spans (already counted and reported) so a restart won't revive them."""

        def op(conn: sqlite3.Connection) -> None:
            conn.executemany("DELETE FROM spans WHERE trace_id = ? AND span_id = ?", keys)

        self._submit(op).result()

    # ---- reads (startup and checks; not on the hot path) ----------------------------
    def is_done(self, session_id: str) -> bool:
        return (
            self._read("SELECT 1 FROM done_sessions WHERE session_id = ?", (session_id,))
            is not None
        )

    def _read(self, sql: str, args: tuple[Any, ...]) -> Any:
        def op(conn: sqlite3.Connection) -> Any:
            return conn.execute(sql, args).fetchone()

        return self._submit(op).result()

    def replay(self, chunk: int = 5000) -> Iterator[tuple[SpanRecord, bool]]:
        """Every spooled span in arrival order, with whether its trace was already evaluated.

        Used before the receivers start, so reading on a separate connection is safe.
        """
        conn = sqlite3.connect(self.path)
        try:
            done = {row[0] for row in conn.execute("SELECT trace_id FROM done_traces")}
            last = 0
            while True:
                rows = conn.execute(
                    "SELECT seq, data FROM spans WHERE seq > ? ORDER BY seq LIMIT ?",
                    (last, chunk),
                ).fetchall()
                if not rows:
                    return
                for seq, data in rows:
                    span: SpanRecord = pickle.loads(data)
                    last = seq
                    yield span, span.trace_id in done
        finally:
            conn.close()

    def counts(self) -> dict[str, int]:
        def op(conn: sqlite3.Connection) -> dict[str, int]:
            return {
                "spans": conn.execute("SELECT count(*) FROM spans").fetchone()[0],
                "done_sessions": conn.execute("SELECT count(*) FROM done_sessions").fetchone()[0],
            }

        result: dict[str, int] = self._submit(op).result()
        return result

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._ops.put(None)
        self._thread.join(timeout=30)
        self._conn.close()
