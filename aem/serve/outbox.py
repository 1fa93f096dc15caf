"""The delivery outbox: verdicts persisted in SQLite until each sink has accepted them.

Why an outbox: a downstream that is down must not lose verdicts, and a verdict must not
be sent twice. Rows are written in the *same* transaction that marks the session
evaluated (the spool calls :func:`enqueue` on its connection), so after a crash either
both exist or neither does. Each sink has its own row per item (primary key ``sink, key``)
and its own delivery thread, so a slow sink never holds back another.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from aem.serve import defaults
from aem.serve.supervisor import SupervisedThread
from aem.sinks.base import Sink, deliver_to
from aem.sinks.records import KEY_SEPARATOR, OutboxItem

log = logging.getLogger("aem.serve.outbox")

SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    sink TEXT NOT NULL,
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload BLOB NOT NULL,
    created_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt REAL NOT NULL,
    delivered_at REAL,
    last_error TEXT,
    PRIMARY KEY (sink, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (sink, next_attempt)
    WHERE delivered_at IS NULL;
CREATE INDEX IF NOT EXISTS outbox_delivered ON outbox (delivered_at)
    WHERE delivered_at IS NOT NULL;
"""


def create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)


def enqueue(
    conn: sqlite3.Connection,
    items: Iterable[OutboxItem],
    sinks: Sequence[str],
    now: float,
    kinds: Mapping[str, Collection[str]] | None = None,
) -> int:
    """Add items for every sink inside the caller's transaction; existing keys are kept.

    ``kinds`` names the item kinds each sink takes (:func:`aem.sinks.base.item_kinds_of`);
    a sink gets no row for an item it would not take, so nothing waits on it for nothing.
    Returns how many rows were new (an already-present key is the idempotency guard).
    """
    takes = kinds or {}
    rows = [
        (sink, item.key, item.kind, orjson.dumps(item.payload), now, now)
        for item in items
        for sink in sinks
        if sink not in takes or item.kind in takes[sink]
    ]
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO outbox (sink, key, kind, payload, created_at, next_attempt) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    return conn.total_changes - before


def prune_delivered(conn: sqlite3.Connection, before: float, limit: int) -> int:
    """Delete at most ``limit`` rows delivered before ``before``; undelivered rows never.

    Returns how many rows went. The caller owns the transaction (and keeps it short).
    """
    cur = conn.execute(
        "DELETE FROM outbox WHERE (sink, key) IN (SELECT sink, key FROM outbox "
        "WHERE delivered_at IS NOT NULL AND delivered_at < ? ORDER BY delivered_at LIMIT ?)",
        (before, limit),
    )
    return cur.rowcount


def sinks_in(conn: sqlite3.Connection) -> list[str]:
    """Every sink that has rows, found by walking the primary key (one probe per sink)."""
    sinks: list[str] = []
    row = conn.execute("SELECT min(sink) FROM outbox").fetchone()
    while row is not None and row[0] is not None:
        sinks.append(row[0])
        row = conn.execute("SELECT min(sink) FROM outbox WHERE sink > ?", (row[0],)).fetchone()
    return sinks


def holds_session(conn: sqlite3.Connection, sinks: Sequence[str], session_id: str) -> bool:
    """Whether any row (delivered or not) of ``session_id`` is still in the outbox.

    Keys start with the session id and ``KEY_SEPARATOR`` (``records.item_key``), so this is
    one primary-key range probe per sink. A session id that itself contains the separator
    can only make the answer a conservative "yes".
    """
    low = session_id + KEY_SEPARATOR
    high = session_id + chr(ord(KEY_SEPARATOR) + 1)  # every key with the prefix is below
    return any(
        conn.execute(
            "SELECT 1 FROM outbox WHERE sink = ? AND key >= ? AND key < ? LIMIT 1",
            (sink, low, high),
        ).fetchone()
        is not None
        for sink in sinks
    )


