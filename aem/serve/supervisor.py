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


class SupervisedThread:
    """A daemon thread the supervisor can start again after it died.

    Why one class: the spool writer, the pruner, each sink's deliverer and the pipeline's
    assembler and evaluators each need the same three things — start the thread, tell
    whether it is alive (or was stopped on purpose, which needs no restart), and start a
    fresh one running the same ``target`` when it died.
    """

    def __init__(
        self, name: str, target: Callable[[], None], *, stopped: Callable[[], bool] | None = None
    ) -> None:
        self.name = name
        self._target = target
        self._stopped = stopped
        self._thread = self._new_thread()

    def _new_thread(self) -> threading.Thread:
        return threading.Thread(target=self._target, name=self.name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def running(self) -> bool:
        """The thread runs now (whatever the reason it would not)."""
        return self._thread.is_alive()

    def alive(self) -> bool:
        """Running, or stopped on purpose: nothing for the supervisor to do."""
        return (self._stopped is not None and self._stopped()) or self._thread.is_alive()

    def restart(self) -> None:
        """A fresh thread, unless the old one still runs or was stopped on purpose."""
        if not self.alive():
            self._thread = self._new_thread()
            self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to end (at once if it never started or already ended)."""
        if self._thread.is_alive():
            self._thread.join(timeout)


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

    def watch_thread(self, thread: SupervisedThread) -> None:
        """Watch ``thread`` under its own name."""
        self.watch(thread.name, thread.alive, thread.restart)

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
