"""The durable spool: spans on disk before the receiver acknowledges them.

Why SQLite in WAL mode with one writer thread (group commit): every acknowledged span
must survive ``kill -9``; committing once per request from many receiver threads would
serialise on fsync, so requests queue here and one transaction commits a whole group.
``synchronous=FULL`` (default) fsyncs the WAL at every commit and survives power loss;
``NORMAL`` survives a crashed process (the WAL is in the OS cache) but not a crashed
machine — a setting, with that trade-off stated.

With evaluation paused (``serve.spool_only``) a protobuf request is spooled as it came, one
row of ``requests`` holding its serialized bytes: no span is decoded before the
acknowledgement. The next start with evaluation on settles each such row in one
transaction — its spans become rows of ``spans``, spans the decoder refuses go to the
dead-letter tables under ``request:<seq>`` with the reasons — and replays as usual.

A session's life in the file: its spans are rows of ``spans`` until it is evaluated; then
one transaction deletes them, records the session and its traces as done, and enqueues
its verdicts in the outbox. After a crash either all of that happened or none did, so a
session's spans are evaluated exactly once and its verdicts are never lost.

Revisions: a session id can come back with new traces after its verdict is out (the same
conversation id reused for a new run). Those traces are evaluated as revision N of the
session (``done_sessions.revisions`` counts them): their verdicts carry ``revision: N`` and
keys of their own (:func:`aem.sinks.records.revised`), so the outbox never takes them for
the earlier verdict. What is evaluated exactly once is a *trace*: a session whose traces
are already in ``done_traces`` is a duplicate, never a revision.
A lost or set-back counter row never reuses a number: the next revision continues after
the highest one the outbox keys, the dead-letter row or the evaluated traces still show
(:func:`next_revision`), and the log says so.

Retention (:class:`Pruner`): the marks and delivered verdicts would otherwise grow the file
forever. A delivered outbox row goes ``retention_seconds`` after its delivery; a session's
marks (``done_sessions`` and its ``done_traces``) go ``retention_seconds`` after its
evaluation, and only once none of its outbox rows is left — so an undelivered verdict is
never deleted, and while a session's verdicts exist its marks do, which is what keeps a
late span of an evaluated trace (or a replay after a restart) from being evaluated again,
and what numbers a returning session's revision.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import queue
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aem.engines.compact import span_from_tuple, span_to_tuple
from aem.foundation.model import SpanRecord
from aem.serve import defaults, outbox
from aem.serve.supervisor import SupervisedThread
from aem.sinks.records import FIRST_REVISION, KEY_SEPARATOR, OutboxItem, revised

log = logging.getLogger("aem.serve.spool")

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
    evaluated_at REAL NOT NULL,  -- the latest evaluation (revision) of the session
    spans INTEGER NOT NULL,  -- evaluated in all of its revisions
    cut INTEGER NOT NULL,  -- the latest evaluation was cut: later spans are late
    revisions INTEGER NOT NULL DEFAULT 0  -- the latest revision committed (0: the first)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS done_sessions_evaluated ON done_sessions (evaluated_at);
CREATE TABLE IF NOT EXISTS done_traces (
    trace_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS done_traces_session ON done_traces (session_id);
CREATE TABLE IF NOT EXISTS dead_letter (
    session_id TEXT PRIMARY KEY,
    failed_at REAL NOT NULL,
    spans INTEGER NOT NULL,
    error TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dead_spans (
    session_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS dead_spans_session ON dead_spans (session_id);
CREATE TABLE IF NOT EXISTS spool_health (id INTEGER PRIMARY KEY, written_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at REAL NOT NULL,
    origin TEXT NOT NULL,
    spans INTEGER NOT NULL,
    body BLOB NOT NULL
);
"""

# Columns added since the first spool layout: (table, column, definition). A file written
# by an earlier version gains them when it is opened (see Spool._migrate).
ADDED_COLUMNS = (("done_sessions", "revisions", "INTEGER NOT NULL DEFAULT 0"),)

PRUNE_BATCH = 500  # rows per prune transaction: the spool writer waits at most this long
# Trace ids per ``IN (...)`` probe of done_traces: below SQLite's bound on parameters.
TRACE_PROBE_BATCH = 500

