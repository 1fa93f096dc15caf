"""The ``aem serve`` runtime: start the parts in order, stop them in the reverse order.

Start: spool → outbox workers → replay the spool into the assembler (sessions open at a
crash come back) → pipeline threads → pruner → receivers → ready. Stop (SIGTERM): refuse
new requests → stop receivers → assemble what was acknowledged → evaluate open sessions →
flush the outbox → stop the pruner → close the spool. Every step is bounded by
``drain_timeout_seconds``; anything not finished stays in the spool/outbox for the next start.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

import orjson

from aem.cases import Case
from aem.config import AemConfig, AssemblySettings
from aem.serve import defaults
from aem.serve.budget import Budget, BudgetLimits
from aem.serve.intake import Intake
from aem.serve.ops import ServeMetrics
from aem.serve.outbox import Outbox, RedeliverySchedule
from aem.serve.pipeline import Evaluate, Pipeline, PipelineLimits
from aem.serve.queues import SpanQueue
from aem.serve.rawrequests import settle_raw_requests
from aem.serve.scorecards import scorecard_tracker
from aem.serve.settings import ServeSettings, UnusableSetting
from aem.serve.spool import Pruner, Spool
from aem.serve.storelock import StoreLock
from aem.serve.supervisor import Supervisor
from aem.sinks.base import Sink, item_kinds_of
from aem.sinks.registry import build_sinks
from aem.sinks.stdout import StdoutSink

log = logging.getLogger("aem.serve.server")


def default_evaluator(cases: Mapping[str, Case] | None, config: AemConfig | None) -> Evaluate:
    """The library's evaluation, set up once (metrics, comparator, model) for all threads."""
    from aem.evaluate import Evaluator

    return Evaluator(config, cases).evaluate


def build_evaluate(
    settings: ServeSettings, cases: Mapping[str, Case] | None, config: AemConfig | None
) -> Evaluate:
    """In worker processes (``settings.workers``, default one per core) or in this one.

    The evaluator is built here first either way: a plug-in that cannot load, or a bad
    configuration, fails at start and not in a worker."""
    evaluate = default_evaluator(cases, config)
    from aem.engines import available_cores

    workers = available_cores() if settings.workers is None else settings.workers
    if workers == 0 or settings.spool_only:
        return evaluate
    from aem.serve.workers import PoolEvaluate

    return PoolEvaluate(workers, config, cases)


def _evaluator_threads(settings: ServeSettings, evaluate: Evaluate) -> int:
    """Threads waiting on evaluations: two per worker process keep every worker busy."""
    workers = getattr(evaluate, "workers", 0)
    return max(settings.evaluator_workers, 2 * workers)


class GilShare:
    """A shorter GIL switch interval while sessions are evaluated in this process.

    Why: evaluating a huge session is minutes of pure Python in one thread, and every
    other thread — receivers, assembler, the spool writer, the sinks — gives the GIL up
    at each blocking call (a socket read, each row of an ``executemany``) and then waits
    up to the switch interval (5 ms) to get it back. The spool writer inserting a 500-span
    request waited ~2.5 s that way, and a small session's requests, queued behind it,
    took up to 18 s to be acknowledged and its verdict 9 s more (300 k spans, measured
    with ``bench/serve/huge_small.py``). At 0.5 ms: at most 1.7 s and 3.2 s (the idle
    timeout of 2 s included). With worker processes no thread here holds the GIL for
    long, and the default stays.
    """

    def __init__(self, in_process: bool) -> None:
        self._in_process = in_process
        self._before: float | None = None

    def start(self) -> None:
        if self._in_process and self._before is None:
            self._before = sys.getswitchinterval()
            sys.setswitchinterval(defaults.IN_PROCESS_SWITCH_INTERVAL_SECONDS)

    def stop(self) -> None:
        """Give the process its interval back (a server embedded in a longer process)."""
        if self._before is not None:
            sys.setswitchinterval(self._before)
            self._before = None


def _outbox(settings: ServeSettings, sinks: list[Sink], metrics: ServeMetrics) -> Outbox:
    return Outbox(
        settings.spool_path,
        sinks,
        batch=settings.delivery_batch,
        retry=RedeliverySchedule(
            settings.delivery_retry_initial_seconds, settings.delivery_retry_max_seconds
        ),
        poll_seconds=settings.delivery_poll_seconds,
        on_delivered=metrics.on_delivered,
    )


def _configured_sinks(settings: ServeSettings) -> list[Sink]:
    """The ``[serve.sinks]`` tables' sinks; none configured: standard output, one line per
    verdict (a first run shows that it works and what it found)."""
    sinks = build_sinks(settings.sinks)
    if not sinks:
        log.warning("no sink configured: one line per verdict on standard output")
        sinks = [StdoutSink()]
    return sinks


