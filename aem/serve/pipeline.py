"""Sessions in flight: assemble spans as they arrive, evaluate complete sessions off the
receive path, commit verdicts to the outbox.

Threads and queues (each bounded, so memory is bounded and overload pushes back):

    receivers ──SpanQueue(spans)──▶ assembler thread ──eval queue(sessions)──▶ evaluators
                                    (SessionAssembler)                        (evaluate,
                                                                               commit)

The assembler thread stops pulling spans while the spans held in open sessions exceed
``max_spans_in_flight`` or while the evaluation queue is full; the SpanQueue then fills and
the receivers answer RESOURCE_EXHAUSTED / 429. Sessions are never dropped.

A conversation id that comes back with new traces after its verdict is out is evaluated
again, as a revision (the spool numbers it at commit): developers reuse one id while they
iterate, and dropping the new runs as late spans hid them. Spans of an evaluated trace and
spans of a session after its cut stay late (collectors.assembler says why).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from aem.foundation.model import ClosedSession, InputIssue, SessionReport, SpanRecord
from aem.serve import defaults
from aem.serve.budget import Budget, client_of
from aem.serve.latespans import LateSpanTally
from aem.serve.ops import ServeMetrics
from aem.serve.queues import SpanQueue
from aem.serve.spool import EarlierEvaluation, Spool, SpoolClosed
from aem.serve.supervisor import SupervisedThread
from aem.sinks.records import verdict_items
from collectors.assembler import SessionAssembler
from collectors.limits import DEFAULT_MAX_SESSION_SPANS

log = logging.getLogger("aem.serve.pipeline")

Evaluate = Callable[[ClosedSession], SessionReport]
T = TypeVar("T")

REPLAY_BATCH = 5000
# At most one "late spans" line per session this often (aem.serve.latespans).
LATE_SPAN_LOG_SECONDS = 10.0


class Abandoned(Exception):
    """The evaluation did not take place (shutting down): the session stays in the spool
    for the next start, neither committed nor dead-lettered."""


@dataclass(slots=True)
class _Complete:
    session: ClosedSession
    completed_at: float  # wall clock, for the completion → delivery delay
    bytes: int = 0  # charged to the budget until the session is committed


class _Assembler(SessionAssembler):
    """The shared assembler plus one live-only operation: cut chosen sessions now."""

    def cut(self, trace_ids: Iterable[str]) -> list[ClosedSession]:
        """Close the sessions holding ``trace_ids`` at once, marked cut (byte eviction)."""
        wanted = {self._traces[t].session_id for t in trace_ids if t in self._traces}
        if not wanted:
            return []
        groups = self._group()
        return [self._close(sid, groups[sid], cut=True) for sid in wanted if sid in groups]


@dataclass(frozen=True)
class PipelineLimits:
    idle_seconds: float
    max_lifetime_seconds: float | None
    max_spans_in_flight: int
    eval_queue_sessions: int
    evaluator_workers: int
    tick_seconds: float
    # Spans held for one session ([assembly] max_session_spans; None: no limit).
    max_session_spans: int | None = DEFAULT_MAX_SESSION_SPANS
    # Sessions with more spans are evaluated in a lane of their own (one at a time).
    large_session_spans: int = defaults.LARGE_SESSION_SPANS


class Pipeline:
    def __init__(
        self,
        *,
        spool: Spool,
        intake: SpanQueue,
        evaluate: Evaluate,
        limits: PipelineLimits,
        metrics: ServeMetrics,
        on_committed: Callable[[], None],
        budget: Budget,
        provenance: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self._spool, self._budget, self._intake, self._evaluate = spool, budget, intake, evaluate
        self._limits, self._metrics, self._provenance = limits, metrics, provenance
        self._on_committed = on_committed
        self._late: list[tuple[str, str]] = []
        self._late_log = LateSpanTally(LATE_SPAN_LOG_SECONDS, time.monotonic)
        # Sees every span as it is assembled (live scorecards, aem.serve.scorecards).
        self.on_spans: Callable[[list[SpanRecord]], None] | None = None
        self.assembler = _Assembler(
            idle=limits.idle_seconds,
            max_lifetime=limits.max_lifetime_seconds,
            on_issue=self._issue,
            max_session_spans=limits.max_session_spans,
            revisions=True,  # a conversation id that comes back is evaluated again
        )
        self._eval_q: queue.Queue[_Complete | None] = queue.Queue(limits.eval_queue_sessions)
        # Large sessions wait here, for their own evaluator: never for the small ones'
        # threads, and never holding them. Unbounded in count: their bytes stay charged
        # to the budget until committed, which bounds them (and pushes intake back).
        self._large_q: queue.Queue[_Complete | None] = queue.Queue()
        self.spans_in_flight = 0
        self.evaluating = 0
        self._stop = threading.Event()
        self._drain = True
        self._asm_thread = SupervisedThread("assembler", self._assemble_loop)
        self._evaluators = [
            SupervisedThread(f"evaluator-{i}", lambda: self._evaluate_loop(self._eval_q))
            for i in range(limits.evaluator_workers)
        ]
        self._large_evaluator = SupervisedThread(
            "evaluator-large", lambda: self._evaluate_loop(self._large_q)
        )
        self._asm_lock = threading.Lock()
        metrics.gauge("aem_sessions_open", "sessions being assembled", self._open_sessions)
        metrics.gauge("aem_spans_in_flight", "spans held in open sessions", self._in_flight)
        metrics.gauge(
            "aem_queue_depth_ingest_spans", "spans waiting to be assembled", lambda: intake.depth
        )
        metrics.gauge(
            "aem_queue_depth_eval_sessions", "complete sessions waiting", self._eval_q.qsize
        )
        metrics.gauge(
            "aem_queue_depth_large_sessions",
            "complete sessions over large_session_spans waiting for their lane",
            self._large_q.qsize,
        )

    def threads(self) -> list[SupervisedThread]:
        """Every pipeline thread, for the supervisor (restarted if it dies)."""
        return [self._asm_thread, *self._evaluators, self._large_evaluator]

    def _open_sessions(self) -> float:
        with self._asm_lock:
            return self.assembler.open_sessions

    def _in_flight(self) -> float:
        return self.spans_in_flight

    # ---- assembling ------------------------------------------------------------------
    def _issue(self, issue: InputIssue) -> None:
        if issue.kind == "late_span" and issue.trace_id and issue.span_id:
            self._budget.release(self._budget.close_traces([issue.trace_id]))
            self._late.append((issue.trace_id, issue.span_id))
            self._metrics.late_spans.inc()
            self._late_log.add(issue.session_id or issue.trace_id, issue.span_id)

    def replay(self) -> int:
        """Rebuild open sessions from the spool after a restart (before receivers start)."""
        n = 0
        now = time.monotonic()
        for span, trace_done, size in self._spool.replay():
            if trace_done:
                self._late.append((span.trace_id, span.span_id))
                self._metrics.late_spans.inc()
                continue
            client = client_of(span.origin.source) if span.origin else "replay"
            self._budget.admit(client, [span], [size], force=True)
            before = self.assembler.spans_added
            self.assembler.add(span, now)
            self.spans_in_flight += self.assembler.spans_added - before
            n += 1
            if self.on_spans is not None:
                self.on_spans([span])
        self._forget_late()
        return n

    def _forget_late(self) -> None:
        if self._late:
            late, self._late = self._late, []
            try:
                self._spool.forget_spans(late)
            except SpoolClosed:
                pass
            except Exception:
                # Disk full, say: keep them and try again next round (never lose track).
                log.warning("could not forget late spans yet", exc_info=True)
                self._late.extend(late)

    def _can_take(self) -> bool:
        return self.spans_in_flight < self._limits.max_spans_in_flight and not self._eval_q.full()

    def _assemble_loop(self) -> None:
        tick = self._limits.tick_seconds
        last_tick = 0.0
        while True:
            stopping = self._stop.is_set()
            if self._can_take() or stopping:
                batches = self._intake.get_all(timeout=0 if stopping else tick)
            else:
                batches = []
                time.sleep(tick / 4)
            now = time.monotonic()
            with self._asm_lock:
                before = self.assembler.spans_added
                for batch in batches:
                    for span in batch:
                        self.assembler.add(span, now)
                self.spans_in_flight += self.assembler.spans_added - before
            if self.on_spans is not None:
                for batch in batches:
                    self.on_spans(batch)
            self._forget_late()
            if stopping and not batches:
                break
            self._evict()
            if now - last_tick >= tick:
                last_tick = now
                with self._asm_lock:
                    complete = self.assembler.pop_complete(now)
                self._hand_over(complete)
                self._late_log.flush()
        self._late_log.flush(force=True)
        if self._drain:
            with self._asm_lock:
                rest = self.assembler.drain()
            self._hand_over(rest)
            self._forget_late()
        for _ in self._evaluators:
            self._eval_q.put(None)
        self._large_q.put(None)

    def _evict(self) -> None:
        """Cut the sessions the byte budget gives up on (see aem.serve.budget)."""
        for traces in self._budget.evictions():
            with self._asm_lock:
                sessions = self.assembler.cut(traces)
            for session in sessions:
                self._metrics.sessions_evicted.inc()
                log.warning(
                    "session evicted by the byte budget; evaluated now, marked cut",
                    extra={"session_id": session.session_id, "spans": len(session.spans)},
                )
            self._hand_over(sessions)

    def _hand_over(self, sessions: list[ClosedSession]) -> None:
        wall = time.time()
        for closed in sessions:
            self.spans_in_flight -= len(closed.spans)
            session = self._without_evaluated(closed)
            if session is None:
                continue
            job = _Complete(session, wall, self._budget.close_traces(session.trace_ids))
            if len(session.spans) > self._limits.large_session_spans:
                log.info(
                    "large session: evaluated in its own lane",
                    extra={"session_id": session.session_id, "spans": len(session.spans)},
                )
                self._large_q.put(job)
            else:
                self._eval_q.put(job)  # blocks when full: backpressure

    def _without_evaluated(self, session: ClosedSession) -> ClosedSession | None:
        """``session`` less what the spool says was evaluated before (None: nothing left).

        Only the spool can tell after a restart, or once the assembler forgot the id: spans
        of an evaluated trace are late, and so is the whole session when its id's latest
        evaluation was cut (the same run past its limit). New traces of an id evaluated
        uncut are kept: evaluated, they become its next revision (at commit).
        """
        earlier = self._earlier_evaluation(session)
        if earlier is None:
            return session
        late = set(session.trace_ids) if earlier.cut else set(earlier.done_traces)
        if not late:
            return session
        spans = [s for s in session.spans if s.trace_id in late]
        self._budget.release(self._budget.close_traces(late))
        self._metrics.late_spans.inc(len(spans))
        self._late.extend((s.trace_id, s.span_id) for s in spans)  # forgotten by _forget_late
        log.info(
            "late spans of an evaluated session",
            extra={"session_id": session.session_id, "spans": len(spans)},
        )
        rest = [s for s in session.spans if s.trace_id not in late]
        return replace(session, spans=rest) if rest else None

    def _earlier_evaluation(self, session: ClosedSession) -> EarlierEvaluation | None:
        try:
            return self._spool.earlier_evaluation(session.session_id, session.trace_ids)
        except Exception:
            return None  # cannot tell: evaluating again is caught by commit_session

    # ---- evaluating ------------------------------------------------------------------
    def _evaluate_loop(self, jobs: queue.Queue[_Complete | None]) -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            self.evaluating += 1
            try:
                self._evaluate_one(job)
            finally:
                self.evaluating -= 1
                self._budget.release(job.bytes)

    def _evaluate_one(self, job: _Complete) -> None:
        session = job.session
        started = time.perf_counter()
        try:
            report = self._evaluate(session)
            items = verdict_items(
                report, completed_at=job.completed_at, provenance=self._provenance
            )
        except Abandoned:
            log.info("evaluation abandoned at shutdown", extra={"session_id": session.session_id})
            return
        except Exception as exc:
            self._dead_letter(session, exc)
            return
        self._metrics.evaluation_seconds.observe(time.perf_counter() - started)
        # In a 1-tuple: commit_session's None (a duplicate) is not _durably's (closed).
        outcome = self._durably(
            "commit_session",
            session.session_id,
            lambda: (
                self._spool.commit_session(
                    session.session_id,
                    session.trace_ids,
                    items,
                    spans=len(session.spans),
                    cut=session.cut,
                ),
            ),
        )
        if outcome is None:
            return  # shutting down while the spool fails: the spans stay for the next start
        (revision,) = outcome
        if revision is None:
            log.warning("session already evaluated", extra={"session_id": session.session_id})
            return
        self._committed(session, len(items), revision)

    def _committed(self, session: ClosedSession, items: int, revision: int) -> None:
        """Count and log a session whose verdicts are in the outbox."""
        self._metrics.sessions_evaluated.inc()
        if session.cut:
            self._metrics.sessions_cut.inc()
        if revision:
            self._metrics.sessions_revised.inc()
        log.info(
            f"session evaluated again as revision {revision}" if revision else "session evaluated",
            extra={
                "session_id": session.session_id,
                "spans": len(session.spans),
                "verdict_items": items,
                "cut": session.cut,
                "revision": revision,
            },
        )
        self._on_committed()

    def _dead_letter(self, session: ClosedSession, exc: Exception) -> None:
        """An evaluation that raised: report it and take the session out of the retry loop.

        Why not leave the spans in the spool: they would be replayed, and fail, at every
        start; the dead-letter table keeps them for a human instead.
        """
        error = f"{type(exc).__name__}: {exc}"
        log.error(
            "evaluation failed; session moved to the dead-letter table",
            exc_info=exc,
            extra={"session_id": session.session_id, "spans": len(session.spans), "error": error},
        )
        self._metrics.sessions_failed.inc()
        self._durably(
            "dead_letter",
            session.session_id,
            lambda: self._spool.dead_letter(
                session.session_id, session.trace_ids, spans=len(session.spans), error=error
            ),
        )

    def _durably(self, what: str, session_id: str, op: Callable[[], T]) -> T | None:
        """Run a spool write until it succeeds (disk full → retry with backoff, not die).

        Returns None when the spool closed meanwhile (shutdown): nothing was committed and
        the session's spans are still in the spool for the next start.
        """
        delay = 0.1
        while True:
            try:
                return op()
            except SpoolClosed:
                return None
            except Exception as exc:
                self._metrics.spool_write_errors.labels(what).inc()
                log.warning(
                    "spool write failed; retrying",
                    extra={"op": what, "session_id": session_id, "error": str(exc)},
                )
            time.sleep(delay)
            delay = min(delay * 2, 2.0)

    # ---- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        self._asm_thread.start()
        for thread in [*self._evaluators, self._large_evaluator]:
            thread.start()

    def stop(self, *, drain: bool, timeout: float) -> bool:
        """Assemble what is queued, then (if ``drain``) evaluate every open session."""
        self._drain = drain
        self._stop.set()
        deadline = time.monotonic() + timeout
        self._asm_thread.join(max(0.0, deadline - time.monotonic()))
        for thread in [*self._evaluators, self._large_evaluator]:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._late_log.flush(force=True)  # the counts even if assembling outlived the drain
        return not any(t.running() for t in self.threads())