Op = Callable[[sqlite3.Connection], Any]
_REVISION = re.compile(r"r[1-9][0-9]*")  # the last key segment :func:`revised` adds


class SpoolClosed(RuntimeError):
    """The spool is shutting down; the caller must not acknowledge."""


class SpoolUnavailable(OSError):
    """The spool file cannot be opened for writing (missing directory, read-only...).

    An ``OSError`` so that start-up reports it in one line instead of a traceback.
    """


def encode_span(span: SpanRecord) -> bytes:
    """The spool's bytes of one span; their length is also its decoded size for budgets."""
    return _encode(span)


def _encode(span: SpanRecord) -> bytes:
    # pickle: exact round trip of every attribute type (bytes included); the file is
    # written and read only by this process's own code. The span as a flat tuple
    # (aem.engines.compact) pickles 2-3x faster than the dataclass, and it is on the
    # receive path of every span.
    return pickle.dumps(span_to_tuple(span), protocol=pickle.HIGHEST_PROTOCOL)


def decode_span(data: bytes) -> SpanRecord:
    """The inverse of :func:`encode_span`; also reads rows spooled as pickled dataclasses
    (by earlier versions), so an upgrade replays what was acknowledged before it."""
    value = pickle.loads(data)
    return span_from_tuple(value) if isinstance(value, tuple) else value


SpanRow = tuple[str, str, bytes]  # trace_id, span_id, encode_span bytes


def _migrate(conn: sqlite3.Connection) -> None:
    """Add the columns a spool written by an earlier version lacks (inside the caller's
    transaction), so an upgrade keeps what that version acknowledged and evaluated."""
    for table, column, definition in ADDED_COLUMNS:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
            log.info("spool migrated", extra={"table": table, "added_column": column})


def _done_traces(conn: sqlite3.Connection, trace_ids: Sequence[str]) -> set[str]:
    """Which of ``trace_ids`` were evaluated (or dead-lettered) already."""
    done: set[str] = set()
    ids = list(trace_ids)
    for start in range(0, len(ids), TRACE_PROBE_BATCH):
        chunk = ids[start : start + TRACE_PROBE_BATCH]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT trace_id FROM done_traces WHERE trace_id IN ({marks})"
        done.update(row[0] for row in conn.execute(sql, chunk))
    return done


