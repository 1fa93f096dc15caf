"""``aem audit --workers N``: evaluate closed sessions in worker processes on this machine.

Why this shape:

* The reading process keeps reading and assembling; workers only evaluate. Sessions
  cross the pipe packed (:mod:`aem.engines.compact`), a chunk of them per task, and the
  chunk grows for cheap sessions (so the pipe's fixed cost stays small) while expensive
  ones go one by one (so no worker idles at the end holding a queue of them).
* Each worker builds its :class:`~aem.evaluate.Evaluator` on its first task of an audit;
  the embedding model inside it loads only when a session compares text, once per worker.
  Torch gets the worker's share of the cores, not all of them per worker.
* Workers are forked from a forkserver, never from the caller, unless the caller asks for
  ``fork`` after it has loaded what they need (:func:`fork_allowed`): a caller that has
  already used torch's thread pool (a test run, a notebook) cannot hand a worker a broken
  one, and a server's gRPC threads cannot be forked mid-call. An audit that evaluated its
  first sessions here and runs on the ONNX encoder forks its workers from itself: they
  start with AEM, onnxruntime and the tokenizer imported, and with the evaluator built
  and the weights loaded here once for all of them (:func:`prepare_fork`; a forkserver
  worker imports them again, ~1 s of CPU each on this kind of machine, and loads its own). The
  pool outlives one audit, so a process that audits many times pays the imports once per
  worker, not once per audit.
* Outcomes are delivered in submission order, with the issue position recorded when the
  chunk was submitted: the report is byte-identical to evaluating in this process.
* In-flight chunks are bounded, so memory stays bounded when reading outruns evaluating.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver

from aem.cases import Case
from aem.compare.embedder import resolve_backend
from aem.engines import available_cores
from aem.engines.compact import dumps, loads, pack_sessions, unpack_sessions
from aem.engines.jobs import adopt, job_evaluator, pack_job, release
from aem.engines.seam import Deliver, SessionOutcome, evaluate_closed
from aem.evaluate import Evaluator
from aem.foundation.model import ClosedSession
from aem.settings import AemConfig

# A chunk of sessions should keep a worker busy about this long: long enough that the
# pipe's fixed cost (well under a millisecond) is noise, short enough to balance.
_CHUNK_SECONDS = 0.05
_MAX_CHUNK_SESSIONS = 64
_IN_FLIGHT_PER_WORKER = 4
# Imported once in the forkserver, so every worker forked from it starts with them.
_PRELOAD = ["aem.engines.pool", "aem.engines._preload"]
_PRELOAD_EMBEDDING = [*_PRELOAD, "sentence_transformers"]

# In the calling process: the pool, kept for the next audit with the same worker count
# and module search path (workers import plug-ins from the path they were started with).
_POOL: tuple[tuple[int, tuple[str, ...], str], ProcessPoolExecutor] | None = None


def worker_config(config: AemConfig, workers: int) -> AemConfig:
    """The configuration a worker evaluates with: torch gets this worker's share of the
    cores unless the configuration names a thread count (N workers × all cores would
    oversubscribe the machine and slow every one of them)."""
    if config.compare.embedding_threads is not None:
        return config
    share = max(1, available_cores() // workers)
    compare = config.compare.model_copy(update={"embedding_threads": share})
    return config.model_copy(update={"compare": compare})


def preloads_embedding(config: AemConfig) -> bool:
    """Whether the pool's forkserver should import sentence-transformers for ``config``.

    Why: importing it (torch with it) costs about 10 s of CPU here, the model's weights
    under a second. Imported once in the forkserver, every worker forked from it starts
    with it (and shares its pages) instead of paying the import again. Only the torch
    backend gains; the onnx backends never import sentence-transformers."""
    compare = config.compare
    return compare.embed_free_text and resolve_backend(compare.embedding_backend) == "torch"


def fork_allowed(config: AemConfig) -> bool:
    """Whether workers may be forked from the calling process itself (``fork``).

    Only where the platform forks (not Windows, not macOS's default), and only when the
    encoder is not torch: torch's intra-op thread pool does not survive a fork once used,
    onnxruntime's is built per session and a worker builds its own."""
    if "fork" not in multiprocessing.get_all_start_methods() or sys.platform == "darwin":
        return False
    compare = config.compare
    return not (compare.embed_free_text and resolve_backend(compare.embedding_backend) == "torch")


def fork_safe_now() -> bool:
    """Whether forking this process now copies no thread that could hold a lock: no
    Python thread but the current one, and gRPC not loaded (its core runs native threads
    once a server or channel exists, and a child forked mid-call inherits their locks).

    ``aem serve`` builds its pool before its receivers start, so this holds there; a
    pool built again later (a worker died) finds the server's threads running and is
    started from a forkserver instead."""
    return threading.active_count() == 1 and "grpc" not in sys.modules


def loads_before_fork(config: AemConfig) -> bool:
    """Whether the process forking the workers loads their ONNX encoder first, so that
    every worker starts with the weights (pages shared) instead of loading its own.

    Only when each worker's encoder runs on one thread (onnxruntime then builds no thread
    pool, which a forked child would inherit without its threads) and the model is
    exported already (a first export takes tens of seconds of torch: the workers do it,
    as without this)."""
    compare = config.compare
    if not compare.embed_free_text or compare.embedding_threads != 1:
        return False
    from aem.compare.embedder import default_model_path
    from aem.compare.onnxmodel import is_exported

    return is_exported(
        compare.embedding_model or default_model_path(),
        int8=resolve_backend(compare.embedding_backend) == "onnx-int8",
        cache_dir=compare.embedding_onnx_dir,
    )


def prepare_fork(job_key: str, config: AemConfig, cases: Mapping[str, Case] | None) -> None:
    """Before forking the workers from this process: the evaluator of job ``job_key``
    (``config`` is the workers' configuration) built here, its encoder loaded when
    :func:`loads_before_fork` allows, and adopted (:func:`aem.engines.jobs.adopt`), so
    each worker starts with it instead of building it and loading the model again. The
    caller releases it (:func:`aem.engines.jobs.release`) once the workers are forked."""
    evaluator = Evaluator(config, cases)
    if loads_before_fork(config):
        evaluator.comparator().embedder.model  # noqa: B018 - loads it before the fork
    adopt(job_key, evaluator)


def pool_running(workers: int, *, fork: bool) -> bool:
    """Whether :func:`shared_pool` would hand back a pool already started (its workers
    forked before, so nothing prepared now would reach them)."""
    return _POOL is not None and _POOL[0] == _pool_key(workers, fork)


def _pool_key(workers: int, fork: bool) -> tuple[int, tuple[str, ...], str]:
    return (workers, tuple(sys.path), "fork" if fork else "forkserver")


def _evaluate_chunk(job_key: str, job: bytes, packed: bytes) -> tuple[bytes, float]:
    """In a worker: evaluate a packed chunk; (pickled outcomes in order, seconds spent)."""
    start = time.perf_counter()
    evaluator = job_evaluator(job_key, job)
    outcomes = [evaluate_closed(evaluator, session) for session in unpack_sessions(packed)]
    return dumps(outcomes), time.perf_counter() - start


def shared_pool(workers: int, *, embeds: bool, fork: bool = False) -> ProcessPoolExecutor:
    """The process-wide pool of ``workers`` processes, its forkserver started now.

    When the audit compares text (``embeds``), the forkserver imports
    sentence-transformers once, while this process reads on: each worker forked from it
    then only loads the model's weights, instead of paying torch's import again. With
    ``fork`` (the caller checked :func:`fork_allowed`) workers are forked from this
    process as it is, with everything it has imported."""
    global _POOL
    method = "fork" if fork else "forkserver"
    key = _pool_key(workers, fork)
    if _POOL is not None and _POOL[0] == key:
        return _POOL[1]
    shutdown_pool()
    context = multiprocessing.get_context(method)
    if not fork:
        context.set_forkserver_preload(_PRELOAD_EMBEDDING if embeds else _PRELOAD)
        forkserver.ensure_running()
    else:
        # The tokenizer's own threads do not survive a fork: a worker's tokenizer runs on
        # one thread (as its encoder does), and says nothing about it.
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
    _POOL = (key, ProcessPoolExecutor(max_workers=workers, mp_context=context))
    return _POOL[1]


def shutdown_pool() -> None:
    """Stop the pool's workers (at exit, or before a pool of another size starts)."""
    global _POOL
    if _POOL is not None:
        _POOL[1].shutdown(wait=True, cancel_futures=True)
        _POOL = None


atexit.register(shutdown_pool)


class PoolEngine:
    """Submits chunks of closed sessions to the pool and delivers outcomes in order."""

    def __init__(
        self,
        workers: int,
        config: AemConfig,
        cases: Mapping[str, Case] | None,
        deliver: Deliver,
        *,
        fork: bool = False,
    ) -> None:
        self.workers = workers
        self.deliver = deliver
        self._key = uuid.uuid4().hex
        config_here = worker_config(config, workers)
        self._job = pack_job(config_here, cases)
        fork = fork and fork_allowed(config)
        # Forked by the first submit: each worker starts with the evaluator built here.
        self._adopted = fork and not pool_running(workers, fork=True)
        if self._adopted:
            prepare_fork(self._key, config_here, cases)
        self._pool = shared_pool(workers, embeds=preloads_embedding(config), fork=fork)
        self._pending: deque[tuple[Future[tuple[bytes, float]], int, int]] = deque()
        self._sessions_done = 0
        self._seconds_done = 0.0

    def chunk_size(self) -> int:
        """Sessions per chunk: one until timings say sessions are cheap, then enough of
        them to fill about ``_CHUNK_SECONDS`` of a worker's time."""
        if not self._sessions_done:
            return 1
        per_session = self._seconds_done / self._sessions_done
        return max(1, min(_MAX_CHUNK_SESSIONS, int(_CHUNK_SECONDS / max(per_session, 1e-6))))

    def submit(self, sessions: list[ClosedSession], position: int) -> None:
        start = 0
        while start < len(sessions):
            chunk = sessions[start : start + self.chunk_size()]
            start += len(chunk)
            future = self._pool.submit(_evaluate_chunk, self._key, self._job, pack_sessions(chunk))
            self._pending.append((future, position, len(chunk)))
            if self._adopted:  # the workers are forked: they hold it now
                release(self._key)
                self._adopted = False
            while len(self._pending) > self.workers * _IN_FLIGHT_PER_WORKER:
                self._collect_oldest()

    def _collect_oldest(self) -> None:
        future, position, count = self._pending.popleft()
        try:
            data, seconds = future.result()
        except BrokenProcessPool as exc:  # a worker died (killed, out of memory)
            shutdown_pool()
            raise RuntimeError(f"a worker process of the audit died: {exc}") from exc
        self._sessions_done += count
        self._seconds_done += seconds
        outcomes: list[SessionOutcome] = loads(data)
        for outcome in outcomes:
            self.deliver(outcome, position)

    def finish(self) -> None:
        """Wait for every chunk still out and deliver its outcomes."""
        while self._pending:
            self._collect_oldest()

    def close(self) -> None:
        """On an error: chunks not yet started are cancelled; the pool stays usable."""
        for future, _, _ in self._pending:
            future.cancel()
        self._pending.clear()