def _open_spool(settings: ServeSettings, sinks: list[Sink]) -> Spool:
    try:
        return Spool(
            settings.spool_path,
            synchronous=settings.spool_synchronous,
            commit_batch=settings.spool_commit_batch,
            sinks=[s.name for s in sinks],
            sink_kinds={s.name: item_kinds_of(s) for s in sinks},
        )
    except (OSError, sqlite3.Error) as exc:
        reason = f"cannot open {settings.spool_path}: {exc}"
        raise UnusableSetting("spool_path", reason) from exc


def _budget(settings: ServeSettings) -> Budget:
    return Budget(
        BudgetLimits(
            max_bytes=settings.max_bytes_in_flight,
            max_session_bytes=settings.max_session_bytes,
            max_sessions=settings.max_open_sessions,
            max_sessions_per_client=settings.max_open_sessions_per_client,
        )
    )


class LiveServer:
    def __init__(
        self,
        settings: ServeSettings,
        *,
        evaluate: Evaluate,
        sinks: list[Sink] | None = None,
        assembly: AssemblySettings | None = None,
        provenance: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """``assembly``: the evaluation config's session limits (its defaults if None);
        the turn limit is applied where sessions are built (``Evaluator.build``).
        ``provenance``: each metric's evaluator, on every verdict item
        (aem.foundation.provenance)."""
        assembly = assembly or AssemblySettings()
        self.settings = settings
        self._evaluate = evaluate
        self.metrics = ServeMetrics()
        sinks = _configured_sinks(settings) if sinks is None else sinks
        self.store_lock = StoreLock(settings.spool_path).acquire()
        self.spool = _open_spool(settings, sinks)
        self.outbox = _outbox(settings, sinks, self.metrics)
        self.pruner = Pruner(
            settings.spool_path,
            retention_seconds=settings.retention_seconds,
            interval_seconds=settings.retention_prune_interval_seconds,
            on_pruned=self.metrics.on_pruned,
        )
        self.queue = SpanQueue(settings.ingest_queue_spans)
        self.budget = _budget(settings)
        self.intake = self._intake()
        self.pipeline = Pipeline(
            spool=self.spool,
            intake=self.queue,
            evaluate=evaluate,
            limits=PipelineLimits(
                idle_seconds=settings.session_idle_seconds,
                max_lifetime_seconds=settings.session_max_lifetime_seconds,
                max_spans_in_flight=settings.max_spans_in_flight,
                eval_queue_sessions=settings.eval_queue_sessions,
                evaluator_workers=_evaluator_threads(settings, evaluate),
                tick_seconds=settings.tick_seconds,
                max_session_spans=assembly.span_limit,
                large_session_spans=settings.large_session_spans,
            ),
            metrics=self.metrics,
            on_committed=self.outbox.notify,
            budget=self.budget,
            provenance=provenance,
        )
        self.supervisor = self._supervise()
        self._gauges()
        self.scorecards = scorecard_tracker(settings, self.pipeline, self.outbox)
        self._ready = False
        self._grpc: Any = None
        self._http: Any = None
        self.ports: dict[str, int] = {}
        self._stopped = threading.Event()
        in_process = not settings.spool_only and not getattr(evaluate, "workers", 0)
        self._gil = GilShare(in_process)

    def _intake(self) -> Intake:
        return Intake(
            self.spool,
            self.queue,
            self.metrics,
            self.settings.retry_after_seconds,
            budget=self.budget,
            max_request_decoded_bytes=self.settings.max_request_decoded_bytes,
            spool_only=self.settings.spool_only,
        )

    def _supervise(self) -> Supervisor:
        """Every worker thread under one supervisor (restarted and counted if it dies)."""
        supervisor = Supervisor(self.metrics.thread_restarts)
        supervisor.watch_thread(self.spool.writer)
        if not self.settings.spool_only:  # evaluation paused: the pipeline never starts
            for thread in self.pipeline.threads():
                supervisor.watch_thread(thread)
        for worker in self.outbox.workers:
            supervisor.watch_thread(worker.thread)
        supervisor.watch_thread(self.pruner.thread)
        supervisor.every_pass(self._probe_spool)
        return supervisor

    def _probe_spool(self) -> None:
        if self.spool.failing:
            self.spool.probe()

    def _gauges(self) -> None:
        gauge, budget = self.metrics.gauge, self.budget
        gauge("aem_verdicts_pending", "verdict items not yet delivered", self._pending)
        gauge(
            "aem_bytes_in_flight",
            "decoded bytes of spans accepted and not yet evaluated (cap max_bytes_in_flight)",
            lambda: budget.bytes_in_flight,
        )
        gauge(
            "aem_open_session_bytes",
            "decoded bytes held by open sessions (evicted above half of max_bytes_in_flight)",
            lambda: budget.open_bytes,
        )
        gauge(
            "aem_sessions_open_admitted",
            "open sessions counted against max_open_sessions",
            lambda: budget.open_sessions,
        )
        gauge(
            "aem_clients_at_session_cap",
            "client addresses holding max_open_sessions_per_client open sessions",
            budget.clients_at_cap,
        )
        gauge(
            "aem_saturated",
            "1 while no new session can be admitted (also /readyz 503)",
            lambda: float(budget.saturation() is not None),
        )
        gauge(
            "aem_spool_failing",
            "1 while spool writes fail",
            lambda: float(bool(self.spool.failing)),
        )
        gauge(
            "aem_dead_letter_sessions",
            "sessions whose evaluation raised, kept in the dead_letter table",
            lambda: self.spool.dead_letters,
        )

    def _pending(self) -> float:
        return float(self.outbox.pending())

    def readiness(self) -> tuple[bool, str]:
        """Ready only when a new session sent here would be accepted and evaluated."""
        if self.intake.closing:
            return False, "draining"
        if not self._ready:
            return False, "starting"
        if self.spool.failing:
            return False, f"spool write failing: {self.spool.failing}"
        if self.supervisor.dead:
            return False, "worker threads being restarted: " + ", ".join(self.supervisor.dead)
        saturated = self.budget.saturation()
        if saturated:
            return False, f"saturated: {saturated}"
        if self.intake.queue_refusing:
            return False, (
                f"ingest queue full ({self.queue.depth} of {self.queue.capacity} spans): "
                "requests are answered queue_full until evaluation catches up"
            )
        return True, "ready"

    def start(self) -> None:
        self._gil.start()
        self.outbox.start()
        if self.scorecards is not None:
            self.scorecards.start()
        if self.settings.spool_only:
            log.warning("spool_only: spans are spooled, not evaluated, until a start without it")
        else:
            settled, dead = settle_raw_requests(self.spool)
            if settled:
                log.info(
                    "decoded requests spooled while evaluation was paused",
                    extra={"requests": settled, "spans_dead_lettered": dead},
                )
            replayed = self.pipeline.replay()
            if replayed:
                log.info(
                    "replayed spooled spans",
                    extra={"spans": replayed, "sessions": self.pipeline.assembler.open_sessions},
                )
            self.pipeline.start()
        self.pruner.start()
        self.supervisor.start()
        s = self.settings
        for warning in s.exposure_warnings():
            log.warning("exposed receiver: " + warning, extra={"host": s.host})
        if s.grpc_port != -1:
            from aem.serve.grpc_receiver import start_grpc

            self._grpc, self.ports["grpc"] = start_grpc(s, self.intake, self.metrics)
        if s.http_port != -1:
            from aem.serve.http_receiver import start_http

            self._http, _ = start_http(s, self.intake, self.metrics, self.readiness)
            self.ports["http"] = self._http.port
        if s.ports_file is not None:
            tmp = s.ports_file.with_suffix(".tmp")
            tmp.write_bytes(orjson.dumps(self.ports))
            tmp.replace(s.ports_file)
        self._ready = True
        log.info("serving", extra={"host": s.host, **self.ports})

    def stop(self) -> bool:
        """Graceful shutdown: drain, flush, close. Safe to call twice.

        Bounded whatever the sessions and the sinks do: ``drain_timeout_seconds`` for the
        drain and the flush, then at most ``OUTBOX_CLOSE_SECONDS`` for the sinks (a
        delivery in flight is cut) and the workers' stop grace. Returns whether every
        evaluation ended; False leaves evaluator threads running (their sessions stay in
        the spool), and the process should then exit without waiting for them.
        """
        if self._stopped.is_set():
            return True
        self._stopped.set()
        budget = self.settings.drain_timeout_seconds
        deadline = time.monotonic() + budget
        log.info("draining", extra={"timeout_s": budget})
        self.intake.close()
        self.supervisor.stop()
        if self._grpc is not None:
            self._grpc.stop(grace=min(5.0, budget)).wait()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        finished = self.settings.spool_only or self.pipeline.stop(
            drain=self.settings.drain_open_sessions,
            timeout=max(0.0, deadline - time.monotonic()),
        )
        close_pool = getattr(self._evaluate, "close", None)
        if close_pool is not None:
            try:  # the evaluation workers, once nothing is evaluating any more
                close_pool()
            except Exception:  # the flush and the spool's close below must still run
                log.exception("could not stop the evaluation workers cleanly")
        if self.scorecards is not None:
            self.scorecards.stop(max(0.0, deadline - time.monotonic()))
        flushed = self.outbox.flush(max(0.0, deadline - time.monotonic()))
        self.pruner.stop()
        self.outbox.close()
        self.spool.close()
        self.store_lock.release()
        self._gil.stop()
        log.info("stopped", extra={"evaluations_finished": finished, "outbox_flushed": flushed})
        return bool(finished)