@dataclass(frozen=True)
class RedeliverySchedule:
    """When the outbox offers a sink its pending rows again after a failed delivery:
    exponential backoff with jitter, capped; attempts never stop (nothing is dropped).

    Not :class:`aem.foundation.http.RetryPolicy`, which decides whether one HTTP request is asked
    again within a delivery; this schedules the next delivery of rows still pending."""

    initial: float = defaults.DELIVERY_RETRY_INITIAL_SECONDS
    maximum: float = defaults.DELIVERY_RETRY_MAX_SECONDS

    def delay(self, attempts: int) -> float:
        base: float = min(self.maximum, self.initial * (2.0 ** min(attempts, 30)))
        return base * random.uniform(0.5, 1.0)


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


class SinkWorker:
    """Delivers one sink's pending rows, oldest first (with the newest in every other round,
    so a backlog never holds new verdicts), retrying failures with backoff."""

    def __init__(
        self,
        path: Path,
        sink: Sink,
        *,
        batch: int,
        retry: RedeliverySchedule,
        poll_seconds: float,
        on_delivered: Callable[[str, list[float]], None] | None = None,
    ) -> None:
        self.sink = sink
        self._path = path
        self._batch = batch
        self._retry = retry
        self._poll = poll_seconds
        self._on_delivered = on_delivered
        self._wake = threading.Event()
        self._stop = threading.Event()
        # A fresh thread (and connection) after the old one died: the supervisor's call.
        self.thread = SupervisedThread(f"sink-{sink.name}", self._run, stopped=self._stop.is_set)
        self.delivered = 0
        self.failures = 0
        self._failing_in_a_row = 0
        self._newest_next = False  # see _due_rows

    def start(self) -> None:
        self.thread.start()

    def notify(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        conn = connect(self._path)
        try:
            while not self._stop.is_set():
                try:
                    worked = self._deliver_once(conn)
                except sqlite3.OperationalError as exc:
                    # Disk full or busy while marking rows: they stay pending and are
                    # delivered again later (keys make that idempotent downstream).
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    log.warning(
                        "outbox update failed; retrying",
                        extra={"sink": self.sink.name, "error": str(exc)},
                    )
                    self._stop.wait(max(self._poll, 0.5))
                    continue
                if self._failing_in_a_row:
                    # The sink as a whole backs off, not only the rows that failed: new
                    # verdicts keep coming, and each would otherwise meet a downstream
                    # that is down (and, if it drips, hold the thread for a deadline).
                    self._stop.wait(self._retry.delay(self._failing_in_a_row - 1))
                elif not worked:
                    self._wake.wait(self._poll)
                    self._wake.clear()
        finally:
            conn.close()

    def _due_rows(self, conn: sqlite3.Connection) -> list[Any]:
        """The next batch of due rows: the oldest, and every other round the newest.

        Why not always the oldest: one huge session commits its verdicts at once (a
        session cut at 34,500 spans wrote 101,401 rows), and every session committed after
        it waited behind all of them — 11 s on the JSONL sink, more on a slower one. Taking
        the newest batch every other round delivers a small session's verdicts (fewer
        than a batch) within two rounds of its commit, while the backlog still gets every
        other round, so no row waits forever. With no backlog (at most a batch due) both
        queries return the same rows. The batch goes out oldest first either way.
        """
        newest, self._newest_next = self._newest_next, not self._newest_next
        order = "DESC" if newest else "ASC"
        rows: list[Any] = conn.execute(
            "SELECT key, kind, payload, attempts, created_at FROM outbox "
            "WHERE sink = ? AND delivered_at IS NULL AND next_attempt <= ? "
            f"ORDER BY next_attempt {order}, key {order} LIMIT ?",
            (self.sink.name, time.time(), self._batch),
        ).fetchall()
        return rows[::-1] if newest else rows

    def _deliver_once(self, conn: sqlite3.Connection) -> bool:
        rows = self._due_rows(conn)
        if not rows:
            return False
        items = [OutboxItem(key, kind, orjson.loads(payload)) for key, kind, payload, _, _ in rows]
        try:
            accepted = set(deliver_to(self.sink, items))
            error = "downstream accepted only part of the batch"
        except Exception as exc:  # a sink failing in any way is retried, never fatal
            accepted = set()
            error = f"{type(exc).__name__}: {exc}"
        done = time.time()
        delivered = [(done, self.sink.name, key) for key, *_ in rows if key in accepted]
        failed = [
            (attempts + 1, done + self._retry.delay(attempts), error[:500], self.sink.name, key)
            for key, _, _, attempts, _ in rows
            if key not in accepted
        ]
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("UPDATE outbox SET delivered_at = ? WHERE sink = ? AND key = ?", delivered)
        conn.executemany(
            "UPDATE outbox SET attempts = ?, next_attempt = ?, last_error = ? "
            "WHERE sink = ? AND key = ?",
            failed,
        )
        conn.execute("COMMIT")
        self.delivered += len(delivered)
        self._failing_in_a_row = self._failing_in_a_row + 1 if failed else 0
        if failed:
            self.failures += 1
            log.warning(
                "delivery failed",
                extra={"sink": self.sink.name, "items": len(failed), "error": error[:200]},
            )
        if delivered and self._on_delivered is not None:
            created = {key: c for key, _, _, _, c in rows}
            self._on_delivered(self.sink.name, [done - created[k] for _, _, k in delivered])
        return bool(delivered)

    def stop(self, timeout: float) -> bool:
        """Stop within ``timeout``: the sink is closed first, which cuts a delivery in
        flight (its rows stay pending for the next start); True if the thread ended."""
        self._stop.set()
        self._wake.set()
        try:
            self.sink.close()
        except Exception:  # a sink that fails to close must not hold the shutdown
            log.warning("sink close failed", exc_info=True, extra={"sink": self.sink.name})
        self.thread.join(timeout=timeout)
        return not self.thread.running()


class Outbox:
    """One delivery worker per sink over the shared SQLite file."""

    def __init__(
        self,
        path: Path,
        sinks: Sequence[Sink],
        *,
        batch: int = defaults.DELIVERY_BATCH,
        retry: RedeliverySchedule | None = None,
        poll_seconds: float = defaults.DELIVERY_POLL_SECONDS,
        on_delivered: Callable[[str, list[float]], None] | None = None,
    ) -> None:
        self._path = path
        self.workers = [
            SinkWorker(
                path,
                sink,
                batch=batch,
                retry=retry or RedeliverySchedule(),
                poll_seconds=poll_seconds,
                on_delivered=on_delivered,
            )
            for sink in sinks
        ]
        self._conn = connect(path)
        create_schema(self._conn)
        self._lock = threading.Lock()

    @property
    def sink_names(self) -> list[str]:
        return [w.sink.name for w in self.workers]

    def start(self) -> None:
        for worker in self.workers:
            worker.start()

    def notify(self) -> None:
        for worker in self.workers:
            worker.notify()

    def pending(self) -> int:
        with self._lock:
            row = self._conn.execute(
                "SELECT count(*) FROM outbox WHERE delivered_at IS NULL"
            ).fetchone()
        return int(row[0])

    def flush(self, timeout: float) -> bool:
        """Deliver what is due until nothing is pending or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while self.pending():
            if time.monotonic() >= deadline:
                return False
            self.notify()
            time.sleep(0.05)
        return True

    def close(self, timeout: float = defaults.OUTBOX_CLOSE_SECONDS) -> None:
        """Stop every sink's worker within ``timeout`` in all, whatever the sinks do."""
        deadline = time.monotonic() + timeout
        for worker in self.workers:
            if not worker.stop(max(0.0, deadline - time.monotonic())):
                log.warning(
                    "sink still delivering at shutdown; its rows stay pending",
                    extra={"sink": worker.sink.name},
                )
        with self._lock:
            self._conn.close()
