"""Evaluation in worker processes for ``aem serve`` (setting ``workers``).

Why: the receivers, the assembler and the evaluation share one interpreter otherwise, so
a slow session takes CPU (and the GIL) from receiving. Here a session is packed
(:mod:`aem.engines.compact`), evaluated in a process of the audit's pool
(:func:`aem.engines.pool.shared_pool`) and its report comes back,
pickled compactly; the evaluator threads of the pipeline each wait for one session, so
the pipeline — commit, outbox, dead letters — is the same as in-process. Each worker builds the same
:class:`~aem.evaluate.Evaluator` from the same configuration and cases, so the verdicts
are the ones ``aem audit`` gives.

The workers are forked from the server at start, before its receivers and threads run,
with the evaluator built and the ONNX encoder's weights loaded here once (their pages shared
by every worker). Where that cannot be (torch, which does not survive a fork; macOS and
Windows; a process already running threads), and for a pool started again after a worker
died, they come from a forkserver with the metrics and, when text is compared with torch,
sentence-transformers imported once, and each loads the model's weights itself.

A session whose evaluation raises raises here with the worker's exception (the pipeline
dead-letters it, as in-process). A worker that dies (killed, out of memory) takes its
session with it: the pool is started again and the session retried once; dying again, it
is dead-lettered rather than retried forever.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
import uuid
from collections.abc import Mapping
from concurrent.futures import CancelledError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from aem.cases import Case
from aem.engines.compact import dumps, loads, pack_sessions, unpack_sessions
from aem.engines.jobs import job_evaluator, pack_job, release
from aem.engines.pool import (
    fork_allowed,
    fork_safe_now,
    preloads_embedding,
    prepare_fork,
    shared_pool,
    shutdown_pool,
    worker_config,
)
from aem.evaluate import Evaluator
from aem.foundation.model import ClosedSession, SessionReport
from aem.serve.pipeline import Abandoned
from aem.settings import AemConfig

log = logging.getLogger("aem.serve.workers")

_WATCH_SECONDS = 1.0
# At shutdown: how long the workers get after SIGTERM before SIGKILL.
_STOP_GRACE_SECONDS = 2.0


def _evaluator(job_key: str, job: bytes) -> Evaluator:
    """In a worker: the server's evaluator, built on the worker's first task (which also
    starts watching the server process, whose id the job carries)."""
    return job_evaluator(job_key, job, prepare=_watch)


def _watch(server: int) -> None:
    """In a worker: exit when the server process is gone.

    Why: after a ``kill -9`` of the server nothing tells its pool's workers (each holds its
    own end of the task pipe, so it never reads EOF) and they would idle on forever, each
    holding a model; the forkserver exits by itself once no worker holds its pipe."""

    def run() -> None:
        while True:
            time.sleep(_WATCH_SECONDS)
            try:
                os.kill(server, 0)
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:
                pass  # alive, another user's (cannot happen for our own parent)

    threading.Thread(target=run, name="aem-server-watch", daemon=True).start()


def _warm(job_key: str, job: bytes) -> None:
    """In a worker, at server start: fork it and build its evaluator before the first
    session needs it (the first verdict then waits for neither)."""
    _evaluator(job_key, job)


def _evaluate_packed(job_key: str, job: bytes, packed: bytes) -> bytes:
    """In a worker: evaluate one packed session; its report, pickled compactly
    (:func:`aem.engines.compact.dumps`; raises as it raises)."""
    [session] = unpack_sessions(packed)
    return dumps(_evaluator(job_key, job).evaluate(session))


class PoolEvaluate:
    """``evaluate(session) -> report`` backed by ``workers`` processes (thread-safe)."""

    def __init__(
        self, workers: int, config: AemConfig | None, cases: Mapping[str, Case] | None
    ) -> None:
        config = config or AemConfig()
        self.workers = workers
        self._key = uuid.uuid4().hex
        config_here = worker_config(config, workers)  # what each worker evaluates with
        self._job = pack_job(config_here, cases, os.getpid())
        # Without fork (torch; a pool started again): as the audit's, the forkserver
        # imports sentence-transformers once, at start (the receivers do not wait for it),
        # and no worker pays the ~10 s import again.
        self._embeds = preloads_embedding(config)
        self._lock = threading.Lock()
        self._closed = False
        self.forked = fork_allowed(config) and fork_safe_now()
        if self.forked:
            self._pool = self._forked_pool(config_here, cases)
        else:
            self._pool = shared_pool(workers, embeds=self._embeds)
            self._warm(self._pool)

    def _forked_pool(
        self, config: AemConfig, cases: Mapping[str, Case] | None
    ) -> ProcessPoolExecutor:
        """The workers forked from this process now, before any other thread runs here,
        each starting with the evaluator built here (and the encoder's weights loaded once,
        shared by every worker's pages).

        Why: a forkserver worker imports AEM and onnxruntime again, builds its evaluator
        and loads the model: seconds of CPU per worker, paid again for each worker that
        replaces one, and the model's memory once per worker. When the weights are loaded
        here is :func:`aem.engines.pool.loads_before_fork`'s to say."""
        prepare_fork(self._key, config, cases)
        pool = shared_pool(self.workers, embeds=False, fork=True)
        for _ in range(self.workers):  # the first submit forks every worker, here
            pool.submit(_warm, self._key, self._job)
        release(self._key)  # the workers hold it now; the server never evaluates with it
        return pool

    def _warm(self, pool: ProcessPoolExecutor) -> None:
        """Start the workers and build their evaluators, from a thread of its own.

        Why a thread: the first ``submit`` forks the workers, and a fork waits for the
        forkserver to finish importing sentence-transformers (about 10 s of CPU). Waited
        for here, the server's start — receivers, ports file, the pruner's first pass —
        would wait too, so a restart could outlast a short retention window."""

        def warm() -> None:
            try:
                for _ in range(self.workers):
                    pool.submit(_warm, self._key, self._job)
            except RuntimeError:  # the pool shut down first (a quick stop)
                pass

        threading.Thread(target=warm, name="aem-pool-warm", daemon=True).start()

    def __call__(self, session: ClosedSession) -> SessionReport:
        packed = pack_sessions([session])
        for attempt in (1, 2):
            pool = self._pool
            try:
                if self._closed:  # stopped (drain timed out): the spool keeps the session
                    raise Abandoned(session.session_id)
                data = pool.submit(_evaluate_packed, self._key, self._job, packed).result()
            except CancelledError as exc:  # the pool shut down before the session started
                raise Abandoned(session.session_id) from exc
            except BrokenProcessPool:  # (a RuntimeError: caught before the clause below)
                if self._closed:
                    raise Abandoned(session.session_id) from None
                log.error(
                    "an evaluation worker died; pool restarted",
                    extra={"session_id": session.session_id, "attempt": attempt},
                )
                self._renew(pool)
                if attempt == 2:
                    raise
                continue
            except RuntimeError as exc:  # "cannot schedule new futures after shutdown"
                if self._closed:
                    raise Abandoned(session.session_id) from exc
                raise
            report: SessionReport = loads(data)
            return report
        raise AssertionError("unreachable")

    def _renew(self, broken: object) -> None:
        """A new pool, once, however many evaluator threads saw the old one break."""
        with self._lock:
            if self._pool is broken:
                shutdown_pool()
                self._pool = shared_pool(self.workers, embeds=self._embeds)
                self._warm(self._pool)

    def close(self, grace: float = _STOP_GRACE_SECONDS) -> None:
        """Stop the worker processes now, with the server, whatever they are doing.

        Why not only ``shutdown(wait=True)``: it waits for the session a worker is
        evaluating (a huge one takes minutes) and for workers still building their
        evaluator (the embedding model), and a worker forked from the forkserver is not
        the server's child, so nothing else ends it: workers outlived the server by one
        to two minutes. A session cut short here was not committed: it stays in the
        spool and is evaluated at the next start.
        """
        self._closed = True
        processes = list(getattr(self._pool, "_processes", None) or {})  # pids
        self._pool.shutdown(wait=False, cancel_futures=True)
        _end_processes([*processes, *_forkserver_pid()], grace)
        shutdown_pool()


def _forkserver_pid() -> list[int]:
    """The forkserver's pid, if one runs (it forks the workers and would fork more)."""
    from multiprocessing import forkserver

    pid = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)
    return [pid] if isinstance(pid, int) else []


def _end_processes(pids: list[int], grace: float) -> None:
    """SIGTERM each, then SIGKILL whatever is still there after ``grace`` seconds."""
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.05)
    for pid in pids:
        if _alive(pid):
            _signal(pid, signal.SIGKILL)


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, ended but not yet reaped, does not)."""
    if not os.path.isdir("/proc"):  # no procfs: ask the kernel (a zombie counts as alive)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):  # gone, or went mid-read
        return False