def next_revision(conn: sqlite3.Connection, session_id: str) -> int:
    """The revision the next evaluation of ``session_id`` takes (inside the writer's
    transaction): one past the highest the spool holds any trace of.

    Why not the counter alone: ``done_sessions.revisions`` is one row, and a row lost
    (deleted by hand, a file restored from a backup, a tool that "cleaned" the table) while
    the outbox kept the session's verdicts would number the next evaluation 0 again; its
    items' keys then equal the delivered ones and ``INSERT OR IGNORE`` drops them in
    silence. So the counter is checked against the revisions the outbox keys carry, the
    session's dead-letter row and its evaluated traces, and a counter found behind them is
    said in the log and continued past, never reused.
    """
    row = conn.execute(
        "SELECT revisions FROM done_sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    counted = int(row[0]) if row is not None else None
    held = _highest_held_revision(conn, session_id)
    if counted is not None and (held is None or counted >= held):
        return counted + 1
    if held is None:
        return FIRST_REVISION
    log.warning(
        "revision counter behind the spool; continuing after the highest revision held",
        extra={"session_id": session_id, "counter": counted, "highest_held": held},
    )
    return held + 1


def _highest_held_revision(conn: sqlite3.Connection, session_id: str) -> int | None:
    """The highest revision of ``session_id`` anything in the spool shows: the outbox keys
    (``revised`` adds ``r<N>``; a key without it is revision 0), else 0 when a
    dead-letter row or an evaluated trace of it remains; None when nothing does."""
    low = session_id + KEY_SEPARATOR
    high = session_id + chr(ord(KEY_SEPARATOR) + 1)
    depth = session_id.count(KEY_SEPARATOR) + 3  # separators of a revised item's key
    highest: int | None = None
    for sink in outbox.sinks_in(conn):
        for (key,) in conn.execute(
            "SELECT key FROM outbox WHERE sink = ? AND key >= ? AND key < ?", (sink, low, high)
        ):
            last = key.rsplit(KEY_SEPARATOR, 1)[-1]
            revised_key = key.count(KEY_SEPARATOR) == depth and _REVISION.fullmatch(last)
            revision = int(last[1:]) if revised_key else FIRST_REVISION
            highest = revision if highest is None else max(highest, revision)
    if highest is not None:
        return highest
    for sql in (
        "SELECT 1 FROM dead_letter WHERE session_id = ?",
        "SELECT 1 FROM done_traces WHERE session_id = ? LIMIT 1",
    ):
        if conn.execute(sql, (session_id,)).fetchone() is not None:
            return FIRST_REVISION
    return None


@dataclass(frozen=True, slots=True)
class EarlierEvaluation:
    """What the spool remembers of a closed session's id and traces.

    ``cut``: the session's latest evaluation was cut (its further spans are late, never a
    revision); ``done_traces``: those of the asked traces already evaluated (late).
    """

    cut: bool
    done_traces: frozenset[str]


@dataclass(frozen=True, slots=True)
class DeadRows:
    """What the decoder refused of one raw request: the rows kept for a human (the
    refused spans, or the whole body as one row when it does not decode at all), how
    many spans that is, and why."""

    rows: list[SpanRow]
    spans: int
    error: str


class Spool:
    """SQLite spool with a single group-committing writer thread."""

    def __init__(
        self,
        path: Path,
        *,
        synchronous: str = defaults.SPOOL_SYNCHRONOUS,
        commit_batch: int = defaults.SPOOL_COMMIT_BATCH,
        sinks: Sequence[str] = (),
        sink_kinds: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.path = Path(path)
        self._sinks = list(sinks)
        # The item kinds each sink takes (outbox.enqueue): no row for an item it would skip.
        self._sink_kinds = dict(sink_kinds or {})
        self._commit_batch = commit_batch
        self._conn = self._open(synchronous)
        self._ops: queue.Queue[tuple[Op, Future[Any]] | None] = queue.Queue()
        self._closed = False
        self.commits = 0
        # Why the last write error is kept: while writes fail (disk full) the server must
        # say so on /readyz, and say it no longer once a write succeeds again.
        self.failing: str | None = None
        row = self._conn.execute("SELECT count(*) FROM dead_letter").fetchone()
        self.dead_letters = int(row[0])
        # Started again by the supervisor if it dies, unless the spool was closed.
        self.writer = SupervisedThread("spool-writer", self._run, stopped=lambda: self._closed)
        self.writer.start()

    def _open(self, synchronous: str) -> sqlite3.Connection:
        """Open (and prove writable) the spool; any failure is one :class:`SpoolUnavailable`."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise SpoolUnavailable(f"spool {self.path}: cannot open ({exc})") from exc
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={synchronous}")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.executescript(SCHEMA)
            outbox.create_schema(conn)
            # A read-only file opens fine and even reads: prove a write goes through.
            conn.execute("BEGIN IMMEDIATE")
            _migrate(conn)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.execute(f"PRAGMA user_version={int(version)}")
            conn.execute("CREATE TABLE IF NOT EXISTS spool_probe (x)")
            conn.execute("DROP TABLE spool_probe")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.close()
            raise SpoolUnavailable(f"spool {self.path}: not writable ({exc})") from exc
        return conn

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
            try:
                self._commit(group)
            except BaseException as exc:
                # Never leave a receiver waiting on a future nobody will complete.
                for _, future in group:
                    if not future.done():
                        future.set_exception(exc)
                raise
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
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            if len(group) > 1:
                log.warning("spool transaction failed; retrying its operations one by one")
                for item in group:
                    self._commit([item])
                return
            if isinstance(exc, sqlite3.Error):
                if self.failing is None:
                    log.error("spool write failing", extra={"error": str(exc)})
                self.failing = f"{type(exc).__name__}: {exc}"
            group[0][1].set_exception(exc)
            return
        if self.failing is not None:
            log.info("spool writes succeed again", extra={"was": self.failing})
            self.failing = None
        for (_, future), result in zip(group, results, strict=True):
            future.set_result(result)

    def _submit(self, op: Op) -> Future[Any]:
        if self._closed:
            raise SpoolClosed("spool is closed")
        future: Future[Any] = Future()
        self._ops.put((op, future))
        return future

    # ---- operations ----------------------------------------------------------------
    def append(self, spans: Sequence[SpanRecord], encoded: Sequence[bytes] | None = None) -> None:
        """Write spans durably; returns only once they are committed (then ack).

        ``encoded``: the spans already through :func:`encode_span` (the intake sizes them).
        """
        data = encoded if encoded is not None else [_encode(s) for s in spans]
        rows = [(s.trace_id, s.span_id, d) for s, d in zip(spans, data, strict=True)]

        def op(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT INTO spans (trace_id, span_id, data) VALUES (?, ?, ?)", rows)

        self._submit(op).result()

    def append_request(self, origin: str, spans: int, body: bytes) -> None:
        """Write one raw protobuf request durably (evaluation paused); returns once it is
        committed, in the same group commits as span rows. Decoded at the next start
        with evaluation on (:meth:`settle_request`)."""
        row = (time.time(), origin, spans, body)

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO requests (received_at, origin, spans, body) VALUES (?, ?, ?, ?)", row
            )

        self._submit(op).result()

    def raw_requests(self, chunk: int = 64) -> Iterator[tuple[int, str, int, bytes]]:
        """``(seq, origin, spans, body)`` of every spooled raw request, oldest first.

        Read on a separate connection, before the receivers start (as :meth:`replay`)."""
        conn = sqlite3.connect(self.path)
        try:
            last = 0
            while True:
                rows = conn.execute(
                    "SELECT seq, origin, spans, body FROM requests WHERE seq > ? "
                    "ORDER BY seq LIMIT ?",
                    (last, chunk),
                ).fetchall()
                if not rows:
                    return
                for row in rows:
                    last = row[0]
                    yield row
        finally:
            conn.close()

    def settle_request(self, seq: int, kept: Sequence[SpanRow], dead: DeadRows | None) -> bool:
        """Atomically replace raw request ``seq`` by its decoded span rows ``kept``; what
        the decoder refused goes to the dead-letter tables as session ``request:<seq>``.

        Returns False (and changes nothing) when the request was settled already.
        """

        def op(conn: sqlite3.Connection) -> bool:
            if conn.execute("DELETE FROM requests WHERE seq = ?", (seq,)).rowcount == 0:
                return False
            conn.executemany("INSERT INTO spans (trace_id, span_id, data) VALUES (?, ?, ?)", kept)
            if dead is not None:
                name = f"request:{seq}"
                conn.execute(
                    "INSERT OR REPLACE INTO dead_letter VALUES (?, ?, ?, ?)",
                    (name, time.time(), dead.spans, dead.error),
                )
                conn.executemany(
                    "INSERT INTO dead_spans VALUES (?, ?, ?, ?)", [(name, *r) for r in dead.rows]
                )
            return True

        settled = bool(self._submit(op).result())
        self.dead_letters += settled and dead is not None
        return settled

    def commit_session(
        self,
        session_id: str,
        trace_ids: Sequence[str],
        items: Sequence[OutboxItem],
        *,
        spans: int,
        cut: bool,
    ) -> int | None:
        """Atomically: mark evaluated, forget its spans, enqueue its verdicts.

        Returns the revision committed: 0 for a session id never evaluated, N when the id
        was evaluated (or dead-lettered) N times before (its items then go out as
        :func:`revised`). Returns
        None (and changes nothing) when any of ``trace_ids`` was already evaluated: a
        duplicate. Decided inside the transaction, by the one writer thread, so two
        evaluations of one id can never get the same revision.
        """

        def op(conn: sqlite3.Connection) -> int | None:
            if _done_traces(conn, trace_ids):
                return None
            now = time.time()
            revision = next_revision(conn, session_id)
            conn.execute(
                "INSERT INTO done_sessions (session_id, evaluated_at, spans, cut, revisions) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "evaluated_at = excluded.evaluated_at, spans = done_sessions.spans + "
                "excluded.spans, cut = excluded.cut, revisions = excluded.revisions",
                (session_id, now, spans, int(cut), revision),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO done_traces VALUES (?, ?)",
                [(t, session_id) for t in trace_ids],
            )
            conn.executemany("DELETE FROM spans WHERE trace_id = ?", [(t,) for t in trace_ids])
            outbox.enqueue(conn, revised(items, revision), self._sinks, now, self._sink_kinds)
            return revision

        revision: int | None = self._submit(op).result()
        return revision

    def dead_letter(
        self, session_id: str, trace_ids: Sequence[str], *, spans: int, error: str
    ) -> bool:
        """Atomically move a session whose evaluation raised out of the retry loop.

        Its spans go to ``dead_spans`` (kept for a human, with the error in ``dead_letter``)
        and the session and its traces are marked done, so neither a restart nor a late
        span evaluates them again. A revision that fails joins its session's dead-letter
        row (spans added, errors kept one per line), so no failure is lost, and uses up
        its revision number. Returns False when any of the traces was already done.
        """

        def op(conn: sqlite3.Connection) -> tuple[bool, bool]:
            if _done_traces(conn, trace_ids):
                return False, False
            now = time.time()
            # A failed revision still takes its number: revision N is always the id's
            # (N+1)th evaluation, whether its verdict came out or it was dead-lettered.
            revision = next_revision(conn, session_id)
            conn.execute(
                "INSERT INTO done_sessions (session_id, evaluated_at, spans, cut, revisions) "
                "VALUES (?, ?, ?, 0, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "evaluated_at = excluded.evaluated_at, spans = done_sessions.spans + "
                "excluded.spans, revisions = excluded.revisions",
                (session_id, now, spans, revision),
            )
            known = conn.execute(
                "SELECT 1 FROM dead_letter WHERE session_id = ?", (session_id,)
            ).fetchone()
            conn.execute(
                "INSERT INTO dead_letter VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE "
                "SET failed_at = excluded.failed_at, spans = dead_letter.spans + excluded.spans, "
                "error = dead_letter.error || char(10) || excluded.error",
                (session_id, now, spans, error),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO done_traces VALUES (?, ?)",
                [(t, session_id) for t in trace_ids],
            )
            for trace_id in trace_ids:
                conn.execute(
                    "INSERT INTO dead_spans SELECT ?, trace_id, span_id, data FROM spans "
                    "WHERE trace_id = ?",
                    (session_id, trace_id),
                )
                conn.execute("DELETE FROM spans WHERE trace_id = ?", (trace_id,))
            return True, known is None

        moved, new_row = self._submit(op).result()
        self.dead_letters += new_row  # the gauge counts rows of dead_letter
        return bool(moved)

    def probe(self) -> None:
        """Queue one tiny write (not waited for) so a failing spool notices it recovered.

        Why: while the disk is full, clients are pushed back and may stop sending; without
        a write, ``failing`` (and /readyz) would stay stuck after space came back.
        """

        def op(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT OR REPLACE INTO spool_health VALUES (1, ?)", (time.time(),))

        with contextlib.suppress(SpoolClosed):
            self._submit(op)

    def forget_spans(self, keys: Sequence[tuple[str, str]]) -> None:
        """Delete late spans (already counted and reported) so a restart won't revive them."""

        def op(conn: sqlite3.Connection) -> None:
            conn.executemany("DELETE FROM spans WHERE trace_id = ? AND span_id = ?", keys)

        self._submit(op).result()

    # ---- reads (startup and checks; not on the hot path) ----------------------------
    def earlier_evaluation(
        self, session_id: str, trace_ids: Sequence[str]
    ) -> EarlierEvaluation | None:
        """What was evaluated before of a closed session: None when neither its id nor any
        of its traces was (a new session). Asked when the assembler cannot know (after a
        restart, or once it forgot the id): its traces evaluated already are late, and
        so is the whole session when its latest evaluation was cut; the rest is a revision.
        """

        def op(conn: sqlite3.Connection) -> EarlierEvaluation | None:
            row = conn.execute(
                "SELECT cut FROM done_sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            done = _done_traces(conn, trace_ids)
            if row is None and not done:
                return None
            return EarlierEvaluation(cut=bool(row and row[0]), done_traces=frozenset(done))

        earlier: EarlierEvaluation | None = self._submit(op).result()
        return earlier

    def replay(self, chunk: int = 5000) -> Iterator[tuple[SpanRecord, bool, int]]:
        """Every spooled span in arrival order, whether its trace was already evaluated,
        and its size in bytes (for the memory budget).

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
                    span = decode_span(data)
                    last = seq
                    yield span, span.trace_id in done, len(data)
        finally:
            conn.close()

    def counts(self) -> dict[str, int]:
        def op(conn: sqlite3.Connection) -> dict[str, int]:
            return {
                table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in (
                    "spans",
                    "done_sessions",
                    "done_traces",
                    "outbox",
                    "dead_letter",
                    "dead_spans",
                    "requests",
                )
            }

        result: dict[str, int] = self._submit(op).result()
        return result

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._ops.put(None)
        self.writer.join(timeout=30)
        self._conn.close()


class Pruner:
    """Deletes what retention no longer needs, in its own thread and on its own connection.

    Off the receive path: reads never block the spool writer (WAL), and every delete is a
    short transaction of at most ``batch`` rows, so a receiver waits for one such batch at
    worst. ``on_pruned`` gets the rows deleted per table after each pass.
    """

    def __init__(
        self,
        path: Path,
        *,
        retention_seconds: float,
        interval_seconds: float,
        on_pruned: Callable[[dict[str, int]], None] | None = None,
        batch: int = PRUNE_BATCH,
    ) -> None:
        self._path = Path(path)
        self._retention = retention_seconds
        self._interval = interval_seconds
        self._on_pruned = on_pruned
        self._batch = batch
        self._stop = threading.Event()
        self.thread = SupervisedThread("spool-pruner", self._run, stopped=self._stop.is_set)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=30)

    def _run(self) -> None:
        conn = outbox.connect(self._path)
        try:
            while not self._stop.is_set():
                try:
                    pruned = self.prune_once(conn, time.time() - self._retention)
                except sqlite3.Error:
                    # A busy or failing file must not end the thread; the next pass retries.
                    log.exception("spool prune failed")
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                else:
                    if any(pruned.values()):
                        log.info("spool pruned", extra=pruned)
                    if self._on_pruned is not None:
                        self._on_pruned(pruned)
                self._stop.wait(self._interval)
        finally:
            conn.close()

    def prune_once(self, conn: sqlite3.Connection, before: float) -> dict[str, int]:
        """One pass: delivered outbox rows, then marks, of everything older than ``before``."""
        pruned = {"outbox": 0, "done_sessions": 0, "done_traces": 0}
        while not self._stop.is_set():
            conn.execute("BEGIN IMMEDIATE")
            n = outbox.prune_delivered(conn, before, self._batch)
            conn.execute("COMMIT")
            pruned["outbox"] += n
            if n < self._batch:
                break
        last: tuple[float, str] = (float("-inf"), "")
        while not self._stop.is_set():
            page = conn.execute(
                "SELECT evaluated_at, session_id FROM done_sessions "
                "WHERE evaluated_at < ? AND (evaluated_at, session_id) > (?, ?) "
                "ORDER BY evaluated_at, session_id LIMIT ?",
                (before, *last, self._batch),
            ).fetchall()
            if not page:
                break
            last = page[-1]
            conn.execute("BEGIN IMMEDIATE")
            # Checked inside the write transaction, so no outbox row can appear meanwhile.
            sinks = outbox.sinks_in(conn)
            gone = [(sid,) for _, sid in page if not outbox.holds_session(conn, sinks, sid)]
            before_changes = conn.total_changes
            conn.executemany("DELETE FROM done_traces WHERE session_id = ?", gone)
            pruned["done_traces"] += conn.total_changes - before_changes
            conn.executemany("DELETE FROM done_sessions WHERE session_id = ?", gone)
            conn.execute("COMMIT")
            pruned["done_sessions"] += len(gone)
        return pruned
