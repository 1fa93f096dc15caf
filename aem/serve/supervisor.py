"""Watch the worker threads; restart any that died, count it, log it.

Why: every worker (spool writer, assembler, evaluators, sink deliverers, pruner) guards
the errors it expects, but an unexpected one ends a thread silently — and a dead
evaluator or writer wedges the server while ``/healthz`` still answers. The supervisor
turns that into a logged, counted restart within ``interval`` seconds, and ``/readyz``
reports it until the thread is back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import Counter

log = logging.getLogger("aem.serve.supervisor")


@dataclass(frozen=True)
class Worker:
    name: str
    alive: Callable[[], bool]
    restart: Callable[[], None]


class Supervisor:
    def __init__(self, restarts: Counter, *, interval: float = 0.5) -> None:
        self._workers: list[Worker] = []
        self._chores: list[Callable[[], None]] = []
        self._restarts = restarts
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="supervisor", daemon=True)
        self.dead: list[str] = []

    def watch(self, name: str, alive: Callable[[], bool], restart: Callable[[], None]) -> None:
        self._workers.append(Worker(name, alive, restart))
        self._restarts.labels(name)  # shown as 0 until the first restart

    def every_pass(self, chore: Callable[[], None]) -> None:
        """Also run ``chore`` at every pass (e.g. probe a failing spool)."""
        self._chores.append(chore)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (before the workers are stopped on purpose)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def check(self) -> list[str]:
        """One pass: restart every dead worker; returns the names restarted."""
        restarted = []
        self.dead = [w.name for w in self._workers if not w.alive()]
        for worker in self._workers:
            if worker.name not in self.dead or self._stop.is_set():
                continue
            log.error("worker thread died; restarting it", extra={"worker": worker.name})
            try:
                worker.restart()
            except Exception:
                log.exception("restart failed", extra={"worker": worker.name})
                continue
            self._restarts.labels(worker.name).inc()
            restarted.append(worker.name)
        self.dead = [w.name for w in self._workers if not w.alive()]
        for chore in self._chores:
            try:
                chore()
            except Exception:
                log.exception("supervisor chore failed")
        return restarted

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.check()
